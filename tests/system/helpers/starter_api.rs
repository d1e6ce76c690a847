//! The starter site as the JSON API's tests drive it: its `[api]` token set,
//! its `[database]` table chosen, settings added; and calls with that token.
//! Included by the tests of the modules whose endpoints are the starter's.

use serde_json::Value;

use crate::common::{TestServer, start, starter_site};

/// SQLite in the site's folder, with the demo content: the starter's own.
pub const SQLITE: &str = "[database]\ndemo_content = true\n";

/// Starts the starter site with the API token `token`, `database` in place of
/// its `[database]` table, and `extra` added to its `site.toml`; `edit` may
/// change the text further (it must keep what the test relies on).
pub async fn start_starter(
    token: &str,
    database: &str,
    extra: &str,
    edit: impl Fn(String) -> String,
) -> TestServer {
    let mut files = starter_site();
    for (path, text) in files.iter_mut() {
        if path == "default/site.toml" {
            let edited = text
                .replacen(
                    "# token = \"generated\"",
                    &format!("token = \"{token}\""),
                    1,
                )
                .replacen(SQLITE, database, 1);
            assert!(
                edited.contains(token) && edited.contains(database),
                "{edited}"
            );
            *text = edit(edited) + "\n" + extra;
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    start(&files, |_| {}).await
}

/// Calls `path` with `token`: the status and the answer (`Null` when it is
/// not JSON).
#[allow(dead_code)] // Not every test that includes this calls it.
pub async fn call(
    s: &TestServer,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let (status, answer, _) = call_with_retry(s, token, method, path, body).await;
    (status, answer)
}

/// [`call`], with the answer's `Retry-After` too.
pub async fn call_with_retry(
    s: &TestServer,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value, Option<String>) {
    let mut req = reqwest::Client::new()
        .request(method.parse().unwrap(), format!("http://{}{path}", s.addr))
        .header("Host", "localhost");
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    if let Some(body) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(body.to_string());
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        retry,
    )
}
