//! The disk fills up while the site writes: writes are refused with a clear `507`,
//! pages keep being served, nothing acknowledged is lost, the database stays
//! sound, and writes work again once there is space.
//!
//! The site's `data/` folder is a small tmpfs, mounted in a mount namespace of the
//! server's own (`unshare`), so the test needs no privileges and touches no real
//! disk; the test reaches into that namespace through `/proc/<pid>/root`.

use crate::common;
use bulwark_testkit::eventually_blocking;
use common::{SIGCONT, SIGSTOP, free_port, signal};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const SITE: &str = r#"
hostname = "news.test"
default = true

[database]
demo_content = true

[api]
token = "secret"

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
cache = false
"#;

/// The server, killed when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Fills the file system holding `path` with a file at `path`, to the last byte.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 16 * 1024];
    loop {
        if file
            .write_all(&chunk)
            .and_then(|_| file.sync_all())
            .is_err()
        {
            break;
        }
    }
    let small = [0u8; 512];
    while file.write_all(&small).and_then(|_| file.sync_all()).is_ok() {}
}

/// A copy of the server's database (with its write-ahead log), taken while the
/// server is stopped so the copy is consistent, opened.
fn copy_database(pid: u32, data: &Path) -> (rusqlite::Connection, tempfile::TempDir) {
    signal(pid, SIGSTOP);
    let copy = tempfile::tempdir().unwrap();
    for file in ["site.db", "site.db-wal"] {
        if data.join(file).exists() {
            std::fs::copy(data.join(file), copy.path().join(file)).unwrap();
        }
    }
    signal(pid, SIGCONT);
    let db = rusqlite::Connection::open(copy.path().join("site.db")).unwrap();
    (db, copy)
}

#[test]
fn a_full_disk_refuses_writes_with_507_loses_nothing_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("sites/news");
    std::fs::create_dir_all(site.join("templates")).unwrap();
    std::fs::create_dir_all(site.join("data")).unwrap();
    std::fs::write(site.join("site.toml"), SITE).unwrap();
    std::fs::write(site.join("templates/home.tpl"), "home").unwrap();
    let port = free_port();
    let script = format!(
        "mount -t tmpfs -o size=4m tmpfs '{data}' && exec '{bin}' serve --sites '{sites}' --listen 127.0.0.1:{port} --access-log off",
        data = site.join("data").display(),
        bin = env!("CARGO_BIN_EXE_bulwark"),
        sites = dir.path().join("sites").display(),
    );
    let child = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
        .env("BULWARK_LOG", "error")
        .stdout(Stdio::null())
        .spawn()
        .expect("unshare (util-linux)");
    let server = Server(child);
    let pid = server.0.id();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    eventually_blocking("the server starts", Duration::from_secs(30), || {
        client.get(format!("{base}/")).send().ok()
    });
    // The data folder as the server sees it: the tmpfs in its namespace.
    let data: PathBuf = format!("/proc/{pid}/root{}", site.join("data").display()).into();
    assert!(data.join("site.db").exists(), "{}", data.display());
    let id: i64 = copy_database(pid, &data)
        .0
        .query_row("SELECT id FROM rsc WHERE name = 'ada'", [], |row| {
            row.get(0)
        })
        .expect("the demo content has ada");
    let patch = |n: usize| {
        let summary = format!("write {n} {}", "x".repeat(64 * 1024));
        let body = serde_json::json!({ "props": { "summary": summary } });
        client
            .patch(format!("{base}/api/rsc/{id}"))
            .bearer_auth("secret")
            .json(&body)
            .send()
            .unwrap()
    };
    assert_eq!(patch(0).status(), 200);

    // The disk fills up.
    fill(&data.join("filler"));
    let mut acknowledged = 0;
    let mut refused = None;
    for n in 1..=64 {
        let r = patch(n);
        match r.status().as_u16() {
            200 => acknowledged = n,
            507 => {
                refused = Some(r.json::<serde_json::Value>().unwrap());
                break;
            }
            other => panic!("write {n}: {other} {}", r.text().unwrap()),
        }
    }
    let refused = refused.expect("a write is refused once the disk is full");
    let message = refused["detail"].as_str().unwrap();
    assert!(message.contains("disk is full"), "{message}");
    // Reads and pages go on.
    assert_eq!(
        client
            .get(format!("{base}/"))
            .send()
            .unwrap()
            .text()
            .unwrap(),
        "home"
    );
    let current: serde_json::Value = client
        .get(format!("{base}/api/rsc/{id}"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let summary = current["props"]["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with(&format!("write {acknowledged} ")),
        "the last acknowledged write is what is stored"
    );

    // Space again: writes work again.
    std::fs::remove_file(data.join("filler")).unwrap();
    let r = patch(1000);
    assert_eq!(r.status(), 200, "{}", r.text().unwrap());

    // The database on disk is sound and holds the last write.
    let (db, _copy) = copy_database(pid, &data);
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let stored: String = db
        .query_row("SELECT props FROM rsc WHERE id = ?1", [id], |row| {
            row.get(0)
        })
        .unwrap();
    assert!(
        stored.contains("write 1000 "),
        "the last write is in the file"
    );
}
