//! Faults from outside: the database restarted under load, a broken configuration
//! at reload, a panicking observer. Over real sockets, against a real PostgreSQL
//! (a throwaway cluster of the test's own, so restarting it disturbs no other test).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bulwark_store::{NewResource, Props};
use bulwark_testkit::eventually;
use common::*;

/// How long a fact may take: generous, it is only reached when it never comes.
const WITHIN: Duration = Duration::from_secs(10);

/// A PostgreSQL cluster in a temporary folder, on a port of its own, stopped when
/// dropped. As root, the server runs as `postgres` (initdb refuses root).
struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl Cluster {
    fn start() -> Cluster {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL's server binaries (scripts/ensure-postgres.sh installs them)")
            .flatten()
            .map(|v| v.path().join("bin"))
            .find(|b| b.join("initdb").exists())
            .expect("initdb");
        let dir = tempfile::Builder::new()
            .prefix("bulwark-faults-pg")
            .tempdir()
            .unwrap();
        let port = free_port();
        let cluster = Cluster { dir, bin, port };
        if is_root() {
            let _ = Command::new("useradd")
                .args(["--system", "--shell", "/bin/sh", "postgres"])
                .output();
            chown_postgres(cluster.dir.path());
        }
        cluster.run(&format!(
            "'{}' -D '{}' -A trust -U postgres --no-sync >/dev/null",
            cluster.bin.join("initdb").display(),
            cluster.data().display()
        ));
        cluster.pg_ctl("start");
        cluster
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// `pg_ctl start|stop|restart`, waiting until it is done.
    fn pg_ctl(&self, action: &str) {
        self.run(&format!(
            "'{}' -D '{}' -w -m fast -l '{}' -o \"-p {} -k '{}' -c listen_addresses=127.0.0.1 -c fsync=off\" {action} >/dev/null",
            self.bin.join("pg_ctl").display(),
            self.data().display(),
            self.dir.path().join("log").display(),
            self.port,
            self.dir.path().display(),
        ));
    }

    fn run(&self, script: &str) {
        assert!(self.try_run(script), "{script}");
    }

    /// Runs `script` as the server's user; whether it succeeded.
    fn try_run(&self, script: &str) -> bool {
        let status = if is_root() {
            Command::new("su")
                .args(["postgres", "-s", "/bin/sh", "-c", script])
                .status()
        } else {
            Command::new("sh").args(["-c", script]).status()
        };
        status.is_ok_and(|s| s.success())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.try_run(&format!(
            "'{}' -D '{}' -m immediate stop >/dev/null 2>&1",
            self.bin.join("pg_ctl").display(),
            self.data().display()
        ));
    }
}

fn is_root() -> bool {
    std::env::var("USER").is_ok_and(|u| u == "root")
        || Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

fn chown_postgres(dir: &Path) {
    let status = Command::new("chown")
        .args(["postgres:", &dir.display().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Answers seen by the load, by kind.
#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    busy: AtomicU64,
    other: AtomicU64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgresql_restarted_under_load_gives_503s_keeps_cached_pages_and_recovers_quickly() {
    let cluster = Cluster::start();
    let s = start_news_site(&format!(
        r#"[database]
url = "{url}"
pool_timeout_ms = 500"#,
        url = cluster.url()
    ))
    .await;
    let store = s.models["news"].store.clone();
    let mut r = NewResource::new("article", Props::new().with("title", "Cached"));
    r.published = true;
    let id = store.run(move |s| s.create_resource(r)).await.unwrap();
    let cached = format!("/cached/{id}");
    assert_eq!(get(s.addr, "news.test", &cached).await.status, 200);

    // The load: a cached page, and pages that read the database every time (ids
    // nobody asked for before).
    let stop = Arc::new(AtomicBool::new(false));
    let cached_tally = Arc::new(Tally::default());
    let db_tally = Arc::new(Tally::default());
    let next_id = Arc::new(AtomicU64::new(1_000_000));
    let mut load = Vec::new();
    for worker in 0..6 {
        let (stop, cached_tally, db_tally, next_id) = (
            stop.clone(),
            cached_tally.clone(),
            db_tally.clone(),
            next_id.clone(),
        );
        let (addr, cached) = (s.addr, cached.clone());
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let (path, tally) = if worker % 2 == 0 {
                    (cached.clone(), &cached_tally)
                } else {
                    let n = next_id.fetch_add(1, Ordering::Relaxed);
                    (format!("/show/{n}"), &db_tally)
                };
                let status = match raw(
                    addr,
                    format!("GET {path} HTTP/1.1\r\nHost: news.test\r\nConnection: close\r\n\r\n")
                        .as_bytes(),
                )
                .await
                {
                    Some(r) => r.status,
                    None => 0,
                };
                match status {
                    200 => tally.ok.fetch_add(1, Ordering::Relaxed),
                    503 => tally.busy.fetch_add(1, Ordering::Relaxed),
                    _ => tally.other.fetch_add(1, Ordering::Relaxed),
                };
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }));
    }
    eventually("both kinds of page are served", WITHIN, || async {
        let ok = |tally: &Tally| tally.ok.load(Ordering::Relaxed) > 0;
        (ok(&db_tally) && ok(&cached_tally)).then_some(())
    })
    .await;

    // The database goes away for a while, then comes back.
    let c = tokio::task::spawn_blocking(move || {
        cluster.pg_ctl("stop");
        cluster
    })
    .await
    .unwrap();
    let down_db = db_tally.busy.load(Ordering::Relaxed);
    let down_cached = cached_tally.ok.load(Ordering::Relaxed);
    eventually(
        "pages that need the database answer 503 while it is down",
        WITHIN,
        || async { (db_tally.busy.load(Ordering::Relaxed) > down_db).then_some(()) },
    )
    .await;
    eventually("cached pages keep being served", WITHIN, || async {
        (cached_tally.ok.load(Ordering::Relaxed) > down_cached).then_some(())
    })
    .await;
    let cluster = tokio::task::spawn_blocking(move || {
        c.pg_ctl("start");
        c
    })
    .await
    .unwrap();

    // Recovery: a page that needs the database answers again within 5 s.
    let back = Instant::now();
    eventually(
        "a page that needs the database answers again",
        Duration::from_secs(5),
        || async {
            let n = next_id.fetch_add(1, Ordering::Relaxed);
            let r = get(s.addr, "news.test", &format!("/show/{n}")).await;
            (r.status == 200).then_some(())
        },
    )
    .await;
    let recovered_in = back.elapsed();
    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await.expect("no load task panicked");
    }
    for (name, tally) in [("cached", &cached_tally), ("database", &db_tally)] {
        assert_eq!(
            tally.other.load(Ordering::Relaxed),
            0,
            "{name} pages only ever answered 200 or 503"
        );
    }
    assert_eq!(
        cached_tally.busy.load(Ordering::Relaxed),
        0,
        "the cached page never needed the database"
    );
    // Writes work again too.
    let mut r = NewResource::new("article", Props::new().with("title", "After"));
    r.published = true;
    let after = store.run(move |s| s.create_resource(r)).await.unwrap();
    let page = get(s.addr, "news.test", &format!("/show/{after}")).await;
    assert_eq!(page.text(), "[After]");
    eprintln!(
        "recovered in {recovered_in:?}; cached {} ok, database {} ok / {} busy",
        cached_tally.ok.load(Ordering::Relaxed),
        db_tally.ok.load(Ordering::Relaxed),
        db_tally.busy.load(Ordering::Relaxed)
    );
    s.shutdown().await;
    drop(cluster);
}

/// A module whose code panics on some requests: its `RequestDispatch` observer
/// for paths under `/observer-panics`, its template function `explode()` always.
struct Faulty;

fn faulty_manifest() -> &'static Arc<bulwark_site::ModuleManifest> {
    static MANIFEST: std::sync::OnceLock<Arc<bulwark_site::ModuleManifest>> =
        std::sync::OnceLock::new();
    MANIFEST.get_or_init(|| {
        Arc::new(bulwark_site::ModuleManifest::new("faulty", 100, &[], None, None, "").unwrap())
    })
}

impl bulwark_web::Module for Faulty {
    fn manifest(&self) -> &Arc<bulwark_site::ModuleManifest> {
        faulty_manifest()
    }

    fn setup(&self, site: &mut bulwark_web::SiteSetup<'_>) -> Result<(), bulwark_web::ModuleError> {
        site.observers()
            .on_first(10, |r: &bulwark_web::events::RequestDispatch| {
                if r.path.starts_with("/observer-panics") {
                    panic!("observer exploded");
                }
                None::<bulwark_web::events::Rewrite>
            });
        site.add_template_extension(|env| {
            env.add_function("explode", || -> String {
                panic!("template function exploded")
            });
        });
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_observer_or_template_fails_only_its_own_request() {
    let site = r#"
hostname = "f.test"
default = true
modules = ["faulty"]

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"

[[dispatch]]
name = "boom"
path = "/boom"
controller = "template"
template = "boom.tpl"

[[dispatch]]
name = "observer"
path = "/observer-panics"
controller = "template"
template = "home.tpl"
"#;
    let mut modules = modules();
    modules.push(Arc::new(Faulty));
    let s = start_with_modules(
        &[
            ("f/site.toml", site),
            ("f/templates/home.tpl", "home"),
            ("f/templates/boom.tpl", "before {{ explode() }} after"),
        ],
        |_| {},
        modules,
    )
    .await;
    // A rush on the page whose template panics: each gets a 500, none hangs
    // (the render each joined went away, so the next one tries), and the server
    // keeps serving everything else meanwhile.
    let mut rush = Vec::new();
    for _ in 0..8 {
        let addr = s.addr;
        rush.push(tokio::spawn(
            async move { get(addr, "f.test", "/boom").await },
        ));
    }
    assert_eq!(get(s.addr, "f.test", "/").await.text(), "home");
    for r in rush {
        assert_eq!(r.await.unwrap().status, 500);
    }
    assert_eq!(get(s.addr, "f.test", "/observer-panics").await.status, 500);
    for _ in 0..3 {
        let home = get(s.addr, "f.test", "/").await;
        assert_eq!((home.status, home.text()), (200, "home".to_string()));
    }
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_config_broken_at_reload_leaves_every_site_serving() {
    let files = two_sites();
    let s = start(&files, |o| o.dev = true).await;
    assert!(
        get(s.addr, "a.test", "/")
            .await
            .text()
            .contains("site A home")
    );
    let sites = s.dir.path().join("sites");
    std::fs::write(sites.join("b/site.toml"), "hostname = [broken").unwrap();
    // The reload runs, fails and is logged; both sites answer as before. (A
    // timer: the watcher looks every 500 ms, and nothing tells that it refused.)
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        get(s.addr, "a.test", "/")
            .await
            .text()
            .contains("site A home")
    );
    assert_eq!(get(s.addr, "b.test", "/").await.text(), "site B home");
    // Fixed, it is picked up.
    let fixed = files
        .iter()
        .find(|(p, _)| *p == "b/site.toml")
        .unwrap()
        .1
        .replace("b.test", "b2.test");
    std::fs::write(sites.join("b/site.toml"), fixed).unwrap();
    eventually("the fixed config is loaded", WITHIN, || async {
        (get(s.addr, "b2.test", "/").await.text() == "site B home").then_some(())
    })
    .await;
    s.shutdown().await;
}
