//! The cluster module: several Bulwark nodes serving one site from one
//! PostgreSQL database, each with its own caches and push hub, kept in step.
//!
//! **How it works.** Every write that changes something adds a row to the
//! module's outbox and a `pg_notify` in the write's own transaction (a
//! [`CommitHook`](bulwark_store::CommitHook) on the site's store), so the other
//! nodes hear of exactly the committed changes, in commit order, at commit.
//! Each node listens on the site's channel and hands what it hears to its store
//! as if it had written it ([`Store::announce`](bulwark_store::Store::announce)):
//! the site's change task flushes the dependency keys (model values, fragments,
//! pages) and tells the observers, so `rsc/{id}` push messages, the sitemap and
//! the rest follow on every node. Push publications made on a node (except
//! `rsc/{id}`, which every node derives itself) go to the others batched, through
//! the same channel; one too large for a notification is kept in the outbox and
//! only its id travels. Each node's live figures (the admin's dashboard) go to
//! the others once a second and arrive as `SiteFigures` naming their node. A
//! node that is not sure it heard everything (its listening connection broke,
//! or stopped answering its own heartbeat) flushes everything it caches (the
//! reasons are at the top of `node.rs`).
//!
//! `/cluster/health` answers 200 while the node hears the others and 503 while it
//! does not, for a load balancer's health check (docs/cluster.md).
//!
//! **What it does not do.** No consensus and no node list: PostgreSQL is the
//! one shared thing, and a node that cannot reach it cannot serve fresh pages
//! anyway. Push history stays per node: a client that moves to another node
//! resumes as a new client there and is told of the gap (its positions name
//! the other node's epoch), which `bulwark.js` answers by reloading what it shows.
//! Sessions need nothing from this module: they are in the database.

mod node;
mod outbox;
mod settings;
pub mod wire;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use futures_util::future::BoxFuture;
use http::StatusCode;
use serde_json::json;

use bulwark_module_push::PushHub;
use bulwark_site::ModuleManifest;
use bulwark_store::Migration;
use bulwark_web::events::{GatherFigures, SiteFigures, SiteLoaded};
use bulwark_web::{
    Controller, Figures, Module, ModuleError, Outcome, RequestCtx, SiteNotifier, SiteSetup,
    json_response,
};

pub use node::{ClusterError, Node, NodeState};
pub use settings::{ClusterSettings, NODE_ENV};

pub const PRIORITY: i32 = 300;

/// Observers of the core events run in this order among the module's.
const OBSERVER_PRIORITY: i32 = 500;

pub struct ClusterModule {
    /// Running nodes by site name.
    nodes: Mutex<HashMap<String, SiteNode>>,
}

struct SiteNode {
    notifier: SiteNotifier,
    node: Arc<Node>,
}

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(ClusterModule {
        nodes: Mutex::default(),
    })
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "cluster",
            PRIORITY,
            &[],
            None,
            None,
            include_str!("../module.toml"),
        );
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

/// The module's tables (its outbox), for a store opened without the web layer.
pub fn migrations() -> &'static [Migration] {
    outbox::MIGRATIONS
}

impl ClusterModule {
    /// The site's node: kept across reloads while the store and the settings
    /// stay the same, started anew otherwise.
    fn node_for(
        &self,
        setup: &SiteSetup<'_>,
        settings: ClusterSettings,
    ) -> Result<Option<Arc<Node>>, ModuleError> {
        let site = setup.site().name().to_string();
        let store = &setup.models().store;
        let notifier = setup.notifier();
        let mut nodes = self.nodes.lock().expect("cluster nodes");
        if let Some(kept) = nodes.get(&site)
            && kept.notifier.same_as(&notifier)
            && *kept.node.settings() == settings
        {
            return Ok(Some(kept.node.clone()));
        }
        let old = nodes.remove(&site);
        if !settings.enabled {
            // A store that outlived its node writes no outbox rows any more.
            if old.is_some_and(|old| old.notifier.same_as(&notifier)) {
                store.set_commit_hook("cluster", None);
            }
            return Ok(None);
        }
        let node = Arc::new(
            Node::start(store, settings).map_err(|e| ModuleError::new("enabled", e.to_string()))?,
        );
        nodes.insert(
            site,
            SiteNode {
                notifier,
                node: node.clone(),
            },
        );
        Ok(Some(node))
    }
}

impl Module for ClusterModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn migrations(&self) -> &'static [Migration] {
        outbox::MIGRATIONS
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings = ClusterSettings::parse(site.settings())?;
        let node = self.node_for(site, settings)?;
        if let Some(node) = &node {
            let (loaded, notifier) = (node.clone(), site.notifier());
            site.observers()
                .on_notify(OBSERVER_PRIORITY, move |_: &SiteLoaded| {
                    loaded.attach_hub(notifier.current().first(&PushHub));
                    loaded.attach_notifier(notifier.clone());
                });
            // This node's figures carry its name and go to the other nodes;
            // theirs come back as SiteFigures with their names.
            let name = node.settings().node.clone();
            site.observers().on_fold(
                OBSERVER_PRIORITY,
                move |_: &GatherFigures, mut figures: Figures| {
                    figures.node = Some(name.clone());
                    figures
                },
            );
            let (sending, name) = (node.clone(), node.settings().node.clone());
            site.observers()
                .on_notify(OBSERVER_PRIORITY, move |f: &SiteFigures| {
                    if f.0.node.as_deref() == Some(name.as_str()) {
                        sending.send_figures(&f.0);
                    }
                });
        }
        site.add_controller("cluster_health", move |_options| {
            Ok(Box::new(Health { node: node.clone() }) as Box<dyn Controller>)
        });
        Ok(())
    }
}

/// `GET /cluster/health`: 200 while this node hears the other nodes' changes
/// (or runs alone), 503 while it does not.
struct Health {
    node: Option<Arc<Node>>,
}

impl Controller for Health {
    fn resolve<'a>(&'a self, _req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(node) = &self.node else {
                return Outcome::Response(json_response(
                    StatusCode::OK,
                    &json!({"cluster": "off"}),
                ));
            };
            let state = node.state();
            let heartbeat = node.settings().heartbeat;
            let hearing = state.hearing(heartbeat);
            let load =
                |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
            let body = json!({
                "node": node.settings().node,
                "origin": node.origin(),
                "hearing": hearing,
                "last_heartbeat_ms": state.last_proof_age().map(|d| d.as_millis() as u64),
                "changes_applied": load(&state.changes_applied),
                "publications_sent": load(&state.publications_sent),
                "publications_applied": load(&state.publications_applied),
                "publications_lost": load(&state.publications_lost),
                "full_flushes": load(&state.full_flushes),
                "connections": load(&state.connections),
            });
            let status = if hearing {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            // The node's name and counters tell a stranger about the setup:
            // only where `[cluster] health_detail` says so.
            let body = if node.settings().health_detail {
                body
            } else {
                json!({ "hearing": hearing })
            };
            Outcome::Response(json_response(status, &body))
        })
    }
}
