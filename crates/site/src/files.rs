//! Finding static files safely, and the combined `lib` URL format.
//!
//! Every path that comes from a URL goes through [`resolve_inside`]: the relative
//! path is checked segment by segment (no `..`, no hidden files, no backslashes or
//! NUL), joined to the folder, and then canonicalised so a symlink that points out of
//! the folder is refused too. Callers decode percent-escapes exactly once before
//! calling, so `%2e%2e` arrives here as `..` and `%252e` as a literal `%2e`.
//!
//! A combined URL lists several files of one type in one request:
//! `/lib/css/base~site~/print~1700000000.css` is `css/base.css`, `css/site.css`
//! (no `/`: same folder as the previous file), `print.css` (leading `/`: from the
//! root of `lib/`), with the newest modification time as a cache-busting stamp.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use include_dir::Dir;

use crate::module::embedded_file;

/// Joins `rel` to `root` if, and only if, the result is a regular file inside `root`
/// (which must already be canonical).
pub fn resolve_inside(root: &Path, rel: &str) -> Option<PathBuf> {
    if !relative_path_is_safe(rel) {
        return None;
    }
    let path = root.join(rel).canonicalize().ok()?;
    (path.starts_with(root) && path.is_file()).then_some(path)
}

/// Makes a folder of a site's own (its `data/`, its backups) for the server's
/// user alone (0700), creating it and its parents as needed: what it holds
/// (the database, backups, uploads not yet published) is nobody else's to
/// read on a shared machine.
pub fn private_folder(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

/// `a/b.css` yes; `/a`, `a/../b`, `a//b`, `.env`, `a\b`, `a\0` no.
pub fn relative_path_is_safe(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.contains(['\\', '\0', ':'])
        && rel.split('/').all(|s| !s.is_empty() && !s.starts_with('.'))
}

/// Where a static file's bytes are.
#[derive(Debug, Clone)]
pub enum LibSource {
    Disk(PathBuf),
    Embedded(&'static [u8]),
}

#[derive(Debug, Clone)]
pub struct LibFile {
    pub source: LibSource,
    pub modified: SystemTime,
    pub len: u64,
}

/// Embedded files carry their build-time modification time; this is the fallback.
const EMBEDDED_EPOCH: Duration = Duration::from_secs(1_700_000_000);

/// Why `lib(...)` cannot combine the files it was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LibError {
    #[error("lib file {file:?} not found")]
    NotFound { file: String },
    #[error("lib file {file:?} has no extension")]
    NoExtension { file: String },
    #[error("lib file {file:?}: '~' cannot be used in combined names")]
    TildeInName { file: String },
}

/// The `lib/` folders of a site in lookup order (site, then modules), with a small
/// cache of lookups so building `lib(...)` tags does not `stat` on every render.
#[derive(Debug)]
pub struct LibIndex {
    site_lib: Option<PathBuf>,
    modules: Vec<&'static Dir<'static>>,
    recheck: Duration,
    cache: RwLock<HashMap<String, (Instant, Option<LibFile>)>>,
}

/// Past this many cached lookups the cache starts over, so requests for endless
/// distinct missing names cannot grow memory.
const LIB_CACHE_MAX: usize = 10_000;

impl LibIndex {
    /// `recheck` is how long a lookup is trusted (zero in development mode).
    pub fn new(
        site_lib: Option<PathBuf>,
        modules: Vec<&'static Dir<'static>>,
        recheck: Duration,
    ) -> LibIndex {
        LibIndex {
            site_lib,
            modules,
            recheck,
            cache: RwLock::new(HashMap::new()),
        }
    }

    pub fn lookup(&self, rel: &str) -> Option<LibFile> {
        if !self.recheck.is_zero()
            && let Some((at, found)) = self.cache.read().expect("lib cache").get(rel)
            && at.elapsed() < self.recheck
        {
            return found.clone();
        }
        let found = self.lookup_uncached(rel);
        if !self.recheck.is_zero() {
            let mut cache = self.cache.write().expect("lib cache");
            if cache.len() >= LIB_CACHE_MAX {
                cache.clear();
            }
            cache.insert(rel.to_string(), (Instant::now(), found.clone()));
        }
        found
    }

    /// How long a lookup is trusted (zero in development mode): what is
    /// built from lookups may be kept as long.
    pub fn recheck(&self) -> Duration {
        self.recheck
    }

    fn lookup_uncached(&self, rel: &str) -> Option<LibFile> {
        if !relative_path_is_safe(rel) {
            return None;
        }
        if let Some(root) = &self.site_lib
            && let Some(path) = resolve_inside(root, rel)
            && let Ok(meta) = path.metadata()
        {
            return Some(LibFile {
                modified: meta.modified().unwrap_or(UNIX_EPOCH),
                len: meta.len(),
                source: LibSource::Disk(path),
            });
        }
        self.modules.iter().find_map(|dir| {
            let file = embedded_file(dir, rel)?;
            let modified = file
                .metadata()
                .map(|m| m.modified())
                .unwrap_or(UNIX_EPOCH + EMBEDDED_EPOCH);
            Some(LibFile {
                source: LibSource::Embedded(file.contents()),
                modified,
                len: file.contents().len() as u64,
            })
        })
    }

    /// The combined URLs for these files, one per file type in order of first
    /// appearance (`css` and `js` cannot share one URL).
    pub fn combined_urls(&self, files: &[&str]) -> Result<Vec<(String, String)>, LibError> {
        let mut groups: Vec<(String, Vec<&str>, SystemTime)> = Vec::new();
        for file in files {
            let file_name = || file.to_string();
            let found = self
                .lookup(file)
                .ok_or_else(|| LibError::NotFound { file: file_name() })?;
            let (stem, ext) = file
                .rsplit_once('.')
                .filter(|(stem, ext)| !stem.is_empty() && !ext.contains('/'))
                .ok_or_else(|| LibError::NoExtension { file: file_name() })?;
            if stem.contains('~') {
                return Err(LibError::TildeInName { file: file_name() });
            }
            match groups.iter_mut().find(|g| g.0 == ext) {
                Some(group) => {
                    group.1.push(stem);
                    group.2 = group.2.max(found.modified);
                }
                None => groups.push((ext.to_string(), vec![stem], found.modified)),
            }
        }
        Ok(groups
            .into_iter()
            .map(|(ext, stems, newest)| {
                let mut url = String::from("/lib/");
                let mut folder = "";
                for (i, stem) in stems.iter().enumerate() {
                    let (dir, base) = stem.rsplit_once('/').unwrap_or(("", stem));
                    if i == 0 {
                        url.push_str(stem);
                    } else {
                        url.push('~');
                        if dir == folder {
                            url.push_str(base);
                        } else {
                            if dir.is_empty() {
                                url.push('/');
                            }
                            url.push_str(stem);
                        }
                    }
                    folder = dir;
                }
                let stamp = newest
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                url.push_str(&format!("~{stamp}.{ext}"));
                (ext, url)
            })
            .collect())
    }
}

/// Splits the part of a lib URL after `/lib/` (already percent-decoded) into the
/// files it names. Without a `~<digits>` stamp it names exactly one file.
pub fn split_lib_path(tail: &str) -> Option<Vec<String>> {
    let (stem, ext) = tail.rsplit_once('.')?;
    if ext.is_empty() || ext.contains('/') {
        return None;
    }
    let Some((names, _stamp)) = stem
        .rsplit_once('~')
        .filter(|(_, s)| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
    else {
        return Some(vec![tail.to_string()]);
    };
    let mut files = Vec::new();
    let mut folder = String::new();
    for part in names.split('~') {
        let path = if let Some(from_root) = part.strip_prefix('/') {
            from_root.to_string()
        } else if part.contains('/') || folder.is_empty() {
            part.to_string()
        } else {
            format!("{folder}/{part}")
        };
        folder = path
            .rsplit_once('/')
            .map(|(d, _)| d.to_string())
            .unwrap_or_default();
        files.push(format!("{path}.{ext}"));
    }
    if files.len() > 64 {
        return None;
    }
    Some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_relative_paths_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "..",
            "a//b",
            ".env",
            "a/.git/x",
            "a\\b",
            "a\0b",
            "c:/x",
        ] {
            assert!(!relative_path_is_safe(bad), "{bad:?}");
        }
        assert!(relative_path_is_safe("css/site.css"));
    }

    #[test]
    fn symlinks_out_of_the_root_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("lib");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "secret").unwrap();
        std::fs::write(root.join("ok.txt"), "ok").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), root.join("link.txt")).unwrap();
        let root = root.canonicalize().unwrap();
        assert!(resolve_inside(&root, "ok.txt").is_some());
        assert!(resolve_inside(&root, "link.txt").is_none());
    }

    #[test]
    fn combined_url_round_trips() {
        let tmp = tempfile::tempdir().unwrap();
        let lib = tmp.path().join("lib");
        std::fs::create_dir_all(lib.join("css/print")).unwrap();
        for f in [
            "css/base.css",
            "css/site.css",
            "top.css",
            "css/print/p.css",
            "js/app.js",
        ] {
            std::fs::create_dir_all(lib.join(f).parent().unwrap()).unwrap();
            std::fs::write(lib.join(f), f).unwrap();
        }
        let index = LibIndex::new(Some(lib.canonicalize().unwrap()), vec![], Duration::ZERO);
        let files = [
            "css/base.css",
            "css/site.css",
            "top.css",
            "js/app.js",
            "css/print/p.css",
        ];
        let urls = index.combined_urls(&files).unwrap();
        assert_eq!(urls.len(), 2);
        assert_eq!(urls[0].0, "css");
        assert!(
            urls[0]
                .1
                .starts_with("/lib/css/base~site~/top~css/print/p~"),
            "{}",
            urls[0].1
        );
        let css = split_lib_path(urls[0].1.strip_prefix("/lib/").unwrap()).unwrap();
        assert_eq!(
            css,
            ["css/base.css", "css/site.css", "top.css", "css/print/p.css"]
        );
        let js = split_lib_path(urls[1].1.strip_prefix("/lib/").unwrap()).unwrap();
        assert_eq!(js, ["js/app.js"]);
        assert_eq!(
            index
                .combined_urls(&["missing.css"])
                .unwrap_err()
                .to_string(),
            r#"lib file "missing.css" not found"#
        );
    }

    #[test]
    fn a_path_without_stamp_is_one_file() {
        assert_eq!(split_lib_path("css/a~b.css").unwrap(), ["css/a~b.css"]);
        assert_eq!(split_lib_path("img/logo.png").unwrap(), ["img/logo.png"]);
        assert!(split_lib_path("noext").is_none());
    }
}
