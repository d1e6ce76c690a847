//! The push module: WebSocket, Server-Sent Events and long-poll endpoints onto a
//! per-site hub (`bulwark-push`), the command and publish endpoints, the `[push]`
//! policy, `bulwark.js`, and `rsc/{id}` messages for every resource that changes.
//!
//! A site's hub is kept across configuration reloads, so connected clients keep
//! their tasks; it is replaced only when the site's `[push]` settings change.

mod acl;
mod events;
mod settings;
mod transports;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use include_dir::{Dir, include_dir};

use bulwark_push::Hub;
use bulwark_site::ModuleManifest;
use bulwark_web::events::ResourceChanged;
use bulwark_web::{Module, ModuleError, SiteNotifier, SiteSetup};

pub use events::{PushAccess, PushAction};
pub use settings::PushSettings;
pub use transports::PushTransport;

static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

pub const PRIORITY: i32 = 400;

/// Observers of the core events run in this order among the module's.
const OBSERVER_PRIORITY: i32 = 500;

pub struct PushModule {
    /// Hubs by site name.
    hubs: Mutex<HashMap<String, SiteHub>>,
}

/// A site's hub, with the settings and observers it was made with.
struct SiteHub {
    settings: PushSettings,
    notifier: SiteNotifier,
    hub: Arc<Hub>,
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
    fn hub_for(&self, site: &str, settings: &PushSettings, notifier: SiteNotifier) -> Arc<Hub> {
        let mut hubs = self.hubs.lock().expect("push hubs");
        if let Some(kept) = hubs.get(site)
            && kept.settings == *settings
            && kept.notifier.same_as(&notifier)
        {
            return kept.hub.clone();
        }
        let hub = Hub::new(
            settings.hub_config(),
            Arc::new(acl::SitePushAcl::new(settings, notifier.clone())),
        );
        hubs.insert(
            site.to_string(),
            SiteHub {
                settings: settings.clone(),
                notifier,
                hub: hub.clone(),
            },
        );
        hub
    }
}

impl Module for PushModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings = Arc::new(PushSettings::parse(site.settings())?);
        let hub = self.hub_for(site.site().name().as_str(), &settings, site.notifier());
        let for_controllers = hub.clone();
        site.add_controller("push", move |options| {
            transports::PushController::new(for_controllers.clone(), settings.clone(), options)
                .map(|c| Box::new(c) as Box<dyn bulwark_web::Controller>)
        });
        site.observers()
            .on_notify(OBSERVER_PRIORITY, move |changed: &ResourceChanged| {
                let id = changed.id;
                // A full hub or an oversized message only loses a hint to reload.
                let _ = hub.publish(
                    &format!("rsc/{id}"),
                    &format!("{{\"id\":{id},\"changed\":true}}"),
                );
            });
        Ok(())
    }
}
