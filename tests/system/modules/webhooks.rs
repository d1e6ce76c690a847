//! Webhooks on the starter site against a real HTTP receiver on loopback
//! (tests/receiver): messages signed as the Standard Webhooks specification
//! says, told only to the endpoints that asked (events, categories), a
//! receiver that fails three times gets the message exactly once more, a
//! message can be sent again from the log; comments, forms and new users are
//! told too; a burst of 1,000 changes arrives in the order it committed; two
//! nodes on one PostgreSQL deliver each message once.

use crate::accounts;
use crate::common;
use crate::receiver;
use crate::starter_api;
use crate::tickets;

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use bulwark_store::{NewResource, Props, PropsChange, ResourceUpdate};
use bulwark_testkit::eventually;
use common::*;
use receiver::Receiver;

const TOKEN: &str = "webhooks-test-token";
const WITHIN: Duration = Duration::from_secs(60);

/// The starter site with the API token, quick retries and `database`.
async fn site(database: &str) -> TestServer {
    let quick = "[webhooks]\nretry_first_ms = 50\ntimeout_ms = 2000\n";
    starter_api::start_starter(TOKEN, database, quick, |text| {
        assert!(
            text.contains("\"webhooks\""),
            "the starter enables webhooks"
        );
        text
    })
    .await
}

const SQLITE: &str = starter_api::SQLITE;

async fn api(s: &TestServer, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    starter_api::call(s, Some(TOKEN), method, path, body).await
}

/// Subscribes `url`; gives the endpoint's id and secret.
async fn subscribe(
    s: &TestServer,
    url: &str,
    events: &[&str],
    categories: &[&str],
) -> (i64, String) {
    let (status, made) = api(
        s,
        "POST",
        "/api/webhooks",
        Some(json!({"url": url, "events": events, "categories": categories})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    (
        made["id"].as_i64().unwrap(),
        made["secret"].as_str().unwrap().to_owned(),
    )
}

async fn article(s: &TestServer, title: &str, published: bool) -> i64 {
    let (status, made) = api(
        s,
        "POST",
        "/api/rsc",
        Some(json!({"category": "article", "published": published, "props": {"title": title}})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    made["id"].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_is_signed_and_a_receiver_that_fails_three_times_gets_it_exactly_once_more() {
    let s = site(SQLITE).await;
    let receiver = Receiver::start(None, &[500, 500, 500]).await;
    let (endpoint, secret) =
        subscribe(&s, &receiver.url(), &["resource.published"], &["article"]).await;

    // A person (not an article), a draft (not published), then a published
    // article: only the last is told, after three failures, once delivered.
    let (status, _) = api(
        &s,
        "POST",
        "/api/rsc",
        Some(json!({"category": "person", "published": true, "props": {"title": "Pat"}})),
    )
    .await;
    assert_eq!(status, 201);
    article(&s, "A draft", false).await;
    let id = article(&s, "Out now", true).await;
    let got = eventually(
        "the message is delivered after three failures",
        WITHIN,
        || async {
            let got = receiver.received();
            (got.len() >= 4).then_some(got)
        },
    )
    .await;
    assert_eq!(
        got.iter().map(|r| r.status).collect::<Vec<_>>(),
        [500, 500, 500, 200],
        "four attempts, the last delivered"
    );
    let first = &got[0];
    assert!(
        got.iter()
            .all(|r| r.header("webhook-id") == first.header("webhook-id")),
        "one message id on every attempt"
    );
    assert!(first.header("webhook-id").starts_with("msg_"));
    assert!(
        got.iter().all(|r| r.signed_by(&secret)),
        "every attempt verifies"
    );
    assert!(
        !first.signed_by("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        "not under another secret"
    );
    let message = first.json();
    assert_eq!(message["type"], "resource.published");
    assert_eq!(message["data"]["id"], id);
    assert_eq!(message["data"]["title"], "Out now");
    assert_eq!(message["data"]["category"], "article");

    // The log says so; "send again" sends it once more, with its id.
    let (status, log) = api(
        &s,
        "GET",
        &format!("/api/webhooks/{endpoint}/deliveries"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let logged = &log["deliveries"][0];
    assert_eq!(
        (
            logged["state"].as_str(),
            logged["attempts"].as_i64(),
            logged["last_status"].as_i64()
        ),
        (Some("delivered"), Some(4), Some(200)),
        "{log}"
    );
    assert_eq!(
        log["deliveries"].as_array().unwrap().len(),
        1,
        "the person and the draft were not queued"
    );
    let (status, _) = api(
        &s,
        "POST",
        &format!("/api/webhooks/deliveries/{}/retry", logged["id"]),
        None,
    )
    .await;
    assert_eq!(status, 202);
    let again = eventually("the message is sent again", WITHIN, || async {
        let got = receiver.received();
        (got.len() == 5).then_some(got)
    })
    .await;
    assert_eq!(again[4].header("webhook-id"), first.header("webhook-id"));

    // Only administrators manage webhooks.
    let resp = get(s.addr, "localhost", "/api/webhooks").await;
    assert!(matches!(resp.status, 401 | 403), "{}", resp.status);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_comments_forms_and_new_users_are_told() {
    let s = site(SQLITE).await;
    let receiver = Receiver::start(None, &[]).await;
    subscribe(&s, &receiver.url(), &[], &[]).await;
    let types = |receiver: &Receiver| -> Vec<String> {
        receiver
            .delivered()
            .iter()
            .map(|r| r.json()["type"].as_str().unwrap().to_owned())
            .collect()
    };
    let id = article(&s, "Told", true).await;
    let patch = |body: Value| {
        let addr = s.addr;
        async move {
            reqwest::Client::new()
                .patch(format!("http://{addr}/api/rsc/{id}"))
                .header("Host", "localhost")
                .header("Content-Type", "application/json")
                .bearer_auth(TOKEN)
                .body(body.to_string())
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(patch(json!({"published": false})).await, 200);
    assert_eq!(
        api(&s, "DELETE", &format!("/api/rsc/{id}"), None).await.0,
        204
    );

    // A comment and a form's answers.
    let other = article(&s, "Commented", true).await;
    let ticket =
        tickets::aged_ticket(&s, &format!("comments:{other}"), Duration::from_secs(10)).await;
    let (status, _) = api(&s, "POST", "/api/comments", Some(json!({"rsc": other, "name": "Ann", "email": "ann@example.org", "body": "Hi", "_ticket": ticket}))).await;
    assert_eq!(status, 202);
    let contact = s.models["default"]
        .store
        .run(|s| s.resource_id("form_contact"))
        .await
        .unwrap()
        .expect("the starter's contact form");
    let ticket =
        tickets::aged_ticket(&s, &format!("form:{}", contact.0), Duration::from_secs(10)).await;
    let resp = reqwest::Client::new()
        .post(format!("http://{}/forms/{}/submit", s.addr, contact.0))
        .header("Host", "localhost")
        .header("Accept", "application/json")
        .form(&[
            ("_ticket", ticket.as_str()),
            ("name", "Eve"),
            ("email", "eve@example.org"),
            ("message", "Hello"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201);

    // A new user.
    s.models["default"]
        .store
        .run(|s| {
            let group = bulwark_module_auth::GroupName::new("members");
            // Any stored hash will do: nobody logs on with it here.
            bulwark_module_auth::accounts::add_user(
                s,
                "newcomer",
                &group,
                "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQ$aGFzaA",
            )
            .unwrap();
            Ok(())
        })
        .await
        .unwrap();

    let told = eventually("every event arrives", WITHIN, || async {
        let told = types(&receiver);
        told.iter().any(|t| t == "user.created").then_some(told)
    })
    .await;
    let position = |t: &str| {
        told.iter()
            .position(|x| x == t)
            .unwrap_or_else(|| panic!("{t} in {told:?}"))
    };
    assert!(position("resource.created") < position("resource.published"));
    assert!(position("resource.published") < position("resource.unpublished"));
    assert!(position("resource.unpublished") < position("resource.deleted"));
    assert!(position("resource.deleted") < position("comment.posted"));
    assert!(position("comment.posted") < position("form.submitted"));
    let delivered = receiver.delivered();
    let body = |t: &str| {
        delivered
            .iter()
            .map(|r| r.json())
            .find(|m| m["type"] == t)
            .unwrap()
    };
    assert_eq!(body("comment.posted")["data"]["rsc"], other);
    assert_eq!(body("comment.posted")["data"]["status"], "pending");
    assert_eq!(
        body("form.submitted")["data"]["answers"]["message"],
        "Hello"
    );
    assert_eq!(body("user.created")["data"]["username"], "newcomer");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_a_thousand_changes_arrives_in_the_order_it_committed() {
    let s = site(SQLITE).await;
    let receiver = Receiver::start(None, &[]).await;
    subscribe(&s, &receiver.url(), &["resource.changed"], &[]).await;
    let store = s.models["default"].store.clone();
    let id = store
        .run(|s| {
            s.create_resource(
                NewResource::new("article", Props::new().with("title", "Burst")).published(true),
            )
        })
        .await
        .unwrap();
    store
        .run(move |s| {
            for n in 0..1000 {
                let now = s.resource(id)?.unwrap();
                let mut update = ResourceUpdate::new(id, now.version);
                update.props = PropsChange::Merge(Props::new().with("title", format!("Burst {n}")));
                s.update_resource(update)?;
            }
            Ok(())
        })
        .await
        .unwrap();
    let versions = eventually(
        "a thousand messages arrive",
        Duration::from_secs(120),
        || async {
            let got = receiver.delivered();
            (got.len() >= 1000).then(|| {
                got.iter()
                    .map(|r| r.json()["data"]["version"].as_i64().unwrap())
                    .collect::<Vec<_>>()
            })
        },
    )
    .await;
    assert_eq!(versions.len(), 1000, "each once");
    assert!(
        versions.windows(2).all(|w| w[0] < w[1]),
        "in the order they committed"
    );
    s.shutdown().await;
}

/// An article made on `node`'s store, published.
async fn made_on(node: &TestServer, title: &str) -> i64 {
    let title = title.to_owned();
    node.models["default"]
        .store
        .run(move |s| {
            s.create_resource(
                NewResource::new("article", Props::new().with("title", title)).published(true),
            )
        })
        .await
        .unwrap()
        .0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_on_one_database_deliver_each_message_once() {
    let schema = accounts::fresh_schema("webhooks_two");
    let settings = "\n[webhooks]\nretry_first_ms = 50\n";
    let a = accounts::starter_node(
        &schema,
        "a",
        settings,
        &[],
        bulwark_module_cluster::module(),
    )
    .await;
    let b = accounts::starter_node(
        &schema,
        "b",
        settings,
        &[],
        bulwark_module_cluster::module(),
    )
    .await;
    let receiver = Receiver::start(None, &[]).await;
    let url = receiver.url();
    a.models["default"]
        .store
        .run(move |s| {
            Ok(bulwark_module_webhooks::endpoints::add(
                s,
                &bulwark_module_webhooks::endpoints::NewEndpoint {
                    url,
                    events: vec!["resource.created".into()],
                    categories: vec!["article".into()],
                    description: String::new(),
                },
            ))
        })
        .await
        .unwrap()
        .unwrap();
    // Node B reads the endpoint when it hears of it from A: once a change
    // made on B is told, it has.
    let probes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    eventually("node B tells its changes", WITHIN, || {
        let (b, receiver, probes) = (&b, &receiver, probes.clone());
        async move {
            let id = made_on(b, "probe").await;
            probes.lock().unwrap().push(id);
            let probes = probes.lock().unwrap().clone();
            let told: Vec<i64> = receiver
                .delivered()
                .iter()
                .map(|r| r.json()["data"]["id"].as_i64().unwrap())
                .collect();
            told.iter().any(|t| probes.contains(t)).then_some(())
        }
    })
    .await;
    let mut made = Vec::new();
    for n in 0..10 {
        made.push(made_on(&a, &format!("On A {n}")).await);
        made.push(made_on(&b, &format!("On B {n}")).await);
    }
    let got = eventually("every message arrives", WITHIN, || async {
        let got = receiver.delivered();
        let ids: Vec<i64> = got
            .iter()
            .map(|r| r.json()["data"]["id"].as_i64().unwrap())
            .collect();
        made.iter().all(|m| ids.contains(m)).then_some(got)
    })
    .await;
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in got
        .iter()
        .filter(|r| made.contains(&r.json()["data"]["id"].as_i64().unwrap()))
    {
        *seen.entry(r.header("webhook-id").to_owned()).or_default() += 1;
    }
    assert_eq!(seen.len(), made.len(), "one message a change");
    assert!(
        seen.values().all(|n| *n == 1),
        "each delivered once: {seen:?}"
    );
    accounts::stop_nodes(vec![a, b], &schema).await;
}

/// The attempts and state of each endpoint's messages, by endpoint id.
async fn deliveries(s: &TestServer) -> Vec<(i64, i64, String, String)> {
    s.models["default"]
        .store
        .run(|store| {
            store.module_read(|sql| {
                Ok(sql
                    .query(
                        "SELECT endpoint_id, attempts, state, COALESCE(last_response, '') \
                         FROM webhook_delivery ORDER BY endpoint_id",
                        &[],
                    )?
                    .iter()
                    .map(|r| (r.int(0), r.int(1), r.text(2), r.text(3)))
                    .collect())
            })
        })
        .await
        .unwrap()
}

/// Three receivers that take the connection and never answer (the attempt
/// times out after 8 s) hold back no other endpoint: a fourth, subscribed
/// last, has its message while theirs are still waiting for an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receivers_that_never_answer_hold_back_no_other_endpoint() {
    let s = starter_api::start_starter(
        TOKEN,
        SQLITE,
        "[webhooks]\nretry_first_ms = 50\ntimeout_ms = 8000\n",
        |text| text,
    )
    .await;
    let mut silent = Vec::new();
    for _ in 0..3 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        subscribe(&s, &url, &["resource.published"], &[]).await;
        // Accepts and keeps every connection, answers nothing.
        silent.push(tokio::spawn(async move {
            let mut kept = Vec::new();
            while let Ok((conn, _)) = listener.accept().await {
                kept.push(conn);
            }
        }));
    }
    let answering = Receiver::start(None, &[]).await;
    let (fourth, _) = subscribe(&s, &answering.url(), &["resource.published"], &[]).await;
    article(&s, "Told to four", true).await;
    // Delivered and written down, while the others wait for an answer.
    let rows = eventually(
        "the answering endpoint has its message",
        Duration::from_secs(6),
        || async {
            let rows = deliveries(&s).await;
            rows.iter()
                .any(|(endpoint, _, state, _)| *endpoint == fourth && state == "delivered")
                .then_some(rows)
        },
    )
    .await;
    assert_eq!(answering.delivered().len(), 1);
    assert_eq!(rows.len(), 4, "{rows:?}");
    for (endpoint, attempts, state, _) in &rows {
        if *endpoint == fourth {
            assert_eq!(state, "delivered");
        } else {
            assert_eq!(
                (*attempts, state.as_str()),
                (0, "pending"),
                "endpoint {endpoint} is still waiting for its answer"
            );
        }
    }
    for task in silent {
        task.abort();
    }
    s.shutdown().await;
}

/// A receiver that answers 200 and then sends without end is read for its
/// first 4 KiB (the log keeps 500 characters) and left: the attempt ends at
/// once, not when the 20 s timeout stops it, and the receiver manages to
/// send no more than what the sockets' buffers hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_without_end_is_read_a_few_kib_and_left() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let s = starter_api::start_starter(
        TOKEN,
        SQLITE,
        "[webhooks]\nretry_first_ms = 50\ntimeout_ms = 20000\n",
        |text| text,
    )
    .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let sent = tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 16 * 1024];
        let _ = conn.read(&mut request).await;
        conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let chunk = vec![b'x'; 64 * 1024];
        let mut sent = 0u64;
        // Until the other side closes (or 8 GiB, which it never reaches).
        while sent < 8 << 30 {
            if conn.write_all(&chunk).await.is_err() {
                break;
            }
            sent += chunk.len() as u64;
        }
        sent
    });
    subscribe(&s, &url, &["resource.published"], &[]).await;
    article(&s, "Told once", true).await;
    let row = eventually(
        "the attempt is recorded",
        Duration::from_secs(10),
        || async {
            deliveries(&s)
                .await
                .into_iter()
                .find(|(_, attempts, _, _)| *attempts == 1)
        },
    )
    .await;
    assert_eq!(row.2, "delivered");
    assert_eq!(row.3, "x".repeat(500), "the log keeps the first characters");
    let sent = tokio::time::timeout(Duration::from_secs(10), sent)
        .await
        .expect("the receiver's connection is closed")
        .unwrap();
    assert!(
        sent < 64 << 20,
        "the receiver sent {sent} bytes before it was left"
    );
    s.shutdown().await;
}
