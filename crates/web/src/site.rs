//! What a running site holds: its configuration, templates, data, access policy,
//! render bottleneck, static-file cache and observers. Built when the site loads
//! (again on a configuration reload in development mode) and then immutable.

use std::sync::Arc;

use bulwark_acl::AccessPolicy;
use bulwark_http::EncodedBody;
use bulwark_notify::Notifier;
use bulwark_site::Site;
use bulwark_template::{SiteModels, SiteTemplates};

use crate::authenticate::Authenticator;
use crate::bottleneck::{Bottleneck, LibBuilds};
use crate::security_headers::SecurityHeaders;

pub struct SiteRuntime {
    pub site: Arc<Site>,
    pub templates: SiteTemplates,
    /// Combined static files, encoded once, within a byte budget.
    pub lib_cache: moka::future::Cache<String, Arc<EncodedBody>>,
    /// Building a body for `lib_cache` waits here (a 503 past the deadline).
    pub lib_builds: LibBuilds,
    /// Hot files (the site's `files/`, media) held in memory within a budget.
    pub files: crate::file_cache::FileCache,
    /// Renders wait here for a slot (a 503 past the deadline).
    pub renders: Bottleneck,
    /// The site's data: store and depcache.
    pub models: Arc<SiteModels>,
    /// Who may see which resources and properties (`[access]`).
    pub policy: Arc<dyn AccessPolicy>,
    /// The same policy, for what changes it (the stored rules).
    pub site_policy: Arc<bulwark_acl::SitePolicy>,
    /// Who is asking (the accounts module's sessions and tokens); `None`:
    /// every request is anonymous.
    pub authenticator: Option<Arc<dyn Authenticator>>,
    /// The observers the site's modules registered.
    pub notifier: Arc<Notifier>,
    /// The modules this binary has (enabled here or not), for the admin.
    pub available_modules: Vec<ModuleInfo>,
    /// Loads every site again (after a `site.toml` changed from the admin).
    pub reload: crate::sites::ReloadHandle,
    /// What the site counts as it serves, for its live figures.
    pub counters: crate::figures::Counters,
    /// The OpenAPI document of the endpoints this site serves.
    pub openapi: bytes::Bytes,
    /// What the site's modules keep per site (`SiteSetup::provide`).
    pub(crate) state: http::Extensions,
    /// `[headers]`, ready to add to every response.
    pub(crate) security_headers: SecurityHeaders,
    pub dev: bool,
}

impl SiteRuntime {
    /// What a module kept for this site with `SiteSetup::provide`; `None` when
    /// no enabled module did.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.state.get::<T>()
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
