//! The host table: every running site with its controllers, by host name.
//!
//! The whole table is immutable once built; in development mode a config change
//! builds a new one and swaps it in atomically (arc-swap), so a request always sees
//! one consistent set of sites and routes and never takes a lock to find them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bulwark_acl::stored::{RuleDoc, load_rules};
use bulwark_acl::{AccessPolicy, SiteLookups, SitePolicy, default_rules};
use bulwark_notify::Observers;
use bulwark_site::{ModuleManifest, Site, SiteError};
use bulwark_store::StoreError;
use bulwark_template::SiteTemplates;

use crate::bottleneck::{Bottleneck, LibBuilds};
use crate::controllers::{self, Controller, ModuleKinds};
use crate::endpoint::{Api, OpenApi};
use crate::error::{LoadError, OpenError};
use crate::module::{Module, SiteSetup, enabled_modules};
use crate::options::SitesOptions;
use crate::reload::ReloadHandle;
use crate::site::{
    Access, LazyDocument, Load, ModuleInfo, ModuleParts, SiteParts, SiteRuntime, Statics, lib_cache,
};
use crate::stores::SiteStores;

/// The site's access policy from `[access]`: its rules (or the default
/// rules) and who reads which property. An error names the key that is wrong.
fn site_policy(site: &Site) -> Result<SitePolicy, (String, String)> {
    let access = &site.config.access;
    let rules = match &access.rules {
        None => default_rules(),
        Some(rules) => rules
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                RuleDoc {
                    group: rule.group.clone(),
                    actions: rule.actions.clone(),
                    content_group: rule.content_group.clone(),
                    categories: rule.categories.clone(),
                    own: rule.own,
                }
                .to_rule(i)
                .map_err(|e| (e.key, e.problem))
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let properties = access
        .private_properties
        .iter()
        .map(|p| (p.clone(), bulwark_acl::MEMBERS.to_string()))
        .chain(
            access
                .properties
                .iter()
                .map(|(p, g)| (p.clone(), g.trim().to_lowercase())),
        )
        .collect();
    Ok(SitePolicy::new(rules, properties))
}

/// Keeps the policy in step with what the store holds when a change (made on
/// this node or, in a cluster, on another) touches what it was made from: the
/// stored rules, the category tree, the content groups. Reloaded off the change
/// task, one reload at a time (so a later one never stores older data), and
/// then every cached value goes: pages rendered under the old rules must not
/// be served under the new.
fn follow_policy_changes(
    observers: &mut Observers,
    policy: &Arc<SitePolicy>,
    models: &Arc<bulwark_template::SiteModels>,
) {
    use bulwark_store::dependency;
    let watched = [
        dependency::config(bulwark_acl::stored::RULES_KEY),
        dependency::category_tree(),
        dependency::category("content_group"),
    ];
    let reloading = Arc::new(std::sync::Mutex::new(()));
    let (policy, models) = (Arc::downgrade(policy), Arc::downgrade(models));
    observers.on_notify(0, move |flushed: &crate::events::CacheFlushed| {
        if !flushed.all && !flushed.keys.iter().any(|k| watched.contains(k)) {
            return;
        }
        let (policy, models, reloading) = (policy.clone(), models.clone(), reloading.clone());
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn_blocking(move || {
            let (Some(policy), Some(models)) = (policy.upgrade(), models.upgrade()) else {
                return; // The site was reloaded meanwhile: its new policy is current.
            };
            let _one_at_a_time = reloading.lock().unwrap_or_else(|e| e.into_inner());
            let read = SiteLookups::load(&models.store)
                .and_then(|lookups| Ok((lookups, load_rules(&models.store)?)));
            match read {
                Ok((lookups, rules)) => {
                    policy.refresh(lookups);
                    if rules.is_some() != policy.has_stored_rules()
                        || rules.as_ref().is_some_and(|r| *r != *policy.rules())
                    {
                        policy.set_rules(rules);
                        models.cache.flush_all();
                    }
                }
                Err(e) => tracing::warn!("reloading the access rules after a change: {e}"),
            }
        });
    });
}

/// A running site and one controller per dispatch rule (by rule index).
pub struct ServedSite {
    pub runtime: Arc<SiteRuntime>,
    pub controllers: Vec<Box<dyn Controller>>,
    /// What each rule's answers are counted in (by rule index).
    pub(crate) rule_counters: Vec<Arc<crate::counters::RuleCounters>>,
}

pub enum HostTarget {
    Site(Arc<ServedSite>),
    /// An alias: redirect to the site's canonical host name.
    Alias(Arc<ServedSite>),
}

pub struct SiteTable {
    /// Looked up per request with a fast hash (the table is fixed: a
    /// request cannot add to it).
    hosts: HashMap<String, HostTarget, foldhash::fast::RandomState>,
    pub default: Option<Arc<ServedSite>>,
    pub sites: Vec<Arc<ServedSite>>,
}

impl SiteTable {
    /// Loads every site, opening (or reusing) its database, and sets up its
    /// modules. At start (`running` is `None`) any error stops everything. On
    /// a reload, a site that fails to load keeps running as it was in
    /// `running` (its errors are returned next to the new table), and the
    /// others are replaced.
    pub async fn load(
        sites_dir: &Path,
        options: &SitesOptions,
        modules: &[Arc<dyn Module>],
        stores: &SiteStores,
        reload: &ReloadHandle,
        running: Option<&SiteTable>,
    ) -> Result<(SiteTable, Vec<LoadError>), Vec<LoadError>> {
        let dir = sites_dir.to_path_buf();
        let dev = options.dev;
        let manifests: Vec<Arc<ModuleManifest>> =
            modules.iter().map(|m| m.manifest().clone()).collect();
        let folders = tokio::task::spawn_blocking(move || {
            bulwark_site::load_site_folders(&dir, dev, &manifests)
        })
        .await
        .expect("loading sites does not panic")
        .map_err(|errors| errors.into_iter().map(LoadError::Site).collect::<Vec<_>>())?;
        let mut table = SiteTable {
            hosts: HashMap::default(),
            default: None,
            sites: Vec::new(),
        };
        let mut errors = Vec::new();
        for folder in folders {
            let loaded = match folder.site {
                Ok(site) => {
                    let ran = running.and_then(|t| t.site_in(&folder.dir)).cloned();
                    serve_site(Arc::new(site), options, modules, stores, reload, ran)
                        .await
                        .map_err(|e| vec![e])
                }
                Err(site_errors) => Err(site_errors.into_iter().map(LoadError::Site).collect()),
            };
            let served = match loaded {
                Ok(served) => Arc::new(served),
                Err(mut site_errors) => {
                    errors.append(&mut site_errors);
                    // A reload leaves a broken site as it ran.
                    match running.and_then(|t| t.site_in(&folder.dir)) {
                        Some(old) => old.clone(),
                        None => continue,
                    }
                }
            };
            let rt = &served.runtime;
            // Read the templates now: what a reload compares with.
            let snapshot = rt.clone();
            let warm = !dev;
            let broken = tokio::task::spawn_blocking(move || {
                snapshot.templates().snapshot();
                // Compile every template now, before the site takes traffic: a
                // rush on a fresh server never waits for (or repeats) a
                // compilation. Dev mode compiles on use, so edits show at once.
                if warm {
                    snapshot.templates().check_all()
                } else {
                    Vec::new()
                }
            })
            .await
            .unwrap_or_default();
            for err in broken {
                tracing::error!(site = %rt.site().name(), "{err}");
            }
            table.add(served, &mut errors);
        }
        if running.is_none() && !errors.is_empty() {
            return Err(errors);
        }
        Ok((table, errors))
    }

    /// Takes a site's host names (unless a site before it has one: that is
    /// an error of this one, which is then left out).
    fn add(&mut self, served: Arc<ServedSite>, errors: &mut Vec<LoadError>) {
        let config = served.runtime.config();
        let taken = config
            .host_names()
            .find(|host| self.hosts.contains_key(host.as_str()));
        if let Some(host) = taken {
            let file = served.runtime.site().dir.join("site.toml");
            errors.push(LoadError::Site(SiteError::invalid(
                &file,
                "hostname",
                format!("{host:?} is also used by another site"),
            )));
            return;
        }
        if config.is_default && self.default.is_some() {
            let file = served.runtime.site().dir.join("site.toml");
            errors.push(LoadError::Site(SiteError::invalid(
                &file,
                "default",
                "another site is already the default site",
            )));
            return;
        }
        self.hosts
            .insert(config.hostname.clone(), HostTarget::Site(served.clone()));
        for alias in &config.aliases {
            self.hosts
                .insert(alias.clone(), HostTarget::Alias(served.clone()));
        }
        if config.is_default {
            self.default = Some(served.clone());
        }
        self.sites.push(served);
    }

    /// The site served from this folder.
    fn site_in(&self, dir: &Path) -> Option<&Arc<ServedSite>> {
        // A loaded site's folder is canonical.
        let dir = dir.canonicalize().ok()?;
        self.sites.iter().find(|s| s.runtime.site().dir == dir)
    }

    /// Picks the site for a (lower-case, port-less) host name.
    pub fn resolve(&self, host: &str) -> Option<&HostTarget> {
        self.hosts.get(host)
    }

    pub fn site(&self, name: &str) -> Option<&Arc<ServedSite>> {
        self.sites
            .iter()
            .find(|s| s.runtime.site().name().as_str() == name)
    }
}

/// Opens a site's data, lets its modules plug in, and builds its controllers.
/// `ran`: the site as it runs already (a reload), which keeps running when
/// the reload breaks one of its templates.
async fn serve_site(
    site: Arc<Site>,
    options: &SitesOptions,
    modules: &[Arc<dyn Module>],
    stores: &SiteStores,
    reload: &ReloadHandle,
    ran: Option<Arc<ServedSite>>,
) -> Result<ServedSite, LoadError> {
    let file = site.dir.join("site.toml");
    if let Some(ran) = ran.filter(|_| !options.dev) {
        // A template the reload broke keeps the site as it ran (as a broken
        // site.toml does): its pages keep their last good templates. One
        // broken before stays as it was. Checked before anything of this
        // load takes over (observers, commit hooks); compiling needs no
        // module's functions (those are looked up when a page renders).
        let check = SiteTemplates::with_extensions(site.clone(), options.template_options(), &[]);
        let newly_broken = tokio::task::spawn_blocking(move || {
            let before: Vec<String> = ran
                .runtime
                .templates()
                .broken()
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            check
                .broken()
                .into_iter()
                .filter(|(name, _)| !before.contains(name))
                .map(|(_, error)| error.to_string())
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        if !newly_broken.is_empty() {
            return Err(LoadError::Templates {
                site: site.name().to_string(),
                broken: newly_broken,
            });
        }
    }
    let enabled = enabled_modules(&site, modules);
    let (open, store_in_use) =
        stores
            .open(&site, &enabled)
            .await
            .map_err(|source| LoadError::Data {
                site: site.name().to_string(),
                source,
            })?;
    let policy =
        Arc::new(site_policy(&site).map_err(|(key, problem)| {
            SiteError::invalid(&file, &format!("access.{key}"), problem)
        })?);
    let store = open.models.store.clone();
    // The names rules use, and the rules the admin stored (which replace the
    // configured ones while they exist).
    let (lookups, stored) = tokio::task::spawn_blocking(move || {
        Ok::<_, StoreError>((SiteLookups::load(&store)?, load_rules(&store)?))
    })
    .await
    .expect("reading the content groups does not panic")
    .map_err(|e| LoadError::Data {
        site: site.name().to_string(),
        source: OpenError::Database(e),
    })?;
    policy.refresh(lookups);
    if stored.is_some() {
        policy.set_rules(stored);
    }
    let site_policy = policy.clone();
    let policy: Arc<dyn AccessPolicy> = policy;
    let mut kinds = ModuleKinds::new();
    let mut observers = Observers::new();
    follow_policy_changes(&mut observers, &site_policy, &open.models);
    let mut template_extensions = Vec::new();
    let mut authenticator = None;
    let mut state = http::Extensions::new();
    let mut measure_latency = false;
    let mut surrogate = None;
    for module in &enabled {
        let name = module.manifest().name;
        module
            .setup(&mut SiteSetup {
                site: &site,
                models: &open.models,
                policy: &policy,
                site_policy: &site_policy,
                notifier: &open.notifier,
                module: name,
                kinds: &mut kinds,
                observers: &mut observers,
                template_extensions: &mut template_extensions,
                authenticator: &mut authenticator,
                state: &mut state,
                measure_latency: &mut measure_latency,
                surrogate: &mut surrogate,
                certificates: &stores.certificates,
            })
            .map_err(|e| SiteError::invalid(&file, &format!("{name}.{}", e.key), e.problem))?;
    }
    let apis: Vec<&'static Api> = enabled.iter().filter_map(|m| m.api()).collect();
    let controllers = site
        .router
        .rules()
        .iter()
        .map(|rule| controllers::build(rule, &kinds, &apis))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|problem| SiteError::invalid(&file, "dispatch", problem))?;
    // Only a site that loads takes over its data's notifications: a broken
    // reload leaves the running site's observers in place.
    let notifier = Arc::new(observers.build());
    open.notifier.replace(notifier.clone());
    notifier.notify(&crate::events::SiteLoaded);
    let openapi = OpenApi::new(site.clone(), apis);
    let openapi: LazyDocument = std::sync::LazyLock::new(Box::new(move || openapi.make()));
    let templates = SiteTemplates::with_extensions(
        site.clone(),
        options.template_options(),
        &template_extensions,
    );
    let available = modules
        .iter()
        .map(|m| {
            let manifest = m.manifest();
            ModuleInfo {
                name: manifest.name,
                depends: manifest.depends,
                enabled: site.modules.iter().any(|e| e.name == manifest.name),
            }
        })
        .collect();
    let runtime = Arc::new(SiteRuntime::new(SiteParts {
        models: open.models,
        templates,
        access: Access {
            policy: site_policy,
            authenticator,
        },
        modules: ModuleParts {
            notifier,
            available,
            state,
            openapi,
            reload: reload.clone(),
        },
        statics: Statics {
            lib_cache: lib_cache(),
            files: crate::file_cache::FileCache::new(options.file_memory_bytes),
        },
        load: Load {
            renders: Bottleneck::new(options.render_limits),
            lib_builds: LibBuilds::new(options.lib_limits),
            counters: open.counters,
            measure_latency,
            surrogate,
            store_in_use,
        },
        dev: options.dev,
        site,
    }));
    crate::figures::spawn(&runtime);
    let rule_counters = runtime.counters().for_rules(runtime.site().router.rules());
    Ok(ServedSite {
        runtime,
        controllers,
        rule_counters,
    })
}
