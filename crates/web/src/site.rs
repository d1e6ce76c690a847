//! What a running site holds, in a few named parts: the site's folder and
//! configuration, its data and templates, who may do what (the access policy
//! and who is asking), what its modules brought, its static files, and its
//! load (bottlenecks and counters). Built when the site loads (again on a
//! configuration reload) and then immutable; code reaches the parts through
//! methods, never through fields.

use std::sync::Arc;

use bulwark_acl::SitePolicy;
use bulwark_http::EncodedBody;
use bulwark_notify::Notifier;
use bulwark_site::{Site, SiteConfig};
use bulwark_template::{SiteModels, SiteTemplates};

use crate::authenticate::Authenticator;
use crate::bottleneck::{Bottleneck, LibBuilds};
use crate::counters::Counters;
use crate::file_cache::FileCache;
use crate::reload::ReloadHandle;
use crate::security_headers::SecurityHeaders;

pub struct SiteRuntime {
    site: Arc<Site>,
    models: Arc<SiteModels>,
    templates: SiteTemplates,
    access: Access,
    modules: ModuleParts,
    statics: Statics,
    load: Load,
    security_headers: SecurityHeaders,
    /// This load of the site, as a token: what is made from its settings and
    /// kept beyond it (a cached page's headers) names the load it was made for.
    identity: Arc<()>,
    /// A resource's page URL, for templates (made once, not per render).
    page_urls: bulwark_template::PageUrls,
    /// Its languages as requests use them (made once, not per request).
    languages: crate::language::SiteLanguages,
    dev: bool,
}

/// Who may do what: the policy every surface asks, and who finds out who is
/// asking (the accounts module's sessions and tokens; `None`: everyone is
/// anonymous).
pub(crate) struct Access {
    pub(crate) policy: Arc<SitePolicy>,
    pub(crate) authenticator: Option<Arc<dyn Authenticator>>,
}

/// What the site's modules brought and share.
pub(crate) struct ModuleParts {
    /// The observers the site's modules registered.
    pub(crate) notifier: Arc<Notifier>,
    /// The modules this binary has (enabled here or not), for the admin.
    pub(crate) available: Vec<ModuleInfo>,
    /// What modules keep per site (`SiteSetup::provide`).
    pub(crate) state: http::Extensions,
    /// The OpenAPI document of the endpoints this site serves, made when it
    /// is first asked for.
    pub(crate) openapi: LazyDocument,
    /// Loads every site again (after a `site.toml` changed from the admin).
    pub(crate) reload: ReloadHandle,
}

/// A document made once, the first time it is read.
pub(crate) type LazyDocument =
    std::sync::LazyLock<bytes::Bytes, Box<dyn FnOnce() -> bytes::Bytes + Send>>;

/// Static files held in memory.
pub(crate) struct Statics {
    /// Combined static files, encoded once, within a byte budget.
    pub(crate) lib_cache: moka::future::Cache<String, Arc<EncodedBody>>,
    /// Hot files (the site's `files/`, media) within a budget.
    pub(crate) files: FileCache,
}

/// The site's bottlenecks and what it counts as it serves.
pub(crate) struct Load {
    /// Renders wait here for a slot (a 503 past the deadline).
    pub(crate) renders: Bottleneck,
    /// Building a body for the lib cache waits here (a 503 past the deadline).
    pub(crate) lib_builds: LibBuilds,
    /// For the site's live figures.
    pub(crate) counters: std::sync::Arc<Counters>,
    /// Whether answers are timed ([`SiteSetup::measure_latency`](crate::SiteSetup::measure_latency)).
    pub(crate) measure_latency: bool,
    /// Surrogate keys for a cache in front ([`SiteSetup::send_surrogate_keys`](crate::SiteSetup::send_surrogate_keys)).
    pub(crate) surrogate: Option<crate::Surrogate>,
    /// The hold on the store this load uses: a store a reload replaced
    /// closes once every load made on it is gone.
    #[expect(dead_code, reason = "held, never read: dropping it is the signal")]
    pub(crate) store_in_use: StoreInUse,
}

/// A load's hold on the store it was made on (the site's runtime keeps it):
/// a store a reload replaced is closed once the last hold is gone, that is
/// once the load that used it was replaced and its last request ended.
#[derive(Clone)]
pub(crate) struct StoreInUse(
    #[expect(
        dead_code,
        reason = "held, never read: dropping the last is the signal"
    )]
    Arc<tokio::sync::oneshot::Sender<()>>,
);

impl StoreInUse {
    /// The first hold; the receiver of `held` ends when the last is gone.
    pub(crate) fn new(held: tokio::sync::oneshot::Sender<()>) -> StoreInUse {
        StoreInUse(Arc::new(held))
    }
}

/// The parts a site is built from (`table.rs`).
pub(crate) struct SiteParts {
    pub(crate) site: Arc<Site>,
    pub(crate) models: Arc<SiteModels>,
    pub(crate) templates: SiteTemplates,
    pub(crate) access: Access,
    pub(crate) modules: ModuleParts,
    pub(crate) statics: Statics,
    pub(crate) load: Load,
    pub(crate) dev: bool,
}

impl SiteRuntime {
    pub(crate) fn new(parts: SiteParts) -> SiteRuntime {
        SiteRuntime {
            security_headers: SecurityHeaders::new(&parts.site.config.headers),
            identity: Arc::new(()),
            page_urls: page_urls(&parts.site),
            languages: crate::language::SiteLanguages::new(&parts.site.config),
            site: parts.site,
            models: parts.models,
            templates: parts.templates,
            access: parts.access,
            modules: parts.modules,
            statics: parts.statics,
            load: parts.load,
            dev: parts.dev,
        }
    }

    /// The site's folder, modules, router and static file index.
    pub fn site(&self) -> &Arc<Site> {
        &self.site
    }

    /// `site.toml`, as loaded.
    pub fn config(&self) -> &SiteConfig {
        &self.site.config
    }

    /// The site's data: store and depcache.
    pub fn models(&self) -> &Arc<SiteModels> {
        &self.models
    }

    pub fn templates(&self) -> &SiteTemplates {
        &self.templates
    }

    /// Who may see and do what (`[access]` and the rules stored in the
    /// database): the one decision templates, the API, push and the admin ask.
    pub fn policy(&self) -> &Arc<SitePolicy> {
        &self.access.policy
    }

    /// Who finds out who is asking (the accounts module), if anyone does.
    pub fn authenticator(&self) -> Option<&Arc<dyn Authenticator>> {
        self.access.authenticator.as_ref()
    }

    /// The observers the site's modules registered.
    pub fn notifier(&self) -> &Arc<Notifier> {
        &self.modules.notifier
    }

    /// The modules this binary has, and whether this site enables each.
    pub fn available_modules(&self) -> &[ModuleInfo] {
        &self.modules.available
    }

    /// What a module kept for this site with `SiteSetup::provide`; `None` when
    /// no enabled module did.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.modules.state.get::<T>()
    }

    /// The OpenAPI document of the endpoints this site serves.
    pub fn openapi(&self) -> &bytes::Bytes {
        &self.modules.openapi
    }

    /// Loads every site again (after a `site.toml` changed from the admin).
    pub fn reload_handle(&self) -> &ReloadHandle {
        &self.modules.reload
    }

    /// Renders wait here for a slot.
    pub fn renders(&self) -> &Bottleneck {
        &self.load.renders
    }

    /// Building a combined static file waits here.
    pub fn lib_builds(&self) -> &LibBuilds {
        &self.load.lib_builds
    }

    /// The site's database connections now: open, and busy.
    pub fn pool_use(&self) -> crate::PoolUse {
        let pool = self.models().store.connections();
        crate::PoolUse {
            open: pool.open,
            busy: pool
                .open
                .saturating_sub(u32::try_from(pool.idle).unwrap_or(u32::MAX)),
        }
    }

    /// The 503s each of the core's bottlenecks answered since the site
    /// started, by name (modules add theirs to the figures and metrics).
    pub fn refusals(&self) -> [(&'static str, u64); 3] {
        [
            ("renders", self.renders().refused()),
            ("database", self.renders().database_busy()),
            ("lib_builds", self.lib_builds().refused()),
        ]
    }

    /// What the site counted since the server started.
    pub fn counters(&self) -> &Counters {
        &self.load.counters
    }

    /// How this site sends surrogate keys, if it does.
    pub fn surrogate(&self) -> Option<&crate::Surrogate> {
        self.load.surrogate.as_ref()
    }

    /// Whether answers are timed.
    pub(crate) fn measures_latency(&self) -> bool {
        self.load.measure_latency
    }

    pub(crate) fn lib_cache(&self) -> &moka::future::Cache<String, Arc<EncodedBody>> {
        &self.statics.lib_cache
    }

    /// Hot files held in memory.
    pub fn files(&self) -> &FileCache {
        &self.statics.files
    }

    pub(crate) fn security_headers(&self) -> &SecurityHeaders {
        &self.security_headers
    }

    /// This load of the site (see the field).
    pub(crate) fn identity(&self) -> &Arc<()> {
        &self.identity
    }

    /// A resource's page URL by the site's `page` (or `page_id`) rule.
    pub(crate) fn languages(&self) -> &crate::language::SiteLanguages {
        &self.languages
    }

    pub(crate) fn page_urls(&self) -> &bulwark_template::PageUrls {
        &self.page_urls
    }

    /// Resource `r`'s page URL (with its slug), as templates make it.
    pub fn page_url(&self, r: &bulwark_store::Resource) -> Option<String> {
        (self.page_urls)(r.id, &bulwark_template::slug_of(r))
    }

    /// Resource `r`'s page URL in `language`: with the language's slug, and
    /// its prefix on a site with language URLs (`/nl/page/7/fietsen`).
    pub fn page_url_in(&self, r: &bulwark_store::Resource, language: &str) -> Option<String> {
        let slug = bulwark_template::slug_in(r, &[language]);
        let url = (self.page_urls)(r.id, &slug)?;
        Some(self.path_in(&url, language))
    }

    /// A path of the site's rules in `language`: with its prefix on a site
    /// with language URLs (`/nl/articles`; `/nl/` for `/`), else as it is.
    pub fn path_in(&self, path: &str, language: &str) -> String {
        if self.languages.prefixed() {
            format!("/{language}{path}")
        } else {
            path.to_owned()
        }
    }

    /// Whether the site's URLs carry the language (`[language] urls = "prefix"`).
    pub fn language_urls(&self) -> bool {
        self.languages.prefixed()
    }

    /// Whether the server runs with `--dev` (details in error pages, nothing
    /// cached that would hide an edit).
    pub fn dev(&self) -> bool {
        self.dev
    }
}

/// A module of the binary, as the admin lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleInfo {
    pub name: &'static str,
    /// The modules it needs enabled too.
    pub depends: &'static [&'static str],
    pub enabled: bool,
}

/// Budget for combined static files kept in memory, per site.
const LIB_CACHE_BYTES: u64 = 64 * 1024 * 1024;

pub(crate) fn lib_cache() -> moka::future::Cache<String, Arc<EncodedBody>> {
    moka::future::Cache::builder()
        .max_capacity(LIB_CACHE_BYTES)
        .weigher(|_k: &String, v: &Arc<EncodedBody>| v.len().try_into().unwrap_or(u32::MAX))
        .build()
}

/// A resource's page URL: the `page` rule with its slug, else `page_id`.
fn page_urls(site: &Arc<Site>) -> bulwark_template::PageUrls {
    let site = site.clone();
    Arc::new(move |id, slug| {
        let id = id.0.to_string();
        site.router
            .url_for("page", &[id.clone(), slug.to_string()], &[])
            .or_else(|_| site.router.url_for("page_id", &[id], &[]))
            .ok()
    })
}
