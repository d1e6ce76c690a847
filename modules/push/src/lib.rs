//! The push module: WebSocket, Server-Sent Events and long-poll endpoints onto a
//! per-site hub (`bulwark-push`), the command and publish endpoints, the `[push]`
//! policy and limits, `bulwark.js`, `rsc/{id}` messages for every resource
//! that changes (to those who may see it), and each user's own topics
//! (`user/{id}/...`, [`publish_to_user`]; a logoff is told on
//! `user/{id}/session`).
//!
//! A site's hub is kept across configuration reloads, so connected clients keep
//! their tasks; it is replaced only when the site's `[push]` settings change.

mod acl;
mod address_limit;
mod events;
mod rsc;
mod settings;
mod transports;
mod user;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use include_dir::{Dir, include_dir};

use bulwark_push::Hub;
use bulwark_site::ModuleManifest;
use bulwark_web::events::{GatherFigures, GatherMetrics, Logoff, ResourceChanged};
use bulwark_web::{Metric, Module, ModuleError, SiteNotifier, SiteSetup};

pub use events::{Publish, PublishToUser, PushAccess, PushAction, PushHub};
pub use rsc::publish_about;
pub use settings::PushSettings;
pub use transports::{PushTransport, run_command};
pub use user::{PublishToUserError, publish_to_user};

static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

pub const PRIORITY: i32 = 400;

/// Observers of the core events run in this order among the module's.
const OBSERVER_PRIORITY: i32 = 500;

/// `user/{id}/session` hears `{"logged_off":true}` when one of the user's
/// sessions logs off.
const LOGOFF_SUBTOPIC: &str = "session";

pub struct PushModule {
    /// Hubs by site name.
    hubs: Mutex<HashMap<String, SiteHub>>,
}

/// A site's hub, with the observers it was made with.
struct SiteHub {
    notifier: SiteNotifier,
    push: Arc<SitePush>,
}

/// What a site's push endpoints share: the hub, the settings it was made with and
/// the limit on new clients per address (kept with the hub across reloads).
pub(crate) struct SitePush {
    pub(crate) hub: Arc<Hub>,
    pub(crate) settings: PushSettings,
    pub(crate) new_clients: address_limit::NewClientsPerAddress,
}

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(PushModule {
        hubs: Mutex::default(),
    })
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "push",
            PRIORITY,
            &[],
            None,
            Some(&LIB),
            include_str!("../module.toml"),
        );
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl PushModule {
    fn hub_for(&self, site: &str, settings: PushSettings, notifier: SiteNotifier) -> Arc<SitePush> {
        let mut hubs = self.hubs.lock().expect("push hubs");
        if let Some(kept) = hubs.get(site)
            && kept.push.settings == settings
            && kept.notifier.same_as(&notifier)
        {
            return kept.push.clone();
        }
        let hub = Hub::new(
            settings.hub_config(),
            Arc::new(acl::SitePushAcl::new(&settings, notifier.clone())),
        );
        let push = Arc::new(SitePush {
            hub,
            new_clients: address_limit::NewClientsPerAddress::new(settings.new_clients_rate()),
            settings,
        });
        hubs.insert(
            site.to_string(),
            SiteHub {
                notifier,
                push: push.clone(),
            },
        );
        push
    }
}

impl Module for PushModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings = PushSettings::parse(site.settings())?;
        let push = self.hub_for(site.site().name().as_str(), settings, site.notifier());
        let changed = rsc::spawn_publisher(
            push.hub.clone(),
            site.models().store.clone(),
            site.policy().clone(),
        );
        let hub = push.hub.clone();
        site.observers()
            .on_first(OBSERVER_PRIORITY, move |p: &PublishToUser| {
                Some(user::publish(&hub, p.user, &p.subtopic, &p.payload))
            });
        let hub = push.hub.clone();
        site.observers()
            .on_first(OBSERVER_PRIORITY, move |p: &Publish| {
                Some(match &p.audience {
                    Some(audience) => hub.publish_for(&p.topic, &p.payload, audience.clone()),
                    None => hub.publish(&p.topic, &p.payload),
                })
            });
        let hub = push.hub.clone();
        site.observers().on_fold(
            OBSERVER_PRIORITY,
            move |_: &GatherFigures, mut figures: bulwark_web::Figures| {
                figures
                    .more
                    .insert("push_clients".to_owned(), hub.client_count());
                figures
            },
        );
        let hub = push.hub.clone();
        site.observers().on_fold(
            OBSERVER_PRIORITY,
            move |_: &GatherMetrics, mut metrics: Vec<Metric>| {
                let stats = hub.stats();
                metrics.push(Metric::gauge(
                    "bulwark_push_clients",
                    "Push clients connected.",
                    stats.clients as f64,
                ));
                for (name, help, n) in [
                    (
                        "bulwark_push_published_total",
                        "Messages published on the site's topics.",
                        stats.published,
                    ),
                    (
                        "bulwark_push_delivered_total",
                        "Messages handed to a client's transport.",
                        stats.delivered,
                    ),
                    (
                        "bulwark_push_lost_total",
                        "Messages dropped from a full client inbox.",
                        stats.lost,
                    ),
                    (
                        "bulwark_push_encodings_needed_total",
                        "Batch bodies handed to clients.",
                        stats.encodings_needed,
                    ),
                    (
                        "bulwark_push_encodings_computed_total",
                        "Batch bodies serialised (the others were shared).",
                        stats.encodings_computed,
                    ),
                ] {
                    metrics.push(Metric::counter(name, help, n));
                }
                metrics
            },
        );
        let hub = push.hub.clone();
        site.observers()
            .on_first(OBSERVER_PRIORITY, move |_: &PushHub| Some(hub.clone()));
        let hub = push.hub.clone();
        site.observers()
            .on_notify(OBSERVER_PRIORITY, move |l: &Logoff| {
                // For the user's other tabs, still connected as them; a full
                // hub loses only this hint.
                let _ = user::publish(&hub, l.user, LOGOFF_SUBTOPIC, r#"{"logged_off":true}"#);
            });
        site.observers()
            .on_notify(OBSERVER_PRIORITY, move |c: &ResourceChanged| {
                // The publisher ends only when this observer is gone.
                let _ = changed.send(c.id);
            });
        site.add_controller("push", move |options| {
            transports::PushController::new(push.clone(), options)
                .map(|c| Box::new(c) as Box<dyn bulwark_web::Controller>)
        });
        Ok(())
    }
}
