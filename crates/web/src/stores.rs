//! Each site's data: its store opened once (and kept across configuration reloads),
//! the modules' migrations, the depcache in front of it, and the task that turns
//! committed changes into cache flushes and notifications.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::oneshot;

use bulwark_depcache::DependencyKey;
use bulwark_notify::Notifier;
use bulwark_site::{DatabaseSettings, Site};
use bulwark_store::{Store, StoreConfig};
use bulwark_template::SiteModels;

use crate::error::OpenError;
use crate::events::{CacheFlushed, ResourceChanged};
use crate::module::Module;
use crate::notifier::SiteNotifier;
use crate::site::StoreInUse;

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

/// A store as [`SiteStores`] keeps it: the settings it was opened with, and
/// the holds on it.
struct Opened {
    settings: DatabaseSettings,
    open: OpenStore,
    in_use: StoreInUse,
    /// Ends when every [`StoreInUse`] is gone.
    unused: oneshot::Receiver<()>,
}

/// Open stores by site name, with the settings they were opened with.
#[derive(Default)]
pub(crate) struct SiteStores {
    open: Mutex<HashMap<String, Opened>>,
    /// The presence rows this server keeps ([`refuse_shared_database`]).
    present: Arc<Mutex<Vec<(Store, String)>>>,
    /// The certificates served over TLS (they outlive reloads too).
    pub certificates: Arc<crate::tls::Certificates>,
}

impl SiteStores {
    /// Called when the server stops: every store is [retired](retire), so
    /// another server may start on their databases at once, and their
    /// connections go back now, not when the process exits.
    pub async fn close(&self) {
        let open: Vec<OpenStore> = std::mem::take(&mut *self.open.lock().expect("stores"))
            .into_values()
            .map(|opened| opened.open)
            .collect();
        for open in open {
            retire(&self.present, &open.models.store).await;
        }
        // Stores a reload replaced, still in their grace period.
        let replaced: Vec<Store> = self
            .present
            .lock()
            .expect("present")
            .iter()
            .map(|(store, _)| store.clone())
            .collect();
        for store in replaced {
            retire(&self.present, &store).await;
        }
    }

    /// The site's store, opening its database the first time (or when its
    /// `[database]` settings changed) with [`open_site_store`], then running the
    /// enabled modules' [`Module::start_serving`] hooks; and a hold on it for
    /// the load that will use it.
    pub async fn open(
        &self,
        site: &Arc<Site>,
        modules: &[Arc<dyn Module>],
    ) -> Result<(OpenStore, StoreInUse), OpenError> {
        let settings = site.config.database.clone();
        if let Some(opened) = self.open.lock().expect("stores").get(site.name().as_str())
            && opened.settings == settings
        {
            return Ok((opened.open.clone(), opened.in_use.clone()));
        }
        let store = open_site_store(site, modules).await?;
        let open = match self.start(site, modules, store.clone()).await {
            Ok(open) => open,
            Err(e) => {
                retire(&self.present, &store).await;
                return Err(e);
            }
        };
        let (held, unused) = oneshot::channel();
        let in_use = StoreInUse::new(held);
        let replaced = self.open.lock().expect("stores").insert(
            site.name().to_string(),
            Opened {
                settings,
                open: open.clone(),
                in_use: in_use.clone(),
                unused,
            },
        );
        if let Some(old) = replaced {
            // The site now uses another database. The old store closes when
            // the last load made on it is gone: the reload swaps this new
            // load in, and the requests that began on the old one end.
            let Opened {
                open: old,
                in_use: held,
                unused,
                ..
            } = old;
            drop(held);
            let present = self.present.clone();
            let name = site.name().to_string();
            tokio::spawn(async move {
                if tokio::time::timeout(REPLACED_STORE_MOST, unused)
                    .await
                    .is_err()
                {
                    tracing::warn!(
                        site = %name,
                        "closing the database the site used before its [database] changed, \
                         although requests that began on it (push connections) still run"
                    );
                }
                retire(&present, &old.models.store).await;
            });
        }
        Ok((open, in_use))
    }

    /// Starts serving a site from its opened `store`: the shared-database
    /// check, the modules' [`Module::start_serving`] hooks, the store's tasks.
    async fn start(
        &self,
        site: &Arc<Site>,
        modules: &[Arc<dyn Module>],
        store: Store,
    ) -> Result<OpenStore, OpenError> {
        let turn = store.opening_lock().await.map_err(OpenError::Database)?;
        if store.backend_name() == "postgres" {
            let node = refuse_shared_database(site, modules, &store).await?;
            self.present
                .lock()
                .expect("present")
                .push((store.clone(), node));
        }
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
        drop(turn);
        store.spawn_pivot_task(100, Duration::from_millis(200));
        store.spawn_publication_task();
        let open = OpenStore {
            models: SiteModels::new(store),
            notifier: SiteNotifier::default(),
            counters: Arc::default(),
        };
        open.models
            .store
            .spawn_while_open(apply_changes(open.clone()));
        Ok(open)
    }
}

/// Takes a store out of service: its presence row goes (a server stopped
/// cleanly does not keep another from starting on the database), then the
/// store closes (its tasks end, its connections are given back).
async fn retire(present: &Mutex<Vec<(Store, String)>>, store: &Store) {
    let node = {
        let mut present = present.lock().expect("present");
        let at = present.iter().position(|(s, _)| s.same_as(store));
        at.map(|at| present.remove(at).1)
    };
    if let Some(node) = node {
        let store = store.clone();
        if let Err(e) = store.run(move |s| s.absent(&node)).await {
            tracing::warn!("saying this server leaves the database: {e}");
        }
    }
    store.close().await;
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
            bulwark_site::private_folder(&path).map_err(|source| OpenError::DataFolder {
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
    let _turn = store.opening_lock().await.map_err(OpenError::Database)?;
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

/// How long a store the site no longer uses (its `[database]` changed) stays
/// open at most for the requests that began on it (a push connection may last
/// hours; it is not let to keep the old database open that long).
const REPLACED_STORE_MOST: Duration = Duration::from_secs(600);

/// How often a server on PostgreSQL says it is there, and how long after its
/// last word it counts as gone.
const PRESENCE_EVERY: Duration = Duration::from_secs(5);
const PRESENCE_WINDOW: Duration = Duration::from_secs(30);

/// Refuses a PostgreSQL site another server uses too, unless all of them run
/// the `cluster` module (which keeps their caches in step); then keeps saying
/// this server is there. Refusing rather than turning the module on: the
/// module needs a node name per server and, behind a balancer, its health
/// check, which only the person setting the nodes up can give; and a server
/// pointed at the wrong schema by mistake should stop, not join.
async fn refuse_shared_database(
    site: &Arc<Site>,
    modules: &[Arc<dyn Module>],
    store: &Store,
) -> Result<String, OpenError> {
    let me = bulwark_store::NodePresence {
        // The same across this server's restarts: a crash does not block
        // the next start.
        node: format!("{}:{}", host_name(), site.dir.display()),
        description: format!(
            "{} (process {}, site folder {})",
            host_name(),
            std::process::id(),
            site.dir.display()
        ),
        clustered: modules.iter().any(|m| m.manifest().name == "cluster"),
    };
    let window = PRESENCE_WINDOW.as_millis() as i64;
    let others = {
        let (store, me) = (store.clone(), me.clone());
        store.run(move |s| s.present(&me, window)).await
    }
    .map_err(OpenError::Database)?;
    let unclustered = !me.clustered || others.iter().any(|o| !o.clustered);
    if !others.is_empty() && unclustered {
        return Err(OpenError::SharedDatabase {
            others: others.into_iter().map(|o| o.description).collect(),
            clustered: me.clustered,
        });
    }
    let node = me.node.clone();
    let store = store.clone();
    store.clone().spawn_while_open(async move {
        loop {
            tokio::time::sleep(PRESENCE_EVERY).await;
            let me = me.clone();
            if let Err(e) = store.run(move |s| s.present(&me, window)).await {
                tracing::warn!("saying this server uses the database: {e}");
            }
        }
    });
    Ok(node)
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
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
                let notifier = open.notifier.current();
                flush(models, &notifier, change.keys.clone());
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
    flush_all(&open.models, &open.notifier.current());
}

/// Drops what depends on `keys` from the site's cache, then tells the
/// observers ([`CacheFlushed`]: a cache in front purges the same): the one
/// way a flush is made, for a change, a reload and `bulwark purge` alike.
pub(crate) fn flush(models: &SiteModels, notifier: &Notifier, keys: Vec<DependencyKey>) {
    for key in &keys {
        models.cache.flush_dependency(key);
    }
    notifier.notify(&CacheFlushed { keys, all: false });
}

/// Drops everything the site's cache holds, then tells the observers.
pub(crate) fn flush_all(models: &SiteModels, notifier: &Notifier) {
    models.cache.flush_all();
    notifier.notify(&CacheFlushed {
        keys: Vec::new(),
        all: true,
    });
}
