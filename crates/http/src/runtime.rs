//! What the server holds per site, and the host table that picks the site.
//!
//! The whole table is immutable once built; in development mode a config change
//! builds a new one and swaps it in atomically (arc-swap), so a request always sees
//! one consistent set of sites and routes and never takes a lock to find them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use bulwark_site::{Controller as Rule, Site, SiteError};
use bulwark_template::{SiteTemplates, TemplateOptions};

use crate::bottleneck::RenderLimits;
use crate::controller::{Controller, EncodedBody};
use crate::controllers::{
    FileController, LibController, PageController, RedirectController, TemplateController,
};
use crate::data::SiteStores;
use crate::push::{PushController, SitePushAcl};

/// Budget for combined static files kept in memory, per site.
const LIB_CACHE_BYTES: u64 = 64 * 1024 * 1024;

pub struct SiteRuntime {
    pub site: Arc<Site>,
    pub templates: SiteTemplates,
    /// One controller per dispatch rule, by rule index.
    pub controllers: Vec<Box<dyn Controller>>,
    pub lib_cache: moka::future::Cache<String, Arc<EncodedBody>>,
    /// Renders wait here for a slot (a 503 past the deadline).
    pub renders: crate::bottleneck::Bottleneck,
    /// Page renders in progress, joined by concurrent requests for the same page.
    pub page_flights: crate::page_cache::PageFlights,
    /// The site's push hub, when the `push` module is enabled.
    pub push: Option<Arc<bulwark_push::Hub>>,
    /// The site's data: store and depcache.
    pub models: Arc<bulwark_template::SiteModels>,
    /// Who may see which resources and properties (`[access]`).
    pub policy: Arc<dyn bulwark_template::AccessPolicy>,
    pub dev: bool,
}

/// Push hubs by site, kept across configuration reloads so connected clients keep
/// their tasks; a hub is replaced only when the site's `[push]` policy changed.
#[derive(Default)]
pub struct PushHubs {
    hubs: Mutex<HashMap<String, (String, Arc<bulwark_push::Hub>)>>,
}

impl PushHubs {
    pub(crate) fn hub_for(&self, site: &Site) -> Option<Arc<bulwark_push::Hub>> {
        if !site.modules.iter().any(|m| m.name == "push") {
            return None;
        }
        let policy = format!("{:?}", site.config.push);
        let mut hubs = self.hubs.lock().expect("push hubs");
        if let Some((p, hub)) = hubs.get(site.name().as_str())
            && *p == policy
        {
            return Some(hub.clone());
        }
        let hub = bulwark_push::Hub::new(
            push_config(&site.config.push),
            Arc::new(SitePushAcl::new(&site.config.push)),
        );
        hubs.insert(site.name().to_string(), (policy, hub.clone()));
        Some(hub)
    }
}

/// The hub's limits and timings: the defaults, with what `[push]` sets.
fn push_config(settings: &bulwark_site::PushSettings) -> bulwark_push::PushConfig {
    let mut config = bulwark_push::PushConfig::default();
    if let Some(ms) = settings.client_idle_timeout_ms {
        config.client_idle_timeout = std::time::Duration::from_millis(ms);
    }
    if let Some(ms) = settings.batch_interval_ms {
        config.batch_interval = std::time::Duration::from_millis(ms);
    }
    let sizes = [
        (settings.history_size, &mut config.history_size),
        (settings.max_clients, &mut config.max_clients),
        (settings.max_subscriptions, &mut config.max_subscriptions),
        (settings.max_message_bytes, &mut config.max_message_bytes),
        (settings.inbox_size, &mut config.inbox_size),
    ];
    for (set, field) in sizes {
        if let Some(n) = set {
            *field = n;
        }
    }
    config
}

impl SiteRuntime {
    pub fn new(
        site: Site,
        options: &TemplateOptions,
        push: Option<Arc<bulwark_push::Hub>>,
        models: Arc<bulwark_template::SiteModels>,
        limits: RenderLimits,
    ) -> SiteRuntime {
        let site = Arc::new(site);
        let controllers = site
            .router
            .rules()
            .iter()
            .map(|rule| -> Box<dyn Controller> {
                match &rule.controller {
                    Rule::Template {
                        template,
                        content_type,
                        cache,
                    } => Box::new(TemplateController::new(
                        template,
                        content_type.as_deref(),
                        *cache,
                    )),
                    Rule::Lib => Box::new(LibController),
                    Rule::File { root } => Box::new(FileController { root: root.clone() }),
                    Rule::Redirect { to, permanent } => Box::new(RedirectController {
                        to: to.clone(),
                        permanent: *permanent,
                    }),
                    Rule::Page { cache } => Box::new(PageController {
                        cache: *cache,
                        cost: Default::default(),
                    }),
                    Rule::Api => Box::new(crate::api::ApiController),
                    Rule::Push { transport } => Box::new(PushController {
                        transport: *transport,
                    }),
                }
            })
            .collect();
        SiteRuntime {
            templates: SiteTemplates::new(site.clone(), options.clone()),
            controllers,
            lib_cache: moka::future::Cache::builder()
                .max_capacity(LIB_CACHE_BYTES)
                .weigher(|_k: &String, v: &Arc<EncodedBody>| v.weight())
                .build(),
            push,
            models,
            page_flights: Default::default(),
            renders: crate::bottleneck::Bottleneck::new(limits),
            policy: Arc::new(bulwark_template::DefaultPolicy {
                private_properties: site.config.access.private_properties.clone(),
            }),
            dev: options.dev,
            site,
        }
    }
}

pub enum HostTarget {
    Site(Arc<SiteRuntime>),
    /// An alias: redirect to the site's canonical host name.
    Alias(Arc<SiteRuntime>),
}

pub struct SiteTable {
    pub hosts: HashMap<String, HostTarget>,
    pub default: Option<Arc<SiteRuntime>>,
    pub sites: Vec<Arc<SiteRuntime>>,
}

impl SiteTable {
    /// Loads every site, opening (or reusing) its database and push hub.
    pub async fn load(
        sites_dir: &Path,
        options: &TemplateOptions,
        hubs: &PushHubs,
        stores: &SiteStores,
        limits: RenderLimits,
    ) -> Result<SiteTable, Vec<SiteError>> {
        let dir = sites_dir.to_path_buf();
        let dev = options.dev;
        let sites = tokio::task::spawn_blocking(move || bulwark_site::load_sites(&dir, dev))
            .await
            .expect("loading sites does not panic")?;
        let mut table = SiteTable {
            hosts: HashMap::new(),
            default: None,
            sites: Vec::new(),
        };
        let mut errors = Vec::new();
        for site in sites {
            let push = hubs.hub_for(&site);
            let models = match stores.models_for(&site, push.clone()).await {
                Ok(models) => models,
                Err(problem) => {
                    errors.push(SiteError::Invalid {
                        file: site.dir.join("site.toml"),
                        key: "database".into(),
                        problem,
                    });
                    continue;
                }
            };
            let rt = Arc::new(SiteRuntime::new(site, options, push, models, limits));
            if !dev {
                // Compile every template now, before the site takes traffic: a rush
                // on a fresh server never waits for (or repeats) a compilation.
                // Dev mode compiles on use, so edits show at once.
                let warm = rt.clone();
                let broken = tokio::task::spawn_blocking(move || warm.templates.check_all())
                    .await
                    .unwrap_or_default();
                for err in broken {
                    tracing::error!(site = %rt.site.name(), "{err}");
                }
            }
            let config = &rt.site.config;
            table
                .hosts
                .insert(config.hostname.clone(), HostTarget::Site(rt.clone()));
            for alias in &config.aliases {
                table
                    .hosts
                    .insert(alias.clone(), HostTarget::Alias(rt.clone()));
            }
            if config.is_default {
                table.default = Some(rt.clone());
            }
            table.sites.push(rt);
        }
        if errors.is_empty() {
            Ok(table)
        } else {
            Err(errors)
        }
    }

    /// Picks the site for a (lower-case, port-less) host name.
    pub fn resolve(&self, host: &str) -> Option<&HostTarget> {
        self.hosts.get(host)
    }
}
