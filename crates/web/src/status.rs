//! What an operator asks a running server (`bulwark status`, `bulwark purge`):
//! each site's hosts, database, cache and load, and dropping cached pages.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use bulwark_store::ResourceId;
use bulwark_template::ModelKey;

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
        let cache = &site.models().cache;
        match self {
            Purge::Url(url) => {
                let (path, query) = url.split_once('?').unwrap_or((url, ""));
                for language in &site.config().languages {
                    cache.flush(&ModelKey::page(language, path, query));
                }
            }
            Purge::Resource(id) => {
                let key = bulwark_store::dependency::resource(ResourceId(*id));
                crate::stores::flush(site.models(), site.notifier(), vec![key]);
            }
            Purge::All => crate::stores::flush_all(site.models(), site.notifier()),
        }
    }
}
