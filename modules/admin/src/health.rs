//! The dashboard's "site health": whether the database answers (and how
//! fast), how much room the disk holding the site's data has left, and when
//! the newest backup was made. Read when the dashboard is opened: each is one
//! cheap question (a primary-key read, a `statvfs`, a directory listing).

use std::path::Path;
use std::time::{Instant, SystemTime};

use bulwark_store::ResourceId;
use bulwark_web::RequestCtx;
use chrono::{DateTime, Utc};
use minijinja::Value;

/// Below this much free space the disk is shown as a warning.
const LOW_DISK_BYTES: u64 = 2 << 30;
/// A newest backup older than this is shown as a warning.
const BACKUP_DAYS: i64 = 7;

/// `{database: {ok, ms, error}, disk: {free, total, low}, backup: {newest, old}}`.
pub(crate) async fn health(req: &RequestCtx<'_>) -> Value {
    let store = req.site.models().store.clone();
    let started = Instant::now();
    let answered = store.run(|s| s.resource(ResourceId(1)).map(drop)).await;
    let database = match answered {
        Ok(()) => {
            minijinja::context! { ok => true, ms => started.elapsed().as_secs_f64() * 1000.0 }
        }
        Err(e) => minijinja::context! { ok => false, error => e.to_string() },
    };
    let data = req.site.site().dir.join("data");
    let disk = match req.site.site().disk_space() {
        Ok(space) => minijinja::context! {
            free => gigabytes(space.free),
            total => gigabytes(space.total),
            low => space.free < LOW_DISK_BYTES,
        },
        Err(e) => minijinja::context! { error => e.to_string() },
    };
    let backup = match newest_file(&data.join("backups")) {
        Some(made) => {
            let made = DateTime::<Utc>::from(made);
            minijinja::context! {
                newest => made.to_rfc3339(),
                old => (Utc::now() - made).num_days() >= BACKUP_DAYS,
            }
        }
        None => minijinja::context! { newest => Value::from(()) },
    };
    minijinja::context! { database, disk, backup }
}

/// `12.3 GB`.
fn gigabytes(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// When the newest file in `dir` was written (`None`: no file, or no folder).
fn newest_file(dir: &Path) -> Option<SystemTime> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| entry.metadata().ok())
        .filter(|meta| meta.is_file())
        .filter_map(|meta| meta.modified().ok())
        .max()
}
