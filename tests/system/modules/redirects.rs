//! Redirects on the starter site over real HTTP: rules made through the API
//! (with the site's token) answer 301, 302 or 410 for old paths, pass the
//! query string on, never take a path that is served, count their hits; a CSV
//! import is all or nothing and names each wrong line; editors may, members
//! may not.

use crate::accounts;
use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

const TOKEN: &str = "redirects-test-token";

async fn site() -> TestServer {
    let mut files = starter_site();
    for (path, text) in files.iter_mut() {
        if path == "default/site.toml" {
            *text = text.replacen(
                "# token = \"generated\"",
                &format!("token = \"{TOKEN}\""),
                1,
            );
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    start(&files, |_| {}).await
}

async fn api(s: &TestServer, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = reqwest::Client::new();
    let mut req = client
        .request(method.parse().unwrap(), format!("http://{}{path}", s.addr))
        .header("Host", "localhost")
        .bearer_auth(TOKEN);
    if let Some(body) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(body.to_string());
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_paths_move_and_served_paths_stay_and_hits_are_counted() {
    let s = site().await;
    assert_eq!(
        get(s.addr, "localhost", "/2019/05/old-post/").await.status,
        404
    );
    let (status, made) = api(
        &s,
        "POST",
        "/api/redirects",
        Some(json!({"from": "/2019/05/old-post/", "to": "/articles"})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(
        (made["from"].as_str(), made["status"].as_u64()),
        (Some("/2019/05/old-post"), Some(301))
    );
    for (from, to, code) in [
        ("/temporary", Some("/about"), 302),
        ("/withdrawn", None, 410),
    ] {
        let (status, body) = api(
            &s,
            "POST",
            "/api/redirects",
            Some(json!({"from": from, "to": to, "status": code})),
        )
        .await;
        assert_eq!(status, 201, "{body}");
    }
    // A rule for a path that is served never takes it.
    let (status, _) = api(
        &s,
        "POST",
        "/api/redirects",
        Some(json!({"from": "/about", "to": "/contact"})),
    )
    .await;
    assert_eq!(status, 201);

    let moved = get(s.addr, "localhost", "/2019/05/old-post?utm_source=mail").await;
    assert_eq!(moved.status, 301);
    assert_eq!(
        moved.header("location"),
        Some("/articles?utm_source=mail"),
        "with or without the slash, the query passed on"
    );
    let temporary = get(s.addr, "localhost", "/temporary").await;
    assert_eq!(
        (temporary.status, temporary.header("location")),
        (302, Some("/about"))
    );
    assert_eq!(temporary.header("cache-control"), Some("no-cache"));
    assert_eq!(get(s.addr, "localhost", "/withdrawn").await.status, 410);
    assert_eq!(
        get(s.addr, "localhost", "/about").await.status,
        200,
        "a served page is not redirected"
    );
    // A POST to an old path is not moved.
    let posted = raw(s.addr, b"POST /temporary HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await.unwrap();
    assert_ne!(posted.status, 302);

    // The hits are written within seconds.
    bulwark_testkit::eventually(
        "the old post's hit is counted",
        Duration::from_secs(10),
        || async {
            let (_, list) = api(&s, "GET", "/api/redirects", None).await;
            let rule = list["redirects"]
                .as_array()?
                .iter()
                .find(|r| r["from"] == "/2019/05/old-post")?
                .clone();
            (rule["hits"] == 1 && rule["last_hit"].is_string()).then_some(())
        },
    )
    .await;

    // Refused: a second rule for a path, a target that could run script.
    let (status, body) = api(
        &s,
        "POST",
        "/api/redirects",
        Some(json!({"from": "/temporary/", "to": "/x"})),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = api(
        &s,
        "POST",
        "/api/redirects",
        Some(json!({"from": "/x", "to": "javascript:alert(1)"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    // A browser reads `\` as `/`: these lead to another host.
    for off_site in ["/\\evil.example", "/\t/evil.example", "\\/evil.example"] {
        let (status, body) = api(
            &s,
            "POST",
            "/api/redirects",
            Some(json!({"from": "/y", "to": off_site})),
        )
        .await;
        assert_eq!(status, 400, "{off_site:?}: {body}");
    }

    // Removed: the old path is not found again.
    let (_, list) = api(&s, "GET", "/api/redirects", None).await;
    let id = list["redirects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["from"] == "/temporary")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    let (status, _) = api(&s, "DELETE", &format!("/api/redirects/{id}"), None).await;
    assert_eq!(status, 204);
    assert_eq!(get(s.addr, "localhost", "/temporary").await.status, 404);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_csv_import_is_all_or_nothing_and_names_each_wrong_line() {
    let s = site().await;
    let bad = "from,to,status\n/a,/about,301\nnot-a-path,/x\n/b,/c,999\n";
    let (status, problem) = api(
        &s,
        "POST",
        "/api/redirects/import",
        Some(json!({"csv": bad})),
    )
    .await;
    assert_eq!(status, 400, "{problem}");
    let lines: Vec<&str> = problem["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("line 3:") && lines[1].starts_with("line 4: status 999"),
        "{lines:?}"
    );
    assert_eq!(
        get(s.addr, "localhost", "/a").await.status,
        404,
        "nothing was imported"
    );

    let good = "/a,/about,301\n/b,,410\n/c,https://example.org/new,308\n";
    let (status, done) = api(
        &s,
        "POST",
        "/api/redirects/import",
        Some(json!({"csv": good})),
    )
    .await;
    assert_eq!((status, done["imported"].as_u64()), (200, Some(3)));
    assert_eq!(get(s.addr, "localhost", "/a").await.status, 301);
    assert_eq!(get(s.addr, "localhost", "/b").await.status, 410);
    let c = get(s.addr, "localhost", "/c").await;
    assert_eq!(
        (c.status, c.header("location")),
        (308, Some("https://example.org/new"))
    );
    // A file that names a path with a rule already: none of it.
    let (status, _) = api(
        &s,
        "POST",
        "/api/redirects/import",
        Some(json!({"csv": "/d,/about\n/a,/contact\n"})),
    )
    .await;
    assert_eq!(status, 409);
    assert_eq!(
        get(s.addr, "localhost", "/d").await.status,
        404,
        "the first line was not kept either"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_editors_change_redirects_not_members_nor_visitors() {
    let s = site().await;
    let anonymous = reqwest::Client::new()
        .get(format!("http://{}/api/redirects", s.addr))
        .header("Host", "localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    // A member, logged on: refused, and nothing changes.
    accounts::add_user(&s, "mia", "members").await;
    let client = reqwest::Client::new();
    let logon = client
        .post(format!("http://{}/api/auth/logon", s.addr))
        .header("Host", "localhost")
        .header("Content-Type", "application/json")
        .body(json!({"username": "mia", "password": accounts::PASSWORD}).to_string())
        .send()
        .await
        .unwrap();
    let cookie = logon.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let answer: Value = serde_json::from_str(&logon.text().await.unwrap()).unwrap();
    let csrf = answer["csrf_token"].as_str().unwrap().to_owned();
    let refused = client
        .post(format!("http://{}/api/redirects", s.addr))
        .header("Host", "localhost")
        .header("Cookie", cookie)
        .header("X-CSRF-Token", csrf)
        .header("Content-Type", "application/json")
        .body(json!({"from": "/members-only", "to": "/about"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    assert_eq!(get(s.addr, "localhost", "/members-only").await.status, 404);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_address_with_a_query_moves_before_the_front_page_would_show() {
    let s = site().await;
    // `/` is served (it sends a visitor to their language's front page), so
    // without a rule checked before routing, `/?p=12` never gets to a 404.
    assert_eq!(get(s.addr, "localhost", "/?p=12").await.status, 302);
    let (status, made) = api(
        &s,
        "POST",
        "/api/redirects",
        Some(json!({"from": "/?p=12", "to": "/en/about"})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let moved = bulwark_testkit::eventually(
        "the rule with a query answers",
        Duration::from_secs(10),
        || async {
            let r = get(s.addr, "localhost", "/?p=12").await;
            (r.status == 301).then_some(r)
        },
    )
    .await;
    assert_eq!(moved.header("location"), Some("/en/about"));
    // Only that very query moves; other queries and paths are served.
    assert_eq!(get(s.addr, "localhost", "/?p=13").await.status, 302);
    assert_eq!(get(s.addr, "localhost", "/en/?p=12").await.status, 200);
    assert_eq!(
        get(s.addr, "localhost", "/en/articles?page=2").await.status,
        200
    );
}
