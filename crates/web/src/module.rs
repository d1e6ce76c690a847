//! Modules: units of functionality compiled into the binary and enabled per site.
//!
//! A module is a crate under `modules/` that implements [`Module`]. Its manifest
//! (templates, static files, dispatch rules, priority, the modules it needs) goes to
//! the site layer; its code plugs in through [`Module::setup`], called for every
//! site that enables it each time the site loads, with a [`SiteSetup`] to add
//! controller kinds, observers and template functions; its tables come with
//! [`Module::migrations`], applied when the site's store opens (by the server or
//! by a command), and [`Module::start_serving`] runs only when the server opens it. The binary
//! registers the modules it ships (`bulwark` crate, `modules()`); the core reaches
//! a module only through these hooks, never by name.

use std::sync::Arc;

use bulwark_acl::AccessPolicy;
use bulwark_notify::Observers;
use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{Migration, Store, StoreError};
use bulwark_template::{SiteModels, TemplateExtension};

use crate::authenticate::Authenticator;
use crate::controllers::{Controller, ControllerFactory, ModuleKinds};
use crate::endpoint::Api;
use crate::error::ModuleError;
use crate::error::StartError;
use crate::notifier::SiteNotifier;

pub trait Module: Send + Sync + 'static {
    /// Name, priority, dependencies, templates, static files and dispatch rules.
    fn manifest(&self) -> &Arc<ModuleManifest>;

    /// The module's JSON endpoints and the schemas their descriptions use
    /// (`crate::endpoint`). Its manifest must add their rules
    /// (`ModuleManifest::with_endpoints(api.routes())`).
    fn api(&self) -> Option<&'static Api> {
        None
    }

    /// The module's own tables, applied in order when a site's store opens.
    fn migrations(&self) -> &'static [Migration] {
        &[]
    }

    /// Runs once when a site's store opens (after the migrations), on a thread
    /// that may block: for content the module needs to exist.
    fn open_store(&self, _site: &Site, _store: &Store) -> Result<(), StoreError> {
        Ok(())
    }

    /// Runs once when the server opens a site's store to serve it (after every
    /// module's `open_store`), on a thread that may block; not when a command
    /// (`bulwark user ...`) opens the store to work on it. For what belongs to a
    /// site that is about to serve, such as the first administrator account.
    fn start_serving(&self, _site: &Site, _store: &Store) -> Result<(), StartError> {
        Ok(())
    }

    /// Plugs the module into a site that enables it: controller kinds, observers,
    /// template functions. Called each time the site loads. An error (usually about
    /// the module's section of `site.toml`) stops the site from loading.
    fn setup(&self, _site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        Ok(())
    }
}

/// The modules of `available` that `site` enables, in the site's lookup order.
pub fn enabled_modules(site: &Site, available: &[Arc<dyn Module>]) -> Vec<Arc<dyn Module>> {
    site.modules
        .iter()
        .filter_map(|m| {
            available
                .iter()
                .find(|o| o.manifest().name == m.name)
                .cloned()
        })
        .collect()
}

impl std::fmt::Debug for dyn Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.manifest().name)
    }
}

/// What a module may add to one site while it loads.
pub struct SiteSetup<'a> {
    pub(crate) site: &'a Arc<Site>,
    pub(crate) models: &'a Arc<SiteModels>,
    pub(crate) policy: &'a Arc<dyn AccessPolicy>,
    pub(crate) site_policy: &'a Arc<bulwark_acl::SitePolicy>,
    pub(crate) notifier: &'a SiteNotifier,
    pub(crate) module: &'static str,
    pub(crate) kinds: &'a mut ModuleKinds,
    pub(crate) observers: &'a mut Observers,
    pub(crate) template_extensions: &'a mut Vec<TemplateExtension>,
    pub(crate) authenticator: &'a mut Option<Arc<dyn Authenticator>>,
    pub(crate) state: &'a mut http::Extensions,
    pub(crate) measure_latency: &'a mut bool,
    pub(crate) surrogate: &'a mut Option<crate::Surrogate>,
    pub(crate) certificates: &'a Arc<crate::Certificates>,
}

impl SiteSetup<'_> {
    pub fn site(&self) -> &Arc<Site> {
        self.site
    }

    /// Time every answer of the site (two clock reads per request), for
    /// [`SiteRuntime::counters`](crate::SiteRuntime::counters)' latency
    /// buckets: only a site that reads them pays for them.
    pub fn measure_latency(&mut self) {
        *self.measure_latency = true;
    }

    /// The certificates the server serves over TLS: a module that obtains
    /// one (ACME) installs it here.
    pub fn certificates(&self) -> &Arc<crate::Certificates> {
        self.certificates
    }

    /// Send pages from the page cache with their dependency keys as
    /// surrogate keys, for a shared cache in front (`surrogate.rs`).
    pub fn send_surrogate_keys(&mut self, surrogate: crate::Surrogate) {
        *self.surrogate = Some(surrogate);
    }

    /// The site's data (store and depcache).
    pub fn models(&self) -> &Arc<SiteModels> {
        self.models
    }

    /// The site's access policy, the one its pages and API ask: for code that
    /// decides who may see something outside a request (push messages about a
    /// resource).
    pub fn policy(&self) -> &Arc<dyn AccessPolicy> {
        self.policy
    }

    /// Makes every change of the resources `guard` judges pass it, on every
    /// surface (the accounts module guards persons and user groups).
    pub fn guard_resources(&self, guard: Arc<dyn bulwark_acl::ResourceGuard>) {
        self.site_policy.add_guard(guard);
    }

    /// The site's observers once it has loaded (and after every reload), for
    /// code that outlives this setup and must ask them (a hub's access checks).
    pub fn notifier(&self) -> SiteNotifier {
        self.notifier.clone()
    }

    /// The module's own section of `site.toml` (`[push]` for `push`), if any.
    pub fn settings(&self) -> Option<&toml::Table> {
        self.site.config.module_settings.get(self.module)
    }

    /// A new controller kind: dispatch rules with `controller = "<kind>"` get a
    /// controller made by `factory` from the rule's other keys (an error names the
    /// option that is wrong).
    pub fn add_controller(
        &mut self,
        kind: &str,
        factory: impl Fn(&toml::Table) -> Result<Box<dyn Controller>, ModuleError>
        + Send
        + Sync
        + 'static,
    ) {
        let factory: ControllerFactory = Box::new(factory);
        self.kinds.insert(kind.to_string(), factory);
    }

    /// Observers of notifications (see `events` and `docs/notifications.md`).
    pub fn observers(&mut self) -> &mut Observers {
        self.observers
    }

    /// Adds `item` to the admin's menu on this site (an observer of the
    /// [`AdminMenu`](crate::events::AdminMenu) fold, at `priority`).
    pub fn add_admin_menu_item(&mut self, priority: i32, item: crate::events::MenuItem) {
        self.observers.on_fold(
            priority,
            move |_: &crate::events::AdminMenu, mut menu: Vec<crate::events::MenuItem>| {
                menu.push(item.clone());
                menu
            },
        );
    }

    /// Who is asking: the site's one authenticator (the accounts module sets
    /// it; a second module setting one replaces the first).
    pub fn set_authenticator(&mut self, authenticator: Arc<dyn Authenticator>) {
        *self.authenticator = Some(authenticator);
    }

    /// Keeps `value` with the running site, for the module's endpoints and
    /// controllers to find ([`SiteRuntime::state`](crate::SiteRuntime::state)):
    /// the module's per-site state (its stores, limits, settings). One value
    /// per type: a second replaces the first.
    pub fn provide<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.state.insert(value);
    }

    /// Template functions, filters or globals: `extend` runs on the site's
    /// template environment when it is built.
    pub fn add_template_extension(
        &mut self,
        extend: impl Fn(&mut minijinja::Environment<'static>) + Send + Sync + 'static,
    ) {
        self.template_extensions.push(Arc::new(extend));
    }
}
