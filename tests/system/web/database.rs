//! The database pool is a bottleneck like the render queue: when a render waits
//! for a connection past the site's `pool_timeout_ms`, the visitor gets a quick
//! `503` with `Retry-After` (counted in the stats), not a hung request or a 500,
//! and service resumes as soon as the database does. Runs on PostgreSQL (a real
//! server; `scripts/ensure-postgres.sh` provides one for the test suite).

use crate::common;

use std::time::{Duration, Instant};

use bulwark_store::{NewResource, Props};
use common::*;
use sqlx::Connection;

fn pg_url() -> String {
    std::env::var("BULWARK_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_render_that_cannot_get_a_connection_in_time_answers_503() {
    let schema = format!("busy_{}_{}", std::process::id(), rand_seed());
    let s = start_news_site(&format!(
        r#"[database]
url = "{url}"
schema = "{schema}"
max_connections = 1
pool_timeout_ms = 300

[api]
token = "secret""#,
        url = pg_url()
    ))
    .await;
    let store = s.models["news"].store.clone();
    let mut ids = Vec::new();
    for title in ["First", "Second"] {
        let mut r = NewResource::new("article", Props::new().with("title", title));
        r.published = true;
        ids.push(store.run(move |s| s.create_resource(r)).await.unwrap());
    }
    let first = get(s.addr, "news.test", &format!("/show/{}", ids[0])).await;
    assert_eq!(first.status, 200, "{}", first.text());

    // Someone else holds the resource table: the site's one connection gets stuck
    // behind the lock on the first read of a resource not in the cache yet.
    let mut locker = sqlx::PgConnection::connect(&pg_url()).await.unwrap();
    sqlx::query("BEGIN").execute(&mut locker).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "LOCK TABLE \"{schema}\".rsc IN ACCESS EXCLUSIVE MODE"
    )))
    .execute(&mut locker)
    .await
    .unwrap();
    let addr = s.addr;
    let stuck_path = format!("/show/{}", ids[1]);
    let stuck = tokio::spawn(async move { get(addr, "news.test", &stuck_path).await });
    until_waiting_for_lock(&schema).await;

    // Another render now waits for the pool, and gives up at its deadline.
    let started = Instant::now();
    let busy = get(s.addr, "news.test", "/show/999999").await;
    let waited = started.elapsed();
    assert_eq!(busy.status, 503, "{}", busy.text());
    assert_eq!(busy.header("retry-after"), Some("1"));
    assert!(waited < Duration::from_secs(3), "waited {waited:?}");
    // A rush on a page the cache does not have: one render waits out the
    // deadline, and everyone who joined it gets the 503 with it, at once.
    let started = Instant::now();
    let mut rush = Vec::new();
    for _ in 0..10 {
        let addr = s.addr;
        rush.push(tokio::spawn(async move {
            get(addr, "news.test", "/cached/888888").await.status
        }));
    }
    for r in rush {
        assert_eq!(r.await.unwrap(), 503);
    }
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(1500),
        "the rush took {waited:?}"
    );
    // Cached data does not need the database at all.
    assert_eq!(
        get(s.addr, "news.test", &format!("/show/{}", ids[0]))
            .await
            .status,
        200
    );

    // The lock goes: the stuck request finishes and service is back at once.
    sqlx::query("ROLLBACK").execute(&mut locker).await.unwrap();
    let stuck = stuck.await.unwrap();
    assert_eq!(stuck.status, 200, "{}", stuck.text());
    let again = get(s.addr, "news.test", &format!("/show/{}", ids[1])).await;
    assert_eq!((again.status, again.text()), (200, "[Second]".to_string()));

    let stats = get_with(
        s.addr,
        "news.test",
        "/api/stats",
        "Authorization: Bearer secret\r\n",
    )
    .await;
    let stats: serde_json::Value = serde_json::from_slice(&stats.body).unwrap();
    assert!(
        stats["refused_database_busy"].as_u64().unwrap() >= 1,
        "{stats}"
    );

    s.shutdown().await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA \"{schema}\" CASCADE"
    )))
    .execute(&mut locker)
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn while_the_database_is_stuck_an_expired_page_is_served_marked_stale_instead_of_503() {
    let schema = format!("stale_{}_{}", std::process::id(), rand_seed());
    let s = start_news_site(&format!(
        r#"[database]
url = "{url}"
schema = "{schema}"
max_connections = 1
pool_timeout_ms = 300

[page_cache]
ttl = 1
# Without grace every visitor waits for the render, so each answer shows what a
# failed render gives.
grace = false"#,
        url = pg_url()
    ))
    .await;
    let models = s.models["news"].clone();
    let mut ids = Vec::new();
    for title in ["First", "Second"] {
        let mut r = NewResource::new("article", Props::new().with("title", title));
        r.published = true;
        ids.push(
            models
                .store
                .run(move |s| s.create_resource(r))
                .await
                .unwrap(),
        );
    }
    let cached = format!("/cached/{}", ids[0]);
    let fresh = get(s.addr, "news.test", &cached).await;
    assert_eq!((fresh.status, fresh.text()), (200, "[First]".to_string()));
    assert_eq!(fresh.header("cache-status"), None);

    // The page expires, and so does what it read: rendering it again needs the
    // database. (A timer: the page cache's ttl of 1 s must pass.)
    tokio::time::sleep(Duration::from_millis(1100)).await;
    models
        .cache
        .flush(&bulwark_template::ModelKey::Resource(ids[0]));

    // The database gets stuck: the site's one connection hangs behind a lock.
    let mut locker = sqlx::PgConnection::connect(&pg_url()).await.unwrap();
    sqlx::query("BEGIN").execute(&mut locker).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "LOCK TABLE \"{schema}\".rsc IN ACCESS EXCLUSIVE MODE"
    )))
    .execute(&mut locker)
    .await
    .unwrap();
    let addr = s.addr;
    let stuck_path = format!("/show/{}", ids[1]);
    let stuck = tokio::spawn(async move { get(addr, "news.test", &stuck_path).await });
    until_waiting_for_lock(&schema).await;

    // Visitors of the expired page get it, marked stale, not a 503.
    let mut rush = Vec::new();
    for _ in 0..10 {
        let path = cached.clone();
        rush.push(tokio::spawn(
            async move { get(addr, "news.test", &path).await },
        ));
    }
    for r in rush {
        let r = r.await.unwrap();
        assert_eq!((r.status, r.text()), (200, "[First]".to_string()));
        assert_eq!(
            r.header("cache-status"),
            Some("Bulwark; hit; detail=stale-if-error")
        );
    }
    // A page the cache never had still gets the 503.
    assert_eq!(get(s.addr, "news.test", "/cached/888888").await.status, 503);
    assert!(models.cache.stats().stale_if_error >= 1);

    // The database is back: the page is rendered afresh.
    sqlx::query("ROLLBACK").execute(&mut locker).await.unwrap();
    let _ = stuck.await.unwrap();
    let back = get(s.addr, "news.test", &cached).await;
    assert_eq!((back.status, back.text()), (200, "[First]".to_string()));
    assert_eq!(back.header("cache-status"), None);

    s.shutdown().await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA \"{schema}\" CASCADE"
    )))
    .execute(&mut locker)
    .await
    .unwrap();
}

/// Waits until a query (the site's one connection) waits for the lock on
/// `schema`'s resource table.
async fn until_waiting_for_lock(schema: &str) {
    let watcher = sqlx::PgPool::connect(&pg_url()).await.unwrap();
    bulwark_testkit::eventually(
        "a query waits for the resource table's lock",
        Duration::from_secs(10),
        || async {
            let waiting: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_locks l \
                 JOIN pg_class c ON c.oid = l.relation \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE NOT l.granted AND n.nspname = $1 AND c.relname = 'rsc'",
            )
            .bind(schema)
            .fetch_one(&watcher)
            .await
            .unwrap();
            (waiting > 0).then_some(())
        },
    )
    .await;
    watcher.close().await;
}

fn rand_seed() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
}

#[tokio::test]
async fn a_database_that_is_down_at_start_is_reported_as_down_not_as_a_bad_key() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("news/site.toml"),
        "hostname = \"news.test\"\n[database]\nurl = \"postgres://bulwark@127.0.0.1:1/x\"\npool_timeout_ms = 500\n",
    );
    let errors = load_sites(dir.path(), Default::default())
        .await
        .err()
        .expect("the site must not start without its database");
    let text: String = errors.iter().map(|e| e.to_string()).collect();
    assert!(
        text.contains("site news") && text.contains("down or unreachable"),
        "{text}"
    );
    assert!(
        matches!(
            &errors[0],
            bulwark_web::LoadError::Data {
                source: bulwark_web::OpenError::Database(
                    bulwark_store::StoreError::Unavailable { .. }
                ),
                ..
            }
        ),
        "{errors:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_locked_table_or_dropped_connections_answer_503_never_500() {
    let schema = format!("locked_{}_{}", std::process::id(), rand_seed());
    let s = start_news_site(&format!(
        r#"[database]
url = "{url}"
schema = "{schema}"
statement_timeout_ms = 500

[api]
token = "secret""#,
        url = pg_url()
    ))
    .await;
    let store = s.models["news"].store.clone();
    let mut r = NewResource::new("article", Props::new().with("title", "Held"));
    r.published = true;
    let id = store.run(move |s| s.create_resource(r)).await.unwrap();
    let patch = |title: &str| {
        let body = format!(r#"{{"props": {{"title": "{title}"}}}}"#);
        let req = format!(
            "PATCH /api/rsc/{id} HTTP/1.1\r\nHost: news.test\r\nAuthorization: Bearer secret\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let addr = s.addr;
        async move { raw(addr, req.as_bytes()).await.expect("a response") }
    };

    // Someone else holds the resource table: a page and a write that need it
    // give up at the statement timeout with 503, not a hung request or a 500.
    let mut locker = sqlx::PgConnection::connect(&pg_url()).await.unwrap();
    sqlx::query("BEGIN").execute(&mut locker).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "LOCK TABLE \"{schema}\".rsc IN ACCESS EXCLUSIVE MODE"
    )))
    .execute(&mut locker)
    .await
    .unwrap();
    let started = Instant::now();
    let page = get(s.addr, "news.test", "/show/777777").await;
    assert_eq!(page.status, 503, "{}", page.text());
    assert!(page.header("retry-after").is_some());
    let write = patch("Changed").await;
    assert_eq!(write.status, 503, "{}", write.text());
    assert!(write.header("retry-after").is_some());
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(4), "waited {waited:?}");
    sqlx::query("ROLLBACK").execute(&mut locker).await.unwrap();
    assert_eq!(patch("Changed").await.status, 200);

    // The server drops the site's connections again and again: every answer
    // is a page, a write, or a 503 to try again; never a 500.
    let mut answers = Vec::new();
    for round in 0..10 {
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        )
        .bind(format!("bulwark/{schema}"))
        .execute(&mut locker)
        .await
        .unwrap();
        answers.push(
            get(s.addr, "news.test", &format!("/show/{}", 800_000 + round))
                .await
                .status,
        );
        answers.push(patch(&format!("Round {round}")).await.status);
    }
    assert!(
        answers.iter().all(|s| matches!(s, 200 | 503)),
        "{answers:?}"
    );
    // And the site works once it is left alone.
    assert_eq!(patch("After").await.status, 200);

    s.shutdown().await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA \"{schema}\" CASCADE"
    )))
    .execute(&mut locker)
    .await
    .unwrap();
}

/// A door between the site and PostgreSQL that the test closes: closed, it
/// cuts the connections through it and refuses new ones (each is accepted
/// and dropped at once), as a database that went away does.
struct Door {
    port: u16,
    open: std::sync::Arc<std::sync::atomic::AtomicBool>,
    through: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Door {
    async fn to_postgres() -> Door {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let through: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>> =
            Default::default();
        let postgres = pg_url()
            .split('@')
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap()
            .to_owned();
        let (is_open, handles) = (open.clone(), through.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if !is_open.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                let postgres = postgres.clone();
                let copy = tokio::spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(&postgres).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                handles.lock().unwrap().push(copy.abort_handle());
            }
        });
        Door {
            port,
            open,
            through,
        }
    }

    fn url(&self) -> String {
        let url = pg_url();
        let (user, rest) = url.split_once('@').unwrap();
        let database = rest.split_once('/').map_or("", |(_, db)| db);
        format!("{user}@127.0.0.1:{}/{database}", self.port)
    }

    fn close(&self) {
        self.open.store(false, std::sync::atomic::Ordering::SeqCst);
        for copy in self.through.lock().unwrap().drain(..) {
            copy.abort();
        }
    }

    fn reopen(&self) {
        self.open.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// `/healthz` says the process lives whatever the database does; `/readyz`
/// says whether the site can serve: 503 (with Retry-After, and no details)
/// while its database refuses connections, 200 again once it is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readyz_turns_503_while_the_database_refuses_connections_and_back_when_it_returns() {
    let schema = format!("ready_{}_{}", std::process::id(), rand_seed());
    let door = Door::to_postgres().await;
    let s = start_news_site(&format!(
        "[database]\nurl = \"{url}\"\nschema = \"{schema}\"\npool_timeout_ms = 300\n",
        url = door.url()
    ))
    .await;
    let status = |path: &'static str| {
        let addr = s.addr;
        async move {
            let r = get(addr, "news.test", path).await;
            (r.status, r.text())
        }
    };
    assert_eq!(
        status("/healthz").await,
        (200, r#"{"status":"live"}"#.to_owned())
    );
    assert_eq!(
        status("/readyz").await,
        (200, r#"{"status":"ready"}"#.to_owned())
    );

    door.close();
    let down = get(s.addr, "news.test", "/readyz").await;
    assert_eq!(down.status, 503);
    assert_eq!(down.text(), r#"{"status":"unavailable"}"#, "no details");
    assert!(down.header("retry-after").is_some());
    assert_eq!(status("/healthz").await.0, 200, "alive all the same");

    door.reopen();
    bulwark_testkit::eventually(
        "the site is ready again",
        Duration::from_secs(10),
        || async { (status("/readyz").await.0 == 200).then_some(()) },
    )
    .await;
    s.shutdown().await;
    let mut admin = sqlx::PgConnection::connect(&pg_url()).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA \"{schema}\" CASCADE"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
}

/// A reload that changes `[database]` opens a new store; the old one stays
/// open while a request that began on it runs (here a comment whose body is
/// still coming: the server asked for it with `100 Continue`), and closes
/// as soon as that request ends, not after a fixed wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_a_reload_replaced_closes_when_its_last_request_ends() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let s = start_starter_site(|_| {}).await;
    let old = s.models["default"].store.clone();
    let mut conn = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(
        b"POST /api/comments HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
          Expect: 100-continue\r\nContent-Length: 400\r\n\r\n",
    )
    .await
    .unwrap();
    let mut head = [0u8; 25];
    conn.read_exact(&mut head).await.unwrap();
    assert_eq!(
        &head, b"HTTP/1.1 100 Continue\r\n\r\n",
        "the body is asked for"
    );
    conn.write_all(b"{\"body\": \"half a comm").await.unwrap();

    let toml = s.sites().join("default/site.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    write(
        &toml,
        &text.replacen("[database]\n", "[database]\nsqlite_readers = 2\n", 1),
    );
    s.reload().await;
    let front = get(s.addr, "localhost", "/en/").await;
    assert_eq!(front.status, 200, "the new store serves");
    assert!(
        futures_util::FutureExt::now_or_never(old.closed()).is_none(),
        "the old store is open while the request runs"
    );

    drop(conn);
    tokio::time::timeout(Duration::from_secs(10), old.closed())
        .await
        .expect("the old store closes when its last request ends");
    s.shutdown().await;
}
