//! What the server holds per site, and the host table that picks the site.
//!
//! The whole table is immutable once built; in development mode a config change
//! builds a new one and swaps it in atomically (arc-swap), so a request always sees
//! one consistent set of sites and routes and never takes a lock to find them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bulwark_site::{Controller as Rule, Site, SiteError};
use bulwark_template::{SiteTemplates, TemplateOptions};

use crate::controller::{Controller, EncodedBody};
use crate::controllers::{FileController, LibController, RedirectController, TemplateController};

/// Budget for combined static files kept in memory, per site.
const LIB_CACHE_BYTES: u64 = 64 * 1024 * 1024;

pub struct SiteRuntime {
    pub site: Arc<Site>,
    pub templates: SiteTemplates,
    /// One controller per dispatch rule, by rule index.
    pub controllers: Vec<Box<dyn Controller>>,
    pub lib_cache: moka::future::Cache<String, Arc<EncodedBody>>,
    pub dev: bool,
}

impl SiteRuntime {
    pub fn new(site: Site, options: &TemplateOptions) -> SiteRuntime {
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
                    } => Box::new(TemplateController::new(template, content_type.as_deref())),
                    Rule::Lib => Box::new(LibController),
                    Rule::File { root } => Box::new(FileController { root: root.clone() }),
                    Rule::Redirect { to, permanent } => Box::new(RedirectController {
                        to: to.clone(),
                        permanent: *permanent,
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
    pub fn load(sites_dir: &Path, options: &TemplateOptions) -> Result<SiteTable, Vec<SiteError>> {
        let sites = bulwark_site::load_sites(sites_dir, options.dev)?;
        Ok(SiteTable::from_sites(sites, options))
    }

    pub fn from_sites(sites: Vec<Site>, options: &TemplateOptions) -> SiteTable {
        let mut table = SiteTable {
            hosts: HashMap::new(),
            default: None,
            sites: Vec::new(),
        };
        for site in sites {
            let rt = Arc::new(SiteRuntime::new(site, options));
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
        table
    }

    /// Picks the site for a (lower-case, port-less) host name.
    pub fn resolve(&self, host: &str) -> Option<&HostTarget> {
        self.hosts.get(host)
    }
}
