//! What the push access tests share: the starter site (SQLite or
//! PostgreSQL) with a test module, logged-on visitors, and a WebSocket push
//! client.

#![allow(dead_code)]

pub(crate) use crate::common;
pub(crate) use crate::databases;

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bulwark_module_auth::accounts;
use bulwark_module_auth::{GroupName, HashCost, HashLimits, NewPassword, Passwords};
use bulwark_store::{NewResource, Props, ResourceId, ResourceUpdate, Store};
use common::{TestServer, start_with_modules};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

pub const PASSWORD: &str = "correct horse battery";

/// The bearer token of `/push/publish` and `/push/stats` in these tests.
pub const PUBLISH_TOKEN: &str = "s3cret";

/// How a test site keeps its data: `[database]` keys.
#[derive(Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A running starter site, and the PostgreSQL schema it uses, dropped when the
/// site is (after the server: fields drop in order), also when a test fails.
pub struct Site {
    pub server: TestServer,
    _schema: Option<Schema>,
}

pub struct Schema(String);

impl Drop for Schema {
    fn drop(&mut self) {
        databases::drop_schema(&self.0);
    }
}

impl Site {
    /// The starter site, with the `ping` test module, a publish token, and
    /// browsers allowed to publish on their own `user/{id}/notes`.
    pub async fn start(backend: Backend) -> Site {
        Site::start_with(backend, "", &[]).await
    }

    /// [`start`](Site::start), with `site_toml` appended to the site's
    /// settings and `templates` (name, text) added to its templates.
    pub async fn start_with(backend: Backend, site_toml: &str, templates: &[(&str, &str)]) -> Site {
        let schema = match backend {
            Backend::Sqlite => None,
            Backend::Postgres => Some(databases::pg_schema("push_access")),
        };
        let mut files = common::starter_site();
        for (path, text) in files.iter_mut() {
            if path != "default/site.toml" {
                continue;
            }
            let replace = |text: &mut String, from: &str, to: &str| {
                assert!(text.contains(from), "the starter site has {from:?}");
                *text = text.replacen(from, to, 1);
            };
            replace(
                text,
                r#"modules = ["seo", "push", "auth", "mail", "admin", "media", "menu", "redirects", "comments", "forms", "webhooks", "import", "metrics", "backup"]"#,
                r#"modules = ["seo", "push", "auth", "mail", "admin", "media", "menu", "redirects", "comments", "forms", "webhooks", "ping"]"#,
            );
            replace(
                text,
                r#"browser_publish = ["site/board"]"#,
                &format!(
                    "browser_publish = [\"site/board\", \"user/+/notes\"]\n\
                     administrators_only = [\"staff/#\"]\n\
                     publish_token = \"{PUBLISH_TOKEN}\"\n\
                     keepalive_ms = 200"
                ),
            );
            if let Some(schema) = &schema {
                replace(
                    text,
                    "[database]\n",
                    &format!(
                        "[database]\nurl = \"{}\"\nschema = \"{schema}\"\n",
                        databases::pg_url()
                    ),
                );
            }
        }
        for (path, text) in files.iter_mut() {
            if path == "default/site.toml" {
                text.push_str(site_toml);
            }
        }
        for (name, text) in templates {
            files.push((format!("default/templates/{name}"), text.to_string()));
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let mut modules = common::modules();
        modules.push(Arc::new(Ping));
        Site {
            server: start_with_modules(&files, |_| {}, modules).await,
            _schema: schema.map(Schema),
        }
    }

    pub fn store(&self) -> Store {
        self.server.models["default"].store.clone()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.server.addr.port())
    }

    pub async fn stop(self) {
        let Site { server, _schema } = self;
        server.shutdown().await;
    }
}

/// A test module whose `POST /ping` publishes `{"pong": true}` on
/// `user/{id}/ping` of the logged-on visitor who asked, with
/// [`publish_to_user`](bulwark_module_push::publish_to_user), as server code
/// would.
pub struct Ping;

pub fn ping_manifest() -> &'static Arc<bulwark_site::ModuleManifest> {
    static MANIFEST: OnceLock<Arc<bulwark_site::ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = "[[dispatch]]\nname = \"ping\"\npath = \"/ping\"\ncontroller = \"ping\"\n";
        Arc::new(
            bulwark_site::ModuleManifest::new("ping", 900, &["push"], None, None, manifest)
                .unwrap(),
        )
    })
}

impl bulwark_web::Module for Ping {
    fn manifest(&self) -> &Arc<bulwark_site::ModuleManifest> {
        ping_manifest()
    }

    fn setup(&self, site: &mut bulwark_web::SiteSetup<'_>) -> Result<(), bulwark_web::ModuleError> {
        site.add_controller("ping", |_| Ok(Box::new(PingController)));
        Ok(())
    }
}

pub struct PingController;

impl bulwark_web::Controller for PingController {
    fn allowed_methods(&self) -> &'static [http::Method] {
        &[http::Method::POST]
    }

    fn resolve<'a>(
        &'a self,
        req: &'a bulwark_web::RequestCtx<'a>,
    ) -> futures_util::future::BoxFuture<'a, bulwark_web::Outcome> {
        Box::pin(async move {
            let answer = match req.principal().user_id() {
                None => json!({"error": "log on first"}),
                Some(user) => match bulwark_module_push::publish_to_user(
                    req.site.notifier(),
                    user,
                    "ping",
                    &json!({"pong": true}),
                ) {
                    Ok(position) => json!({"published": position}),
                    Err(e) => json!({"error": e.to_string()}),
                },
            };
            bulwark_web::Outcome::Response(bulwark_web::json_response(
                http::StatusCode::OK,
                &answer,
            ))
        })
    }
}

pub async fn add_user(store: &Store, name: &str, group: &str) -> ResourceId {
    let (store, name, group) = (store.clone(), name.to_string(), group.to_string());
    tokio::task::spawn_blocking(move || {
        let passwords = Passwords::new(HashCost::default(), HashLimits::default()).unwrap();
        let hash = passwords
            .hash_blocking(&NewPassword::new(PASSWORD.into()).unwrap())
            .unwrap();
        accounts::add_user(&store, &name, &GroupName::new(&group), &hash).unwrap()
    })
    .await
    .unwrap()
}

/// A logged-on visitor: their person, session cookie and CSRF token.
pub struct Visitor {
    pub id: ResourceId,
    pub cookie: String,
    pub csrf: String,
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Logs `name` on with `POST /api/auth/logon`.
pub async fn logon(site: &Site, name: &str) -> Visitor {
    let resp = http()
        .post(site.url("/api/auth/logon"))
        .header("content-type", "application/json")
        .body(json!({"username": name, "password": PASSWORD}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "logging {name} on");
    let cookie = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("bulwark_session="))
        .map(|v| v.split(';').next().unwrap().to_string())
        .expect("a session cookie");
    let body: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    Visitor {
        id: ResourceId(body["user"].as_i64().unwrap()),
        cookie,
        csrf: body["csrf_token"].as_str().unwrap().to_string(),
    }
}

/// A POST with a visitor's session (and CSRF token, when `csrf`).
pub async fn post(site: &Site, path: &str, who: &Visitor, csrf: bool, body: &str) -> (u16, Value) {
    let mut req = http()
        .post(site.url(path))
        .header("cookie", &who.cookie)
        .header("content-type", "application/json")
        .body(body.to_string());
    if csrf {
        req = req.header("x-csrf-token", &who.csrf);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// `POST /push/publish` with the bearer token: server-side publishing.
pub async fn server_publish(site: &Site, topic: &str, payload: Value) -> (u16, Value) {
    let resp = http()
        .post(site.url("/push/publish"))
        .header("authorization", format!("Bearer {PUBLISH_TOKEN}"))
        .header("content-type", "application/json")
        .body(json!({"topic": topic, "payload": payload}).to_string())
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (
        status,
        serde_json::from_str(&resp.text().await.unwrap()).unwrap(),
    )
}

pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// The WebSocket handshake for `who` (anonymous with `None`), from a page of
/// `origin` (a program, without `Origin`, with `None`).
pub fn ws_request(site: &Site, who: Option<&Visitor>, origin: Option<&str>) -> http::Request<()> {
    let mut request = format!("ws://127.0.0.1:{}/push/ws", site.server.addr.port())
        .into_client_request()
        .unwrap();
    let headers = request.headers_mut();
    headers.insert("sec-websocket-protocol", "bulwark-push".parse().unwrap());
    if let Some(who) = who {
        headers.insert("cookie", who.cookie.parse().unwrap());
    }
    if let Some(origin) = origin {
        headers.insert("origin", origin.parse().unwrap());
    }
    request
}

/// A push client over a WebSocket: its replies, and the messages of its
/// batches, which may come in between.
pub struct Client {
    ws: Ws,
    pub hello: Value,
    /// Messages received and not yet looked at: `(topic, payload)`.
    messages: VecDeque<(String, Value)>,
}

impl Client {
    /// A client for `who` (anonymous with `None`), from a program.
    pub async fn connect(site: &Site, who: Option<&Visitor>) -> Client {
        Client::connect_from(site, who, None)
            .await
            .unwrap_or_else(|e| panic!("connecting: {e}"))
    }

    pub async fn connect_from(
        site: &Site,
        who: Option<&Visitor>,
        origin: Option<&str>,
    ) -> Result<Client, tokio_tungstenite::tungstenite::Error> {
        let (ws, _) = tokio_tungstenite::connect_async(ws_request(site, who, origin)).await?;
        let mut client = Client {
            ws,
            hello: Value::Null,
            messages: VecDeque::new(),
        };
        client.hello = client.next_frame().await;
        assert_eq!(client.hello["type"], "hello");
        Ok(client)
    }

    /// Waits for the server to close the connection; the close frame's reason.
    pub async fn closed(&mut self, within: Duration) -> String {
        loop {
            let frame = tokio::time::timeout(within, self.ws.next())
                .await
                .expect("closed in time");
            match frame {
                Some(Ok(Message::Close(Some(frame)))) => return frame.reason.to_string(),
                Some(Ok(Message::Close(None))) | Some(Err(_)) | None => return String::new(),
                Some(Ok(_)) => {}
            }
        }
    }

    async fn next_frame(&mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(5), self.ws.next())
                .await
                .expect("a frame within 5 s")
                .unwrap()
                .unwrap();
            if let Message::Text(text) = frame {
                return serde_json::from_str(text.as_str()).unwrap();
            }
        }
    }

    /// The next frame if it is not a batch; a batch's messages are kept.
    async fn read(&mut self) -> Option<Value> {
        let frame = self.next_frame().await;
        let Some(messages) = frame["messages"].as_array() else {
            return Some(frame);
        };
        self.messages.extend(messages.iter().map(|m| {
            (
                m["topic"].as_str().unwrap().to_string(),
                m["payload"].clone(),
            )
        }));
        None
    }

    /// The next frame that is not a batch.
    pub async fn reply(&mut self) -> Value {
        loop {
            if let Some(frame) = self.read().await {
                return frame;
            }
        }
    }

    pub async fn command(&mut self, command: Value) -> Value {
        self.ws
            .send(Message::text(command.to_string()))
            .await
            .unwrap();
        self.reply().await
    }

    pub async fn subscribe(&mut self, filter: &str) -> Value {
        self.command(json!({"op": "subscribe", "topic": filter}))
            .await
    }

    pub async fn subscribed(&mut self, filter: &str) {
        let reply = self.subscribe(filter).await;
        assert_eq!(reply["type"], "subscribed", "{filter}: {reply}");
    }

    pub async fn refused(&mut self, filter: &str) {
        let reply = self.subscribe(filter).await;
        assert_eq!(reply["type"], "error", "{filter}: {reply}");
        assert!(
            reply["message"].as_str().unwrap().contains("not allowed"),
            "{reply}"
        );
    }

    pub async fn publish(&mut self, topic: &str) -> Value {
        self.command(json!({"op": "publish", "topic": topic, "payload": "note"}))
            .await
    }

    /// The messages received until the one on `last`, included.
    pub async fn received_until(&mut self, last: &str) -> Vec<(String, Value)> {
        let mut got = Vec::new();
        loop {
            while let Some(message) = self.messages.pop_front() {
                let done = message.0 == last;
                got.push(message);
                if done {
                    return got;
                }
            }
            if let Some(frame) = self.read().await {
                panic!("a reply nobody asked for: {frame}");
            }
        }
    }
}

/// The topics of `got` under `prefix`.
pub fn topics<'a>(got: &'a [(String, Value)], prefix: &str) -> Vec<&'a str> {
    got.iter()
        .map(|(t, _)| t.as_str())
        .filter(|t| t.starts_with(prefix))
        .collect()
}

/// Waits until every resource change made so far was published: changes
/// publish in order, so once the creation of a resource made now is heard of,
/// the earlier ones are out, and a subscription made after this hears of later
/// changes only.
pub async fn settle(site: &Site) {
    let mut probe = Client::connect(site, None).await;
    probe.subscribed("rsc/+").await;
    let marker = site
        .store()
        .create_resource(NewResource::new("article", Props::new()).published(true))
        .unwrap();
    probe.received_until(&format!("rsc/{marker}")).await;
}

/// A small change of `id` (its `touched` property): written, and told of.
pub fn touch(store: &Store, id: ResourceId) {
    // A change of its own each time: an update that changes nothing writes
    // nothing, and says nothing.
    static TOUCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = TOUCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let now = store.resource(id).unwrap().unwrap();
    let change = ResourceUpdate::new(id, now.version).merge(Props::new().with("touched", n as i64));
    store.update_resource(change).unwrap();
}
