//! Two nodes of one site in one test process: two servers, each with its own
//! caches and push hub, on one PostgreSQL schema, kept in step by the cluster
//! module. PostgreSQL is required (never skipped): `scripts/ensure-postgres.sh`.

use crate::common;
use crate::databases;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bulwark_store::{NewResource, Props, ResourceId, ResourceUpdate, Store};
use bulwark_testkit::eventually;
use common::{TestServer, changes_applied, get, start_with_modules};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use sqlx::Connection;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const PUBLISH_TOKEN: &str = "s3cret";

fn modules() -> Vec<Arc<dyn bulwark_web::Module>> {
    vec![
        bulwark_module_core::module(),
        bulwark_module_push::module(),
        bulwark_module_cluster::module(),
    ]
}

/// A node of site `news` on `schema`, named `node`.
async fn node(schema: &str, node: &str) -> TestServer {
    node_at(&databases::pg_url(), schema, node).await
}

/// [`node`], reaching PostgreSQL at `url`.
async fn node_at(url: &str, schema: &str, node: &str) -> TestServer {
    node_with(
        url,
        schema,
        node,
        "health_detail = true\nheartbeat_ms = 100",
    )
    .await
}

/// [`node_at`] with `cluster` as the rest of its `[cluster]` section.
async fn node_with(url: &str, schema: &str, node: &str, cluster: &str) -> TestServer {
    let site = format!(
        r#"
hostname = "news.test"
default = true
modules = ["push", "cluster"]

[database]
url = "{url}"
schema = "{schema}"
# Tests run side by side, two nodes each, on one PostgreSQL server.
max_connections = 4

[cluster]
node = "{node}"
{cluster}

[push]
publish_token = "{PUBLISH_TOKEN}"

[[dispatch]]
name = "cached"
path = "/cached/{{id}}"
controller = "template"
template = "show.tpl"

[[dispatch]]
name = "articles"
path = "/articles"
controller = "template"
template = "articles.tpl"
"#,
    );
    start_with_modules(
        &[
            ("news/site.toml", site.as_str()),
            ("news/templates/show.tpl", "[{{ m.rsc[id].title }}]"),
            (
                "news/templates/articles.tpl",
                "{% for a in m.search(cat=\"article\") %}<{{ a.title }}>{% endfor %}",
            ),
        ],
        |_| {},
        modules(),
    )
    .await
}

/// Two nodes on a fresh schema (dropped when the test ends, also on failure).
struct Pair {
    a: TestServer,
    b: TestServer,
    schema: Schema,
}

struct Schema(String);

impl Drop for Schema {
    fn drop(&mut self) {
        databases::drop_schema(&self.0);
    }
}

impl Pair {
    async fn start(test: &str) -> Pair {
        let schema = Schema(databases::pg_schema(test));
        // Fails (never skips) when PostgreSQL is not there.
        if let Err(e) = sqlx::PgConnection::connect(&databases::pg_url()).await {
            panic!(
                "PostgreSQL is required at {} ({e}); `source scripts/ensure-postgres.sh`",
                databases::pg_url()
            );
        }
        // Node names are the test's own: tests run in parallel, and one finds
        // its node's connection by name.
        let a = node(&schema.0, &format!("a-{test}")).await;
        let b = node(&schema.0, &format!("b-{test}")).await;
        let pair = Pair { a, b, schema };
        pair.until_hearing().await;
        pair
    }

    fn store(&self) -> Store {
        self.a.models["news"].store.clone()
    }

    /// Both nodes listen and their heartbeats come back.
    async fn until_hearing(&self) {
        for server in [&self.a, &self.b] {
            eventually(
                "the node's heartbeats come back",
                Duration::from_secs(10),
                || async {
                    let status = get(server.addr, "news.test", "/cluster/health")
                        .await
                        .status;
                    (status == 200).then_some(())
                },
            )
            .await;
        }
    }

    async fn stop(self) {
        self.a.shutdown().await;
        self.b.shutdown().await;
    }
}

async fn health(server: &TestServer) -> Value {
    let r = get(server.addr, "news.test", "/cluster/health").await;
    serde_json::from_slice(&r.body).unwrap()
}

async fn page(server: &TestServer, path: &str) -> String {
    let r = get(server.addr, "news.test", path).await;
    assert_eq!(r.status, 200, "{path}: {}", r.text());
    r.text()
}

async fn create(store: &Store, title: &str) -> ResourceId {
    let mut r = NewResource::new("article", Props::new().with("title", title));
    r.published = true;
    store.run(move |s| s.create_resource(r)).await.unwrap()
}

impl Pair {
    /// Creates an article on A and waits until both nodes have flushed for it,
    /// so that what they cache afterwards is not flushed by that creation: both
    /// stores hear of it, then both sites' change tasks have applied it.
    async fn create_heard(&self, title: &str) -> ResourceId {
        let mut heard: Vec<_> = [&self.a, &self.b]
            .iter()
            .map(|n| n.models["news"].store.subscribe())
            .collect();
        let id = create(&self.store(), title).await;
        let key = bulwark_store::dependency::resource(id);
        for events in heard.iter_mut() {
            loop {
                let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
                    .await
                    .expect("the creation is heard within 5 s")
                    .unwrap();
                if event.keys.contains(&key) {
                    break;
                }
            }
        }
        for node in [&self.a, &self.b] {
            changes_applied(&node.models["news"]).await;
        }
        id
    }
}

async fn retitle(store: &Store, id: ResourceId, title: &str) {
    let title = title.to_owned();
    store
        .run(move |s| {
            let version = s.resource(id)?.unwrap().version;
            s.update_resource(
                ResourceUpdate::new(id, version).merge(Props::new().with("title", title)),
            )
        })
        .await
        .unwrap();
}

/// Changes the title in the database behind every node's back: no outbox row,
/// no notification.
async fn retitle_silently(schema: &str, id: ResourceId, title: &str) {
    let mut c = sqlx::PgConnection::connect(&databases::pg_url())
        .await
        .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE \"{schema}\".rsc SET props = $1 WHERE id = $2"
    )))
    .bind(json!({"title": title}).to_string())
    .bind(id.0)
    .execute(&mut c)
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_change_on_one_node_removes_the_cached_page_on_the_other() {
    let pair = Pair::start("cluster_change").await;
    let id = pair.create_heard("First").await;
    let path = format!("/cached/{id}");
    assert_eq!(page(&pair.b, &path).await, "[First]");
    // The page is cached on B: a change nobody announced does not show.
    retitle_silently(&pair.schema.0, id, "Unannounced").await;
    assert_eq!(page(&pair.b, &path).await, "[First]");

    let changed = Instant::now();
    retitle(&pair.store(), id, "Changed").await;
    eventually("B shows the change", Duration::from_secs(2), || async {
        (page(&pair.b, &path).await == "[Changed]").then_some(())
    })
    .await;
    let took = changed.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "B saw the change after {took:?}"
    );
    assert!(health(&pair.b).await["changes_applied"].as_u64().unwrap() >= 1);
    pair.stop().await;
}

/// What a restore does after putting a backup back: every node hears that
/// anything may have changed, and drops what it caches.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restore_on_one_node_flushes_everything_on_the_other() {
    let pair = Pair::start("cluster_everything").await;
    let id = pair.create_heard("First").await;
    let path = format!("/cached/{id}");
    assert_eq!(page(&pair.b, &path).await, "[First]");
    // Data changed under the nodes (as a restore changes it): B's page stays.
    retitle_silently(&pair.schema.0, id, "Restored").await;
    assert_eq!(page(&pair.b, &path).await, "[First]");
    let store = pair.store();
    store.run(|s| s.changed_everything()).await.unwrap();
    eventually("B drops everything", Duration::from_secs(10), || async {
        (page(&pair.b, &path).await == "[Restored]").then_some(())
    })
    .await;
    pair.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_that_rolls_back_sends_nothing() {
    let pair = Pair::start("cluster_rollback").await;
    let id = pair.create_heard("Kept").await;
    let path = format!("/cached/{id}");
    assert_eq!(page(&pair.b, &path).await, "[Kept]");
    retitle_silently(&pair.schema.0, id, "Unannounced").await;
    // What B's change task hears: its own writes (none) and what it is told.
    let mut heard = pair.b.models["news"].store.subscribe();

    // Two resources in one transaction; the second name is taken, so the
    // first insert (which named its keys) rolls back with it.
    let named = |name: &str| {
        let mut r = NewResource::new("article", Props::new().with("title", name));
        r.name = Some(name.to_owned());
        r
    };
    create(&pair.store(), "Taken").await;
    let store = pair.store();
    let taken = store
        .run(move |s| {
            s.create_resource(named("taken"))?;
            s.create_resources(vec![named("fresh"), named("taken")])
        })
        .await;
    assert!(taken.is_err(), "{taken:?}");
    // What the outbox holds naming each name's key: the notification is sent
    // in the same transaction as the row, so no row, no message.
    let mut c = sqlx::PgConnection::connect(&databases::pg_url())
        .await
        .unwrap();
    let mut rows_naming = async |name: &str| -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM \"{}\".cluster_outbox WHERE body LIKE $1",
            pair.schema.0
        )))
        .bind(format!("%\"name:{name}\"%"))
        .fetch_one(&mut c)
        .await
        .unwrap()
    };
    assert_eq!(rows_naming("taken").await, 1);
    assert_eq!(rows_naming("fresh").await, 0);
    // B hears of "taken", and of nothing the rolled-back batch named.
    let key = |name: &str| bulwark_store::dependency::resource_name(name);
    let mut keys = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !keys.contains(&key("taken")) {
        let event = tokio::time::timeout_at(deadline.into(), heard.recv())
            .await
            .expect("B hears of the committed write within 2 s")
            .unwrap();
        keys.extend(event.keys);
    }
    // Messages arrive in commit order: once B hears of a write made after the
    // rolled-back one, it would have heard of that one too.
    let marker = bulwark_store::dependency::resource(create(&store, "Marker").await);
    while !keys.contains(&marker) {
        let event = tokio::time::timeout_at(deadline.into(), heard.recv())
            .await
            .expect("B hears of the marker within 2 s")
            .unwrap();
        keys.extend(event.keys);
    }
    assert!(!keys.contains(&key("fresh")), "{keys:?}");
    // Its cached page is still the one from before (nothing flushed it).
    assert_eq!(page(&pair.b, &path).await, "[Kept]");
    pair.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_whose_listener_was_cut_flushes_on_reconnect() {
    let pair = Pair::start("cluster_cut").await;
    let id = pair.create_heard("Before").await;
    let path = format!("/cached/{id}");
    assert_eq!(page(&pair.a, &path).await, "[Before]");
    assert_eq!(page(&pair.b, &path).await, "[Before]");
    let connections = health(&pair.b).await["connections"].as_u64().unwrap();

    // The change B cannot hear of: made behind every node's back while B's
    // listening connection is cut.
    retitle_silently(&pair.schema.0, id, "Missed").await;
    let mut c = sqlx::PgConnection::connect(&databases::pg_url())
        .await
        .unwrap();
    let cut: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = 'bulwark-cluster b-cluster_cut listener'",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    assert_eq!(cut, vec![true], "B's listener was found and cut");

    eventually("B connected again", Duration::from_secs(5), || async {
        (health(&pair.b).await["connections"].as_u64().unwrap() > connections).then_some(())
    })
    .await;
    assert_eq!(page(&pair.b, &path).await, "[Missed]");
    // A kept its connection, so its page stays as cached: the flush was B's own.
    assert_eq!(page(&pair.a, &path).await, "[Before]");
    pair.until_hearing().await;
    pair.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_push_message_published_on_one_node_reaches_a_client_on_the_other() {
    let pair = Pair::start("cluster_push").await;
    let (mut ws, hello) = push_client(&pair.b).await;
    assert_eq!(hello["type"], "hello");
    ws.send(Message::text(
        json!({"op": "subscribe", "topic": "site/votes/#"}).to_string(),
    ))
    .await
    .unwrap();
    let reply = next_frame(&mut ws).await;
    assert_eq!(reply["type"], "subscribed", "{reply}");

    let publish = |topic: &'static str, payload: Value| {
        let addr = pair.a.addr;
        async move {
            let body = json!({"topic": topic, "payload": payload}).to_string();
            let request = format!(
                "POST /push/publish HTTP/1.1\r\nHost: news.test\r\nAuthorization: Bearer {PUBLISH_TOKEN}\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let r = common::raw(addr, request.as_bytes()).await.unwrap();
            assert_eq!(r.status, 200, "{}", r.text());
        }
    };
    // Small ones travel in the notification, a large one is stored and referenced.
    publish("site/votes/1", json!({"n": 1})).await;
    let large = "x".repeat(20_000);
    publish("site/votes/2", json!({"big": large})).await;
    publish("site/votes/3", json!({"n": 3})).await;

    let mut got = Vec::new();
    while got.len() < 3 {
        let frame = next_frame(&mut ws).await;
        for m in frame["messages"].as_array().into_iter().flatten() {
            got.push((
                m["topic"].as_str().unwrap().to_owned(),
                m["payload"].clone(),
            ));
        }
    }
    let topics: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(topics, ["site/votes/1", "site/votes/2", "site/votes/3"]);
    assert_eq!(got[1].1["big"].as_str().map(str::len), Some(20_000));
    // A's own clients are A's business: B does not send them back. (A
    // counts a publication once its notification is sent, which may be just
    // after B has passed it on.)
    let a = eventually(
        "A counted the three publications it sent",
        Duration::from_secs(10),
        || async {
            let a = health(&pair.a).await;
            (a["publications_sent"] == 3).then_some(a)
        },
    )
    .await;
    assert_eq!(a["publications_applied"], 0, "{a}");
    pair.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_publication_window_opening_flushes_the_pages_that_list_the_resource_on_every_node() {
    let pair = Pair::start("cluster_window").await;
    create(&pair.store(), "Old").await;
    let opens = chrono::Utc::now() + chrono::Duration::milliseconds(1500);
    let mut r = NewResource::new("article", Props::new().with("title", "Scheduled"));
    r.published = true;
    r.publication_start = Some(opens);
    pair.store()
        .run(move |s| s.create_resource(r))
        .await
        .unwrap();
    for node in [&pair.a, &pair.b] {
        assert_eq!(page(node, "/articles").await, "<Old>");
    }
    // Both pages are cached now, and nothing is written when the window opens.
    for node in [&pair.a, &pair.b] {
        eventually(
            "the window opened on both nodes",
            Duration::from_secs(4),
            || async {
                page(node, "/articles")
                    .await
                    .contains("<Scheduled>")
                    .then_some(())
            },
        )
        .await;
    }
    let late = chrono::Utc::now() - opens;
    assert!(
        late < chrono::Duration::milliseconds(800),
        "the pages showed it {late} after the window opened"
    );
    pair.stop().await;
}

/// A WebSocket push client of `node`: its hello.
async fn push_client(
    node: &TestServer,
) -> (
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    Value,
) {
    let mut request = format!("ws://127.0.0.1:{}/push/ws", node.addr.port())
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("sec-websocket-protocol", "bulwark-push".parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let hello = next_frame(&mut ws).await;
    (ws, hello)
}

async fn next_frame(
    ws: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
) -> Value {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("a frame within 5 s")
            .unwrap()
            .unwrap();
        if let Message::Text(text) = frame {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_push_client_that_moves_to_another_node_is_told_of_the_gap() {
    let pair = Pair::start("cluster_resume").await;
    let (mut on_a, hello_a) = push_client(&pair.a).await;
    on_a.send(Message::text(
        json!({"op": "subscribe", "topic": "site/news"}).to_string(),
    ))
    .await
    .unwrap();
    let subscribed = next_frame(&mut on_a).await;
    assert_eq!(subscribed["type"], "subscribed", "{subscribed}");
    let position = subscribed["position"].clone();
    assert_eq!(position["epoch"], hello_a["epoch"]);
    drop(on_a);

    // Node A is gone for this client: on B its id is unknown, so it is a new
    // client, and its last position names A's epoch.
    let (mut on_b, hello_b) = push_client(&pair.b).await;
    assert_ne!(hello_b["epoch"], hello_a["epoch"]);
    assert_ne!(hello_b["client"], hello_a["client"]);
    on_b.send(Message::text(
        json!({"op": "subscribe", "topic": "site/news", "since": position}).to_string(),
    ))
    .await
    .unwrap();
    let resumed = next_frame(&mut on_b).await;
    assert_eq!(resumed["type"], "subscribed", "{resumed}");
    // What bulwark.js turns into a `reset` (reload what the page shows).
    assert_eq!(resumed["recovery"], "epoch_changed", "{resumed}");
    pair.stop().await;
}

/// A TCP proxy to PostgreSQL that can stop forwarding without closing
/// anything: a connection that died silently (a partition), which no error
/// ever reports.
struct FreezingProxy {
    addr: std::net::SocketAddr,
    frozen: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl FreezingProxy {
    async fn start(to: std::net::SocketAddr) -> FreezingProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (frozen, watch) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let Ok(server) = tokio::net::TcpStream::connect(to).await else {
                    continue;
                };
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                tokio::spawn(forward(cr, sw, watch.clone()));
                tokio::spawn(forward(sr, cw, watch.clone()));
            }
        });
        FreezingProxy { addr, frozen, task }
    }

    fn freeze(&self, frozen: bool) {
        self.frozen.send_replace(frozen);
    }
}

impl Drop for FreezingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut frozen: tokio::sync::watch::Receiver<bool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        // While frozen nothing is read or written, and nothing is closed.
        if frozen.wait_for(|f| !*f).await.is_err() {
            return;
        }
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if frozen.wait_for(|f| !*f).await.is_err() || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_whose_connection_died_silently_stops_claiming_health_and_flushes() {
    let schema = Schema(databases::pg_schema("cluster_silent"));
    let direct = databases::pg_url();
    let pg: sqlx::postgres::PgConnectOptions = direct.parse().unwrap();
    let pg_addr = tokio::net::lookup_host((pg.get_host(), pg.get_port()))
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = FreezingProxy::start(pg_addr).await;
    let through_proxy = direct.replacen(
        &format!("{}:{}", pg.get_host(), pg.get_port()),
        &proxy.addr.to_string(),
        1,
    );
    assert_ne!(through_proxy, direct, "the URL names host and port");
    let a = node(&schema.0, "a-silent").await;
    let b = node_at(&through_proxy, &schema.0, "b-silent").await;
    let pair = Pair { a, b, schema };
    pair.until_hearing().await;
    let id = pair.create_heard("Before").await;
    let path = format!("/cached/{id}");
    assert_eq!(page(&pair.b, &path).await, "[Before]");

    // B's way to the database stops answering; nothing tells B so.
    proxy.freeze(true);
    retitle(&pair.store(), id, "During").await;
    eventually(
        "B reports itself unhealthy",
        Duration::from_secs(3),
        || async {
            let status = get(pair.b.addr, "news.test", "/cluster/health")
                .await
                .status;
            (status == 503).then_some(())
        },
    )
    .await;
    // It flushes everything when it gives the connection up (within a heartbeat
    // of saying so); the connection it made at start flushed once.
    eventually("B flushed everything", Duration::from_secs(2), || async {
        (health(&pair.b).await["full_flushes"].as_u64().unwrap() >= 2).then_some(())
    })
    .await;

    // The way is back: B listens again and shows what changed meanwhile.
    proxy.freeze(false);
    eventually("B listens again", Duration::from_secs(10), || async {
        let status = get(pair.b.addr, "news.test", "/cluster/health")
            .await
            .status;
        (status == 200).then_some(())
    })
    .await;
    assert_eq!(page(&pair.b, &path).await, "[During]");
    pair.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_answer_tells_strangers_only_whether_the_node_hears() {
    let schema = databases::pg_schema("cluster_health_detail");
    // A slow heartbeat: what is asked here is what the answer shows, and a
    // loaded machine answers a 100 ms ping late often enough to flicker.
    let server = node_with(&databases::pg_url(), &schema, "web1", "heartbeat_ms = 1000").await;
    let answer = eventually("the node hears itself", Duration::from_secs(10), || async {
        let r = get(server.addr, "news.test", "/cluster/health").await;
        (r.status == 200).then(|| r.text())
    })
    .await;
    assert_eq!(answer, r#"{"hearing":true}"#, "no name, no counters");
    // A stopped node holds none of the server's connection slots: not its
    // listener, not its own pool, not the site's (two nodes' worth of leftover
    // connections per test once filled PostgreSQL in full runs of the suite).
    server.shutdown().await;
    eventually(
        "the node's connections closed",
        Duration::from_secs(10),
        || async {
            let mut c = sqlx::PgConnection::connect(&databases::pg_url())
                .await
                .unwrap();
            let open: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity \
             WHERE application_name LIKE 'bulwark-cluster web1%' OR application_name = $1",
            )
            .bind(format!("bulwark/{schema}"))
            .fetch_one(&mut c)
            .await
            .unwrap();
            (open == 0).then_some(())
        },
    )
    .await;
    databases::drop_schema(&schema);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_access_rule_change_on_one_node_reaches_every_node() {
    let pair = Pair::start("cluster_rules").await;
    pair.until_hearing().await;
    let id = create(&pair.store(), "Open").await;
    let path = format!("/cached/{id}");
    eventually("B shows the article", Duration::from_secs(10), || async {
        (page(&pair.b, &path).await == "[Open]").then_some(())
    })
    .await;
    // Stored rules, written on A, that give visitors nothing: B's cached page
    // and B's policy follow.
    pair.store()
        .run(|s| {
            s.set_config_value(
                bulwark_acl::stored::RULES_KEY,
                r#"[{"group": "managers", "actions": ["view"]}]"#,
            )
        })
        .await
        .unwrap();
    eventually(
        "B stops showing the article",
        Duration::from_secs(10),
        || async { (page(&pair.b, &path).await == "[]").then_some(()) },
    )
    .await;
    pair.stop().await;
}
