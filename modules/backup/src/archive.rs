//! One backup archive: the site's database and the files it keeps under
//! `data/`, as a gzipped tar, encrypted to age recipients when the site asks.
//!
//! ```text
//! bulwark-backup.json   what it is: site, backend, when, Bulwark's version
//! database.sqlite       (SQLite) or database.pgcopy (PostgreSQL): Store::backup
//! data/...              every file under the site's data/ but the database,
//!                       backups, previews and temporary files
//! ```
//!
//! Taken online: the database snapshot is one read transaction; files are
//! content-addressed and never change, so they are hard-linked into a staging
//! folder before the snapshot (a file deleted meanwhile is kept) and again
//! after it (a file added meanwhile is caught). Only a file both added and
//! deleted while the backup runs can be missing.
//!
//! A restore puts the files back first (adding files never hurts a running
//! site), then replaces the database at once (`Store::restore_in_place`, which
//! also tells every cache on every node).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};

use bulwark_store::Store;

use crate::BackupError;

const MANIFEST: &str = "bulwark-backup.json";
const FORMAT: u32 = 1;

/// What `data/` holds that a backup leaves out: the database itself (it goes
/// in as a snapshot), the backups, and what is made again on demand.
const LEFT_OUT: [&str; 5] = ["backups", "media/previews", "media/tmp", "import", "tmp"];

/// How the work goes, for a progress bar.
pub trait Progress: Send + Sync {
    /// A new stage, with the bytes it will go through (0: unknown).
    fn stage(&self, _what: &'static str, _bytes: u64) {}
    fn advance(&self, _bytes: u64) {}
}

/// No progress shown.
pub struct Quiet;
impl Progress for Quiet {}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format: u32,
    pub site: String,
    pub backend: String,
    pub created: DateTime<Utc>,
    pub bulwark: String,
    pub files: u64,
}

/// A backup in a site's `data/backups/`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Backup {
    pub name: String,
    pub size: u64,
    pub created: DateTime<Utc>,
    pub encrypted: bool,
    /// Made by the schedule (and pruned by its rule); others are kept until
    /// someone deletes them.
    pub scheduled: bool,
    #[serde(skip)]
    pub path: PathBuf,
}

/// Where a site's backups are kept.
pub fn folder(site_dir: &Path) -> PathBuf {
    site_dir.join("data").join("backups")
}

/// A backup's file name as this module makes them: `<site>-<time>[-auto]`
/// then `.tar.gz`, or `.tar.gz.age` encrypted. Nothing that could leave the
/// folder.
pub fn valid_name(name: &str) -> bool {
    let Some(stem) = name
        .strip_suffix(".tar.gz.age")
        .or_else(|| name.strip_suffix(".tar.gz"))
    else {
        return false;
    };
    !stem.is_empty()
        && name.len() <= 120
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// When a backup was made, from its name (`...-20261126-030000[-auto]...`).
fn made_at(name: &str) -> Option<DateTime<Utc>> {
    let stem = name.split('.').next()?;
    let stem = stem.strip_suffix("-auto").unwrap_or(stem);
    let stamp = stem.get(stem.len().checked_sub(15)?..)?;
    NaiveDateTime::parse_from_str(stamp, "%Y%m%d-%H%M%S")
        .ok()
        .map(|t| t.and_utc())
}

/// The backups in `dir`, newest first.
pub fn list(dir: &Path) -> Result<Vec<Backup>, BackupError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(BackupError::io("listing the backups", e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| BackupError::io("listing the backups", e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() || !valid_name(&name) {
            continue;
        }
        let created = made_at(&name).unwrap_or_else(|| {
            meta.modified()
                .map(DateTime::<Utc>::from)
                .unwrap_or_default()
        });
        found.push(Backup {
            encrypted: name.ends_with(".age"),
            scheduled: name.contains("-auto."),
            size: meta.len(),
            created,
            path: entry.path(),
            name,
        });
    }
    found.sort_by(|a, b| b.created.cmp(&a.created).then(b.name.cmp(&a.name)));
    Ok(found)
}

/// The one named `name` in `dir`, if it exists.
pub fn named(dir: &Path, name: &str) -> Option<PathBuf> {
    let path = dir.join(name);
    (valid_name(name) && path.is_file()).then_some(path)
}

/// A folder removed with everything in it when dropped.
struct Staging(PathBuf);

impl Staging {
    fn new(parent: &Path, what: &str) -> Result<Staging, BackupError> {
        let path = parent.join(format!(
            ".{what}-{}-{}",
            std::process::id(),
            Utc::now().format("%Y%m%d%H%M%S%f")
        ));
        std::fs::create_dir_all(&path)
            .map_err(|e| BackupError::io(format!("making {}", path.display()), e))?;
        Ok(Staging(path))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The files under `data/` a backup holds, relative to it.
fn data_files(data: &Path) -> Vec<PathBuf> {
    fn walk(data: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(data.join(rel)) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name_str = name.to_string_lossy();
            let path = rel.join(&name);
            if name_str.starts_with('.')
                || name_str.starts_with("site.db")
                || LEFT_OUT.iter().any(|l| Path::new(l) == path)
            {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => walk(data, &path, out),
                Ok(t) if t.is_file() => out.push(path),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(data, Path::new(""), &mut out);
    out.sort();
    out
}

/// Links (or, across file systems, copies) the files of `data` not yet in
/// `staged` there.
fn stage_files(data: &Path, staged: &Path) -> Result<(), BackupError> {
    for rel in data_files(data) {
        let to = staged.join(&rel);
        if to.exists() {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| BackupError::io(format!("making {}", parent.display()), e))?;
        }
        let from = data.join(&rel);
        if std::fs::hard_link(&from, &to).is_err() {
            match std::fs::copy(&from, &to) {
                Ok(_) => {}
                // Gone since it was listed: deleted meanwhile.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(BackupError::io(format!("copying {}", from.display()), e)),
            }
        }
    }
    Ok(())
}

/// The file a backup is written to: plain, or through an age encryptor.
enum Sink {
    Plain(BufWriter<File>),
    Age(age::stream::StreamWriter<BufWriter<File>>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(buf),
            Sink::Age(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Age(w) => w.flush(),
        }
    }
}

impl Sink {
    fn finish(self) -> std::io::Result<()> {
        let mut file = match self {
            Sink::Plain(w) => w,
            Sink::Age(w) => w.finish()?,
        };
        file.flush()?;
        file.get_ref().sync_all()
    }
}

/// Counts what goes through, for the progress bar.
struct Counted<'a, R> {
    inner: R,
    progress: &'a dyn Progress,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

/// Parses age recipients (`age1...`).
pub fn recipients(list: &[String]) -> Result<Vec<age::x25519::Recipient>, BackupError> {
    list.iter()
        .map(|r| {
            r.trim()
                .parse::<age::x25519::Recipient>()
                .map_err(|e| BackupError::Key(format!("{r:?} is not an age recipient: {e}")))
        })
        .collect()
}

/// Makes a backup of the site in `site_dir` whose store is `store`, into
/// `dest` (which must not exist). Blocking: run it off the runtime's workers.
pub fn make(
    site: &str,
    site_dir: &Path,
    store: &Store,
    dest: &Path,
    encrypt_to: &[age::x25519::Recipient],
    progress: &dyn Progress,
) -> Result<Manifest, BackupError> {
    let data = site_dir.join("data");
    let backups = folder(site_dir);
    bulwark_site::private_folder(&backups)
        .map_err(|e| BackupError::io(format!("making {}", backups.display()), e))?;
    let staging = Staging::new(&backups, "making")?;
    let staged = staging.0.join("data");
    progress.stage("taking the files", 0);
    stage_files(&data, &staged)?;
    progress.stage("taking the database", 0);
    let database = staging.0.join(match store.backend_name() {
        "sqlite" => "database.sqlite",
        _ => "database.pgcopy",
    });
    store.backup(&database)?;
    stage_files(&data, &staged)?;
    let files = data_files(&staged);
    let manifest = Manifest {
        format: FORMAT,
        site: site.to_owned(),
        backend: store.backend_name().to_owned(),
        created: Utc::now(),
        bulwark: env!("CARGO_PKG_VERSION").to_owned(),
        files: files.len() as u64,
    };
    let size_of = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let total = size_of(&database) + files.iter().map(|f| size_of(&staged.join(f))).sum::<u64>();
    progress.stage("writing the archive", total);

    let partial = dest.with_extension("partial");
    // For its owner alone: it holds the whole database.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&partial)
        .map_err(|e| BackupError::io(format!("creating {}", partial.display()), e))?;
    let file = BufWriter::with_capacity(1 << 16, file);
    let sink = if encrypt_to.is_empty() {
        Sink::Plain(file)
    } else {
        let recipients = encrypt_to.iter().map(|r| r as &dyn age::Recipient);
        let encryptor = age::Encryptor::with_recipients(recipients)
            .map_err(|e| BackupError::Key(e.to_string()))?;
        Sink::Age(
            encryptor
                .wrap_output(file)
                .map_err(|e| BackupError::io("encrypting", e))?,
        )
    };
    let written = (|| -> std::io::Result<()> {
        let gz = flate2::write::GzEncoder::new(sink, flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        let text = serde_json::to_vec_pretty(&manifest).expect("a manifest");
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o600);
        header.set_mtime(manifest.created.timestamp().max(0) as u64);
        header.set_cksum();
        tar.append_data(&mut header, MANIFEST, text.as_slice())?;
        let name = database.file_name().expect("a file name");
        let mut add = |path: &Path, name: &Path| -> std::io::Result<()> {
            let mut f = File::open(path)?;
            let mut header = tar::Header::new_gnu();
            header.set_metadata(&f.metadata()?);
            header.set_mode(0o600);
            tar.append_data(
                &mut header,
                name,
                Counted {
                    inner: &mut f,
                    progress,
                },
            )
        };
        add(&database, Path::new(name))?;
        for rel in &files {
            add(&staged.join(rel), &Path::new("data").join(rel))?;
        }
        tar.into_inner()?.finish()?.finish()
    })();
    if let Err(e) = written.and_then(|()| std::fs::rename(&partial, dest)) {
        let _ = std::fs::remove_file(&partial);
        return Err(BackupError::io(format!("writing {}", dest.display()), e));
    }
    Ok(manifest)
}

/// Reads a backup's archive, decrypting it with `identities` when it is
/// encrypted.
fn open<'a>(
    path: &Path,
    identities: &[Box<dyn age::Identity>],
    progress: &'a dyn Progress,
) -> Result<tar::Archive<Box<dyn Read + 'a>>, BackupError> {
    let file =
        File::open(path).map_err(|e| BackupError::io(format!("opening {}", path.display()), e))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    progress.stage("reading the archive", size);
    let counted = Counted {
        inner: BufReader::with_capacity(1 << 16, file),
        progress,
    };
    let mut head = [0u8; 2];
    let mut peek = BufReader::new(counted);
    let plain: Box<dyn Read + 'a> = {
        use std::io::BufRead;
        let buffered = peek.fill_buf().map_err(|e| BackupError::io("reading", e))?;
        head.copy_from_slice(buffered.get(..2).unwrap_or(&[0, 0]));
        if head == [0x1f, 0x8b] {
            Box::new(peek)
        } else {
            if identities.is_empty() {
                return Err(BackupError::Encrypted);
            }
            let decryptor = age::Decryptor::new(peek)
                .map_err(|e| BackupError::NotABackup(format!("{}: {e}", path.display())))?;
            let reader = decryptor
                .decrypt(identities.iter().map(|i| i.as_ref()))
                .map_err(|e| BackupError::Key(format!("cannot decrypt {}: {e}", path.display())))?;
            Box::new(BufReader::new(reader))
        }
    };
    Ok(tar::Archive::new(Box::new(flate2::read::GzDecoder::new(
        plain,
    ))))
}

/// Reads identities (age secret keys) from a file made by `bulwark
/// backup-key` or `age-keygen`; none without a file.
pub fn identities(path: Option<&Path>) -> Result<Vec<Box<dyn age::Identity>>, BackupError> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    age::IdentityFile::from_file(path.to_string_lossy().into_owned())
        .and_then(|f| f.into_identities().map_err(std::io::Error::other))
        .map_err(|e| BackupError::Key(format!("reading {}: {e}", path.display())))
}

/// Puts the backup at `path` back into the site in `site_dir` whose store is
/// `store` (a running site, or a new empty one): its files, then its
/// database at once. A backup of another backend, or one made with other
/// migrations, is refused before anything changes. Blocking.
pub fn restore(
    site_dir: &Path,
    store: &Store,
    path: &Path,
    identities: &[Box<dyn age::Identity>],
    progress: &dyn Progress,
) -> Result<Manifest, BackupError> {
    let backups = folder(site_dir);
    bulwark_site::private_folder(&backups)
        .map_err(|e| BackupError::io(format!("making {}", backups.display()), e))?;
    let staging = Staging::new(&backups, "restoring")?;
    let mut archive = open(path, identities, progress)?;
    let entries = archive
        .entries()
        .map_err(|e| BackupError::NotABackup(format!("{}: {e}", path.display())))?;
    for entry in entries {
        let mut entry =
            entry.map_err(|e| BackupError::NotABackup(format!("{}: {e}", path.display())))?;
        // `unpack_in` refuses names that would leave the folder.
        let unpacked = entry
            .unpack_in(&staging.0)
            .map_err(|e| BackupError::NotABackup(format!("{}: {e}", path.display())))?;
        if !unpacked {
            return Err(BackupError::NotABackup(format!(
                "{} holds a path outside its folder",
                path.display()
            )));
        }
    }
    let manifest: Manifest = std::fs::read(staging.0.join(MANIFEST))
        .ok()
        .and_then(|text| serde_json::from_slice(&text).ok())
        .filter(|m: &Manifest| m.format == FORMAT)
        .ok_or_else(|| {
            BackupError::NotABackup(format!("{} is not a Bulwark backup", path.display()))
        })?;
    if manifest.backend != store.backend_name() {
        return Err(BackupError::OtherBackend {
            made_on: manifest.backend,
            site: store.backend_name().to_owned(),
        });
    }
    let database = staging.0.join(match store.backend_name() {
        "sqlite" => "database.sqlite",
        _ => "database.pgcopy",
    });
    if !database.is_file() {
        return Err(BackupError::NotABackup(format!(
            "{} holds no database",
            path.display()
        )));
    }
    progress.stage("putting the files back", 0);
    let data = site_dir.join("data");
    let staged = staging.0.join("data");
    for rel in data_files(&staged) {
        let to = data.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| BackupError::io(format!("making {}", parent.display()), e))?;
        }
        std::fs::rename(staged.join(&rel), &to)
            .map_err(|e| BackupError::io(format!("putting back {}", to.display()), e))?;
    }
    progress.stage("putting the database back", 0);
    store.restore_in_place(&database)?;
    Ok(manifest)
}
