//! Push for logged-on visitors, over real sockets on the starter site (with the
//! accounts module): each user's own topics reach that user only, `rsc/...`
//! messages reach whom the site's access policy lets see the resource, and a
//! logged-on connection needs this site's pages (WebSocket `Origin`) and its
//! session's CSRF token (commands). On SQLite, and on PostgreSQL.

#[path = "../../../crates/web/tests/common/mod.rs"]
mod common;
#[path = "../../../crates/store/tests/common/mod.rs"]
mod databases;

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bulwark_module_auth::accounts;
use bulwark_module_auth::{GroupName, HashCost, HashLimits, NewPassword, Passwords};
use bulwark_store::{NewResource, Props, ResourceId, ResourceUpdate, Store, Visibility};
use common::{TestServer, start_with_modules};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const PASSWORD: &str = "correct horse battery";

/// The bearer token of `/push/publish` and `/push/stats` in these tests.
const PUBLISH_TOKEN: &str = "s3cret";

/// How a test site keeps its data: `[database]` keys.
#[derive(Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// A running starter site, and the PostgreSQL schema it uses, dropped when the
/// site is (after the server: fields drop in order), also when a test fails.
struct Site {
    server: TestServer,
    _schema: Option<Schema>,
}

struct Schema(String);

impl Drop for Schema {
    fn drop(&mut self) {
        databases::drop_schema(&self.0);
    }
}

impl Site {
    /// The starter site, with the `ping` test module, a publish token, and
    /// browsers allowed to publish on their own `user/{id}/notes`.
    async fn start(backend: Backend) -> Site {
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
                r#"modules = ["seo", "push", "auth", "mail"]"#,
                r#"modules = ["seo", "push", "auth", "mail", "ping"]"#,
            );
            replace(
                text,
                r#"browser_publish = ["site/board"]"#,
                &format!(
                    "browser_publish = [\"site/board\", \"user/+/notes\"]\n\
                     publish_token = \"{PUBLISH_TOKEN}\""
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

    fn store(&self) -> Store {
        self.server.models["default"].store.clone()
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.server.addr.port())
    }

    async fn stop(self) {
        let Site { server, _schema } = self;
        server.shutdown().await;
    }
}

/// A test module whose `POST /ping` publishes `{"pong": true}` on
/// `user/{id}/ping` of the logged-on visitor who asked, with
/// [`publish_to_user`](bulwark_module_push::publish_to_user), as server code
/// would.
struct Ping;

fn ping_manifest() -> &'static Arc<bulwark_site::ModuleManifest> {
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

struct PingController;

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
                    &req.site.notifier,
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

async fn add_user(store: &Store, name: &str, group: &str) -> ResourceId {
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
struct Visitor {
    id: ResourceId,
    cookie: String,
    csrf: String,
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Logs `name` on with `POST /api/auth/logon`.
async fn logon(site: &Site, name: &str) -> Visitor {
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
async fn post(site: &Site, path: &str, who: &Visitor, csrf: bool, body: &str) -> (u16, Value) {
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
async fn server_publish(site: &Site, topic: &str, payload: Value) -> (u16, Value) {
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

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// The WebSocket handshake for `who` (anonymous with `None`), from a page of
/// `origin` (a program, without `Origin`, with `None`).
fn ws_request(site: &Site, who: Option<&Visitor>, origin: Option<&str>) -> http::Request<()> {
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
struct Client {
    ws: Ws,
    hello: Value,
    /// Messages received and not yet looked at: `(topic, payload)`.
    messages: VecDeque<(String, Value)>,
}

impl Client {
    /// A client for `who` (anonymous with `None`), from a program.
    async fn connect(site: &Site, who: Option<&Visitor>) -> Client {
        Client::connect_from(site, who, None)
            .await
            .unwrap_or_else(|e| panic!("connecting: {e}"))
    }

    async fn connect_from(
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
    async fn reply(&mut self) -> Value {
        loop {
            if let Some(frame) = self.read().await {
                return frame;
            }
        }
    }

    async fn command(&mut self, command: Value) -> Value {
        self.ws
            .send(Message::text(command.to_string()))
            .await
            .unwrap();
        self.reply().await
    }

    async fn subscribe(&mut self, filter: &str) -> Value {
        self.command(json!({"op": "subscribe", "topic": filter}))
            .await
    }

    async fn subscribed(&mut self, filter: &str) {
        let reply = self.subscribe(filter).await;
        assert_eq!(reply["type"], "subscribed", "{filter}: {reply}");
    }

    async fn refused(&mut self, filter: &str) {
        let reply = self.subscribe(filter).await;
        assert_eq!(reply["type"], "error", "{filter}: {reply}");
        assert!(
            reply["message"].as_str().unwrap().contains("not allowed"),
            "{reply}"
        );
    }

    async fn publish(&mut self, topic: &str) -> Value {
        self.command(json!({"op": "publish", "topic": topic, "payload": "note"}))
            .await
    }

    /// The messages received until the one on `last`, included.
    async fn received_until(&mut self, last: &str) -> Vec<(String, Value)> {
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
fn topics<'a>(got: &'a [(String, Value)], prefix: &str) -> Vec<&'a str> {
    got.iter()
        .map(|(t, _)| t.as_str())
        .filter(|t| t.starts_with(prefix))
        .collect()
}

/// Waits until every resource change made so far was published: changes
/// publish in order, so once the creation of a resource made now is heard of,
/// the earlier ones are out, and a subscription made after this hears of later
/// changes only.
async fn settle(site: &Site) {
    let mut probe = Client::connect(site, None).await;
    probe.subscribed("rsc/+").await;
    let marker = site
        .store()
        .create_resource(NewResource::new("article", Props::new()).published(true))
        .unwrap();
    probe.received_until(&format!("rsc/{marker}")).await;
}

/// A change of `id` that changes nothing but its version.
fn touch(store: &Store, id: ResourceId) {
    let now = store.resource(id).unwrap().unwrap();
    let mut change = ResourceUpdate::new(id, now.version);
    change.published = Some(now.published);
    store.update_resource(change).unwrap();
}

async fn users_own_topics_reach_that_user_alone(backend: Backend) {
    let site = Site::start(backend).await;
    let store = site.store();
    add_user(&store, "ada", "members").await;
    add_user(&store, "bob", "members").await;
    add_user(&store, "root", "administrators").await;
    let ada = logon(&site, "ada").await;
    let bob = logon(&site, "bob").await;
    let root = logon(&site, "root").await;
    let (a, b) = (ada.id, bob.id);

    let mut ada_push = Client::connect(&site, Some(&ada)).await;
    ada_push.subscribed(&format!("user/{a}/x")).await;
    ada_push.subscribed(&format!("user/{a}/#")).await;
    ada_push.subscribed("site/end").await;
    ada_push.refused(&format!("user/{b}/x")).await;
    ada_push.refused(&format!("user/{b}/#")).await;

    // Another user, an administrator and an anonymous visitor are refused
    // Ada's topics by name, and get nothing of them through wildcards.
    let mut others = Vec::new();
    for who in [Some(&bob), Some(&root), None] {
        let mut push = Client::connect(&site, who).await;
        push.refused(&format!("user/{a}/x")).await;
        push.refused(&format!("user/{a}/#")).await;
        for wide in ["#", "user/#", "user/+/x", "user/+/ping"] {
            push.subscribed(wide).await;
        }
        others.push(push);
    }

    // The server publishes to Ada: over HTTP, and from Rust code.
    let (status, _) = server_publish(&site, &format!("user/{a}/x"), json!("for ada")).await;
    assert_eq!(status, 200);
    let (status, pinged) = post(&site, "/ping", &ada, true, "").await;
    assert_eq!(status, 200, "{pinged}");
    assert!(pinged["published"]["offset"].is_u64(), "{pinged}");
    // Browsers may publish on their own `notes` (the site allows `user/+/notes`),
    // never on another's, and nowhere else under their own topics.
    let reply = ada_push.publish(&format!("user/{a}/notes")).await;
    assert_eq!(reply["type"], "published", "{reply}");
    let reply = ada_push.publish(&format!("user/{a}/x")).await;
    assert_eq!(reply["type"], "error", "{reply}");
    for push in others.iter_mut() {
        let reply = push.publish(&format!("user/{a}/notes")).await;
        assert_eq!(reply["type"], "error", "{reply}");
    }
    let (status, _) = server_publish(&site, "site/end", json!(1)).await;
    assert_eq!(status, 200);

    let got = ada_push.received_until("site/end").await;
    assert_eq!(
        topics(&got, "user/"),
        [
            format!("user/{a}/x"),
            format!("user/{a}/ping"),
            format!("user/{a}/notes")
        ]
    );
    assert_eq!(got[1].1, json!({"pong": true}));
    for push in others.iter_mut() {
        let got = push.received_until("site/end").await;
        assert!(
            topics(&got, "user/").is_empty(),
            "nothing of Ada's: {got:?}"
        );
    }

    // Bob gets his own: `/ping` publishes to whoever asks.
    let mut bob_push = Client::connect(&site, Some(&bob)).await;
    bob_push.subscribed("user/+/ping").await;
    bob_push.subscribed("site/end").await;
    post(&site, "/ping", &bob, true, "").await;
    post(&site, "/ping", &ada, true, "").await;
    server_publish(&site, "site/end", json!(2)).await;
    let got = bob_push.received_until("site/end").await;
    assert_eq!(
        topics(&got, ""),
        [format!("user/{b}/ping").as_str(), "site/end"]
    );
    ada_push.received_until("site/end").await;

    // Logging off in one browser tells Ada's other connections.
    let second = logon(&site, "ada").await;
    let (status, _) = post(&site, "/api/auth/logoff", &second, true, "").await;
    assert_eq!(status, 200);
    server_publish(&site, "site/end", json!(3)).await;
    let got = ada_push.received_until("site/end").await;
    assert_eq!(
        got[0],
        (format!("user/{a}/session"), json!({"logged_off": true}))
    );
    site.stop().await;
}

async fn resource_changes_reach_whom_the_policy_lets_see_them(backend: Backend) {
    let site = Site::start(backend).await;
    let store = site.store();
    add_user(&store, "mia", "members").await;
    add_user(&store, "eddie", "editors").await;
    let mia = logon(&site, "mia").await;
    let eddie = logon(&site, "eddie").await;
    let article = |published: bool, visibility: Visibility| {
        let mut r = NewResource::new("article", Props::new().with("title", "t"));
        r.published = published;
        r.visibility = visibility;
        store.create_resource(r).unwrap()
    };
    let public = article(true, Visibility::Public);
    let members_only = article(true, Visibility::Members);
    let draft = article(false, Visibility::Public);
    settle(&site).await;

    let mut clients = Vec::new();
    for who in [None, Some(&mia), Some(&eddie)] {
        let mut push = Client::connect(&site, who).await;
        push.subscribed("rsc/+").await;
        // By name, too: the policy decides per message, not per subscription.
        push.subscribed(&format!("rsc/{draft}")).await;
        clients.push(push);
    }
    touch(&store, draft);
    touch(&store, members_only);
    touch(&store, public);
    let last = format!("rsc/{public}");
    let mut heard = Vec::new();
    for push in clients.iter_mut() {
        let got = push.received_until(&last).await;
        heard.push(
            got.iter()
                .map(|(_, p)| ResourceId(p["id"].as_i64().unwrap()))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(
        heard,
        [
            vec![public],
            vec![members_only, public],
            vec![draft, members_only, public],
        ],
        "[anonymous, a member, an editor]"
    );
    // The decision the JSON API takes.
    for (who, sees_draft, sees_members_only) in [
        (None, false, false),
        (Some(&mia), false, true),
        (Some(&eddie), true, true),
    ] {
        for (id, sees) in [(draft, sees_draft), (members_only, sees_members_only)] {
            let mut req = http().get(site.url(&format!("/api/rsc/{id}")));
            if let Some(who) = who {
                req = req.header("cookie", &who.cookie);
            }
            let status = req.send().await.unwrap().status().as_u16();
            assert_eq!(status == 200, sees, "{id:?}: {status}");
        }
    }
    // Nobody may forge a resource's message, not even with the publish token.
    let (status, reply) = server_publish(&site, &format!("rsc/{draft}"), json!({"id": 1})).await;
    assert_eq!(status, 403, "{reply}");
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_own_topics_reach_that_user_alone_on_sqlite() {
    users_own_topics_reach_that_user_alone(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_own_topics_reach_that_user_alone_on_postgres() {
    users_own_topics_reach_that_user_alone(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_changes_reach_whom_the_policy_lets_see_them_on_sqlite() {
    resource_changes_reach_whom_the_policy_lets_see_them(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_changes_reach_whom_the_policy_lets_see_them_on_postgres() {
    resource_changes_reach_whom_the_policy_lets_see_them(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_on_websocket_must_come_from_the_sites_own_pages() {
    let site = Site::start(Backend::Sqlite).await;
    add_user(&site.store(), "ada", "members").await;
    let ada = logon(&site, "ada").await;
    let port = site.server.addr.port();
    // Another site's page (or a sibling subdomain's, which gets the cookie).
    for origin in [
        "http://evil.test".to_string(),
        "null".to_string(),
        format!("http://localhost.evil.test:{port}"),
    ] {
        match Client::connect_from(&site, Some(&ada), Some(&origin)).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
                assert_eq!(resp.status(), 403, "{origin}")
            }
            Err(e) => panic!("{origin}: expected 403, got {e}"),
            Ok(_) => panic!("{origin}: expected 403, got a connection"),
        }
    }
    // The site's own pages, by the host asked for or by the site's names.
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        "https://www.localhost".to_string(),
    ] {
        let push = Client::connect_from(&site, Some(&ada), Some(&origin))
            .await
            .unwrap_or_else(|e| panic!("{origin}: {e}"));
        assert_eq!(push.hello["csrf_token"], ada.csrf.as_str());
    }
    // An anonymous connection acts for nobody: any page may open one.
    let push = Client::connect_from(&site, None, Some("http://evil.test"))
        .await
        .unwrap();
    assert!(push.hello.get("csrf_token").is_none(), "{}", push.hello);
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_on_long_poll_sends_commands_with_the_sessions_csrf_token() {
    let site = Site::start(Backend::Sqlite).await;
    add_user(&site.store(), "ada", "members").await;
    let ada = logon(&site, "ada").await;
    // The hello: a GET, which needs no token, and brings the session's.
    let hello: Value = serde_json::from_str(
        &http()
            .get(site.url("/push/poll"))
            .header("cookie", &ada.cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["csrf_token"], ada.csrf.as_str());
    let (id, token) = (
        hello["client"].as_str().unwrap(),
        hello["token"].as_str().unwrap(),
    );
    let command = |csrf: Option<&str>| {
        let mut req = http()
            .post(site.url(&format!("/push/command?client={id}")))
            .header("cookie", &ada.cookie)
            .header("x-push-token", token)
            .header("content-type", "application/json")
            .body(json!({"op": "subscribe", "topic": format!("user/{}/x", ada.id)}).to_string());
        if let Some(csrf) = csrf {
            req = req.header("x-csrf-token", csrf);
        }
        req.send()
    };
    assert_eq!(command(None).await.unwrap().status(), 403);
    assert_eq!(command(Some("wrong")).await.unwrap().status(), 403);
    let ok = command(Some(hello["csrf_token"].as_str().unwrap()))
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let replies: Value = serde_json::from_str(&ok.text().await.unwrap()).unwrap();
    assert_eq!(replies[0]["type"], "subscribed", "{replies}");

    server_publish(&site, &format!("user/{}/x", ada.id), json!("hi")).await;
    let batch: Value = serde_json::from_str(
        &http()
            .get(site.url(&format!("/push/poll?client={id}")))
            .header("cookie", &ada.cookie)
            .header("x-push-token", token)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(batch["messages"][0]["payload"], "hi", "{batch}");

    // With the session gone, the client is not Ada's to resume: a new,
    // anonymous client, refused Ada's topic.
    post(&site, "/api/auth/logoff", &ada, true, "").await;
    let again: Value = serde_json::from_str(
        &http()
            .get(site.url(&format!("/push/poll?client={id}")))
            .header("x-push-token", token)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(again["type"], "hello", "{again}");
    assert_ne!(again["client"], id);
    site.stop().await;
}
