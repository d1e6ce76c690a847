//! The `backup` module: the site's database and files in one archive, made
//! while the site serves and writes, on demand (`/api/backups`, the admin's
//! Backups screen, `bulwark backup`) and on a schedule with retention
//! (`[backup]` of `site.toml`), optionally encrypted to age recipients, and
//! put back in place (`bulwark restore`, the admin) on SQLite and on
//! PostgreSQL alike. The command line and the admin run the same code
//! ([`archive`]). docs/operations.md.

mod api;
pub mod archive;
pub mod schedule;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use chrono::Utc;
use serde::Deserialize;

use bulwark_site::ModuleManifest;
use bulwark_store::{Migration, Store, StoreError};
use bulwark_web::events::GatherMetrics;
use bulwark_web::{Api, Metric, Module, ModuleError, SiteSetup, read_settings};

pub use archive::{Backup, Manifest, Progress, Quiet};

pub const PRIORITY: i32 = 500;

const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "backup_claim",
    sqlite: include_str!("../migrations/common/0001_backup_claim.sql"),
    postgres: include_str!("../migrations/common/0001_backup_claim.sql"),
}];

/// Why a backup or a restore did not happen; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Key(String),
    #[error("the backup is encrypted: give the identity (secret key) file it was encrypted for")]
    Encrypted,
    #[error("{0}")]
    NotABackup(String),
    #[error(
        "the backup was made on {made_on} and this site runs on {site}: move data between \
         backends with `bulwark export` and `bulwark import`"
    )]
    OtherBackend { made_on: String, site: String },
}

impl BackupError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> BackupError {
        BackupError::Io {
            what: what.into(),
            source,
        }
    }
}

/// `[backup]` of `site.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// A scheduled backup every this many seconds (0: none).
    pub every_seconds: u64,
    /// Scheduled backups kept: the newest of each of this many days...
    pub keep_daily: usize,
    /// ...and of each of this many ISO weeks.
    pub keep_weekly: usize,
    /// Encrypt every backup to these age recipients (`age1...`); a restore
    /// then needs one of their identities.
    pub encrypt_to: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            every_seconds: 24 * 3600,
            keep_daily: 7,
            keep_weekly: 4,
            encrypt_to: Vec::new(),
        }
    }
}

impl Settings {
    pub fn read(table: Option<&toml::Table>) -> Result<Settings, ModuleError> {
        let settings: Settings = match table {
            Some(table) => read_settings(table)?,
            None => Settings::default(),
        };
        archive::recipients(&settings.encrypt_to)
            .map_err(|e| ModuleError::new("encrypt_to", e.to_string()))?;
        if settings.every_seconds > 0 && settings.keep_daily + settings.keep_weekly == 0 {
            return Err(ModuleError::new(
                "keep_daily",
                "scheduled backups must keep at least one (keep_daily or keep_weekly)",
            ));
        }
        Ok(settings)
    }
}

/// A site's backups: where they go and how they are made.
pub struct SiteBackups {
    pub site: String,
    pub site_dir: PathBuf,
    /// Who claims a scheduled backup (the cluster's node name, or the host's).
    pub node: String,
    pub encrypt_to: Vec<age::x25519::Recipient>,
}

impl SiteBackups {
    pub fn new(site: &bulwark_site::Site, settings: &Settings) -> Result<SiteBackups, BackupError> {
        let node = site
            .config
            .module_settings
            .get("cluster")
            .and_then(|c| c.get("node"))
            .and_then(|n| n.as_str())
            .map(str::to_owned)
            .unwrap_or_else(|| format!("pid-{}", std::process::id()));
        Ok(SiteBackups {
            site: site.name().to_string(),
            site_dir: site.dir.clone(),
            node,
            encrypt_to: archive::recipients(&settings.encrypt_to)?,
        })
    }

    pub fn folder(&self) -> PathBuf {
        archive::folder(&self.site_dir)
    }

    /// A new backup in the site's folder, named by the time (`scheduled`
    /// ones end in `-auto`). Blocking.
    pub fn make(
        &self,
        store: &Store,
        scheduled: bool,
        progress: &dyn Progress,
    ) -> Result<Backup, BackupError> {
        let dir = self.folder();
        bulwark_site::private_folder(&dir)
            .map_err(|e| BackupError::io(format!("making {}", dir.display()), e))?;
        let path = new_path(&dir, &self.site, scheduled, !self.encrypt_to.is_empty())?;
        self.make_at(store, &path, progress)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        archive::list(&dir)?
            .into_iter()
            .find(|b| b.name == name)
            .ok_or_else(|| BackupError::io("the backup went", std::io::ErrorKind::NotFound.into()))
    }

    /// A backup written to `dest`. Blocking.
    pub fn make_at(
        &self,
        store: &Store,
        dest: &Path,
        progress: &dyn Progress,
    ) -> Result<Manifest, BackupError> {
        archive::make(
            &self.site,
            &self.site_dir,
            store,
            dest,
            &self.encrypt_to,
            progress,
        )
    }
}

/// `<site>-<time>[-<n>][-auto].tar.gz[.age]`, one that does not exist yet.
fn new_path(
    dir: &Path,
    site: &str,
    scheduled: bool,
    encrypted: bool,
) -> Result<PathBuf, BackupError> {
    let stamp = Utc::now().format("%Y%m%d-%H%M%S");
    let suffix = if scheduled { "-auto" } else { "" };
    let extension = if encrypted { "tar.gz.age" } else { "tar.gz" };
    let site: String = site
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    (0..100)
        .map(|n| match n {
            0 => format!("{site}-{stamp}{suffix}.{extension}"),
            n => format!("{site}-{stamp}-{n}{suffix}.{extension}"),
        })
        .map(|name| dir.join(name))
        .find(|path| !path.exists())
        .ok_or_else(|| {
            BackupError::io(
                "naming the backup",
                std::io::ErrorKind::AlreadyExists.into(),
            )
        })
}

/// The backups as a person on call reads them, for `/metrics`: how many are
/// kept, when the newest was made and its size, the schedule, and the
/// scheduled backups that failed.
fn backup_metrics(dir: &Path, every_seconds: u64, failures: u64) -> Vec<Metric> {
    let mut out = vec![
        Metric::gauge(
            "bulwark_backup_schedule_seconds",
            "A scheduled backup is made every this many seconds ([backup] every_seconds; 0: \
             none).",
            every_seconds as f64,
        ),
        Metric::counter(
            "bulwark_backup_failures_total",
            "Scheduled backups that failed on this node since it started.",
            failures,
        ),
    ];
    let backups = match archive::list(dir) {
        Ok(backups) => backups,
        Err(e) => {
            tracing::warn!("backup: listing the backups for /metrics: {e}");
            return out;
        }
    };
    out.push(Metric::gauge(
        "bulwark_backups",
        "Backups kept in the site's data/backups on this node.",
        backups.len() as f64,
    ));
    if let Some(newest) = backups.first() {
        out.push(Metric::gauge(
            "bulwark_backup_newest_timestamp_seconds",
            "When the newest backup kept was made (Unix time).",
            newest.created.timestamp() as f64,
        ));
        out.push(Metric::gauge(
            "bulwark_backup_newest_bytes",
            "The size of the newest backup kept.",
            newest.size as f64,
        ));
    }
    out
}

#[derive(Default)]
pub struct BackupModule {
    /// Each site's scheduled backups that failed since the server started
    /// (kept here, not with a load of the site, so a reload does not reset
    /// the count: Prometheus reads it as a counter).
    failures: Mutex<HashMap<String, Arc<AtomicU64>>>,
}

pub fn module() -> Arc<dyn Module> {
    Arc::new(BackupModule::default())
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "backup",
            PRIORITY,
            &[],
            None,
            None,
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api::api().routes()));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for BackupModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api::api())
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings = Settings::read(site.settings())?;
        let backups = Arc::new(
            SiteBackups::new(site.site(), &settings)
                .map_err(|e| ModuleError::new("encrypt_to", e.to_string()))?,
        );
        let failures = self
            .failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(site.site().name().to_string())
            .or_default()
            .clone();
        let (dir, every, failed) = (
            archive::folder(&backups.site_dir),
            settings.every_seconds,
            failures.clone(),
        );
        site.observers().on_fold(
            PRIORITY,
            move |_: &GatherMetrics, mut metrics: Vec<Metric>| {
                metrics.extend(backup_metrics(&dir, every, failed.load(Ordering::Relaxed)));
                metrics
            },
        );
        schedule::spawn(
            Arc::downgrade(&backups),
            site.models().store.clone(),
            settings,
            failures,
        );
        site.provide(backups);
        Ok(())
    }
}
