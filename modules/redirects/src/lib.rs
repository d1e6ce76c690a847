//! The redirects module (docs/redirects.md): old paths that moved, answered
//! with `301`, `302`, `307`, `308` or `410 Gone` instead of a 404.
//!
//! - The rules live in the table `redirect` and in memory ([`rules::Rules`]),
//!   looked up only when a `GET` or `HEAD` found nothing ([`PathNotFound`]):
//!   a request that finds its page never pays for them. A rule whose old
//!   path has a query (`/?p=12`, an old blog's) is looked up before routing
//!   instead ([`QueryPathAsked`]), but only for a request with a query
//!   string, and only while some rule has one.
//! - Hits are counted in memory and written every few seconds.
//! - A change (the admin, the API, a CSV import) flushes the key
//!   `redirects`: every node of a cluster reads the rules again when it hears
//!   of it ([`CacheFlushed`]).
//! - `/api/redirects` (list, add, import CSV, remove) for editors, and the
//!   admin's Redirects screen on it.

mod api;
pub mod rules;

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use include_dir::{Dir, include_dir};
use tokio::sync::mpsc;

use bulwark_site::ModuleManifest;
use bulwark_store::{DependencyKey, Migration, Store};
use bulwark_web::events::{CacheFlushed, GatherMetrics, MenuItem, PathNotFound, QueryPathAsked};
use bulwark_web::{Api, Module, ModuleError, SiteSetup};

use rules::Rules;

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

pub const PRIORITY: i32 = 500;
/// How often counted hits are written.
const WRITE_HITS_EVERY: Duration = Duration::from_secs(2);

const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "redirects",
    sqlite: include_str!("../migrations/sqlite/0001_redirects.sql"),
    postgres: include_str!("../migrations/postgres/0001_redirects.sql"),
}];

/// The key a change of the rules flushes.
pub fn rules_key() -> DependencyKey {
    DependencyKey::new("redirects")
}

pub struct Redirects;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(Redirects)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "redirects",
            PRIORITY,
            &[],
            Some(&TEMPLATES),
            Some(&LIB),
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api::api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for Redirects {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api::api())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let store = site.models().store.clone();
        let rules = Arc::new(Rules::default());
        let loaded = rules::load(&store)
            .map_err(|e| ModuleError::new("redirects", format!("reading the rules: {e}")))?;
        rules.replace(loaded);
        let (reload, reloads) = mpsc::channel::<()>(1);
        spawn_keeper(Arc::downgrade(&rules), store, reloads);
        let lookup = rules.clone();
        site.observers()
            .on_first(PRIORITY, move |asked: &PathNotFound| {
                lookup.lookup(&asked.path, asked.query.as_deref())
            });
        let before_routing = rules.clone();
        site.observers()
            .on_first(PRIORITY, move |asked: &QueryPathAsked| {
                before_routing.lookup_query(&asked.path, &asked.query)
            });
        site.observers()
            .on_notify(PRIORITY, move |flushed: &CacheFlushed| {
                if flushed.all || flushed.keys.contains(&rules_key()) {
                    // Full means a reload is pending already.
                    let _ = reload.try_send(());
                }
            });
        let counted = site.models().store.clone();
        site.observers().on_fold(
            PRIORITY,
            move |_: &GatherMetrics, mut metrics: Vec<bulwark_web::Metric>| {
                match rules::metrics(&counted) {
                    Ok(more) => metrics.extend(more),
                    Err(e) => tracing::warn!("redirects: counting hits for /metrics: {e}"),
                }
                metrics
            },
        );
        site.provide(rules);
        site.add_admin_menu_item(
            PRIORITY,
            MenuItem::screen("Redirects", "/admin/redirects", "admin_redirects.tpl"),
        );
        Ok(())
    }
}

/// Writes counted hits every [`WRITE_HITS_EVERY`] and reads the rules again
/// when they changed, while the site's rules live (a reload of the site's
/// configuration makes new ones, and this task ends).
fn spawn_keeper(rules: Weak<Rules>, store: Store, mut reloads: mpsc::Receiver<()>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return; // A command, not a server.
    };
    runtime.spawn(async move {
        let mut tick = tokio::time::interval(WRITE_HITS_EVERY);
        loop {
            let reload = tokio::select! {
                _ = tick.tick() => false,
                got = reloads.recv() => got.is_some(),
            };
            let Some(rules) = rules.upgrade() else {
                return;
            };
            let hits = rules.take_hits();
            if !hits.is_empty() {
                let written = store.run(move |s| rules::add_hits(s, &hits)).await;
                if let Err(e) = written {
                    tracing::warn!("redirects: writing hits: {e}");
                }
            }
            if reload {
                match store.run(rules::load).await {
                    Ok(fresh) => rules.replace(fresh),
                    Err(e) => tracing::warn!("redirects: reading the rules again: {e}"),
                }
            }
        }
    });
}
