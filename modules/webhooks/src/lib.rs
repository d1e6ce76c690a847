//! The webhooks module (docs/webhooks.md): other systems told of what happens
//! on the site (resources created, changed, published, unpublished, deleted;
//! comments posted; forms answered; users created), by an HTTP POST to URLs
//! an administrator subscribed.
//!
//! - **Queued with the change** ([`hook`]): the store's commit hook writes
//!   the messages into `webhook_delivery` inside the transaction of the
//!   change that caused them, so a change is told if and only if it
//!   committed, across crashes and restarts.
//! - **Delivered off the request** ([`deliver`]): once per message per
//!   endpoint across every node (a lease per endpoint), in the order the
//!   changes committed, signed as Standard Webhooks says, retried with a
//!   doubling backoff for a day, each attempt logged. A slow or dead receiver
//!   holds up nothing but its own queue.
//! - **Managed** by administrators on the admin's Webhooks screen and through
//!   `/api/webhooks` ([`api`]): endpoints with the events and categories they
//!   want, their secret, the log of their messages, and "send again".

mod api;
pub mod deliver;
pub mod endpoints;
mod hook;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use include_dir::{Dir, include_dir};
use serde::Deserialize;

use bulwark_site::ModuleManifest;
use bulwark_store::Migration;
use bulwark_web::events::{CacheFlushed, GatherMetrics, MenuItem};
use bulwark_web::{Api, Metric, Module, ModuleError, SiteSetup, read_settings};

use deliver::DeliverySettings;
use endpoints::{Endpoints, endpoints_key};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

pub const PRIORITY: i32 = 490;

const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "webhooks",
    sqlite: include_str!("../migrations/sqlite/0001_webhooks.sql"),
    postgres: include_str!("../migrations/postgres/0001_webhooks.sql"),
}];

pub struct Webhooks;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(Webhooks)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "webhooks",
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

/// `[webhooks]` in `site.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    retry_first_ms: Option<u64>,
    give_up_hours: Option<u64>,
    timeout_ms: Option<u64>,
}

fn settings(table: Option<&toml::Table>) -> Result<DeliverySettings, ModuleError> {
    let section: Section = match table {
        Some(table) => read_settings(table)?,
        None => Section::default(),
    };
    let timeout = section.timeout_ms.unwrap_or(10_000);
    if !(100..=120_000).contains(&timeout) {
        return Err(ModuleError::new(
            "timeout_ms",
            "between 100 and 120000 (two minutes)",
        ));
    }
    Ok(DeliverySettings {
        first_retry: Duration::from_millis(section.retry_first_ms.unwrap_or(5_000).max(10)),
        give_up_after: Duration::from_secs(
            section.give_up_hours.unwrap_or(24).clamp(1, 24 * 30) * 3600,
        ),
        timeout: Duration::from_millis(timeout),
    })
}

impl Module for Webhooks {
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
        let delivery = settings(site.settings())?;
        let store = site.models().store.clone();
        let endpoints = Arc::new(Endpoints::default());
        endpoints
            .replace(endpoints::load(&store).map_err(|e| {
                ModuleError::new("webhooks", format!("reading the endpoints: {e}"))
            })?);
        let queued = Arc::new(tokio::sync::Notify::new());
        store.set_commit_hook(
            "webhooks",
            Some(Arc::new(hook::QueueMessages {
                endpoints: Arc::downgrade(&endpoints),
                queued: queued.clone(),
            })),
        );
        deliver::spawn(Arc::downgrade(&endpoints), store.clone(), delivery, queued);
        let counted = store.clone();
        site.observers()
            .on_fold(500, move |_: &GatherMetrics, mut metrics: Vec<Metric>| {
                match deliver::metrics(&counted) {
                    Ok(more) => metrics.extend(more),
                    Err(e) => tracing::warn!("webhooks: counting messages for /metrics: {e}"),
                }
                metrics
            });
        // Every node reads the endpoints again when they changed anywhere.
        let (reload, mut reloads) = tokio::sync::mpsc::channel::<()>(1);
        let kept = Arc::downgrade(&endpoints);
        if tokio::runtime::Handle::try_current().is_ok() {
            let store = store.clone();
            store.clone().spawn_while_open(async move {
                while reloads.recv().await.is_some() {
                    let Some(endpoints) = kept.upgrade() else {
                        return;
                    };
                    match store.run(endpoints::load).await {
                        Ok(fresh) => endpoints.replace(fresh),
                        Err(e) => tracing::warn!("webhooks: reading the endpoints again: {e}"),
                    }
                }
            });
        }
        site.observers()
            .on_notify(PRIORITY, move |flushed: &CacheFlushed| {
                if flushed.all || flushed.keys.contains(&endpoints_key()) {
                    let _ = reload.try_send(());
                }
            });
        site.provide(endpoints);
        site.add_admin_menu_item(
            PRIORITY,
            MenuItem::screen("Webhooks", "/admin/webhooks", "admin_webhooks.tpl"),
        );
        Ok(())
    }
}
