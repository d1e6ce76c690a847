//! The voting site (`sites/voting`) as it ships, over real sockets: the
//! multilingual start page, the Ajax filter, picking three, the voter's form
//! (validated, protected against cross-site posts), the confirmation, one
//! vote per address, and the live totals for administrators. The last test
//! runs it on two nodes of one PostgreSQL database (never skipped: it needs
//! PostgreSQL, `scripts/ensure-postgres.sh`).

use crate::common;
use crate::databases;

use std::sync::Arc;
use std::time::Duration;

use bulwark_testkit::eventually;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use common::{TestServer, start_with_modules};

const ADMIN_PASSWORD: &str = "a long admin password";

fn modules() -> Vec<Arc<dyn bulwark_web::Module>> {
    vec![
        bulwark_module_core::module(),
        bulwark_module_push::module(),
        bulwark_module_auth::module(Some(ADMIN_PASSWORD.into())).unwrap(),
        bulwark_module_admin::module(),
        bulwark_module_cluster::module(),
        bulwark_module_voting::module(),
    ]
}

/// `sites/voting` as files for [`start_with_modules`], its `site.toml` changed by `tweak`.
fn voting_site(tweak: impl Fn(&mut String)) -> Vec<(String, String)> {
    // As site `default`, whose models the test server keeps at hand.
    let mut files = common::site_folder("voting", "default");
    for (path, text) in files.iter_mut() {
        if path == "default/site.toml" {
            // The only site of the test server answers every host.
            *text = text.replacen("name = \"voting\"", "name = \"default\"\ndefault = true", 1);
            tweak(text);
        }
    }
    files
}

async fn start(tweak: impl Fn(&mut String)) -> Node {
    let files = voting_site(tweak);
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    Node {
        server: start_with_modules(&files, |_| {}, modules()).await,
    }
}

struct Node {
    server: TestServer,
}

struct Answer {
    status: u16,
    location: Option<String>,
    body: String,
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

impl Node {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.server.addr.port())
    }

    async fn answer(resp: reqwest::Response) -> Answer {
        Answer {
            status: resp.status().as_u16(),
            location: resp
                .headers()
                .get("location")
                .map(|l| l.to_str().unwrap().to_owned()),
            body: resp.text().await.unwrap(),
        }
    }

    async fn get(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        let mut req = http()
            .get(self.url(path))
            .header("host", "voting.localhost");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Node::answer(req.send().await.unwrap()).await
    }

    async fn post(&self, path: &str, form: &[(&str, &str)], headers: &[(&str, &str)]) -> Answer {
        let body: String = form
            .iter()
            .map(|(k, v)| format!("{k}={}", enc(v)))
            .collect::<Vec<_>>()
            .join("&");
        let mut req = http()
            .post(self.url(path))
            .header("host", "voting.localhost")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Node::answer(req.send().await.unwrap()).await
    }

    /// The projects' ids, by theme (`None`: all).
    async fn projects(&self, theme: Option<&str>) -> Vec<String> {
        let path = match theme {
            Some(t) => format!("/projects/list?theme={t}"),
            None => "/projects/list".into(),
        };
        let list = self.get(&path, &[]).await;
        assert_eq!(list.status, 200, "{}", list.body);
        between_all(&list.body, "data-id=\"", "\"")
    }

    /// The form for these picks, and its ballot token.
    async fn ballot(&self, picks: &[String]) -> String {
        let query: Vec<String> = picks.iter().map(|p| format!("p={p}")).collect();
        let form = self.get(&format!("/vote?{}", query.join("&")), &[]).await;
        assert_eq!(form.status, 200, "{}", form.body);
        between_all(&form.body, "name=\"_ballot\" value=\"", "\"")
            .pop()
            .expect("a ballot token in the form")
    }

    async fn vote(
        &self,
        picks: &[String],
        ballot: &str,
        name: &str,
        email: &str,
        postcode: &str,
    ) -> Answer {
        let mut form = vec![
            ("_ballot", ballot),
            ("name", name),
            ("email", email),
            ("postcode", postcode),
        ];
        for p in picks {
            form.push(("p", p.as_str()));
        }
        self.post("/vote", &form, &[]).await
    }

    /// A session cookie for the site's administrator.
    async fn admin_cookie(&self) -> String {
        self.admin_session().await.0
    }

    /// The administrator's session cookie and CSRF token.
    async fn admin_session(&self) -> (String, String) {
        let resp = http()
            .post(self.url("/api/auth/logon"))
            .header("host", "voting.localhost")
            .header("content-type", "application/json")
            .body(json!({"username": "admin", "password": ADMIN_PASSWORD}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let cookie = resp
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.starts_with("bulwark_session="))
            .map(|v| v.split(';').next().unwrap().to_owned())
            .expect("a session cookie");
        let body: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
        (cookie, body["csrf_token"].as_str().unwrap().to_owned())
    }

    /// A push client over WebSocket (with `cookie`, if any), subscribed to `topic`;
    /// the subscription's answer.
    async fn push(&self, cookie: Option<&str>, topic: &str) -> (Ws, Value) {
        let mut request = format!("ws://127.0.0.1:{}/push/ws", self.server.addr.port())
            .into_client_request()
            .unwrap();
        let headers = request.headers_mut();
        headers.insert("sec-websocket-protocol", "bulwark-push".parse().unwrap());
        headers.insert("host", "voting.localhost".parse().unwrap());
        headers.insert("origin", "http://voting.localhost".parse().unwrap());
        if let Some(cookie) = cookie {
            headers.insert("cookie", cookie.parse().unwrap());
        }
        let (ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        let mut ws = Ws(ws);
        assert_eq!(ws.frame().await["type"], "hello");
        ws.0.send(Message::text(
            json!({"op": "subscribe", "topic": topic}).to_string(),
        ))
        .await
        .unwrap();
        let reply = ws.frame().await;
        (ws, reply)
    }
}

struct Ws(
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
);

impl Ws {
    async fn frame(&mut self) -> Value {
        self.frame_within(Duration::from_secs(5))
            .await
            .expect("a frame within 5 s")
    }

    async fn frame_within(&mut self, within: Duration) -> Option<Value> {
        loop {
            let frame = tokio::time::timeout(within, self.0.next()).await.ok()?;
            if let Message::Text(text) = frame.unwrap().unwrap() {
                return Some(serde_json::from_str(text.as_str()).unwrap());
            }
        }
    }
}

fn enc(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b' ' => "+".into(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn between_all(text: &str, start: &str, end: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(start) {
        rest = &rest[i + start.len()..];
        let j = rest.find(end).unwrap();
        out.push(rest[..j].to_owned());
        rest = &rest[j..];
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_page_speaks_dutch_and_english() {
    let node = start(|_| {}).await;
    let nl = node
        .get("/", &[("accept-language", "nl-NL,nl;q=0.9")])
        .await;
    assert!(nl.body.contains("<html lang=\"nl\">"), "{}", nl.body);
    assert!(nl.body.contains("Stem voor een beter Nederland"));
    let en = node
        .get("/", &[("accept-language", "en-GB,en;q=0.8")])
        .await;
    assert!(en.body.contains("<html lang=\"en\">"), "{}", en.body);
    assert!(en.body.contains("Vote for a better Netherlands"));
    // Cached per language: asking in Dutch again still gets Dutch.
    let again = node.get("/", &[("accept-language", "nl")]).await;
    assert!(again.body.contains("Stem voor een beter Nederland"));
    // The static files the pages name are served.
    for link in between_all(&en.body, "src=\"/lib/", "\"")
        .iter()
        .chain(&between_all(&en.body, "href=\"/lib/", "\""))
    {
        assert_eq!(
            node.get(&format!("/lib/{link}"), &[]).await.status,
            200,
            "{link}"
        );
    }
    node.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filter_answers_the_projects_of_one_theme() {
    let node = start(|_| {}).await;
    let all = node.projects(None).await;
    assert_eq!(all.len(), 12, "{all:?}");
    let mut seen = Vec::new();
    for theme in [
        "project_nature",
        "project_culture",
        "project_care",
        "project_sport",
    ] {
        let some = node.projects(Some(theme)).await;
        assert_eq!(some.len(), 3, "{theme}: {some:?}");
        seen.extend(some);
    }
    seen.sort();
    let mut all_sorted = all.clone();
    all_sorted.sort();
    assert_eq!(seen, all_sorted);
    // A theme that is not one is the whole list, not an error.
    assert_eq!(node.projects(Some("nonsense")).await.len(), 12);
    // The page itself lists them with their images, and loads the filter's script.
    let page = node.get("/projects", &[("accept-language", "en")]).await;
    assert_eq!(between_all(&page.body, "data-id=\"", "\"").len(), 12);
    assert!(page.body.contains("/lib/js/voting~"), "{}", page.body);
    assert!(page.body.contains("Bees in the city"));
    node.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voter_picks_three_fills_the_form_and_sees_the_confirmation() {
    let node = start(|_| {}).await;
    let projects = node.projects(None).await;
    let picks = projects[..3].to_vec();
    let ballot = node.ballot(&picks).await;
    let cast = node
        .vote(
            &picks,
            &ballot,
            "Anna de Vries",
            " Anna@Example.NL",
            "1234 ab",
        )
        .await;
    assert_eq!(cast.status, 303, "{}", cast.body);
    let thanks_path = cast.location.unwrap();
    assert!(thanks_path.starts_with("/vote/thanks/"), "{thanks_path}");
    let thanks = node.get(&thanks_path, &[("accept-language", "en")]).await;
    assert_eq!(thanks.status, 200);
    assert!(
        thanks.body.contains("Thank you for voting, Anna de Vries"),
        "{}",
        thanks.body
    );
    assert_eq!(between_all(&thanks.body, "<li><img", ">").len(), 3);
    // Without its signature (or with another's) the confirmation is not there.
    let id = thanks_path
        .split('/')
        .nth(3)
        .unwrap()
        .split('?')
        .next()
        .unwrap();
    assert_eq!(
        node.get(&format!("/vote/thanks/{id}"), &[]).await.status,
        404
    );
    assert_eq!(
        node.get(&format!("/vote/thanks/{id}?k=00"), &[])
            .await
            .status,
        404
    );
    // The vote is in the database as the voter meant it.
    let store = node.server.models["default"].store.clone();
    let row = store
        .run(|s| {
            s.module_read(|tx| {
                tx.query_one(
                    "SELECT email, postcode, pick1, pick2, pick3 FROM voting_vote",
                    &[],
                )
                .map(|r| r.map(|r| (r.text(0), r.text(1), [r.int(2), r.int(3), r.int(4)])))
            })
        })
        .await
        .unwrap()
        .unwrap();
    let ids: Vec<i64> = picks.iter().map(|p| p.parse().unwrap()).collect();
    assert_eq!(
        row,
        (
            "anna@example.nl".into(),
            "1234AB".into(),
            [ids[0], ids[1], ids[2]]
        )
    );
    node.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_vote_with_the_same_address_is_refused_clearly() {
    let node = start(|_| {}).await;
    let projects = node.projects(None).await;
    let ballot = node.ballot(&projects[..3]).await;
    let first = node
        .vote(&projects[..3], &ballot, "Bob", "bob@example.nl", "2345CD")
        .await;
    assert_eq!(first.status, 303);
    // The same address written otherwise, other projects, a fresh form.
    let ballot = node.ballot(&projects[3..6]).await;
    let again = node
        .vote(&projects[3..6], &ballot, "Bob", "BOB@example.nl ", "2345CD")
        .await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert!(
        again.body.contains("Met dit e-mailadres is al gestemd"),
        "{}",
        again.body
    );
    node.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_names_each_bad_field_and_keeps_what_was_typed() {
    let node = start(|_| {}).await;
    let projects = node.projects(None).await;
    let ballot = node.ballot(&projects[..3]).await;
    let bad = node
        .vote(&projects[..3], &ballot, "C", "carla at example", "0123")
        .await;
    assert_eq!(bad.status, 400);
    for id in ["error-name", "error-email", "error-postcode"] {
        assert!(
            bad.body.contains(&format!("id=\"{id}\"")),
            "{id}: {}",
            bad.body
        );
    }
    assert!(
        bad.body.contains("value=\"carla at example\""),
        "{}",
        bad.body
    );
    // Picks: two, the same twice, one that is not a project.
    let not_a_project = "1";
    for picks in [
        vec![projects[0].clone(), projects[1].clone()],
        vec![
            projects[0].clone(),
            projects[0].clone(),
            projects[1].clone(),
        ],
        vec![
            projects[0].clone(),
            projects[1].clone(),
            not_a_project.to_owned(),
        ],
    ] {
        let ballot = node.ballot(&projects[..3]).await;
        let refused = node
            .vote(&picks, &ballot, "Carla", "carla@example.nl", "3456EF")
            .await;
        assert_eq!(refused.status, 400, "{picks:?}");
        assert!(
            refused.body.contains("id=\"error-picks\""),
            "{}",
            refused.body
        );
        let query: Vec<String> = picks.iter().map(|p| format!("p={p}")).collect();
        let form = node.get(&format!("/vote?{}", query.join("&")), &[]).await;
        assert_eq!(form.status, 400, "{picks:?}");
    }
    // Nothing was counted.
    let good = node.ballot(&projects[..3]).await;
    let counted = node
        .vote(&projects[..3], &good, "Carla", "carla@example.nl", "3456EF")
        .await;
    assert_eq!(counted.status, 303, "{}", counted.body);
    node.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_without_a_valid_ballot_or_from_another_site_is_refused() {
    let node = start(|_| {}).await;
    let projects = node.projects(None).await;
    let picks = &projects[..3];
    let ballot = node.ballot(picks).await;
    let mut forged = ballot.clone();
    forged.pop();
    forged.push(if ballot.ends_with('0') { '1' } else { '0' });
    for token in ["", "nonsense", forged.as_str()] {
        let refused = node
            .vote(picks, token, "Dirk", "dirk@example.nl", "4567GH")
            .await;
        assert_eq!(refused.status, 403, "{token:?}");
        assert!(
            refused.body.contains("id=\"error-form\""),
            "{}",
            refused.body
        );
    }
    let mut form = vec![
        ("_ballot", ballot.as_str()),
        ("name", "Dirk"),
        ("email", "dirk@example.nl"),
        ("postcode", "4567GH"),
    ];
    for p in picks {
        form.push(("p", p.as_str()));
    }
    for header in [
        ("origin", "http://evil.test"),
        ("sec-fetch-site", "cross-site"),
        ("origin", "null"),
    ] {
        let refused = node.post("/vote", &form, &[header]).await;
        assert_eq!(refused.status, 403, "{header:?}");
    }
    // The same post from the site's own page is taken.
    let taken = node
        .post(
            "/vote",
            &form,
            &[
                ("origin", "http://voting.localhost"),
                ("sec-fetch-site", "same-origin"),
            ],
        )
        .await;
    assert_eq!(taken.status, 303, "{}", taken.body);
    node.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_totals_are_for_administrators_and_follow_votes_live() {
    let node = start(|_| {}).await;
    let anonymous = node.get("/admin/votes", &[]).await;
    assert_eq!(anonymous.status, 303);
    assert_eq!(
        anonymous.location.as_deref(),
        Some("/logon?next=/admin/votes")
    );
    let admin = node.admin_cookie().await;
    let page = node
        .get("/admin/votes", &[("cookie", admin.as_str())])
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("<strong id=\"votes\">0</strong>"),
        "{}",
        page.body
    );

    let (mut live, reply) = node.push(Some(&admin), "voting/votes").await;
    assert_eq!(reply["type"], "subscribed", "{reply}");
    let (mut nosy, reply) = node.push(None, "voting/votes").await;
    assert_eq!(reply["type"], "error", "{reply}");
    let (mut wide, reply) = node.push(None, "#").await;
    assert_eq!(reply["type"], "subscribed", "{reply}");

    let projects = node.projects(None).await;
    let ballot = node.ballot(&projects[..3]).await;
    assert_eq!(
        node.vote(&projects[..3], &ballot, "Eva", "eva@example.nl", "5678JK")
            .await
            .status,
        303
    );
    let batch = live.frame().await;
    let ids: Vec<i64> = projects[..3].iter().map(|p| p.parse().unwrap()).collect();
    assert_eq!(batch["messages"][0]["topic"], "voting/votes");
    assert_eq!(batch["messages"][0]["payload"], json!({"projects": ids}));
    // Nobody else hears it, by name or by wildcard.
    assert_eq!(nosy.frame_within(Duration::from_millis(300)).await, None);
    assert_eq!(wide.frame_within(Duration::from_millis(300)).await, None);
    let page = node
        .get("/admin/votes", &[("cookie", admin.as_str())])
        .await;
    assert!(
        page.body.contains("<strong id=\"votes\">1</strong>"),
        "{}",
        page.body
    );
    node.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn any_node_takes_any_step_and_an_address_votes_once_across_nodes() {
    let schema = databases::pg_schema("voting_nodes");
    struct Drop_(String);
    impl Drop for Drop_ {
        fn drop(&mut self) {
            databases::drop_schema(&self.0);
        }
    }
    let _schema = Drop_(schema.clone());
    let on_postgres = |node: &'static str| {
        let schema = schema.clone();
        move |text: &mut String| {
            *text = text.replacen(
                "modules = [\"push\", \"auth\", \"admin\", \"voting\"]",
                "modules = [\"push\", \"auth\", \"admin\", \"voting\", \"cluster\"]",
                1,
            );
            text.push_str(&format!(
                "\n[database]\nurl = \"{}\"\nschema = \"{schema}\"\n\n[cluster]\nnode = \"{node}-{schema}\"\nheartbeat_ms = 100\n",
                databases::pg_url()
            ));
        }
    };
    // Fails (never skips) without PostgreSQL.
    let a = start(on_postgres("a")).await;
    let b = start(on_postgres("b")).await;
    for node in [&a, &b] {
        eventually(
            "the node hears the other",
            Duration::from_secs(5),
            || async { (node.get("/cluster/health", &[]).await.status == 200).then_some(()) },
        )
        .await;
    }
    // The administrator logs on at A and watches at B (the session is in the database).
    let (admin, csrf) = a.admin_session().await;
    let (mut live, reply) = b.push(Some(&admin), "voting/votes").await;
    assert_eq!(reply["type"], "subscribed", "{reply}");

    // A voter's form from A is posted to B (the ballot key is shared), and the
    // vote taken at B is refused at A for the same address.
    let projects = a.projects(None).await;
    assert_eq!(
        projects,
        b.projects(None).await,
        "one set of projects for both"
    );
    let ballot = a.ballot(&projects[..3]).await;
    let cast = b
        .vote(
            &projects[..3],
            &ballot,
            "Fleur",
            "fleur@example.nl",
            "6789LM",
        )
        .await;
    assert_eq!(cast.status, 303, "{}", cast.body);
    let thanks = a.get(cast.location.as_deref().unwrap(), &[]).await;
    assert_eq!(thanks.status, 200, "A shows B's confirmation");
    let ballot = b.ballot(&projects[3..6]).await;
    let again = a
        .vote(
            &projects[3..6],
            &ballot,
            "Fleur",
            "fleur@example.nl",
            "6789LM",
        )
        .await;
    assert_eq!(again.status, 409);
    // A vote at A reaches the administrator at B live.
    let ballot = a.ballot(&projects[6..9]).await;
    assert_eq!(
        a.vote(
            &projects[6..9],
            &ballot,
            "Gijs",
            "gijs@example.nl",
            "7890NP"
        )
        .await
        .status,
        303
    );
    let mut told = Vec::new();
    while told.len() < 2 {
        let batch = live.frame().await;
        for m in batch["messages"].as_array().into_iter().flatten() {
            told.push(m["payload"]["projects"].clone());
        }
    }
    let ids = |r: std::ops::Range<usize>| -> Value {
        json!(
            projects[r]
                .iter()
                .map(|p| p.parse::<i64>().unwrap())
                .collect::<Vec<_>>()
        )
    };
    assert_eq!(told, vec![ids(0..3), ids(6..9)]);
    let totals = b.get("/admin/votes", &[("cookie", admin.as_str())]).await;
    assert!(
        totals.body.contains("<strong id=\"votes\">2</strong>"),
        "{}",
        totals.body
    );

    // Logging off at A ends the session at B too, at once (B had it cached).
    let off = http()
        .post(a.url("/api/auth/logoff"))
        .header("host", "voting.localhost")
        .header("cookie", &admin)
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(off.status(), 200);
    eventually(
        "B no longer takes the session after the logoff",
        Duration::from_secs(2),
        || async {
            let after = b.get("/admin/votes", &[("cookie", admin.as_str())]).await;
            (after.status == 303).then_some(())
        },
    )
    .await;
    a.server.shutdown().await;
    b.server.shutdown().await;
}
