//! Files answered from memory: a site's hot files (its `files/`, and what
//! modules serve, such as media and their previews) are read once and then
//! sent from memory, within a byte budget per site (`--file-memory`). A file
//! larger than a thirty-second of the budget is streamed from disk each time.
//!
//! A file held in memory is looked at on disk again at most once a second
//! (one `stat`): a file replaced on disk is served new within a second, and a
//! hit in between makes no system call at all. That is what lets `files/`
//! keep up with nginx, which opens and `stat`s the file for every request.
//!
//! Text files are held compressed too (gzip and brotli, made once when the
//! file is read); images, video and other formats that are compressed
//! already are held as they are.
//!
//! Written here rather than taken from a crate: `tower-http`'s `ServeDir` and
//! its peers read the disk for every request, and nothing offers a byte-budget
//! cache that revalidates against the disk.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::HeaderValue;

use bulwark_http::{Effort, EncodedBody};

use crate::content_type::content_type_for;
use crate::representation::Content;

/// How long a file held in memory is served without looking at the disk.
pub const REVALIDATE: Duration = Duration::from_secs(1);

/// A file in memory, as it was on disk when last looked at.
pub struct HeldFile {
    pub path: PathBuf,
    pub modified: SystemTime,
    pub len: u64,
    pub body: HeldBody,
    /// Made once, when the file is read: a hit formats nothing.
    pub etag: HeaderValue,
    pub content_type: HeaderValue,
    /// When the disk was last looked at, in milliseconds since [`epoch`].
    checked: AtomicU64,
}

/// A held file's bytes.
#[derive(Clone)]
pub enum HeldBody {
    /// Text: kept in every encoding.
    Encoded(Arc<EncodedBody>),
    /// Compressed already (images...): kept as it is.
    Plain(Bytes),
}

impl HeldFile {
    fn weight(&self) -> u32 {
        let bytes = match &self.body {
            HeldBody::Encoded(e) => e.len(),
            HeldBody::Plain(b) => b.len(),
        };
        u32::try_from(bytes + self.path.as_os_str().len() + 128).unwrap_or(u32::MAX)
    }

    fn fresh(&self) -> bool {
        now_ms().saturating_sub(self.checked.load(Ordering::Relaxed))
            < REVALIDATE.as_millis() as u64
    }

    pub fn content(&self) -> Content {
        match &self.body {
            HeldBody::Encoded(e) => Content::Encoded(e.clone()),
            HeldBody::Plain(b) => Content::Fixed(b.clone()),
        }
    }
}

/// `"<mtime>-<len>"` in hex: changes when the file does.
pub fn etag_for(modified: SystemTime, len: u64) -> HeaderValue {
    let secs = modified
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    HeaderValue::from_str(&format!("\"{secs:x}-{len:x}\"")).expect("ASCII")
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64
}

/// Where a file asked for is.
pub enum Found {
    /// Held in memory.
    Held(Arc<HeldFile>),
    /// Too large to hold: stream it from here.
    Disk {
        path: PathBuf,
        modified: SystemTime,
        len: u64,
    },
    Missing,
}

/// A site's files in memory (see the module's documentation).
pub struct FileCache {
    files: moka::future::Cache<String, Arc<HeldFile>>,
    /// The largest file held; larger ones are streamed.
    largest: u64,
}

impl FileCache {
    pub fn new(budget_bytes: u64) -> FileCache {
        FileCache {
            files: moka::future::Cache::builder()
                .max_capacity(budget_bytes)
                .weigher(|_k: &String, v: &Arc<HeldFile>| v.weight())
                .build(),
            largest: budget_bytes / 32,
        }
    }

    /// The file a request names by `key` (unique within the site, such as
    /// `files/a/b.css`); `locate` says where it is on disk (`None`: it is
    /// not there, or may not be served). `locate` runs on a blocking thread,
    /// and only when the file is not held or is due a look at the disk.
    pub async fn get(
        &self,
        key: &str,
        locate: impl FnOnce() -> Option<PathBuf> + Send + 'static,
    ) -> Found {
        let held = self.files.get(key).await;
        if let Some(held) = &held
            && held.fresh()
        {
            return Found::Held(held.clone());
        }
        let largest = self.largest;
        let looked = tokio::task::spawn_blocking(move || {
            let path = locate()?;
            let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file())?;
            Some((path, meta.modified().unwrap_or(UNIX_EPOCH), meta.len()))
        })
        .await
        .ok()
        .flatten();
        let Some((path, modified, len)) = looked else {
            if held.is_some() {
                self.files.invalidate(key).await;
            }
            return Found::Missing;
        };
        if let Some(held) = held {
            if held.path == path && held.modified == modified && held.len == len {
                held.checked.store(now_ms(), Ordering::Relaxed);
                return Found::Held(held);
            }
            self.files.invalidate(key).await;
        }
        if len > largest {
            return Found::Disk {
                path,
                modified,
                len,
            };
        }
        // One read however many ask for a new file at once.
        let read = self
            .files
            .try_get_with(key.to_owned(), async move {
                tokio::task::spawn_blocking(move || read(path, modified, len))
                    .await
                    .map_err(std::io::Error::other)?
            })
            .await;
        match read {
            Ok(held) => Found::Held(held),
            Err(e) => {
                tracing::warn!("reading {key}: {e}");
                Found::Missing
            }
        }
    }

    /// Bytes held, for tests and figures.
    pub fn weighted_size(&self) -> u64 {
        self.files.weighted_size()
    }
}

fn read(path: PathBuf, modified: SystemTime, len: u64) -> std::io::Result<Arc<HeldFile>> {
    let bytes = Bytes::from(std::fs::read(&path)?);
    // The file changed while it was read: what was read is what is held, with
    // a length that says so (the next look at the disk reads it again).
    let len = if bytes.len() as u64 == len {
        len
    } else {
        bytes.len() as u64
    };
    let body = if compressible(&path) && bytes.len() >= 256 {
        HeldBody::Encoded(Arc::new(EncodedBody::new(bytes, Effort::Fast)))
    } else {
        HeldBody::Plain(bytes)
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    Ok(Arc::new(HeldFile {
        etag: etag_for(modified, len),
        content_type: content_type_for(name),
        path,
        modified,
        len,
        body,
        checked: AtomicU64::new(now_ms()),
    }))
}

/// Whether a file's type is worth compressing (text, not images or archives).
fn compressible(path: &Path) -> bool {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    matches!(
        ext.as_str(),
        "html"
            | "htm"
            | "css"
            | "js"
            | "mjs"
            | "json"
            | "map"
            | "txt"
            | "csv"
            | "xml"
            | "svg"
            | "md"
            | "wasm"
            | "ics"
            | "tsv"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_held_file_is_served_new_after_it_changes_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let cache = FileCache::new(1024 * 1024);
        let at = file.clone();
        let Found::Held(first) = cache.get("a", move || Some(at)).await else {
            panic!("not held");
        };
        assert!(matches!(&first.body, HeldBody::Plain(b) if &b[..] == b"one"));
        std::fs::write(&file, "two!").unwrap();
        // Within a second the held copy answers without a look at the disk.
        let Found::Held(again) = cache.get("a", || panic!("looked")).await else {
            panic!("not held");
        };
        assert!(Arc::ptr_eq(&first, &again));
        tokio::time::sleep(REVALIDATE).await;
        let at = file.clone();
        let Found::Held(new) = cache.get("a", move || Some(at)).await else {
            panic!("not held");
        };
        assert!(matches!(&new.body, HeldBody::Plain(b) if &b[..] == b"two!"));
        std::fs::remove_file(&file).unwrap();
        tokio::time::sleep(REVALIDATE).await;
        let at = file.clone();
        assert!(matches!(
            cache.get("a", move || Some(at)).await,
            Found::Missing
        ));
    }

    #[tokio::test]
    async fn large_files_are_streamed_and_text_is_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.bin");
        std::fs::write(&big, vec![7u8; 64 * 1024]).unwrap();
        let css = dir.path().join("site.css");
        std::fs::write(&css, "body { color: red }\n".repeat(100)).unwrap();
        let cache = FileCache::new(32 * 1024 * 32 - 1);
        assert!(matches!(
            cache.get("big", move || Some(big)).await,
            Found::Disk { len: 65536, .. }
        ));
        let Found::Held(held) = cache.get("css", move || Some(css)).await else {
            panic!("not held");
        };
        let HeldBody::Encoded(encoded) = &held.body else {
            panic!("text is compressed");
        };
        assert!(encoded.gzip.len() < encoded.identity.len() / 10);
        assert_eq!(held.etag, etag_for(held.modified, 2000));
        assert_eq!(held.content_type, "text/css; charset=utf-8");
    }
}
