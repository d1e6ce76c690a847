//! The `acme` module: certificates over ACME (RFC 8555, with the
//! `instant-acme` client) for sites whose `[tls]` says `acme = true`.
//!
//! - **HTTP-01.** The ACME server fetches
//!   `/.well-known/acme-challenge/{token}` over plain HTTP; the answer is
//!   kept in the site's database while the order is open, so whichever node a
//!   balancer sends the request to answers it.
//! - **Kept.** The account's key, the certificate and its key live in the
//!   site's database (`acme_state`): a restart serves the certificate it has
//!   and asks for nothing, and on several nodes every node serves the one
//!   certificate.
//! - **One order at a time.** A node orders only while it holds the lock row
//!   (`acme_lock`, taken for ten minutes at most); the others find the new
//!   certificate in the database at their next look and serve it.
//! - **Renewed** when less than `[acme] renew_days` of its life is left (a
//!   third of it when `renew_days` is its whole life or more: a short-lived
//!   certificate), looked at every `check_seconds`, without a restart: the new certificate
//!   is installed into the server's live table of certificates.

mod challenge;
mod order;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use bulwark_site::ModuleManifest;
use bulwark_store::Migration;
use bulwark_web::events::GatherMetrics;
use bulwark_web::{Controller, Module, ModuleError, SiteSetup, read_settings};

pub const PRIORITY: i32 = 500;

const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "acme",
    sqlite: include_str!("../migrations/common/0001_acme.sql"),
    postgres: include_str!("../migrations/common/0001_acme.sql"),
}];

/// Let's Encrypt's production directory.
const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";

/// `[acme]` of `site.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// The ACME server's directory URL.
    pub directory: String,
    /// Contact addresses for the account (`mailto:...`).
    pub contact: Vec<String>,
    /// A CA certificate (PEM) to trust for the ACME server itself, for a
    /// test server such as pebble; the system's roots otherwise.
    pub root: Option<PathBuf>,
    /// How often the certificate is looked at, in seconds.
    pub check_seconds: u64,
    /// Renew when less than this many days of its life are left.
    pub renew_days: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            directory: LETS_ENCRYPT.to_owned(),
            contact: Vec::new(),
            root: None,
            check_seconds: 3600,
            renew_days: 30,
        }
    }
}

pub struct Acme;

pub fn module() -> Arc<dyn Module> {
    Arc::new(Acme)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "acme",
            PRIORITY,
            &[],
            None,
            None,
            include_str!("../module.toml"),
        );
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for Acme {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let mut settings: Settings = match site.settings() {
            Some(table) => read_settings(table)?,
            None => Settings::default(),
        };
        if settings.check_seconds == 0 {
            return Err(ModuleError::new("check_seconds", "must be at least 1"));
        }
        if let Some(root) = &settings.root {
            let root = site.site().dir.join(root);
            if !root.is_file() {
                return Err(ModuleError::new(
                    "root",
                    format!("file {} does not exist", root.display()),
                ));
            }
            settings.root = Some(root);
        }
        let store = site.models().store.clone();
        site.add_controller("acme_challenge", {
            let store = store.clone();
            move |_| {
                Ok(Box::new(challenge::ChallengeController {
                    store: store.clone(),
                }) as Box<dyn Controller>)
            }
        });
        let config = &site.site().config;
        if config.tls.as_ref().is_some_and(|t| t.acme) {
            let (counted, hosts) = (store.clone(), order::hosts(site.site()));
            site.observers().on_fold(
                PRIORITY,
                move |_: &GatherMetrics, mut metrics: Vec<bulwark_web::Metric>| {
                    metrics.extend(order::metrics(&counted, &hosts));
                    metrics
                },
            );
            let keeper = Arc::new(());
            order::spawn(
                Arc::downgrade(&keeper),
                site.site().clone(),
                store,
                site.certificates().clone(),
                settings,
            );
            // The task lives as long as this load of the site.
            site.provide(keeper);
        }
        Ok(())
    }
}
