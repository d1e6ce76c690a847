//! The files behind media resources, and how every node of a site gets them.
//!
//! A file is kept by its content hash in the site's `data/media/files/`.
//! Nodes sharing one PostgreSQL store do not share that folder, so with
//! `[media] files_in_database` (the default on PostgreSQL) each file is also
//! kept in the database (`media_blob`, in parts of [`PART_BYTES`], written in
//! the upload's one transaction: a file is there whole or not at all). A node
//! asked for a file it does not have fetches it from there once (one fetch
//! however many ask at once), checks its hash, and keeps it on its disk; its
//! previews it makes itself, like any node.
//!
//! Deleting a media resource removes its file and previews on the node that
//! records the deletion (the last resource using a file takes its parts out
//! of the database too). Another node hears of the deletion through the
//! cluster after the record is gone, so it sweeps instead: its files that no
//! resource uses any more go, with their previews.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sha2::{Digest, Sha256};

use bulwark_store::{ModuleSql, ResourceId, Store, StoreError};

/// The size of one part of a file kept in the database.
pub const PART_BYTES: usize = 1024 * 1024;

/// How long a burst of deletions heard from other nodes is gathered before
/// one sweep answers them all.
const SWEEP_DELAY: Duration = Duration::from_secs(1);

/// A site's media files: its folder, and the database when files are kept
/// there too.
pub struct Originals {
    /// The site's `data/media`.
    pub dir: PathBuf,
    store: Store,
    /// Whether files are kept in the database as well (`files_in_database`).
    pub in_database: bool,
    /// Held from an upload's admission until its file is in its place, and
    /// while this node sweeps (so a sweep never takes a file just put there).
    pub admitting: tokio::sync::Mutex<()>,
    /// Single flight: one fetch from the database per file.
    fetching: moka::future::Cache<String, PathBuf>,
    sweep_pending: AtomicBool,
}

/// Why a file could not be had.
#[derive(Debug, Clone)]
pub enum Missing {
    /// Neither on this disk nor in the database.
    Gone,
    /// The database could not be read now, or the disk written (shared by
    /// all who asked at once).
    Failed(Arc<DiskOrStore>),
}

/// A failure of the disk or of the database, with its cause.
#[derive(Debug, thiserror::Error)]
pub enum DiskOrStore {
    #[error("{path}: {source}")]
    Disk {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl DiskOrStore {
    fn disk(path: &Path) -> impl FnOnce(std::io::Error) -> DiskOrStore + '_ {
        move |source| DiskOrStore::Disk {
            path: path.to_owned(),
            source,
        }
    }
}

impl From<DiskOrStore> for Missing {
    fn from(e: DiskOrStore) -> Missing {
        Missing::Failed(Arc::new(e))
    }
}

impl Originals {
    pub fn new(dir: PathBuf, store: Store, in_database: bool) -> Originals {
        Originals {
            dir,
            store,
            in_database,
            admitting: tokio::sync::Mutex::new(()),
            fetching: moka::future::Cache::builder().max_capacity(10_000).build(),
            sweep_pending: AtomicBool::new(false),
        }
    }

    /// Where the file with this hash is kept on this node.
    pub fn path(&self, sha256: &str) -> PathBuf {
        stored_path(&self.dir, sha256)
    }

    /// The file with this hash on this node's disk, fetched from the database
    /// first if it is kept there and this node does not have it yet.
    pub async fn local(&self, sha256: &str) -> Result<PathBuf, Missing> {
        let path = self.path(sha256);
        if tokio::fs::try_exists(&path).await.unwrap_or(false) {
            return Ok(path);
        }
        if !self.in_database {
            return Err(Missing::Gone);
        }
        let fetched = self
            .fetching
            .try_get_with(sha256.to_owned(), self.fetch(sha256.to_owned()))
            .await
            .map_err(|e| (*e).clone());
        // Those who asked together have their answer; the next asks the disk.
        self.fetching.invalidate(sha256).await;
        fetched
    }

    async fn fetch(&self, sha256: String) -> Result<PathBuf, Missing> {
        let (dir, path) = (self.dir.clone(), self.path(&sha256));
        self.store
            .run(move |s| Ok(fetch_blocking(s, &dir, &sha256, &path)))
            .await
            .map_err(|e| Missing::from(DiskOrStore::from(e)))?
    }

    /// Keeps the file at `path` (whose hash is `sha256`) in the database, in
    /// one transaction; nothing to do when it is there already. A no-op unless
    /// files are kept in the database.
    pub async fn keep_in_database(&self, path: &Path, sha256: &str) -> Result<(), DiskOrStore> {
        if !self.in_database {
            return Ok(());
        }
        let (path, sha256) = (path.to_owned(), sha256.to_owned());
        self.store
            .run(move |s| {
                let mut failed_read = None;
                let written = s.module_write(|sql| {
                    let there = sql.query_one(
                        "SELECT count(*) FROM media_blob WHERE sha256 = $1",
                        &[sha256.as_str().into()],
                    )?;
                    if there.is_some_and(|r| r.int(0) > 0) {
                        return Ok(());
                    }
                    let mut file = match std::fs::File::open(&path) {
                        Ok(f) => f,
                        Err(e) => {
                            failed_read = Some(e);
                            return Err(read_failed());
                        }
                    };
                    let mut part = vec![0u8; PART_BYTES];
                    for n in 0i64.. {
                        let len = match read_full(&mut file, &mut part) {
                            Ok(len) => len,
                            Err(e) => {
                                failed_read = Some(e);
                                return Err(read_failed());
                            }
                        };
                        if len == 0 && n > 0 {
                            break;
                        }
                        // Two nodes keeping the same file at once: the second
                        // waits for the first, then finds its parts there.
                        sql.execute(
                            "INSERT INTO media_blob (sha256, part, bytes) VALUES ($1, $2, $3) \
                             ON CONFLICT DO NOTHING",
                            &[
                                sha256.as_str().into(),
                                n.into(),
                                part[..len].to_vec().into(),
                            ],
                        )?;
                        if len < PART_BYTES {
                            break;
                        }
                    }
                    Ok(())
                });
                Ok(match (written, failed_read) {
                    (_, Some(e)) => Err(DiskOrStore::disk(&path)(e)),
                    (Err(e), None) => Err(e.into()),
                    (Ok(()), None) => Ok(()),
                })
            })
            .await?
    }

    /// Keeps in the database the files of this node's disk that resources
    /// use and the database lacks (kept before files were kept there).
    pub async fn keep_unkept(&self) {
        let unkept = self
            .store
            .run(|s| {
                s.module_read(|sql| {
                    Ok(sql
                        .query(
                            "SELECT DISTINCT f.sha256 FROM media_file f WHERE NOT EXISTS \
                             (SELECT 1 FROM media_blob b WHERE b.sha256 = f.sha256)",
                            &[],
                        )?
                        .into_iter()
                        .map(|r| r.text(0))
                        .collect::<Vec<_>>())
                })
            })
            .await;
        let unkept = match unkept {
            Ok(unkept) => unkept,
            Err(e) => {
                tracing::warn!("listing the media files the database lacks: {e}");
                return;
            }
        };
        for sha256 in unkept.iter().filter(|s| is_hash(s)) {
            let path = self.path(sha256);
            if !tokio::fs::try_exists(&path).await.unwrap_or(false) {
                continue;
            }
            if let Err(why) = self.keep_in_database(&path, sha256).await {
                tracing::warn!("keeping media file {sha256} in the database: {why}");
            }
        }
    }

    /// The bytes the site's files take, each stored file once (those being
    /// uploaded too).
    pub async fn stored_bytes(&self) -> Result<u64, StoreError> {
        self.store.run(|s| s.module_read(stored_bytes)).await
    }

    /// Admits a file of `size` bytes against `quota`. In one transaction
    /// that no other admission runs beside, on any node (PostgreSQL: the
    /// table is locked against other writers; SQLite has one writer), what
    /// is stored is counted and the file recorded under a reservation. A
    /// file recorded already takes no more room. `None`: over the quota.
    pub async fn admit(
        &self,
        sha256: &str,
        size: u64,
        quota: Option<u64>,
    ) -> Result<Option<Reservation>, StoreError> {
        let sha256 = sha256.to_owned();
        // Negative: never a resource's id.
        let id = -((rand::random::<u64>() >> 1) as i64) - 1;
        let admitted = self
            .store
            .run(move |s| {
                s.module_write(|sql| {
                    one_at_a_time(sql)?;
                    if let Some(quota) = quota {
                        let recorded = records_of(sql, &sha256)? > 0;
                        if !recorded && stored_bytes(sql)? + size > quota {
                            return Ok(false);
                        }
                    }
                    sql.execute(
                        "INSERT INTO media_file (rsc_id, sha256, size, reserved_at) \
                         VALUES ($1, $2, $3, $4)",
                        &[
                            id.into(),
                            sha256.as_str().into(),
                            (size as i64).into(),
                            unix_seconds().into(),
                        ],
                    )?;
                    Ok(true)
                })
            })
            .await?;
        Ok(admitted.then(|| Reservation {
            store: self.store.clone(),
            id,
            taken: false,
        }))
    }

    /// A media resource was deleted: its record goes, and with the last
    /// resource using its file, the file's parts in the database, the file and
    /// its previews. When the record is gone already (another node recorded
    /// the deletion), this node sweeps.
    pub fn forget(self: &Arc<Self>, id: ResourceId) {
        match self.store.module_write(|sql| unrecord(sql, id.0)) {
            Ok(Forgot::Last(sha256)) if is_hash(&sha256) => self.remove(&sha256),
            Ok(Forgot::NotRecorded) => self.sweep_soon(),
            Ok(_) => {}
            Err(e) => tracing::warn!("forgetting the file of media {}: {e}", id.0),
        }
    }

    /// Removes this node's copy of a file and every preview made of it.
    fn remove(&self, sha256: &str) {
        let path = self.path(sha256);
        if let Err(e) = std::fs::remove_file(&path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("removing {}: {e}", path.display());
        }
        remove_previews(&self.dir, sha256);
    }

    /// Sweeps this node's files after a short while, once for a burst of
    /// deletions. Only where files are kept in the database: elsewhere the
    /// node that records a deletion is the only one with the file.
    pub fn sweep_soon(self: &Arc<Self>) {
        if !self.in_database || self.sweep_pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(SWEEP_DELAY).await;
            me.sweep_pending.store(false, Ordering::Release);
            // No upload of this node between keeping its file and recording
            // it, so every file on the disk that is not recorded is unused.
            let _admitting = me.admitting.lock().await;
            let sweeper = me.clone();
            match tokio::task::spawn_blocking(move || sweeper.sweep()).await {
                Ok(Ok(n)) if n > 0 => {
                    tracing::info!("removed {n} media files no resource uses any more")
                }
                Ok(Err(e)) => tracing::warn!("sweeping the media files: {e}"),
                _ => {}
            }
        });
    }

    /// Removes this node's files that no media resource uses; how many.
    fn sweep(&self) -> Result<usize, StoreError> {
        let used: HashSet<String> = self.store.module_read(|sql| {
            Ok(sql
                .query("SELECT DISTINCT sha256 FROM media_file", &[])?
                .into_iter()
                .map(|r| r.text(0))
                .collect())
        })?;
        let mut removed = 0;
        let Ok(prefixes) = std::fs::read_dir(self.dir.join("files")) else {
            return Ok(0);
        };
        for prefix in prefixes.flatten() {
            let Ok(files) = std::fs::read_dir(prefix.path()) else {
                continue;
            };
            for file in files.flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                if is_hash(&name) && !used.contains(&name) {
                    self.remove(&name);
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }
}

/// A file's room in the quota, held from its upload's admission until its
/// resource takes it over ([`Reservation::confirm`]); given back when dropped
/// unconfirmed.
pub struct Reservation {
    store: Store,
    id: i64,
    taken: bool,
}

impl Reservation {
    /// The resource made for the file takes over its record.
    pub async fn confirm(mut self, resource: ResourceId) -> Result<(), StoreError> {
        let id = self.id;
        self.store
            .run(move |s| {
                s.module_write(|sql| {
                    sql.execute(
                        "UPDATE media_file SET rsc_id = $1, reserved_at = NULL WHERE rsc_id = $2",
                        &[resource.0.into(), id.into()],
                    )
                })
            })
            .await
            .and_then(|changed| match changed {
                1 => Ok(()),
                // Taken for stale: the upload took an hour.
                _ => Err(StoreError::InvalidInput {
                    field: "file".to_owned(),
                    reason: "the upload's room in the quota was given back; send it again"
                        .to_owned(),
                }),
            })?;
        self.taken = true;
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.taken {
            return;
        }
        let (store, id) = (self.store.clone(), self.id);
        let give_back = move || {
            let given = store.module_write(|sql| unrecord(sql, id));
            if let Err(e) = given {
                // It goes when the site next starts and it is an hour old.
                tracing::warn!("giving back an upload's room in the quota: {e}");
            }
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::task::spawn_blocking(give_back);
        }
    }
}

/// Reservations older than an hour: their uploads died with their node.
pub fn forget_stale_reservations(store: &Store) -> Result<(), StoreError> {
    store.module_write(|sql| {
        sql.execute(
            "DELETE FROM media_file WHERE reserved_at IS NOT NULL AND reserved_at < $1",
            &[(unix_seconds() - 3600).into()],
        )
    })?;
    Ok(())
}

/// Within a transaction: no other node admits, gives back or forgets a
/// file until it ends (PostgreSQL; SQLite has one writer anyway), so a count
/// of a file's records and what follows from it stay true.
fn one_at_a_time(sql: &mut ModuleSql<'_>) -> Result<(), StoreError> {
    if sql.is_postgres() {
        sql.execute("LOCK TABLE media_file IN SHARE ROW EXCLUSIVE MODE", &[])?;
    }
    Ok(())
}

/// Takes out the record `rsc_id` (a resource's, or a reservation's), and the
/// file's parts in the database with the last record of the file.
fn unrecord(sql: &mut ModuleSql<'_>, rsc_id: i64) -> Result<Forgot, StoreError> {
    let Some(row) = sql.query_one(
        "SELECT sha256 FROM media_file WHERE rsc_id = $1",
        &[rsc_id.into()],
    )?
    else {
        return Ok(Forgot::NotRecorded);
    };
    let sha256 = row.text(0);
    // Not before: most deletions are of resources that are not media.
    one_at_a_time(sql)?;
    sql.execute("DELETE FROM media_file WHERE rsc_id = $1", &[rsc_id.into()])?;
    if records_of(sql, &sha256)? > 0 {
        return Ok(Forgot::Shared);
    }
    sql.execute(
        "DELETE FROM media_blob WHERE sha256 = $1",
        &[sha256.as_str().into()],
    )?;
    Ok(Forgot::Last(sha256))
}

/// How many records (resources' and reservations') the file with this hash has.
fn records_of(sql: &mut ModuleSql<'_>, sha256: &str) -> Result<i64, StoreError> {
    let row = sql.query_one(
        "SELECT count(*) FROM media_file WHERE sha256 = $1",
        &[sha256.into()],
    )?;
    Ok(row.map_or(0, |r| r.int(0)))
}

fn stored_bytes(sql: &mut ModuleSql<'_>) -> Result<u64, StoreError> {
    let row = sql.query_one(
        "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM \
         (SELECT MAX(size) AS size FROM media_file GROUP BY sha256) AS files",
        &[],
    )?;
    Ok(row.map_or(0, |r| r.int(0)).max(0) as u64)
}

fn unix_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

enum Forgot {
    /// No record of the resource: not a media resource, or another node
    /// recorded its deletion first.
    NotRecorded,
    /// Another resource still uses the file.
    Shared,
    /// The file's last resource: the file goes.
    Last(String),
}

/// A partial file in `tmp` untouched this long belongs to nothing running: an
/// upload in progress writes at least every `upload::IDLE`
/// (30 s), a fetch from the database likewise.
const STALE_PARTIAL: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes what uploads and fetches left in `tmp` when the process ended in
/// the middle of them (a crash, a kill): files untouched for
/// [`STALE_PARTIAL`], so that those in progress (another process opening the
/// store, a reload) are left alone. Run when the site's store opens.
pub(crate) fn remove_stale_partials(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return; // No folder yet: nothing left behind.
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= STALE_PARTIAL);
        if stale && let Err(e) = std::fs::remove_file(entry.path()) {
            tracing::warn!("removing {}: {e}", entry.path().display());
        }
    }
}

/// Reads the file's parts in order into a temporary file, checks its hash,
/// and puts it in its place. Each part is its own query, so a large file
/// never sits whole in memory.
fn fetch_blocking(
    store: &Store,
    dir: &Path,
    sha256: &str,
    path: &Path,
) -> Result<PathBuf, Missing> {
    let tmp_dir = dir.join("tmp");
    std::fs::create_dir_all(&tmp_dir).map_err(DiskOrStore::disk(&tmp_dir))?;
    let tmp = tmp_dir.join(format!("fetch-{sha256}"));
    let on_tmp = || DiskOrStore::disk(&tmp);
    let written = (|| {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(on_tmp())?);
        let mut hasher = Sha256::new();
        for n in 0i64.. {
            let part = store
                .module_read(|sql| {
                    sql.query_one(
                        "SELECT bytes FROM media_blob WHERE sha256 = $1 AND part = $2",
                        &[sha256.into(), n.into()],
                    )
                })
                .map_err(DiskOrStore::from)?;
            let Some(mut row) = part else {
                if n == 0 {
                    return Err(Missing::Gone);
                }
                break;
            };
            let bytes = row.take_bytes(0);
            hasher.update(&bytes);
            out.write_all(&bytes).map_err(on_tmp())?;
            if bytes.len() < PART_BYTES {
                break;
            }
        }
        let file = out.into_inner().map_err(|e| on_tmp()(e.into_error()))?;
        file.sync_all().map_err(on_tmp())?;
        // A file deleted while it was read, or damaged, is not kept.
        if hex::encode(hasher.finalize()) != sha256 {
            return Err(Missing::Gone);
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(DiskOrStore::disk(parent))?;
        }
        std::fs::rename(&tmp, path).map_err(DiskOrStore::disk(path))?;
        Ok(path.to_owned())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Fills `buf` as far as the file goes; how many bytes that was.
fn read_full(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The error that rolls a transaction back when the file could not be read
/// (the reason travels beside it).
fn read_failed() -> StoreError {
    StoreError::InvalidInput {
        field: "file".to_owned(),
        reason: "could not be read".to_owned(),
    }
}

/// A SHA-256 as this module writes it: 64 hex digits.
pub fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Where the file with this hash is kept under `media` (`data/media`).
pub fn stored_path(media: &Path, sha256: &str) -> PathBuf {
    media.join("files").join(&sha256[..2]).join(sha256)
}

/// Removes every preview made of the file with this hash.
fn remove_previews(media: &Path, sha256: &str) {
    let dir = media.join("previews").join(&sha256[..2]);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(sha256)
            && let Err(e) = std::fs::remove_file(entry.path())
        {
            tracing::warn!("removing {}: {e}", entry.path().display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_store::StoreConfig;

    /// A store with this module's tables. PostgreSQL is required where asked
    /// for (never skipped): `scripts/ensure-postgres.sh`.
    async fn media_store(config: StoreConfig) -> Store {
        let store = Store::open(config)
            .await
            .unwrap_or_else(|e| panic!("{e}; for PostgreSQL: `source scripts/ensure-postgres.sh`"));
        store
            .run(|s| s.migrate_module("media", crate::MIGRATIONS))
            .await
            .unwrap();
        store
    }

    fn parts(store: &Store, sha256: &str) -> i64 {
        store
            .module_read(|sql| {
                sql.query_one(
                    "SELECT count(*) FROM media_blob WHERE sha256 = $1",
                    &[sha256.into()],
                )
            })
            .unwrap()
            .map_or(0, |r| r.int(0))
    }

    /// Kept before files were kept in the database, put there when the node
    /// starts, fetched back whole by a node without it, never kept damaged,
    /// and swept from the disk once nothing uses it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_file_goes_into_the_database_comes_back_whole_and_is_swept_when_unused() {
        let dir = tempfile::tempdir().unwrap();
        let store = media_store(StoreConfig::sqlite(dir.path().join("site.db"))).await;
        let originals = Arc::new(Originals::new(
            dir.path().join("media"),
            store.clone(),
            true,
        ));
        let bytes: Vec<u8> = (0..PART_BYTES * 2 + 10).map(|i| (i % 251) as u8).collect();
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let path = originals.path(&sha256);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let recorded = sha256.clone();
        store
            .run(move |s| {
                s.module_write(|sql| {
                    sql.execute(
                        "INSERT INTO media_file (rsc_id, sha256, size) VALUES (7, $1, 0)",
                        &[recorded.into()],
                    )
                })
            })
            .await
            .unwrap();

        originals.keep_unkept().await;
        assert_eq!(parts(&store, &sha256), 3);
        // Again: nothing more to keep.
        originals.keep_unkept().await;
        assert_eq!(parts(&store, &sha256), 3);

        std::fs::remove_file(&path).unwrap();
        let fetched = originals.local(&sha256).await.unwrap();
        assert_eq!(std::fs::read(&fetched).unwrap(), bytes);

        // A damaged part: the file is not kept, and nothing is left behind.
        std::fs::remove_file(&path).unwrap();
        let damaged = sha256.clone();
        store
            .module_write(|sql| {
                sql.execute(
                    "UPDATE media_blob SET bytes = $1 WHERE sha256 = $2 AND part = 1",
                    &[vec![0u8; PART_BYTES].into(), damaged.into()],
                )
            })
            .unwrap();
        assert!(matches!(originals.local(&sha256).await, Err(Missing::Gone)));
        assert!(!path.exists());
        assert_eq!(
            std::fs::read_dir(dir.path().join("media/tmp"))
                .unwrap()
                .count(),
            0
        );

        // Used: the sweep keeps it. Unused: it goes, with its previews.
        std::fs::write(&path, &bytes).unwrap();
        let previews = dir.path().join("media/previews").join(&sha256[..2]);
        std::fs::create_dir_all(&previews).unwrap();
        let preview = previews.join(format!("{sha256}-thumbnail.jpg"));
        std::fs::write(&preview, b"jpeg").unwrap();
        assert_eq!(originals.sweep().unwrap(), 0);
        store
            .module_write(|sql| sql.execute("DELETE FROM media_file", &[]))
            .unwrap();
        assert_eq!(originals.sweep().unwrap(), 1);
        assert!(!path.exists() && !preview.exists());
    }

    /// Two nodes on one PostgreSQL admitting twenty files at once keep the
    /// quota between them: each admission counts what the others recorded.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn admissions_on_two_nodes_at_once_keep_the_quota() {
        let url = std::env::var("BULWARK_TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
        let schema = format!(
            "media_admit_{}_{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
        let config = StoreConfig::postgres(&url, Some(&schema));
        let one = media_store(config.clone()).await;
        let two = media_store(config).await;
        let dir = tempfile::tempdir().unwrap();
        let nodes = [
            Originals::new(dir.path().join("one"), one.clone(), true),
            Originals::new(dir.path().join("two"), two, true),
        ];
        let hashes: Vec<String> = (0..20).map(|i| format!("{i:064x}")).collect();
        let admitted = futures_util::future::join_all(
            hashes
                .iter()
                .enumerate()
                .map(|(i, sha256)| nodes[i % 2].admit(sha256, 100, Some(500))),
        )
        .await;
        let held: Vec<Reservation> = admitted.into_iter().flat_map(Result::unwrap).collect();
        assert_eq!(held.len(), 5);
        assert_eq!(nodes[0].stored_bytes().await.unwrap(), 500);
        // They stand (no giving back beside the schema's drop).
        std::mem::forget(held);
        one.module_write(|sql| sql.execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"), &[]))
            .unwrap();
    }

    /// An admission holds the file's room until its resource takes it, gives
    /// it back when the upload fails, and lapses after an hour.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_admission_holds_the_room_until_taken_or_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = media_store(StoreConfig::sqlite(dir.path().join("site.db"))).await;
        let originals = Originals::new(dir.path().join("media"), store.clone(), false);
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let held = originals.admit(&a, 600, Some(1000)).await.unwrap().unwrap();
        assert!(
            originals
                .admit(&b, 600, Some(1000))
                .await
                .unwrap()
                .is_none()
        );
        // The same file again takes no more room.
        let again = originals.admit(&a, 600, Some(1000)).await.unwrap().unwrap();
        assert_eq!(originals.stored_bytes().await.unwrap(), 600);
        held.confirm(ResourceId(42)).await.unwrap();
        drop(again);
        let rows = || {
            store
                .module_read(|sql| sql.query("SELECT rsc_id, reserved_at FROM media_file", &[]))
                .unwrap()
                .iter()
                .map(|r| (r.int(0), r.opt_int(1)))
                .collect::<Vec<_>>()
        };
        for _ in 0..100 {
            if rows().len() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(
            rows(),
            [(42, None)],
            "taken, and the dropped one given back"
        );

        // An upload that fails after its file went into the database: the
        // file's parts go back with its room, when nothing else records it.
        let c = "c".repeat(64);
        let failing = originals.admit(&c, 100, Some(1000)).await.unwrap().unwrap();
        let part = c.clone();
        store
            .module_write(move |sql| {
                sql.execute(
                    "INSERT INTO media_blob (sha256, part, bytes) VALUES ($1, 0, $2)",
                    &[part.into(), vec![1u8, 2, 3].into()],
                )
            })
            .unwrap();
        drop(failing);
        for _ in 0..100 {
            if parts(&store, &c) == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(parts(&store, &c), 0);
        assert_eq!(rows(), [(42, None)]);

        // A reservation whose node died: gone after an hour.
        store
            .module_write(|sql| {
                sql.execute(
                    "INSERT INTO media_file (rsc_id, sha256, size, reserved_at) \
                     VALUES (-5, $1, 100, $2), (-6, $1, 100, $3)",
                    &[
                        b.as_str().into(),
                        (unix_seconds() - 3601).into(),
                        unix_seconds().into(),
                    ],
                )
            })
            .unwrap();
        forget_stale_reservations(&store).unwrap();
        assert_eq!(rows().len(), 2);
        assert!(rows().iter().any(|r| r.0 == -6));
        assert!(!rows().iter().any(|r| r.0 == -5));
    }
}
