//! Push over real sockets: WebSocket, Server-Sent Events and long-poll.

use crate::common;

use std::time::Duration;

use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

const PUSH_SITE: &str = r#"
hostname = "p.test"
default = true
modules = ["push"]

[push]
browser_publish = ["chat/#"]
deny = ["private/#"]
publish_token = "s3cret"

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
"#;

/// The next `data:` event of a stream, or `None` when the stream ended. The body is
/// chunked: chunk-size lines are skipped, and the `0` chunk is the end.
async fn sse_next(lines: &mut tokio::io::Lines<BufReader<TcpStream>>) -> Option<Value> {
    loop {
        let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
            .await
            .expect("an event within 5 s")
            .ok()??;
        if line == "0" {
            return None;
        }
        if let Some(data) = line.strip_prefix("data: ") {
            return Some(serde_json::from_str::<Value>(data).unwrap());
        }
    }
}

async fn push_server() -> TestServer {
    start(
        &[("p/site.toml", PUSH_SITE), ("p/templates/home.tpl", "home")],
        |_| {},
    )
    .await
}

async fn http_json(
    s: &TestServer,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> (u16, Value) {
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: p.test\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n{body}",
        body.len()
    );
    let r = raw(s.addr, req.as_bytes()).await.unwrap();
    (
        r.status,
        serde_json::from_slice(&r.body).unwrap_or(Value::Null),
    )
}

async fn server_publish(s: &TestServer, topic: &str, payload: Value) {
    let body = json!({"topic": topic, "payload": payload}).to_string();
    let (status, reply) = http_json(
        s,
        "POST",
        "/push/publish",
        "Authorization: Bearer s3cret\r\n",
        &body,
    )
    .await;
    assert_eq!(status, 200, "{reply}");
}

/// `/push/stats`, with the publish token.
async fn push_stats(s: &TestServer) -> Value {
    let (status, stats) = http_json(
        s,
        "GET",
        "/push/stats",
        "Authorization: Bearer s3cret\r\n",
        "",
    )
    .await;
    assert_eq!(status, 200, "{stats}");
    stats
}

/// Waits until the `/push/stats` figure `name` is `value`.
async fn until_stat(s: &TestServer, name: &str, value: u64) {
    let what = format!("the push stats show {name} = {value}");
    bulwark_testkit::eventually(&what, Duration::from_secs(10), || async {
        (push_stats(s).await[name] == value).then_some(())
    })
    .await;
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// A client's id and token, as its `hello` gave them.
fn credentials(hello: &Value) -> (String, String) {
    let field = |k: &str| hello[k].as_str().expect("id and token").to_string();
    (field("client"), field("token"))
}

/// A WebSocket, resuming a client (id and token, the token as a subprotocol) or
/// not, and its `hello`.
async fn ws_connect(s: &TestServer, client: Option<(&str, &str)>) -> (Ws, Value) {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let query = client
        .map(|(id, _)| format!("?client={id}"))
        .unwrap_or_default();
    let mut request = format!("ws://{}/push/ws{query}", s.addr)
        .into_client_request()
        .unwrap();
    let protocols = match client {
        Some((_, token)) => format!("bulwark-push, bulwark-push.token.{token}"),
        None => "bulwark-push".to_string(),
    };
    request
        .headers_mut()
        .insert("sec-websocket-protocol", protocols.parse().unwrap());
    let (mut ws, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        response.headers()["sec-websocket-protocol"],
        "bulwark-push",
        "the token's subprotocol is never echoed"
    );
    let hello = ws_next(&mut ws).await;
    assert_eq!(hello["type"], "hello");
    (ws, hello)
}

/// `POST /push/command` for a client, with its token in the header.
async fn command(s: &TestServer, (id, token): (&str, &str), body: &Value) -> (u16, Value) {
    http_json(
        s,
        "POST",
        &format!("/push/command?client={id}"),
        &format!("X-Push-Token: {token}\r\nContent-Type: application/json\r\n"),
        &body.to_string(),
    )
    .await
}

async fn ws_next(ws: &mut Ws) -> Value {
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

async fn ws_send(ws: &mut Ws, v: Value) -> Value {
    ws.send(Message::text(v.to_string())).await.unwrap();
    ws_next(ws).await
}

#[tokio::test]
async fn websocket_subscribe_publish_receive_and_reconnect_with_the_same_client() {
    let s = push_server().await;
    let (mut ws, hello) = ws_connect(&s, None).await;
    let (id, token) = credentials(&hello);
    let reply = ws_send(&mut ws, json!({"op": "subscribe", "topic": "news/+"})).await;
    assert_eq!(reply["type"], "subscribed");
    server_publish(&s, "news/today", json!({"headline": "hello"})).await;
    let batch = ws_next(&mut ws).await;
    assert_eq!(batch["messages"][0]["topic"], "news/today");
    assert_eq!(batch["messages"][0]["payload"]["headline"], "hello");
    ws.close(None).await.unwrap();

    // Published while disconnected: waiting in the client's task.
    server_publish(&s, "news/later", json!(2)).await;
    until_stat(&s, "delivered", 2).await;
    let (mut ws, hello) = ws_connect(&s, Some((&id, &token))).await;
    assert_eq!(hello["client"], id.as_str());
    assert_eq!(hello["token"], token.as_str());
    let batch = ws_next(&mut ws).await;
    assert_eq!(batch["messages"][0]["topic"], "news/later");
    s.shutdown().await;
}

#[tokio::test]
async fn the_site_policy_decides_what_browsers_may_do() {
    let s = push_server().await;
    let (mut ws, _) = ws_connect(&s, None).await;
    let denied = ws_send(&mut ws, json!({"op": "subscribe", "topic": "private/x"})).await;
    assert_eq!(denied["type"], "error");
    assert!(denied["message"].as_str().unwrap().contains("not allowed"));
    ws_send(&mut ws, json!({"op": "subscribe", "topic": "#"})).await;
    let refused = ws_send(
        &mut ws,
        json!({"op": "publish", "topic": "news/x", "payload": 1}),
    )
    .await;
    assert_eq!(refused["type"], "error");
    let ok = ws_send(
        &mut ws,
        json!({"op": "publish", "topic": "chat/lobby", "payload": {"t": "hi"}}),
    )
    .await;
    assert_eq!(ok["type"], "published", "{ok}");
    server_publish(&s, "private/secret", json!("hidden")).await;
    let batch = ws_next(&mut ws).await;
    let topics: Vec<&str> = batch["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["topic"].as_str().unwrap())
        .collect();
    assert_eq!(topics, ["chat/lobby"]);
    let bad = ws_send(&mut ws, json!({"op": "dance"})).await;
    assert_eq!(bad["type"], "error");
    s.shutdown().await;
}

#[tokio::test]
async fn long_poll_hello_commands_and_batches() {
    let s = push_server().await;
    let (status, hello) = http_json(&s, "POST", "/push/poll", "", "").await;
    assert_eq!((status, hello["type"].as_str()), (200, Some("hello")));
    let (id, token) = credentials(&hello);
    let (_, replies) = command(
        &s,
        (&id, &token),
        &json!([{"op": "subscribe", "topic": "t", "snapshot": true}]),
    )
    .await;
    assert_eq!(replies[0]["type"], "subscribed");
    let poll_path = format!("/push/poll?client={id}");
    let waiting = {
        let addr = s.addr;
        let path = poll_path.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let req = format!(
                "POST {path} HTTP/1.1\r\nHost: p.test\r\nX-Push-Token: {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            raw(addr, req.as_bytes()).await.unwrap()
        })
    };
    // No figure shows that a poll waits: this lets it arrive first, so that the
    // publication wakes it up (a poll that came late would still find the
    // batch in the inbox, and pass without testing the wake-up).
    tokio::time::sleep(Duration::from_millis(100)).await;
    server_publish(&s, "t", json!({"n": 1})).await;
    let r = waiting.await.unwrap();
    assert_eq!(r.status, 200);
    let batch: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(batch["messages"][0]["payload"]["n"], 1);
    // A client that accepts gzip (or brotli) gets it for a large batch, and plain
    // JSON for a small one, where compression gains nothing.
    let poll_with = |s: &TestServer, accept: &str| {
        let req = format!(
            "POST {poll_path} HTTP/1.1\r\nHost: p.test\r\nX-Push-Token: {token}\r\nAccept-Encoding: {accept}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let addr = s.addr;
        async move { raw(addr, req.as_bytes()).await.unwrap() }
    };
    server_publish(&s, "t", json!({"n": 2})).await;
    until_stat(&s, "delivered", 2).await;
    let small = poll_with(&s, "gzip").await;
    assert_eq!(
        (small.status, small.header("content-encoding")),
        (200, None)
    );
    let batch: Value = serde_json::from_slice(&small.body).unwrap();
    assert_eq!(batch["messages"][0]["payload"]["n"], 2);
    let long = "words ".repeat(500);
    server_publish(&s, "t", json!({"n": 3, "text": long})).await;
    until_stat(&s, "delivered", 3).await;
    let large = poll_with(&s, "gzip").await;
    assert_eq!(large.header("content-encoding"), Some("gzip"));
    assert!(large.body.len() < long.len() / 4);
    let batch: Value = serde_json::from_slice(&common::gunzip(&large.body)).unwrap();
    assert_eq!(batch["messages"][0]["payload"]["text"], long.as_str());
    server_publish(&s, "t", json!({"n": 4, "text": long})).await;
    until_stat(&s, "delivered", 4).await;
    let large = poll_with(&s, "br").await;
    assert_eq!(large.header("content-encoding"), Some("br"));
    assert!(large.body.len() < long.len() / 4);
    let mut plain = Vec::new();
    std::io::Read::read_to_end(
        &mut brotli::Decompressor::new(&large.body[..], 4096),
        &mut plain,
    )
    .unwrap();
    let batch: Value = serde_json::from_slice(&plain).unwrap();
    assert_eq!(batch["messages"][0]["payload"]["n"], 4);
    // An unknown or expired client is told to start over.
    let (_, again) = http_json(&s, "POST", "/push/poll?client=ffff", "", "").await;
    assert_eq!(again["type"], "hello");
    assert_ne!(again["client"], id.as_str());
    let (status, _) = http_json(&s, "POST", "/push/command?client=ffff", "", "{}").await;
    assert_eq!(status, 410);
    s.shutdown().await;
}

#[tokio::test]
async fn server_sent_events_deliver_batches_and_keep_the_client_across_transports() {
    let s = push_server().await;
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    stream
        .write_all(b"GET /push/sse HTTP/1.1\r\nHost: p.test\r\nAccept: text/event-stream\r\n\r\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(stream).lines();
    let hello = sse_next(&mut lines).await.unwrap();
    let (id, token) = credentials(&hello);
    let (_, replies) = command(
        &s,
        (&id, &token),
        &json!({"op": "subscribe", "topic": "live/+"}),
    )
    .await;
    assert_eq!(replies[0]["type"], "subscribed");
    server_publish(&s, "live/score", json!({"home": 1, "note": "line\nbreak"})).await;
    let batch = sse_next(&mut lines).await.unwrap();
    assert_eq!(batch["messages"][0]["payload"]["home"], 1);
    assert_eq!(batch["messages"][0]["payload"]["note"], "line\nbreak");

    // Switch to WebSocket with the same id: same client, same subscriptions, and
    // the event stream it replaced ends.
    let (mut ws, hello) = ws_connect(&s, Some((&id, &token))).await;
    assert_eq!(hello["client"], id.as_str());
    server_publish(&s, "live/score", json!({"home": 2})).await;
    let batch = ws_next(&mut ws).await;
    assert_eq!(batch["messages"][0]["payload"]["home"], 2);
    assert!(
        sse_next(&mut lines).await.is_none(),
        "the replaced stream should end"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_new_client_resumes_from_its_position_and_learns_about_gaps() {
    let s = push_server().await;
    let (mut ws, _) = ws_connect(&s, None).await;
    let reply = ws_send(&mut ws, json!({"op": "subscribe", "topic": "doc/1"})).await;
    let position = reply["position"].clone();
    drop(ws);
    for i in 0..3 {
        server_publish(&s, "doc/1", json!(i)).await;
    }
    let (mut ws, _) = ws_connect(&s, None).await;
    let reply = ws_send(
        &mut ws,
        json!({"op": "subscribe", "topic": "doc/1", "since": position}),
    )
    .await;
    assert_eq!(reply["recovery"], "recovered");
    let batch = ws_next(&mut ws).await;
    let got: Vec<i64> = batch["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["payload"].as_i64().unwrap())
        .collect();
    assert_eq!(got, [0, 1, 2]);
    let old = json!({"epoch": position["epoch"].as_u64().unwrap() + 1, "offset": 1});
    let reply = ws_send(
        &mut ws,
        json!({"op": "subscribe", "topic": "doc/2", "since": old}),
    )
    .await;
    assert_eq!(reply["recovery"], "epoch_changed", "{reply}");
    s.shutdown().await;
}

#[tokio::test]
async fn the_publish_endpoint_needs_the_token_and_valid_input() {
    let s = push_server().await;
    let body = json!({"topic": "a", "payload": 1}).to_string();
    assert_eq!(
        http_json(&s, "POST", "/push/publish", "", &body).await.0,
        401
    );
    assert_eq!(
        http_json(
            &s,
            "POST",
            "/push/publish",
            "Authorization: Bearer nope\r\n",
            &body
        )
        .await
        .0,
        401
    );
    let auth = "Authorization: Bearer s3cret\r\n";
    assert_eq!(
        http_json(&s, "POST", "/push/publish", auth, "{oops")
            .await
            .0,
        400
    );
    let wildcard = json!({"topic": "a/+", "payload": 1}).to_string();
    assert_eq!(
        http_json(&s, "POST", "/push/publish", auth, &wildcard)
            .await
            .0,
        400
    );
    let big = json!({"topic": "a", "payload": "x".repeat(70_000)}).to_string();
    assert_eq!(
        http_json(&s, "POST", "/push/publish", auth, &big).await.0,
        413
    );
    assert_eq!(http_json(&s, "GET", "/push/publish", auth, "").await.0, 405);
    s.shutdown().await;
}

#[tokio::test]
async fn push_endpoints_are_absent_without_the_module() {
    let s = start(&two_sites(), |_| {}).await;
    assert_eq!(get(s.addr, "a.test", "/push/poll").await.status, 404);
    s.shutdown().await;
}

#[tokio::test]
async fn stats_need_the_token_and_count_shared_encodings() {
    let s = push_server().await;
    assert_eq!(http_json(&s, "GET", "/push/stats", "", "").await.0, 401);
    let mut sockets = Vec::new();
    for _ in 0..3 {
        let (mut ws, _) = ws_connect(&s, None).await;
        ws_send(&mut ws, json!({"op": "subscribe", "topic": "same"})).await;
        sockets.push(ws);
    }
    server_publish(&s, "same", json!(1)).await;
    for ws in &mut sockets {
        assert_eq!(ws_next(ws).await["messages"][0]["payload"], 1);
    }
    let stats = push_stats(&s).await;
    assert_eq!(stats["clients"], 3);
    assert_eq!(stats["encodings_needed"], 3);
    assert_eq!(stats["encodings_computed"], 1);
    s.shutdown().await;
}

#[tokio::test]
async fn idle_clients_expire_after_the_site_timeout_and_connected_ones_stay() {
    let site = PUSH_SITE.replace(
        "publish_token = \"s3cret\"",
        "publish_token = \"s3cret\"\nclient_idle_timeout_ms = 300",
    );
    let s = start(
        &[("p/site.toml", &site), ("p/templates/home.tpl", "home")],
        |_| {},
    )
    .await;
    let clients = || async { push_stats(&s).await["clients"].as_u64().unwrap() };
    // One client leaves (its socket closes); one stays connected, saying nothing.
    let (mut gone, hello) = ws_connect(&s, None).await;
    let (gone_id, gone_token) = credentials(&hello);
    ws_send(&mut gone, json!({"op": "subscribe", "topic": "t"})).await;
    gone.close(None).await.unwrap();
    let (mut stays, _) = ws_connect(&s, None).await;
    ws_send(&mut stays, json!({"op": "subscribe", "topic": "t"})).await;
    // A long-poll client that polled once and never came back.
    let (_, polled) = http_json(&s, "POST", "/push/poll", "", "").await;
    let (polled_id, polled_token) = credentials(&polled);
    assert_eq!(clients().await, 3);

    // Only the connected client is left.
    until_stat(&s, "clients", 1).await;
    // The expired ones are told so, and coming back makes a new client.
    for client in [(&*gone_id, &*gone_token), (&*polled_id, &*polled_token)] {
        let body = json!([{"op": "subscribe", "topic": "t"}]);
        assert_eq!(command(&s, client, &body).await.0, 410);
    }
    let (_, again) = ws_connect(&s, Some((&gone_id, &gone_token))).await;
    assert_ne!(again["client"], gone_id.as_str());
    // The quiet but connected client still gets what is published.
    server_publish(&s, "t", json!({"still": "here"})).await;
    assert_eq!(
        ws_next(&mut stays).await["messages"][0]["payload"]["still"],
        "here"
    );
    s.shutdown().await;
}

/// A module that decides push access for some topics ([`PushAccess`]): `vault/...`
/// may never be subscribed to, `votes/...` may be published on by anyone, and it
/// would let anyone use `user/...` (it is not asked there).
struct Gate;

fn gate_manifest() -> &'static std::sync::Arc<bulwark_site::ModuleManifest> {
    static MANIFEST: std::sync::OnceLock<std::sync::Arc<bulwark_site::ModuleManifest>> =
        std::sync::OnceLock::new();
    MANIFEST.get_or_init(|| {
        std::sync::Arc::new(
            bulwark_site::ModuleManifest::new("gate", 100, &["push"], None, None, "").unwrap(),
        )
    })
}

impl bulwark_web::Module for Gate {
    fn manifest(&self) -> &std::sync::Arc<bulwark_site::ModuleManifest> {
        gate_manifest()
    }

    fn setup(&self, site: &mut bulwark_web::SiteSetup<'_>) -> Result<(), bulwark_web::ModuleError> {
        use bulwark_module_push::{PushAccess, PushAction};
        site.observers().on_first(10, |a: &PushAccess| {
            match (a.action, a.topic.split('/').next()) {
                (PushAction::Subscribe, Some("vault")) => Some(false),
                (PushAction::Publish, Some("votes")) => Some(true),
                // Never asked: a user's topics are theirs alone.
                (_, Some("user")) => Some(true),
                _ => None,
            }
        });
        Ok(())
    }
}

#[tokio::test]
async fn a_module_decides_push_access_before_the_push_settings() {
    let mut modules = modules();
    modules.push(std::sync::Arc::new(Gate));
    let site = PUSH_SITE.replace("modules = [\"push\"]", "modules = [\"push\", \"gate\"]");
    let s = start_with_modules(
        &[("p/site.toml", &site), ("p/templates/home.tpl", "home")],
        |_| {},
        modules,
    )
    .await;
    let (mut ws, _) = ws_connect(&s, None).await;
    // Refused by the module, though [push] would allow it.
    let reply = ws_send(&mut ws, json!({"op": "subscribe", "topic": "vault/1"})).await;
    assert_eq!(reply["type"], "error", "{reply}");
    // No answer from the module: [push] decides.
    let reply = ws_send(&mut ws, json!({"op": "subscribe", "topic": "news"})).await;
    assert_eq!(reply["type"], "subscribed", "{reply}");
    let reply = ws_send(&mut ws, json!({"op": "subscribe", "topic": "private/x"})).await;
    assert_eq!(reply["type"], "error", "{reply}");
    // A module cannot open a user's topics to anyone else.
    let reply = ws_send(&mut ws, json!({"op": "subscribe", "topic": "user/5/x"})).await;
    assert_eq!(reply["type"], "error", "{reply}");
    let reply = ws_send(
        &mut ws,
        json!({"op": "publish", "topic": "user/5/x", "payload": 1}),
    )
    .await;
    assert_eq!(reply["type"], "error", "{reply}");
    // Allowed by the module, though [push] lets browsers publish on chat/# only.
    let reply = ws_send(
        &mut ws,
        json!({"op": "publish", "topic": "votes/7", "payload": 1}),
    )
    .await;
    assert_eq!(reply["type"], "published", "{reply}");
    let reply = ws_send(
        &mut ws,
        json!({"op": "publish", "topic": "news", "payload": 1}),
    )
    .await;
    assert_eq!(reply["type"], "error", "{reply}");
    s.shutdown().await;
}

/// The push site with more `[push]` settings.
async fn push_server_with(settings: &str) -> TestServer {
    let site = PUSH_SITE.replace(
        "publish_token = \"s3cret\"",
        &format!("publish_token = \"s3cret\"\n{settings}"),
    );
    start(
        &[("p/site.toml", &site), ("p/templates/home.tpl", "home")],
        |_| {},
    )
    .await
}

#[tokio::test]
async fn hellos_past_an_address_rate_get_429_and_clients_nobody_came_back_for_expire_quickly() {
    let s = push_server_with(
        "new_clients_burst = 5\nnew_clients_per_minute = 6\nunclaimed_client_timeout_ms = 1000",
    )
    .await;
    let mut hellos = Vec::new();
    for _ in 0..5 {
        let (status, hello) = http_json(&s, "GET", "/push/poll", "", "").await;
        assert_eq!((status, hello["type"].as_str()), (200, Some("hello")));
        hellos.push(credentials(&hello));
    }
    assert_eq!(push_stats(&s).await["clients"], 5);
    // The sixth from this address within the minute: refused, with when to retry.
    let req = "GET /push/poll HTTP/1.1\r\nHost: p.test\r\nConnection: close\r\n\r\n";
    let refused = raw(s.addr, req.as_bytes()).await.unwrap();
    assert_eq!(refused.status, 429, "{}", refused.text());
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=10).contains(&retry), "{retry}");
    // Every transport asks the same limit; resuming a client is not a new one.
    let ws = tokio_tungstenite::connect_async(format!("ws://{}/push/ws", s.addr)).await;
    assert!(ws.is_err(), "the WebSocket upgrade is refused too");
    let (id, token) = &hellos[0];
    let resume = format!(
        "POST /push/poll?client={id} HTTP/1.1\r\nHost: p.test\r\nX-Push-Token: {token}\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    let resumed = raw(s.addr, resume.as_bytes());
    let resumed = tokio::time::timeout(Duration::from_millis(500), resumed).await;
    assert!(resumed.is_err(), "the resumed poll waits for messages");
    // Nobody came back for the other four: gone long before the idle timeout
    // (60 s); the one that was polled stays.
    until_stat(&s, "clients", 1).await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_command_request_holds_at_most_the_limit_and_a_client_publishes_within_its_rate() {
    let s = push_server_with(
        "max_commands_per_request = 50\npublish_burst = 10\npublish_per_second = 1",
    )
    .await;
    let (_, hello) = http_json(&s, "POST", "/push/poll", "", "").await;
    let (id, token) = credentials(&hello);
    let publish = json!({"op": "publish", "topic": "chat/lobby", "payload": {"t": "spam"}});
    let too_many = Value::Array(vec![publish.clone(); 51]);
    let (status, reply) = command(&s, (&id, &token), &too_many).await;
    assert_eq!(status, 413, "{reply}");
    assert_eq!(reply["type"], "urn:bulwark:problem:too-large", "{reply}");
    assert!(
        reply["detail"].as_str().unwrap().contains("at most 50"),
        "{reply}"
    );
    assert_eq!(push_stats(&s).await["published"], 0, "nothing of it ran");

    let (status, replies) = command(&s, (&id, &token), &Value::Array(vec![publish; 50])).await;
    assert_eq!(status, 200);
    let replies = replies.as_array().unwrap();
    let published = replies.iter().filter(|r| r["type"] == "published").count();
    assert!((10..=11).contains(&published), "{published} published");
    let refused = &replies[published..];
    assert!(refused.iter().all(|r| {
        r["type"] == "error"
            && r["message"].as_str().unwrap().contains("too fast")
            && r["retry_after_ms"].as_u64().is_some_and(|ms| ms >= 1)
    }));
    assert_eq!(push_stats(&s).await["published"], published as u64);
    // Over a WebSocket the same budget per client holds.
    let (mut ws, _) = ws_connect(&s, None).await;
    let mut errors = 0;
    for i in 0..15 {
        let reply = ws_send(
            &mut ws,
            json!({"op": "publish", "topic": "chat/ws", "payload": i}),
        )
        .await;
        errors += usize::from(reply["type"] == "error");
    }
    assert!((4..=5).contains(&errors), "{errors} refused");
    s.shutdown().await;
}

#[tokio::test]
async fn a_client_named_without_its_token_gets_nothing_of_it_and_no_log_shows_the_token() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let log_path = log.path().to_path_buf();
    let site = PUSH_SITE;
    let s = start(
        &[("p/site.toml", site), ("p/templates/home.tpl", "home")],
        |o| o.access_log = bulwark_http::AccessLogTarget::File(log_path),
    )
    .await;
    let (mut victim, hello) = ws_connect(&s, None).await;
    let (id, token) = credentials(&hello);
    ws_send(&mut victim, json!({"op": "subscribe", "topic": "secret/+"})).await;
    let other = credentials(&http_json(&s, "POST", "/push/poll", "", "").await.1);

    // Long-poll naming the victim: without a token, or with another client's, it
    // is a new visitor and gets a hello of its own.
    for headers in [String::new(), format!("X-Push-Token: {}\r\n", other.1)] {
        let path = format!("/push/poll?client={id}");
        let (status, reply) = http_json(&s, "POST", &path, &headers, "").await;
        assert_eq!((status, reply["type"].as_str()), (200, Some("hello")));
        assert_ne!(reply["client"], id.as_str());
    }
    // Commands as the victim: refused, so its subscription stays.
    for wrong in ["", other.1.as_str(), "0123456789abcdef0123456789abcdef"] {
        let unsubscribe = json!({"op": "unsubscribe", "topic": "secret/+"});
        assert_eq!(command(&s, (&id, wrong), &unsubscribe).await.0, 410);
    }
    // A WebSocket or an event stream naming it: a new client.
    let (_, stolen) = ws_connect(&s, Some((&id, &other.1))).await;
    assert_ne!(stolen["client"], id.as_str());
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    let sse = format!(
        "GET /push/sse?client={id} HTTP/1.1\r\nHost: p.test\r\nCookie: bulwark-push-{id}={}\r\n\r\n",
        other.1
    );
    stream.write_all(sse.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(stream).lines();
    assert_ne!(sse_next(&mut lines).await.unwrap()["client"], id.as_str());

    // The victim still has everything; with its token in the cookie an event
    // stream does resume it.
    server_publish(&s, "secret/1", json!("for the victim")).await;
    assert_eq!(
        ws_next(&mut victim).await["messages"][0]["payload"],
        "for the victim"
    );
    drop(victim);
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    let sse = format!(
        "GET /push/sse?client={id} HTTP/1.1\r\nHost: p.test\r\nCookie: a=1; bulwark-push-{id}={token}\r\n\r\n"
    );
    stream.write_all(sse.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(stream).lines();
    assert_eq!(sse_next(&mut lines).await.unwrap()["client"], id.as_str());
    server_publish(&s, "secret/2", json!("again")).await;
    assert_eq!(
        sse_next(&mut lines).await.unwrap()["messages"][0]["payload"],
        "again"
    );
    drop(lines);
    s.shutdown().await;

    let logged = std::fs::read_to_string(log.path()).unwrap();
    assert!(
        logged.contains(&format!("/push/poll?client={id}")),
        "{logged}"
    );
    assert!(
        !logged.contains(&token),
        "the token is in the log:\n{logged}"
    );
    assert!(
        !logged.contains(&other.1),
        "a token is in the log:\n{logged}"
    );
}

/// Every event of a stream so far (at least `wanted`; `raw` keeps what was read,
/// from the response's first byte), read as the EventSource specification says: a
/// line ends at CR, LF or CRLF, `data:` lines of one event are joined with LF, and
/// an empty line ends the event. Keep-alive comments are skipped.
async fn sse_events(stream: &mut TcpStream, raw: &mut Vec<u8>, wanted: usize) -> Vec<String> {
    use tokio::io::AsyncReadExt;
    let mut events = parse_sse(&dechunk(raw));
    while events.len() < wanted {
        let mut buf = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("events within 5 s")
            .unwrap();
        assert!(n > 0, "the stream ended");
        raw.extend_from_slice(&buf[..n]);
        events = parse_sse(&dechunk(raw));
    }
    events
}

/// The body of a chunked response (as far as it has arrived).
fn dechunk(raw: &[u8]) -> Vec<u8> {
    let Some(head_end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Vec::new();
    };
    let head_end = head_end + 4;
    let mut rest = &raw[head_end..];
    let mut body = Vec::new();
    while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap(), 16).unwrap();
        let start = line_end + 2;
        if size == 0 || rest.len() < start + size + 2 {
            break;
        }
        body.extend_from_slice(&rest[start..start + size]);
        rest = &rest[start + size + 2..];
    }
    body
}

fn parse_sse(body: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(body)
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in text.split_inclusive('\n') {
        let Some(line) = line.strip_suffix('\n') else {
            break; // not complete yet
        };
        if line.is_empty() {
            events.extend(data.take());
        } else if let Some(value) = line.strip_prefix("data:") {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_string()),
            }
        }
    }
    events
}

#[tokio::test]
async fn a_payload_with_carriage_returns_arrives_as_one_event() {
    let s = push_server().await;
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    stream
        .write_all(b"GET /push/sse HTTP/1.1\r\nHost: p.test\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    let hello: Value =
        serde_json::from_str(&sse_events(&mut stream, &mut raw, 1).await[0]).unwrap();
    let client = credentials(&hello);
    command(
        &s,
        (&client.0, &client.1),
        &json!({"op": "subscribe", "topic": "cr"}),
    )
    .await;
    // Raw CR, CRLF and LF between the JSON tokens: whitespace to JSON, line ends
    // to an event stream.
    let body =
        "{\"topic\": \"cr\",\r\"payload\": {\"a\":\r1,\r\n\"b\":\n\"x\\r\\ny\",\r\r\"c\": 2}}";
    let (status, reply) = http_json(
        &s,
        "POST",
        "/push/publish",
        "Authorization: Bearer s3cret\r\n",
        body,
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    let events = sse_events(&mut stream, &mut raw, 2).await;
    assert_eq!(events.len(), 2, "{events:?}");
    let batch: Value = serde_json::from_str(&events[1]).expect("one event, one JSON text");
    assert_eq!(
        batch["messages"][0]["payload"],
        json!({"a": 1, "b": "x\r\ny", "c": 2})
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_rsc_subscribers_hear_of_published_resources_only() {
    use bulwark_store::{NewResource, Props, ResourceId, ResourceUpdate, Store};
    // Browsers may publish anywhere here, but not on a resource's topic.
    let site = PUSH_SITE.replace(
        r##"browser_publish = ["chat/#"]"##,
        r##"browser_publish = ["#"]"##,
    );
    let s = start(
        &[("p/site.toml", &site), ("p/templates/home.tpl", "home")],
        |_| {},
    )
    .await;
    let store = s.models["p"].store.clone();
    let create = |published: bool| {
        let mut r = NewResource::new("article", Props::new().with("title", "t"));
        r.published = published;
        store.create_resource(r).unwrap()
    };
    // Each update changes a property too (one that changes nothing is not
    // written, and sends nothing).
    let edits = std::sync::atomic::AtomicI64::new(0);
    let update = |store: &Store, id: ResourceId, published: bool| {
        let now = store.resource(id).unwrap().unwrap();
        let edit = edits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut change =
            ResourceUpdate::new(id, now.version).merge(Props::new().with("edit", edit));
        change.published = Some(published);
        store.update_resource(change).unwrap();
    };
    let public = create(true);
    let draft = create(false);
    let unpublished = create(true);
    let deleted = create(true);
    // The creations' own messages go out before anyone listens.
    until_stat(&s, "published", 4).await;
    let (mut ws, _) = ws_connect(&s, None).await;
    ws_send(&mut ws, json!({"op": "subscribe", "topic": "rsc/+"})).await;
    ws_send(
        &mut ws,
        json!({"op": "subscribe", "topic": format!("rsc/{draft}")}),
    )
    .await;

    update(&store, draft, false);
    update(&store, unpublished, false);
    store.delete_resource(deleted, None).unwrap();
    update(&store, public, true);
    // Messages come in the order of the changes: by the time the public one's
    // arrives, the others were decided.
    let batch = ws_next(&mut ws).await;
    let topics: Vec<&str> = batch["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["topic"].as_str().unwrap())
        .collect();
    assert_eq!(topics, [format!("rsc/{public}")]);
    assert_eq!(batch["messages"][0]["payload"]["id"], public.0);
    // Publishing the draft makes its changes news for everyone.
    update(&store, draft, true);
    let batch = ws_next(&mut ws).await;
    assert_eq!(batch["messages"][0]["topic"], format!("rsc/{draft}"));
    // A browser cannot forge a resource's message (which would reach everyone).
    let forged = ws_send(
        &mut ws,
        json!({"op": "publish", "topic": format!("rsc/{public}"), "payload": 1}),
    )
    .await;
    assert_eq!(forged["type"], "error", "{forged}");
    s.shutdown().await;
}
