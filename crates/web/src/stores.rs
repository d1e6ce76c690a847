//! Each site's data: its store opened once (and kept across configuration reloads),
//! the modules' migrations, the depcache in front of it, and the task that turns
//! committed changes into cache flushes and notifications.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;

use bulwark_site::{DatabaseSettings, Site};
use bulwark_store::{Store, StoreConfig};
use bulwark_template::SiteModels;

use crate::error::OpenError;
use crate::events::{CacheFlushed, ResourceChanged};
use crate::module::Module;
use crate::notifier::SiteNotifier;

/// A site's open store, and where its change task finds the site's current
/// observers (a configuration reload swaps them; the task lives on).
#[derive(Clone)]
pub(crate) struct OpenStore {
    pub models: Arc<SiteModels>,
    pub notifier: SiteNotifier,
    /// What the site counts as it serves: kept across reloads, so a count
    /// only ever grows while the server runs.
    pub counters: Arc<crate::counters::Counters>,
}

/// Open stores by site name, with the settings they were opened with.
#[derive(Default)]
pub(crate) struct SiteStores {
    open: Mutex<HashMap<String, (DatabaseSettings, OpenStore)>>,
}

impl SiteStores {
    /// The site's store, opening its database the first time (or when its
    /// `[database]` settings changed) with [`open_site_store`], then running the
    /// enabled modules' [`Module::start_serving`] hooks.
    pub async fn open(
        &self,
        site: &Arc<Site>,
        modules: &[Arc<dyn Module>],
    ) -> Result<OpenStore, OpenError> {
        let settings = site.config.database.clone();
        if let Some((open_with, open)) = self.open.lock().expect("stores").get(site.name().as_str())
            && *open_with == settings
        {
            return Ok(open.clone());
        }
        let store = open_site_store(site, modules).await?;
        for module in modules {
            let name = module.manifest().name;
            let (module, site) = (module.clone(), site.clone());
            store
                .run(move |s| Ok(module.start_serving(&site, s)))
                .await
                .map_err(|source| OpenError::Module {
                    module: name,
                    source,
                })?
                .map_err(|source| OpenError::Start {
                    module: name,
                    source,
                })?;
        }
        store.spawn_pivot_task(100, Duration::from_millis(200));
        store.spawn_publication_task();
        let open = OpenStore {
            models: SiteModels::new(store),
            notifier: SiteNotifier::default(),
            counters: Arc::default(),
        };
        tokio::spawn(apply_changes(open.clone()));
        self.open
            .lock()
            .expect("stores")
            .insert(site.name().to_string(), (settings, open.clone()));
        Ok(open)
    }
}

/// Opens a site's database the way serving does (`[database]` of its
/// `site.toml`, SQLite in its `data/` folder by default), applies the `modules`'
/// migrations and runs their [`Module::open_store`] hooks; nothing else starts.
/// `bulwark serve` goes on to serve it; a command such as `bulwark user` works on
/// it and exits.
pub async fn open_site_store(
    site: &Arc<Site>,
    modules: &[Arc<dyn Module>],
) -> Result<Store, OpenError> {
    let settings = &site.config.database;
    let mut config = match &settings.url {
        Some(url) => StoreConfig::postgres(url, settings.schema.as_deref()),
        None => {
            let path = site.dir.join("data");
            std::fs::create_dir_all(&path).map_err(|source| OpenError::DataFolder {
                path: path.clone(),
                source,
            })?;
            StoreConfig::sqlite(path.join("site.db"))
        }
    };
    if let Some(n) = settings.max_connections {
        config.pool.max_connections = n;
        config.pool.min_connections = config.pool.min_connections.min(n);
    }
    if let Some(n) = settings.sqlite_readers {
        config.pool.sqlite_readers = n;
    }
    if let Some(ms) = settings.pool_timeout_ms {
        config.pool.acquire_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = settings.statement_timeout_ms {
        config.pool.statement_timeout = Duration::from_millis(ms.max(1));
    }
    let store = Store::open(config).await.map_err(OpenError::Database)?;
    for module in modules {
        let name = module.manifest().name;
        let (module, site) = (module.clone(), site.clone());
        store
            .run(move |s| {
                s.migrate_module(name, module.migrations())?;
                module.open_store(&site, s)
            })
            .await
            .map_err(|source| OpenError::Module {
                module: name,
                source,
            })?;
    }
    Ok(store)
}

/// Committed writes (here, on another node, or a publication window that opened
/// or closed) flush exactly the dependency keys they name; then the site's
/// observers hear which resources changed.
async fn apply_changes(open: OpenStore) {
    let models = &open.models;
    let mut changes = models.store.subscribe();
    loop {
        match changes.recv().await {
            // Which keys changed is unknown, so everything goes.
            Ok(change) if change.everything => flush_everything(&open),
            Ok(change) => {
                for key in &change.keys {
                    models.cache.flush_dependency(key);
                }
                let notifier = open.notifier.current();
                notifier.notify(&CacheFlushed {
                    keys: change.keys.clone(),
                    all: false,
                });
                for changed in &change.resources {
                    notifier.notify(&ResourceChanged {
                        id: changed.id,
                        kind: changed.kind,
                    });
                }
            }
            // Missed events: which keys changed is unknown, so everything goes.
            Err(RecvError::Lagged(_)) => flush_everything(&open),
            Err(RecvError::Closed) => return,
        }
    }
}

fn flush_everything(open: &OpenStore) {
    open.models.cache.flush_all();
    open.notifier.current().notify(&CacheFlushed {
        keys: Vec::new(),
        all: true,
    });
}
