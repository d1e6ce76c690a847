//! Push for logged-on visitors, over real sockets on the starter site (with the
//! accounts module): each user's own topics reach that user only, `rsc/...`
//! messages reach whom the site's access policy lets see the resource, and a
//! logged-on connection needs this site's pages (WebSocket `Origin`) and its
//! session's CSRF token (commands). On SQLite, and on PostgreSQL.

use crate::push_support as support;

use std::time::Duration;

use bulwark_store::{NewResource, Props, ResourceId, Visibility};
use serde_json::{Value, json};
use support::*;

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
    // Another site's page (or a sibling subdomain's, which gets the cookie),
    // and the site's own names on another port or scheme: another origin.
    for origin in [
        "http://evil.test".to_string(),
        "null".to_string(),
        format!("http://localhost.evil.test:{port}"),
        "http://localhost:9999".to_string(),
        format!("http://127.0.0.1:{}", port.wrapping_add(1)),
        "https://www.localhost:8443".to_string(),
    ] {
        match Client::connect_from(&site, Some(&ada), Some(&origin)).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
                assert_eq!(resp.status(), 403, "{origin}")
            }
            Err(e) => panic!("{origin}: expected 403, got {e}"),
            Ok(_) => panic!("{origin}: expected 403, got a connection"),
        }
    }
    // The site's own pages: the host and port the socket was asked of, or
    // the site's names on their scheme's default port.
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("HTTP://127.0.0.1:{port}"),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_connection_ends_with_its_session() {
    let site = Site::start(Backend::Sqlite).await;
    let store = site.store();
    add_user(&store, "ada", "members").await;
    let ada = logon(&site, "ada").await;
    let a = ada.id;
    let mut push = Client::connect(&site, Some(&ada)).await;
    push.subscribed(&format!("user/{a}/#")).await;
    // An anonymous connection has no session to end: it stays.
    let mut anonymous = Client::connect(&site, None).await;
    anonymous.subscribed("site/end").await;

    // Ada logs off elsewhere with the same session: within a keep-alive
    // (200 ms here) her socket is closed, saying why.
    let (status, _) = post(&site, "/api/auth/logoff", &ada, true, "").await;
    assert_eq!(status, 200);
    let reason = push.closed(Duration::from_secs(5)).await;
    assert_eq!(reason, "the session ended");
    // Reconnecting with the old cookie is anonymous: her topics are closed.
    let mut again = Client::connect(&site, Some(&ada)).await;
    again.refused(&format!("user/{a}/x")).await;

    // A timer: several keep-alives (200 ms) pass, each of which would have
    // closed the anonymous socket had it been tied to a session.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (status, _) = server_publish(&site, "site/end", json!(1)).await;
    assert_eq!(status, 200);
    let got = anonymous.received_until("site/end").await;
    assert_eq!(topics(&got, ""), ["site/end"]);
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn administrators_only_topics_reach_administrators_alone() {
    // The test site keeps `staff/#` for administrators.
    let site = Site::start(Backend::Sqlite).await;
    let store = site.store();
    add_user(&store, "ada", "managers").await;
    add_user(&store, "root", "administrators").await;
    let ada = logon(&site, "ada").await;
    let root = logon(&site, "root").await;

    let mut root_push = Client::connect(&site, Some(&root)).await;
    root_push.subscribed("staff/totals").await;
    root_push.subscribed("site/end").await;
    // Anyone else is refused by name, and wildcards bring them nothing.
    let mut others = Vec::new();
    for who in [Some(&ada), None] {
        let mut push = Client::connect(&site, who).await;
        push.refused("staff/totals").await;
        push.subscribed("#").await;
        others.push(push);
    }
    let (status, _) = server_publish(&site, "staff/totals", json!({"n": 1})).await;
    assert_eq!(status, 200);
    let (status, _) = server_publish(&site, "site/end", json!(1)).await;
    assert_eq!(status, 200);
    let got = root_push.received_until("site/end").await;
    assert_eq!(topics(&got, "staff/"), ["staff/totals"]);
    for push in others.iter_mut() {
        let got = push.received_until("site/end").await;
        assert!(topics(&got, "staff/").is_empty(), "{got:?}");
    }
    site.stop().await;
}
