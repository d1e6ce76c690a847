//! Accounts on the starter site for tests: users in groups, logon over real
//! HTTP, the session cookie and CSRF token, and the PostgreSQL variant.

#![allow(dead_code)]

use bulwark_module_auth::accounts::{self};
use bulwark_module_auth::{GroupName, HashCost, HashLimits, NewPassword, Passwords};
use bulwark_store::{ResourceId, Store};
use serde_json::Value;

use crate::common::{TestServer, start};

pub const PASSWORD: &str = "correct horse battery";

pub async fn starter_with(extra_settings: &str) -> TestServer {
    starter_edited(|text| text.push_str(extra_settings)).await
}

/// The starter site with its site.toml changed by `edit`.
pub async fn starter_edited(edit: impl FnOnce(&mut String)) -> TestServer {
    starter_served(edit, |_| {}).await
}

/// The same, served with the server's options changed by `tweak`.
pub async fn starter_served(
    edit: impl FnOnce(&mut String),
    tweak: impl FnOnce(&mut crate::common::Options),
) -> TestServer {
    let mut files = crate::common::starter_site();
    let mut edit = Some(edit);
    for (path, text) in files.iter_mut() {
        if path == "default/site.toml" {
            (edit.take().unwrap())(text);
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    start(&files, tweak).await
}

pub fn store(s: &TestServer) -> Store {
    s.models["default"].store.clone()
}

pub async fn add_user(s: &TestServer, name: &str, group: &str) -> ResourceId {
    let store = store(s);
    let (name, group) = (name.to_string(), group.to_string());
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

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub fn url(s: &TestServer, path: &str) -> String {
    format!("http://localhost:{}{path}", s.addr.port())
}

/// The session cookie a response sets (`name=value`), if any.
pub fn session_cookie(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("bulwark_session="))
        .map(|v| v.split(';').next().unwrap().to_string())
}

pub async fn logon_form(
    s: &TestServer,
    cookie: Option<&str>,
    form: &[(&str, &str)],
) -> reqwest::Response {
    let mut req = client().post(url(s, "/logon")).form(form);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    req.send().await.unwrap()
}

pub async fn logon(s: &TestServer, user: &str) -> String {
    let resp = logon_form(s, None, &[("username", user), ("password", PASSWORD)]).await;
    assert_eq!(resp.status(), 303);
    session_cookie(&resp).expect("a session cookie")
}

pub async fn get(s: &TestServer, path: &str, cookie: Option<&str>) -> (u16, String) {
    let mut req = client().get(url(s, path));
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

pub async fn me(s: &TestServer, cookie: &str) -> serde_json::Value {
    let (status, body) = get(s, "/api/auth/me", Some(cookie)).await;
    assert_eq!(status, 200);
    serde_json::from_str(&body).unwrap()
}

/// The URL of the PostgreSQL server the suite runs against
/// (`scripts/ensure-postgres.sh` sets `BULWARK_TEST_PG_URL`).
pub fn pg_url() -> String {
    std::env::var("BULWARK_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A fresh PostgreSQL schema's name, starting with `prefix`.
pub fn fresh_schema(prefix: &str) -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}_{}_{n:x}", std::process::id())
}

/// `[database]` on PostgreSQL `schema`, in place of the starter's.
fn on_postgres(site_toml: &str, schema: &str) -> String {
    let database = format!(
        "[database]\nurl = \"{}\"\nschema = \"{schema}\"\n",
        pg_url()
    );
    site_toml.replacen("[database]\n", &database, 1)
}

/// The starter site on a fresh PostgreSQL schema (its name starts with `prefix`).
pub async fn starter_on_postgres(prefix: &str) -> TestServer {
    let schema = fresh_schema(prefix);
    starter_edited(|text| *text = on_postgres(text, &schema)).await
}

/// The starter site as node `name` of a cluster on PostgreSQL `schema`, with
/// `settings` added to its `site.toml` and `extra` files beside it; back once
/// the node hears the others. `cluster` is the cluster module (the caller's
/// to bring: not every test crate depends on it).
pub async fn starter_node(
    schema: &str,
    name: &str,
    settings: &str,
    extra: &[(&str, &str)],
    cluster: std::sync::Arc<dyn bulwark_web::Module>,
) -> TestServer {
    let mut files = crate::common::starter_site();
    for (path, text) in files.iter_mut() {
        if path == "default/site.toml" {
            *text = on_postgres(text, schema).replacen(
                r#""admin", "media", "menu", "redirects", "comments", "forms", "webhooks", "import", "metrics", "backup"]"#,
                r#""admin", "media", "menu", "redirects", "comments", "forms", "webhooks", "cluster"]"#,
                1,
            );
            text.push_str(&format!(
                "\n[cluster]\nnode = \"{name}\"\nheartbeat_ms = 100\n{settings}"
            ));
        }
    }
    let mut files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    files.extend_from_slice(extra);
    let mut modules = crate::common::modules();
    modules.push(cluster);
    let node = crate::common::start_with_modules(&files, |_| {}, modules).await;
    let what = format!("node {name} hears the others");
    bulwark_testkit::eventually(&what, std::time::Duration::from_secs(10), || async {
        (get(&node, "/cluster/health", None).await.0 == 200).then_some(())
    })
    .await;
    node
}

/// Stops the nodes, then drops their schema.
pub async fn stop_nodes(nodes: Vec<TestServer>, schema: &str) {
    let config = store(&nodes[0]).config().clone();
    for node in nodes {
        node.shutdown().await;
    }
    // A stopped node's store is closed: the schema goes through a store of
    // its own.
    let store = bulwark_store::Store::open(config).await.unwrap();
    store
        .module_write(|sql| sql.execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"), &[]))
        .unwrap();
    store.close().await;
}

/// A logged-on user as a script sees them: cookie and CSRF token.
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

pub async fn session(s: &TestServer, user: &str) -> Session {
    let cookie = logon(s, user).await;
    let csrf = me(s, &cookie).await["csrf_token"]
        .as_str()
        .unwrap()
        .to_string();
    Session { cookie, csrf }
}

pub enum As<'a> {
    Anonymous,
    Session(&'a Session),
    Token(&'a str),
}

pub async fn call(
    s: &TestServer,
    who: &As<'_>,
    method: &str,
    path: &str,
    body: Option<Value>,
    if_match: Option<i64>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = client().request(method.parse().unwrap(), url(s, path));
    match who {
        As::Anonymous => {}
        As::Session(session) => {
            req = req
                .header("cookie", &session.cookie)
                .header("x-csrf-token", &session.csrf);
        }
        As::Token(token) => req = req.bearer_auth(token),
    }
    if let Some(body) = body {
        req = req
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    if let Some(v) = if_match {
        req = req.header("if-match", format!("\"{v}\""));
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method} {path}: {e}: {text}"))
    };
    if status >= 400 {
        assert_problem(status, &headers, &value);
    }
    (status, value, headers)
}

/// Every JSON error is a problem (RFC 9457): `application/problem+json` with
/// `type`, `title`, `status` (the answer's) and `detail`.
pub fn assert_problem(status: u16, headers: &reqwest::header::HeaderMap, body: &Value) {
    assert_eq!(
        headers["content-type"], "application/problem+json",
        "a {status} answer: {body}"
    );
    let kind = body["type"].as_str().unwrap_or_default();
    assert!(kind.starts_with("urn:bulwark:problem:"), "{body}");
    assert!(body["title"].is_string(), "{body}");
    assert!(body["detail"].is_string(), "{body}");
    assert_eq!(body["status"], status, "{body}");
}
