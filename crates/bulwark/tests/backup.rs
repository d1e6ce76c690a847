//! Backups as a site owner takes them: `bulwark backup` while a writer
//! writes, the site wiped and restored (through the running server), the
//! same backup restored into a new empty site, on SQLite and on PostgreSQL;
//! every resource, edge and file compared. Scheduled backups pruned by their
//! rule, and an encrypted backup that cannot be read without its key.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bulwark_testkit::eventually_blocking;
use common::{free_port, pg_url, serve, starter_site};
use serde_json::{Value, json};

const TOKEN: &str = "backup-test-token-0123456789abcdef";

/// A folder with a sites folder holding the starter as `default`, with
/// `database` as its `[database]` section, an API token, and `more` added.
fn site(root: &Path, folder: &str, database: &str, more: &str) -> PathBuf {
    let dir = root.join(folder);
    let toml = starter_site(&dir.join("sites"));
    let text = std::fs::read_to_string(&toml).unwrap();
    let start = text.find("[database]").unwrap();
    let end = start + text[start..].find("\n\n").unwrap();
    let text = format!("{}[database]\n{database}{}", &text[..start], &text[end..])
        .replace("# token = \"generated\"", &format!("token = \"{TOKEN}\""));
    std::fs::write(&toml, format!("{text}\n{more}")).unwrap();
    dir
}

fn bulwark(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .current_dir(dir)
        .env("BULWARK_ADMIN_PASSWORD", "backup-test-admin-password")
        .args(args)
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = bulwark(dir, args);
    assert!(
        out.status.success(),
        "bulwark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every resource, edge, comment, redirect and revision of the site, as
/// lines to compare (the export's header, which says when, left out).
fn content(dir: &Path) -> BTreeSet<String> {
    ok(dir, &["export", "default", "--revisions"])
        .lines()
        .filter(|l| !l.starts_with("{\"type\":\"export\""))
        .map(str::to_owned)
        .collect()
}

/// The files under the site's `data/media/files/`, with their bytes' hash.
fn media_files(dir: &Path) -> BTreeSet<(String, u64)> {
    let root = dir.join("sites/default/data/media/files");
    let mut out = BTreeSet::new();
    for prefix in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(prefix.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            // A file the server removes while this looks (a deleted
            // resource's, waited for below) is not there any more.
            let bytes = match std::fs::read(file.path()) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => panic!("{}: {e}", file.path().display()),
            };
            let sum = bytes.iter().fold(0u64, |h, b| {
                h.wrapping_mul(1_099_511_628_211)
                    .wrapping_add(u64::from(*b))
            });
            out.insert((file.file_name().to_string_lossy().into_owned(), sum));
        }
    }
    out
}

/// The starter with a WordPress site moved in (posts, pages, comments,
/// menus and two pictures: media files on disk).
fn with_content(dir: &Path) {
    let wordpress =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../modules/import/tests/fixtures/wordpress");
    ok(
        dir,
        &[
            "import",
            "wordpress",
            "default",
            wordpress.join("export.xml").to_str().unwrap(),
            "--uploads",
            wordpress.join("uploads").to_str().unwrap(),
            "-q",
        ],
    );
}

/// Creates articles through the JSON API until stopped; returns how many.
struct Writer {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    fn start(port: u16) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let (s, w) = (stop.clone(), written.clone());
        let thread = std::thread::spawn(move || {
            let client = reqwest::blocking::Client::new();
            let mut n = 0;
            while !s.load(Ordering::Relaxed) {
                let answer = client
                    .post(format!("http://127.0.0.1:{port}/api/rsc"))
                    .bearer_auth(TOKEN)
                    .json(&json!({"category": "article", "published": true,
                                  "props": {"title": format!("written while backing up {n}")}}))
                    .send()
                    .unwrap();
                assert_eq!(answer.status(), 201, "{}", answer.text().unwrap());
                n += 1;
                w.store(n, Ordering::Relaxed);
            }
        });
        Writer {
            stop,
            written,
            thread: Some(thread),
        }
    }

    fn wait_for_more_than(&self, n: u64) {
        eventually_blocking("the writer wrote again", Duration::from_secs(30), || {
            (self.written.load(Ordering::Relaxed) > n).then_some(())
        });
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        self.written.load(Ordering::Relaxed)
    }
}

/// The numbers of the writer's articles among `lines`.
fn written(lines: &BTreeSet<String>) -> BTreeSet<u64> {
    lines
        .iter()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            if v["type"] != "resource" {
                return None;
            }
            v["props"]["title"]
                .as_str()?
                .strip_prefix("written while backing up ")?
                .parse()
                .ok()
        })
        .collect()
}

fn backup_restore_compare(database_a: &str, database_b: &str) {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let a = site(root, "a", database_a, "");
    with_content(&a);
    // An export names resources by the site's id, made at the first export:
    // made now, it is in the backup.
    content(&a);
    let port = free_port();
    let server = serve(&a, port);
    let client = reqwest::blocking::Client::new();

    // A backup made while a writer writes.
    let writer = Writer::start(port);
    writer.wait_for_more_than(0);
    let archive = root.join("a.tar.gz");
    ok(&a, &["backup", "default", archive.to_str().unwrap(), "-q"]);
    writer.wait_for_more_than(writer.written.load(Ordering::Relaxed));
    // For the server's user alone: the archive, the backups folder and one
    // made there, and on SQLite the database and the folder it is in.
    let mode = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    };
    assert_eq!(mode(&archive), 0o600, "{}", archive.display());
    ok(&a, &["backup", "default", "-q"]);
    let backups = a.join("sites/default/data/backups");
    assert_eq!(mode(&backups), 0o700);
    for made in std::fs::read_dir(&backups).unwrap() {
        let made = made.unwrap().path();
        assert_eq!(mode(&made), 0o600, "{}", made.display());
    }
    if database_a.is_empty() {
        let data = a.join("sites/default/data");
        assert_eq!(mode(&data), 0o700);
        for file in ["site.db", "site.db-wal", "site.db-shm"] {
            assert_eq!(mode(&data.join(file)), 0o600, "{file}");
        }
    }
    let total = writer.stop();
    let after = content(&a);
    let files = media_files(&a);
    assert!(!files.is_empty(), "the site has pictures");

    // A new, empty site gets it back (no server runs there).
    let b = site(root, "b", database_b, "");
    ok(
        &b,
        &[
            "restore",
            "default",
            archive.to_str().unwrap(),
            "--yes",
            "-q",
        ],
    );
    let restored = content(&b);
    assert!(
        restored.is_subset(&after),
        "nothing in the backup that the site did not have: {:?}",
        restored.difference(&after).take(3).collect::<Vec<_>>()
    );
    let missing: Vec<&String> = after.difference(&restored).collect();
    let kept = written(&restored);
    assert!(
        missing
            .iter()
            .all(|l| l.contains("written while backing up")),
        "only what was written after the snapshot is missing: {:?}",
        missing.iter().take(3).collect::<Vec<_>>()
    );
    // One snapshot: the writer's first articles, each whole, none skipped.
    assert_eq!(kept, (0..kept.len() as u64).collect::<BTreeSet<_>>());
    assert!(
        (kept.len() as u64) < total,
        "the writer went on after the backup"
    );
    assert_eq!(media_files(&b), files, "every file, byte for byte");

    // A picture deleted after the backup: its file goes from the disk.
    let picture = after
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "resource" && v["props"]["sha256"].is_string())
        .expect("a media resource");
    let id = picture["id"].as_i64().unwrap();
    let deleted = client
        .delete(format!("http://127.0.0.1:{port}/api/rsc/{id}"))
        .bearer_auth(TOKEN)
        .send()
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let media_url = format!("http://127.0.0.1:{port}/media/file/{id}");
    eventually_blocking("the file is gone", Duration::from_secs(10), || {
        (media_files(&a).len() < files.len()).then_some(())
    });

    // Restored through the running server: the page cache and every cached
    // value drop what they hold, the picture is back with its file.
    ok(
        &a,
        &[
            "restore",
            "default",
            archive.to_str().unwrap(),
            "--yes",
            "-q",
        ],
    );
    assert_eq!(content(&a), restored, "the site is the backup again");
    assert_eq!(media_files(&a), files);
    let answer = client.get(&media_url).send().unwrap();
    assert_eq!(answer.status(), 200, "the restored picture's file");
    drop(server);
}

#[test]
fn a_backup_taken_while_writing_restores_every_resource_edge_and_file_on_sqlite() {
    backup_restore_compare("demo_content = true\n", "demo_content = false\n");
}

#[test]
fn a_backup_taken_while_writing_restores_every_resource_edge_and_file_on_postgresql() {
    let unique = format!(
        "{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let a = format!("url = \"{}\"\nschema = \"backup_a_{unique}\"\n", pg_url());
    let b = format!("url = \"{}\"\nschema = \"backup_b_{unique}\"\n", pg_url());
    backup_restore_compare(&a, &b);
}

#[test]
fn scheduled_backups_appear_and_old_ones_are_pruned_by_the_rule() {
    let root = tempfile::tempdir().unwrap();
    let a = site(root.path(), "a", "demo_content = true\n", "");
    let toml = a.join("sites/default/site.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("every_seconds = 86400", "every_seconds = 1");
    std::fs::write(&toml, text).unwrap();
    // Forty days of scheduled backups from before, and one made by hand.
    let folder = a.join("sites/default/data/backups");
    std::fs::create_dir_all(&folder).unwrap();
    let now = chrono::Utc::now();
    let old = |days: i64| {
        let at = now - chrono::Duration::days(days);
        format!("default-{}-auto.tar.gz", at.format("%Y%m%d-%H%M%S"))
    };
    for days in 1..=40 {
        std::fs::write(folder.join(old(days)), b"old").unwrap();
    }
    let by_hand = format!(
        "default-{}.tar.gz",
        (now - chrono::Duration::days(90)).format("%Y%m%d-%H%M%S")
    );
    std::fs::write(folder.join(&by_hand), b"mine").unwrap();
    let _server = serve(&a, free_port());
    let listing = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    };
    let today = now.format("%Y%m%d").to_string();
    eventually_blocking(
        "a scheduled backup, and the rule applied",
        Duration::from_secs(60),
        || {
            let names = listing();
            let made = names
                .iter()
                .any(|n| n.contains(&format!("-{today}-")) && n.ends_with("-auto.tar.gz"));
            (made && !names.contains(&old(40))).then_some(names)
        },
    );
    let names = listing();
    assert!(names.contains(&by_hand), "made by hand: kept");
    for days in 1..=6 {
        assert!(
            names.contains(&old(days)),
            "the newest of the last seven days: {days}"
        );
    }
    for days in 30..=40 {
        assert!(!names.contains(&old(days)), "older than four weeks: {days}");
    }
    let scheduled = names.iter().filter(|n| n.ends_with("-auto.tar.gz")).count();
    assert!(scheduled <= 7 + 4, "{names:?}");
    // A scheduled backup is a whole archive that `bulwark backups` lists.
    let listed = ok(&a, &["backups", "default"]);
    assert!(listed.contains("scheduled"), "{listed}");
}

#[test]
fn an_encrypted_backup_cannot_be_read_without_its_key() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let key = root.join("backup-key.txt");
    let recipient = ok(root, &["backup-key", key.to_str().unwrap()]);
    let recipient = recipient.trim();
    assert!(recipient.starts_with("age1"), "{recipient}");
    let a = site(root, "a", "demo_content = true\n", "");
    let toml = a.join("sites/default/site.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "keep_weekly = 4",
        &format!("keep_weekly = 4\nencrypt_to = [\"{recipient}\"]"),
    );
    std::fs::write(&toml, text).unwrap();
    let before = content(&a);
    let made = ok(&a, &["backup", "default"]);
    let archive = PathBuf::from(made.trim());
    assert!(archive.to_string_lossy().ends_with(".tar.gz.age"), "{made}");
    let bytes = std::fs::read(&archive).unwrap();
    assert_ne!(&bytes[..2], &[0x1f, 0x8b], "not a readable gzip");
    assert!(
        !bytes.windows(11).any(|w| w == b"bulwark-bac"),
        "nothing of the archive shows"
    );

    let b = site(root, "b", "demo_content = false\n", "");
    let out = bulwark(
        &b,
        &["restore", "default", archive.to_str().unwrap(), "--yes"],
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the backup is encrypted"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let other = root.join("other-key.txt");
    ok(root, &["backup-key", other.to_str().unwrap()]);
    let out = bulwark(
        &b,
        &[
            "restore",
            "default",
            archive.to_str().unwrap(),
            "--yes",
            "--identity",
            other.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success(), "another key does not open it");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot decrypt"));
    ok(
        &b,
        &[
            "restore",
            "default",
            archive.to_str().unwrap(),
            "--yes",
            "--identity",
            key.to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(content(&b), before);
}
