//! What an operator asks a running server (`bulwark status`, `bulwark purge`):
//! each site's hosts, database, cache and load, and dropping cached pages.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use bulwark_store::ResourceId;

use crate::events::GatherFigures;
use crate::figures::{Figures, PoolUse};
use crate::site::SiteRuntime;

/// One running site, as `bulwark status` shows it. Counts are since the
/// server started (a reload keeps them).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SiteStatus {
    pub name: String,
    pub hostname: String,
    pub aliases: Vec<String>,
    pub default: bool,
    pub modules: Vec<String>,
    /// `sqlite` or `postgres`.
    pub database: String,
    pub connections: PoolUse,
    pub requests: u64,
    pub renders: u64,
    pub page_cache: HitRatio,
    /// The site's depcache: models, fragments and pages together.
    pub cache: CacheStatus,
    /// What modules count (`push_clients`).
    pub more: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct HitRatio {
    pub hits: u64,
    pub misses: u64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct CacheStatus {
    pub entries: u64,
    pub bytes: u64,
    pub hits: u64,
    pub misses: u64,
    pub grace_hits: u64,
    pub stale_if_error: u64,
    pub evictions: u64,
}

impl SiteStatus {
    pub(crate) fn of(site: &SiteRuntime) -> SiteStatus {
        let config = site.config();
        let counters = site.counters();
        let models = site.models();
        // Sizes lag behind the cache's maintenance: run it first.
        models.cache.sweep();
        let stats = models.cache.stats();
        let gathered = site.notifier().fold(&GatherFigures, Figures::default());
        SiteStatus {
            name: site.site().name().to_string(),
            hostname: config.hostname.clone(),
            aliases: config.aliases.clone(),
            default: config.is_default,
            modules: site
                .available_modules()
                .iter()
                .filter(|m| m.enabled)
                .map(|m| m.name.to_owned())
                .collect(),
            database: models.store.backend_name().to_owned(),
            connections: site.pool_use(),
            requests: counters.requests(),
            renders: models.renders.load(Ordering::Relaxed),
            page_cache: HitRatio {
                hits: counters.page_hits.load(Ordering::Relaxed),
                misses: counters.page_misses.load(Ordering::Relaxed),
            },
            cache: CacheStatus {
                entries: stats.entries,
                bytes: stats.bytes_used,
                hits: stats.hits,
                misses: stats.misses,
                grace_hits: stats.grace_hits,
                stale_if_error: stats.stale_if_error,
                evictions: stats.evictions,
            },
            more: gathered.more,
        }
    }
}

/// What `bulwark purge` drops from a site's cache.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Purge {
    /// The cached page at this path (with its query string), in every
    /// language.
    Url(String),
    /// Everything that showed this resource.
    Resource(i64),
    /// Every cached page, fragment and model value.
    All,
}

impl Purge {
    pub(crate) fn apply(&self, site: &SiteRuntime) {
        match self {
            Purge::Url(url) => {
                let (path, query) = url.split_once('?').unwrap_or((url, ""));
                let key = crate::page_cache::address_key(site.languages(), path, query);
                crate::stores::flush(site.models(), site.notifier(), vec![key]);
            }
            Purge::Resource(id) => {
                let key = bulwark_store::dependency::resource(ResourceId(*id));
                crate::stores::flush(site.models(), site.notifier(), vec![key]);
            }
            Purge::All => crate::stores::flush_all(site.models(), site.notifier()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::language::SiteLanguages;
    use std::path::Path;

    fn config(more: &str) -> bulwark_site::SiteConfig {
        let text = format!("hostname = \"x.test\"\nlanguages = [\"en\", \"nl\"]\n{more}");
        bulwark_site::parse_site_config(Path::new("x/site.toml"), &text, Path::new("x"), &[])
            .unwrap()
    }

    #[test]
    fn a_purged_url_means_the_page_in_every_language_with_or_without_its_prefix() {
        let key = |config: &bulwark_site::SiteConfig, url: &str| {
            let (path, query) = url.split_once('?').unwrap_or((url, ""));
            crate::page_cache::address_key(&SiteLanguages::new(config), path, query)
        };
        let prefixed = config("[language]\nurls = \"prefix\"\n");
        let about = key(&prefixed, "/about");
        assert_eq!(about.as_str(), "url:/about");
        assert_eq!(key(&prefixed, "/nl/about"), about);
        assert_eq!(key(&prefixed, "/en/about"), about);
        assert_eq!(key(&prefixed, "/en").as_str(), "url:/");
        assert_eq!(key(&prefixed, "/nl/").as_str(), "url:/");
        // `/nlx` is not `/nl` plus something.
        assert_eq!(key(&prefixed, "/nlx").as_str(), "url:/nlx");
        assert_eq!(
            key(&prefixed, "/nl/articles?page=2").as_str(),
            "url:/articles?page=2"
        );
        // Without language URLs a path is taken as it is.
        let negotiated = config("");
        assert_eq!(key(&negotiated, "/nl/about").as_str(), "url:/nl/about");
    }
}
