//! Password reset by e-mail, end to end: the real site over real HTTP, the
//! mail through a real SMTP server (aiosmtpd), the link followed, and the
//! password checked against what the database holds. SQLite and PostgreSQL.

use crate::common;
use crate::databases as db;
use crate::smtp;

use std::net::SocketAddr;
use std::time::Duration;

use bulwark_module_auth::accounts::{self, UserContact};
use bulwark_module_auth::{
    GroupName, HashCost, HashLimits, NewPassword, Password, Passwords, REQUEST_ANSWER,
};
use bulwark_module_mail::outbox;
use bulwark_store::Store;
use common::{RawResponse, TestServer, raw};
use serde_json::{Value, json};
use smtp::{SmtpSink, free_port};

const OLD: &str = "old password 1";
const NEW: &str = "brand new password 2";

fn passwords() -> Passwords {
    Passwords::new(HashCost::default(), HashLimits::default()).unwrap()
}

/// Site `news` with accounts and mail to `smtp_port`; `extra` adds settings.
async fn reset_site(smtp_port: u16, extra: &str) -> TestServer {
    reset_site_in(smtp_port, "en", extra).await
}

/// [`reset_site`] in `languages` (`en` or `en", "nl`).
async fn reset_site_in(smtp_port: u16, languages: &str, extra: &str) -> TestServer {
    let site = format!(
        r#"
hostname = "news.test"
default = true
modules = ["auth", "mail"]
languages = ["{languages}"]

[settings]
title = "News"

[mail]
smtp = "smtp://127.0.0.1:{smtp_port}"
from = "News <noreply@news.test>"
retry_delay_ms = 300
poll_interval_ms = 200
timeout_ms = 2000

{extra}
"#
    );
    common::start(&[("news/site.toml", site.as_str())], |_| {}).await
}

fn store(s: &TestServer) -> Store {
    s.models["news"].store.clone()
}

/// `username` in members, with `OLD` as password and `email`, if any.
async fn add_user(store: &Store, username: &str, email: Option<&str>) {
    let hash = passwords()
        .hash_blocking(&NewPassword::new(OLD.to_owned()).unwrap())
        .unwrap();
    let (username, email) = (username.to_owned(), email.map(str::to_owned));
    store
        .run(move |s| {
            accounts::add_user(s, &username, &GroupName::new("members"), &hash).unwrap();
            if let Some(email) = email {
                accounts::set_email(s, &username, &email).unwrap();
            }
            Ok(())
        })
        .await
        .unwrap();
}

async fn password_is(store: &Store, username: &str, password: &str) -> bool {
    let username = username.to_owned();
    let (_, hash) = store
        .run(move |s| s.password_hash(&username))
        .await
        .unwrap()
        .unwrap();
    passwords().verify_blocking(&Password::new(password.to_owned()).unwrap(), &hash)
}

async fn post(addr: SocketAddr, path: &str, content_type: &str, body: &str) -> RawResponse {
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: news.test\r\nContent-Type: {content_type}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    raw(addr, req.as_bytes()).await.expect("a response")
}

async fn post_form(addr: SocketAddr, path: &str, fields: &[(&str, &str)]) -> RawResponse {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{k}={}", v.replace(' ', "+").replace('@', "%40")))
        .collect();
    post(
        addr,
        path,
        "application/x-www-form-urlencoded",
        &body.join("&"),
    )
    .await
}

async fn post_json(addr: SocketAddr, path: &str, body: Value) -> (u16, Value) {
    let r = post(addr, path, "application/json", &body.to_string()).await;
    (
        r.status,
        serde_json::from_slice(&r.body).unwrap_or(Value::Null),
    )
}

/// The path of the reset link in a mail, checking where it points.
fn link_path(mail: &smtp::Received) -> String {
    let link = mail
        .link()
        .unwrap_or_else(|| panic!("a link in {}", mail.raw));
    let path = link
        .strip_prefix("http://news.test")
        .unwrap_or_else(|| panic!("the link is on the site's own host: {link}"));
    assert!(path.starts_with("/logon/reset/"), "{link}");
    path.to_owned()
}

async fn a_reset_mail_arrives_and_its_link_sets_a_new_password_once(database: &str) {
    let sink = SmtpSink::start();
    let s = reset_site(sink.port, database).await;
    let store = store(&s);
    add_user(&store, "ann", Some("Ann@Example.org")).await;
    // A token Ann made for a script: whoever took over her account may have
    // made it, so a new password revokes it.
    let api_token = store
        .run(|s| {
            let (ann, _) = s.password_hash("ann")?.unwrap();
            bulwark_module_auth::api_tokens::ApiTokens::create_blocking(s, ann, "script")
        })
        .await
        .unwrap()
        .1;
    let me_by_token = || {
        let token = api_token.clone();
        async move {
            common::get_with(
                s.addr,
                "news.test",
                "/api/auth/me",
                &format!("Authorization: Bearer {token}\r\n"),
            )
            .await
            .status
        }
    };
    assert_eq!(me_by_token().await, 200);

    let page = common::get(s.addr, "news.test", "/logon/reset").await;
    assert_eq!(page.status, 200);
    assert!(page.text().contains("name=\"account\""), "{}", page.text());
    // An account without an address cannot get the link, and the page says so
    // (a new site's first administrator has none).
    assert!(
        page.text()
            .contains("An account without an e-mail address cannot get the link"),
        "{}",
        page.text()
    );

    let asked = post_form(s.addr, "/logon/reset", &[("account", "ann")]).await;
    assert_eq!(asked.status, 200);
    assert!(asked.text().contains(REQUEST_ANSWER), "{}", asked.text());

    let mail = sink.wait_for(1, Duration::from_secs(20)).await.remove(0);
    assert_eq!(mail.header("To").as_deref(), Some("ann@example.org"));
    assert_eq!(
        mail.header("Subject").as_deref(),
        Some("Choose a new password for News")
    );
    assert!(mail.body().contains("Hello ann"), "{}", mail.raw);
    let path = link_path(&mail);
    let token = path.rsplit('/').next().unwrap().to_owned();
    assert_eq!(token.len(), 64, "256 bits in hex: {token}");
    let stored: Vec<String> = store
        .run(|s| {
            s.module_read(|sql| {
                Ok(sql
                    .query("SELECT token_hash FROM auth_password_reset", &[])?
                    .iter()
                    .map(|r| r.text(0))
                    .collect())
            })
        })
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_ne!(stored[0], token, "only the token's hash is kept");

    let form = common::get(s.addr, "news.test", &path).await;
    assert_eq!(form.status, 200);
    assert!(
        form.text().contains("name=\"password_again\""),
        "{}",
        form.text()
    );

    let differ = post_form(
        s.addr,
        &path,
        &[("password", NEW), ("password_again", "other")],
    )
    .await;
    assert_eq!(differ.status, 400);
    assert!(differ.text().contains("differ"), "{}", differ.text());
    let short = post_form(
        s.addr,
        &path,
        &[("password", "short"), ("password_again", "short")],
    )
    .await;
    assert_eq!(short.status, 400);
    assert!(short.text().contains("at least 8"), "{}", short.text());
    assert!(
        password_is(&store, "ann", OLD).await,
        "a refused form changes nothing"
    );

    let done = post_form(s.addr, &path, &[("password", NEW), ("password_again", NEW)]).await;
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(done.text().contains("was changed"), "{}", done.text());
    assert!(password_is(&store, "ann", NEW).await);
    assert!(!password_is(&store, "ann", OLD).await);
    assert_eq!(
        me_by_token().await,
        401,
        "the token went with the old password"
    );

    // The link works once: the page, the form and the API all say so.
    let again = common::get(s.addr, "news.test", &path).await;
    assert_eq!(again.status, 410);
    assert!(again.text().contains("used already"), "{}", again.text());
    let again = post_form(s.addr, &path, &[("password", OLD), ("password_again", OLD)]).await;
    assert_eq!(again.status, 410);
    assert!(again.text().contains("used already"), "{}", again.text());
    let (status, body) = post_json(
        s.addr,
        "/api/auth/reset/confirm",
        json!({"token": token, "password": OLD}),
    )
    .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (410, Some("used")),
        "{body}"
    );
    assert!(password_is(&store, "ann", NEW).await);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_reset_mail_arrives_and_its_link_sets_a_new_password_once() {
    a_reset_mail_arrives_and_its_link_sets_a_new_password_once("").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_reset_mail_arrives_and_its_link_sets_a_new_password_once() {
    let schema = db::pg_schema("reset");
    let database = format!(
        "[database]\nurl = \"{}\"\nschema = \"{schema}\"\n",
        db::pg_url()
    );
    a_reset_mail_arrives_and_its_link_sets_a_new_password_once(&database).await;
    db::drop_schema(&schema);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_account_gets_the_same_answer_and_no_mail() {
    let sink = SmtpSink::start();
    // Six requests from one address: more than the default allows an hour.
    let s = reset_site(sink.port, "[auth]\nreset_requests = 10\n").await;
    let store = store(&s);
    add_user(&store, "ann", Some("ann@example.org")).await;
    add_user(&store, "noaddress", None).await;

    let known = post_form(s.addr, "/logon/reset", &[("account", "ann")]).await;
    sink.wait_for(1, Duration::from_secs(20)).await;
    for account in ["nobody", "nobody@example.org", "noaddress"] {
        let unknown = post_form(s.addr, "/logon/reset", &[("account", account)]).await;
        assert_eq!(
            (unknown.status, unknown.text()),
            (known.status, known.text()),
            "{account}"
        );
    }
    let (known_status, known_json) = post_json(
        s.addr,
        "/api/auth/reset",
        json!({"email": "ann@example.org"}),
    )
    .await;
    let (unknown_status, unknown_json) = post_json(
        s.addr,
        "/api/auth/reset",
        json!({"email": "eve@example.org"}),
    )
    .await;
    assert_eq!(known_status, 202);
    assert_eq!((unknown_status, unknown_json), (known_status, known_json));

    // Only ann's two mails: the form's and the API's (by address).
    let got = sink.wait_for(2, Duration::from_secs(20)).await;
    // Not a wait for anything to happen: time for a wrong third mail to show.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(sink.messages().len(), 2);
    assert!(
        got.iter()
            .all(|m| m.header("To").as_deref() == Some("ann@example.org"))
    );
    let queued = store.run(outbox::mails).await.unwrap();
    assert_eq!(queued.len(), 2, "{queued:?}");

    // The newer link replaced the older one.
    let (first, second) = (link_path(&got[0]), link_path(&got[1]));
    let old = common::get(s.addr, "news.test", &first).await;
    assert_eq!(old.status, 410);
    assert!(old.text().contains("newer one"), "{}", old.text());
    let token = second.rsplit('/').next().unwrap();
    let (status, body) = post_json(
        s.addr,
        "/api/auth/reset/confirm",
        json!({"token": token, "password": NEW}),
    )
    .await;
    assert_eq!((status, &body["username"]), (200, &json!("ann")), "{body}");
    assert!(password_is(&store, "ann", NEW).await);

    let (status, _) = post_json(s.addr, "/api/auth/reset", json!({})).await;
    assert_eq!(status, 400);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_link_is_refused() {
    let sink = SmtpSink::start();
    let s = reset_site(sink.port, "[auth]\nreset_expiry = 1").await;
    let store = store(&s);
    add_user(&store, "ann", Some("ann@example.org")).await;
    post_form(s.addr, "/logon/reset", &[("account", "ann@example.org")]).await;
    let mail = sink.wait_for(1, Duration::from_secs(20)).await.remove(0);
    let path = link_path(&mail);
    // A timer: the link must outlive its lifetime (reset_expiry, 1 s).
    tokio::time::sleep(Duration::from_millis(1200)).await;

    let page = common::get(s.addr, "news.test", &path).await;
    assert_eq!(page.status, 410);
    assert!(page.text().contains("has expired"), "{}", page.text());
    let refused = post_form(s.addr, &path, &[("password", NEW), ("password_again", NEW)]).await;
    assert_eq!(refused.status, 410);
    assert!(refused.text().contains("has expired"), "{}", refused.text());
    assert!(password_is(&store, "ann", OLD).await);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_mail_is_written_in_the_language_it_was_asked_in() {
    let sink = SmtpSink::start();
    let s = reset_site_in(sink.port, r#"en", "nl"#, "").await;
    add_user(&store(&s), "ann", Some("ann@example.org")).await;
    let body = "account=ann";
    let asked = raw(
        s.addr,
        format!(
            "POST /logon/reset HTTP/1.1\r\nHost: news.test\r\nAccept-Language: nl\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .expect("a response");
    assert_eq!(asked.status, 200);
    let mail = sink.wait_for(1, Duration::from_secs(20)).await.remove(0);
    assert_eq!(
        mail.header("Subject").as_deref(),
        Some("Kies een nieuw wachtwoord voor News")
    );
    assert!(mail.body().contains("Hallo ann,"), "{}", mail.raw);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_mail_waits_for_an_smtp_server_that_is_down_and_then_works() {
    let port = free_port();
    let s = reset_site(port, "").await;
    let store = store(&s);
    add_user(&store, "bob", Some("bob@example.org")).await;
    let (status, _) = post_json(s.addr, "/api/auth/reset", json!({"username": "bob"})).await;
    assert_eq!(status, 202);

    bulwark_testkit::eventually("a failed attempt", Duration::from_secs(20), || async {
        let rows = store.run(outbox::mails).await.unwrap();
        rows.first()
            .is_some_and(|m| m.last_error.is_some())
            .then_some(())
    })
    .await;

    let sink = SmtpSink::start_on(port);
    let mail = sink.wait_for(1, Duration::from_secs(20)).await.remove(0);
    let path = link_path(&mail);
    let done = post_form(s.addr, &path, &[("password", NEW), ("password_again", NEW)]).await;
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(password_is(&store, "bob", NEW).await);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_finds_its_account_only_while_the_person_still_has_it() {
    let sink = SmtpSink::start();
    let s = reset_site(sink.port, "").await;
    let store = store(&s);
    add_user(&store, "ann", Some("ann@example.org")).await;
    add_user(&store, "bob", None).await;
    let found = store
        .run(|s| accounts::find_by_email(s, "ANN@example.org"))
        .await
        .unwrap();
    assert!(matches!(found, Some(UserContact { ref username, .. }) if username == "ann"));
    let taken = store
        .run(|s| Ok(accounts::set_email(s, "bob", "ann@example.org")))
        .await
        .unwrap();
    assert!(taken.is_err(), "one account per address");

    // A new address replaces the old one.
    store
        .run(|s| Ok(accounts::set_email(s, "ann", "ann@new.example")))
        .await
        .unwrap()
        .unwrap();
    let old = store
        .run(|s| accounts::find_by_email(s, "ann@example.org"))
        .await
        .unwrap();
    assert_eq!(old, None);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_too_often_is_refused_with_429_for_known_and_unknown_accounts() {
    let sink = SmtpSink::start();
    let s = reset_site(sink.port, "[auth]\nreset_requests = 2\n").await;
    let store = store(&s);
    add_user(&store, "ann", Some("ann@example.org")).await;
    for _ in 0..2 {
        assert_eq!(
            post_form(s.addr, "/logon/reset", &[("account", "ann")])
                .await
                .status,
            200
        );
    }
    // The third for ann, from anywhere: refused, and no third mail.
    let refused = post_form(s.addr, "/logon/reset", &[("account", "ann")]).await;
    assert_eq!(refused.status, 429);
    assert!(refused.header("retry-after").is_some());
    assert!(
        refused.text().contains("Too many reset requests"),
        "{}",
        refused.text()
    );
    // The address is used up too: an unknown account gets the same 429.
    let (status, body) = post_json(s.addr, "/api/auth/reset", json!({"username": "nobody"})).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["reason"], "throttled");
    sink.wait_for(2, Duration::from_secs(20)).await;
    // Not a wait for anything to happen: time for a wrong third mail to show.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sink.messages().len(), 2);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_goes_to_the_accounts_address_not_to_an_edited_email_property() {
    let sink = SmtpSink::start();
    let s = reset_site(sink.port, "[auth]\nreset_requests = 10\n").await;
    let store = store(&s);
    add_user(&store, "ann", Some("ann@example.org")).await;
    // Whoever may edit Ann's person (a manager, before the access rules say
    // otherwise) points its `email` property elsewhere.
    store
        .run(|s| {
            let (ann, _) = s.password_hash("ann")?.unwrap();
            let current = s.resource(ann)?.unwrap();
            let mut update = bulwark_store::ResourceUpdate::new(ann, current.version);
            update.props = bulwark_store::PropsChange::Merge(
                bulwark_store::Props::new().with("email", "eve@evil.example"),
            );
            s.update_resource(update).map(|_| ())
        })
        .await
        .unwrap();

    // By username, by the edited address, then by the account's own address:
    // mail is sent in order, so the second has arrived when the third has.
    post_form(s.addr, "/logon/reset", &[("account", "ann")]).await;
    let (status, _) = post_json(
        s.addr,
        "/api/auth/reset",
        json!({"email": "eve@evil.example"}),
    )
    .await;
    assert_eq!(status, 202, "the same answer as for any address");
    post_json(
        s.addr,
        "/api/auth/reset",
        json!({"email": "ann@example.org"}),
    )
    .await;
    let got = sink.wait_for(2, Duration::from_secs(20)).await;
    let to: Vec<_> = got.iter().map(|m| m.header("To")).collect();
    assert_eq!(
        to,
        [
            Some("ann@example.org".to_owned()),
            Some("ann@example.org".to_owned())
        ],
        "no reset mail to the edited property"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_gets_no_more_reset_mails_than_the_limit_however_named_and_from_wherever() {
    let sink = SmtpSink::start();
    let site = format!(
        "hostname = \"news.test\"\ndefault = true\nmodules = [\"auth\", \"mail\"]\n\
         [mail]\nsmtp = \"smtp://127.0.0.1:{}\"\nfrom = \"News <noreply@news.test>\"\n\
         [auth]\nreset_requests = 2\n",
        sink.port
    );
    let s = common::start(&[("news/site.toml", site.as_str())], |o| {
        o.trusted_proxies = bulwark_http::TrustedProxies::parse(&["127.0.0.1"]).unwrap();
    })
    .await;
    let store = store(&s);
    add_user(&store, "ann", Some("ann@example.org")).await;
    // Four requests for Ann, twice by username and twice by address, from
    // four addresses: none is refused (each address and each name is within
    // the limit), and she gets two mails, not four.
    for (i, account) in ["ann", "ann@example.org"]
        .iter()
        .cycle()
        .take(4)
        .enumerate()
    {
        let body = format!("{{\"username\": \"{account}\"}}");
        let body = if account.contains('@') {
            format!("{{\"email\": \"{account}\"}}")
        } else {
            body
        };
        let req = format!(
            "POST /api/auth/reset HTTP/1.1\r\nHost: news.test\r\nX-Forwarded-For: 203.0.113.{i}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let answer = raw(s.addr, req.as_bytes()).await.expect("a response");
        assert_eq!(answer.status, 202, "request {i}: {}", answer.text());
    }
    // Two mails, then nothing: a seventh request, for another account with
    // an address, is mailed after them, so when it has arrived so would have
    // any third mail to Ann.
    add_user(&store, "bob", Some("bob@example.org")).await;
    let (status, _) = post_json(s.addr, "/api/auth/reset", json!({"username": "bob"})).await;
    assert_eq!(status, 202);
    let got = sink.wait_for(3, Duration::from_secs(20)).await;
    let to: Vec<_> = got.iter().filter_map(|m| m.header("To")).collect();
    assert_eq!(
        to,
        ["ann@example.org", "ann@example.org", "bob@example.org"],
        "two mails for Ann"
    );
    s.shutdown().await;
}
