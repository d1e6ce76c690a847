//! Comments on the starter site over real HTTP, on SQLite and PostgreSQL,
//! with a real SMTP server (aiosmtpd) for the mails: a first-time writer's
//! comment waits, is approved through the API and shows; an article page
//! stays in the page cache through comments on other articles and through
//! comments that wait, and is rendered once again when one of its own is
//! approved; bots (the hidden field, a post sooner than a person types, 20
//! posts a minute) are answered like people and nothing of theirs is stored;
//! a wrong field is named; pages that take no comments refuse them.

use crate::common;
use crate::databases as db;
use crate::smtp;
use crate::starter_api;
use crate::tickets;

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use common::*;
use smtp::SmtpSink;
use tickets::{aged_ticket, fresh_ticket};

const TOKEN: &str = "comments-test-token";

/// The starter site with the API token, mail to `smtp`, and `comments`
/// (the `[comments]` table's keys) and `database` (a `[database]` table) in
/// place of the starter's.
async fn site(smtp: &SmtpSink, comments: &str, database: &str) -> TestServer {
    let mail = format!(
        "[mail]\nsmtp = \"{}\"\nfrom = \"Site <noreply@localhost>\"\n\
         retry_delay_ms = 300\npoll_interval_ms = 200\ntimeout_ms = 2000\n",
        smtp.url()
    );
    let comments = comments.to_owned();
    starter_api::start_starter(TOKEN, database, &mail, move |text| {
        let edited = text.replacen(
            "[comments]\nmoderation = \"first_time\"\ncategories = [\"article\"]\n",
            &format!("[comments]\n{comments}\n"),
            1,
        );
        assert!(edited.contains(&comments));
        edited
    })
    .await
}

const SQLITE: &str = starter_api::SQLITE;

/// Calls the API; with the site's token when `token`.
async fn api(
    s: &TestServer,
    method: &str,
    path: &str,
    body: Option<Value>,
    token: bool,
) -> (u16, Value, Option<String>) {
    starter_api::call_with_retry(s, token.then_some(TOKEN), method, path, body).await
}

/// The ids of the starter's articles, from its list.
async fn articles(s: &TestServer) -> Vec<i64> {
    let page = get(s.addr, "localhost", "/articles").await.text();
    let mut ids: Vec<i64> = page
        .split("href=\"/en/page/")
        .skip(1)
        .filter_map(|rest| rest.split('/').next()?.parse().ok())
        .collect();
    ids.dedup();
    assert!(ids.len() >= 2, "the starter has articles: {page}");
    ids
}

fn comment(rsc: i64, name: &str, body: &str, ticket: &str) -> Value {
    json!({"rsc": rsc, "name": name, "email": format!("{}@example.org", name.to_lowercase()),
           "body": body, "_ticket": ticket})
}

async fn pending(s: &TestServer) -> Vec<Value> {
    let (status, answer, _) = api(s, "GET", "/api/comments?status=pending", None, true).await;
    assert_eq!(status, 200, "{answer}");
    answer["comments"].as_array().unwrap().clone()
}

fn renders(s: &TestServer) -> u64 {
    s.models["default"].renders.load(Ordering::Relaxed)
}

async fn page(s: &TestServer, id: i64) -> String {
    let resp = get(s.addr, "localhost", &format!("/page/{id}")).await;
    assert_eq!(resp.status, 200);
    resp.text()
}

async fn a_comment_waits_then_shows_and_only_its_own_page_is_rendered_again(database: &str) {
    let sink = SmtpSink::start();
    let s = site(
        &sink,
        "moderation = \"first_time\"\ncategories = [\"article\"]\nmin_fill_seconds = 1\nnotify = [\"moderator@example.org\"]",
        database,
    )
    .await;
    let ids = articles(&s).await;
    let (a, b) = (ids[0], ids[1]);
    let ticket = aged_ticket(&s, &format!("comments:{b}"), Duration::from_secs(5)).await;

    // Both pages cached for anonymous visitors.
    page(&s, a).await;
    page(&s, b).await;
    changes_applied(&s.models["default"]).await;
    let before = renders(&s);
    assert!(page(&s, a).await.contains("No comments yet."));
    assert_eq!(renders(&s), before, "page A comes from the page cache");

    // A first-time writer on B waits; nothing is rendered again.
    let (status, answer, _) = api(
        &s,
        "POST",
        "/api/comments",
        Some(comment(b, "Eve", "First on B", &ticket)),
        false,
    )
    .await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (202, Some("pending")),
        "{answer}"
    );
    changes_applied(&s.models["default"]).await;
    let before = renders(&s);
    page(&s, a).await;
    assert!(
        !page(&s, b).await.contains("First on B"),
        "a waiting comment is not shown"
    );
    assert_eq!(renders(&s), before, "a waiting comment flushes no page");

    // The moderator is told, with the way to the queue.
    let mails = sink.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(
        mails[0].header("To").as_deref(),
        Some("moderator@example.org")
    );
    assert!(
        mails[0].body().contains("First on B"),
        "{}",
        mails[0].body()
    );
    assert!(mails[0].body().contains("/admin/comments?status=pending"));

    // Approved: B is rendered once again and shows it; A stays cached.
    let waiting = pending(&s).await;
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["email"], "eve@example.org");
    let (status, answer, _) = api(
        &s,
        "PATCH",
        "/api/comments",
        Some(json!({"ids": [waiting[0]["id"]], "status": "approved"})),
        true,
    )
    .await;
    assert_eq!(
        (status, answer["changed"].as_i64()),
        (200, Some(1)),
        "{answer}"
    );
    changes_applied(&s.models["default"]).await;
    let before = renders(&s);
    page(&s, a).await;
    assert_eq!(
        renders(&s),
        before,
        "a comment on B leaves A in the page cache"
    );
    let shown = page(&s, b).await;
    assert!(
        shown.contains("First on B") && shown.contains("1 comment"),
        "{shown}"
    );
    assert!(
        !shown.contains("eve@example.org"),
        "an address is never shown"
    );
    assert_eq!(renders(&s), before + 1, "B is rendered once again");
    page(&s, b).await;
    assert_eq!(renders(&s), before + 1, "and then comes from the cache");

    // Eve was approved once: her next comment, a reply, shows at once.
    let mut reply = comment(
        b,
        "Eve",
        "Replying <to> myself",
        &aged_ticket(&s, &format!("comments:{b}"), Duration::from_secs(5)).await,
    );
    reply["parent"] = waiting[0]["id"].clone();
    let (status, answer, _) = api(&s, "POST", "/api/comments", Some(reply), false).await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (201, Some("approved")),
        "{answer}"
    );
    let reply_id = answer["comment"]["id"].as_i64().unwrap();
    changes_applied(&s.models["default"]).await;
    let shown = page(&s, b).await;
    assert!(
        shown.contains(&format!(
            "class=\"comment depth-1\" id=\"comment-{reply_id}\""
        )),
        "{shown}"
    );
    assert!(
        shown.contains("Replying &lt;to&gt; myself"),
        "typed text is escaped"
    );

    // The public list of B: approved ones, no addresses.
    let (status, answer, _) = api(&s, "GET", &format!("/api/comments?rsc={b}"), None, false).await;
    assert_eq!(status, 200);
    assert_eq!(answer["comments"].as_array().unwrap().len(), 2);
    assert!(answer["comments"][0].get("email").is_none(), "{answer}");

    // Deleted: gone from B.
    let (status, _, _) = api(
        &s,
        "PATCH",
        "/api/comments",
        Some(json!({"ids": [reply_id], "status": "deleted"})),
        true,
    )
    .await;
    assert_eq!(status, 200);
    changes_applied(&s.models["default"]).await;
    assert!(
        !page(&s, b).await.contains("Replying &lt;to&gt; myself"),
        "a deleted comment is not shown"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_comment_waits_then_shows_and_only_its_own_page_is_rendered_again() {
    a_comment_waits_then_shows_and_only_its_own_page_is_rendered_again(SQLITE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_comment_waits_then_shows_and_only_its_own_page_is_rendered_again() {
    let schema = db::pg_schema("comments");
    let database = format!(
        "[database]\nurl = \"{}\"\nschema = \"{schema}\"\ndemo_content = true\n",
        db::pg_url()
    );
    a_comment_waits_then_shows_and_only_its_own_page_is_rendered_again(&database).await;
    db::drop_schema(&schema);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_are_answered_like_people_and_nothing_of_theirs_is_stored() {
    let sink = SmtpSink::start();
    let s = site(
        &sink,
        "moderation = \"all\"\nmin_fill_seconds = 2\nper_minute = 5",
        SQLITE,
    )
    .await;
    let article = articles(&s).await[0];

    // The hidden field filled: answered as waiting, not stored.
    let mut filled = comment(
        article,
        "Bot",
        "Buy now",
        &aged_ticket(&s, &format!("comments:{article}"), Duration::from_secs(5)).await,
    );
    filled["extra_info"] = json!("http://spam.example");
    let (status, answer, _) = api(&s, "POST", "/api/comments", Some(filled), false).await;
    assert_eq!((status, answer["status"].as_str()), (202, Some("pending")));

    // Posted within a second of its ticket: the same.
    let fast = comment(
        article,
        "Bot",
        "Quick",
        &fresh_ticket(&s, &format!("comments:{article}")).await,
    );
    let (status, answer, _) = api(&s, "POST", "/api/comments", Some(fast), false).await;
    assert_eq!((status, answer["status"].as_str()), (202, Some("pending")));

    // A forged ticket: the same.
    let forged = comment(article, "Bot", "Forged", "1000.00ff");
    let (status, _, _) = api(&s, "POST", "/api/comments", Some(forged), false).await;
    assert_eq!(status, 202);
    assert!(
        pending(&s).await.is_empty(),
        "nothing of the bots' is stored"
    );

    // A person (a ticket as old as the typing took) is stored...
    let person = aged_ticket(&s, &format!("comments:{article}"), Duration::from_secs(30)).await;
    let (status, _, _) = api(
        &s,
        "POST",
        "/api/comments",
        Some(comment(article, "Ann", "A real thought", &person)),
        false,
    )
    .await;
    assert_eq!(status, 202);
    let waiting = pending(&s).await;
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["body"], "A real thought");

    // ...and one address posting 20 times a minute is stopped at the limit.
    let mut answers = Vec::new();
    for n in 0..20 {
        let (status, _, retry) = api(
            &s,
            "POST",
            "/api/comments",
            Some(comment(
                article,
                "Flood",
                &format!("again {n}"),
                &aged_ticket(&s, &format!("comments:{article}"), Duration::from_secs(30)).await,
            )),
            false,
        )
        .await;
        answers.push((status, retry));
    }
    let accepted = answers.iter().filter(|(status, _)| *status == 202).count();
    assert_eq!(
        accepted, 4,
        "five a minute, Ann's first among them: {answers:?}"
    );
    assert!(
        answers[4..]
            .iter()
            .all(|(status, retry)| *status == 429 && retry.is_some()),
        "{answers:?}"
    );
    assert_eq!(pending(&s).await.len(), 5);

    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_without_script_confirms_and_wrong_fields_are_named() {
    let sink = SmtpSink::start();
    let s = site(&sink, "moderation = \"none\"\nmin_fill_seconds = 1", SQLITE).await;
    let article = articles(&s).await[0];
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let form = |fields: &[(&str, &str)]| {
        let mut pairs: Vec<(String, String)> = vec![
            ("rsc".into(), article.to_string()),
            ("name".into(), "Nils".into()),
            ("email".into(), "nils@example.org".into()),
            ("body".into(), "Typed without script".into()),
        ];
        for (k, v) in fields {
            pairs.retain(|(name, _)| name != k);
            pairs.push(((*k).into(), (*v).into()));
        }
        client
            .post(format!("http://{}/comments/post", s.addr))
            .header("Host", "localhost")
            .form(&pairs)
            .send()
    };

    // No ticket: the comment comes back, filled in, with a ticket to post.
    let resp = form(&[]).await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let page_text = resp.text().await.unwrap();
    assert!(
        page_text.contains("Post your comment")
            && page_text.contains(">Typed without script</textarea>"),
        "{page_text}"
    );
    let ticket = page_text
        .split("name=\"_ticket\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    assert!(!ticket.is_empty());

    // Posted with it (a person reads it over first): 303 to its place.
    let person = aged_ticket(&s, &format!("comments:{article}"), Duration::from_secs(5)).await;
    let resp = form(&[("_ticket", &person)]).await.unwrap();
    assert_eq!(resp.status().as_u16(), 303);
    let location = resp.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        location.starts_with(&format!("/page/{article}/")) && location.contains("#comment-"),
        "{location}"
    );

    // Each wrong field is named, and what was typed comes back.
    for (field, value, words) in [
        ("body", "   ", "write a comment first"),
        ("email", "nils", "e-mail address"),
        ("url", "javascript:alert(1)", "a web address starts with"),
        ("name", "", "say who you are"),
    ] {
        let resp = form(&[
            (field, value),
            (
                "_ticket",
                &aged_ticket(&s, &format!("comments:{article}"), Duration::from_secs(5)).await,
            ),
        ])
        .await
        .unwrap();
        assert_eq!(resp.status().as_u16(), 400, "{field}");
        let text = resp.text().await.unwrap();
        assert!(text.contains(words), "{field}: {text}");
        assert!(text.contains("aria-invalid=\"true\""), "{field}");
    }
    let (status, problem, _) = api(
        &s,
        "POST",
        "/api/comments",
        Some(json!({"rsc": article, "name": "N", "email": "bad", "body": "x",
            "_ticket": aged_ticket(&s, &format!("comments:{article}"), Duration::from_secs(5)).await})),
        false,
    )
    .await;
    assert_eq!(
        (status, problem["field"].as_str()),
        (400, Some("email")),
        "{problem}"
    );

    // A resource that is not an article (the first the store made) and one
    // that does not exist take no comments.
    let (status, _, _) = api(
        &s,
        "POST",
        "/api/comments",
        Some(comment(1, "N", "x", &person)),
        false,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _, _) = api(
        &s,
        "POST",
        "/api/comments",
        Some(comment(99_999_999, "N", "x", &person)),
        false,
    )
    .await;
    assert_eq!(status, 404);

    // Only editors moderate or list everything.
    let (status, _, _) = api(
        &s,
        "PATCH",
        "/api/comments",
        Some(json!({"ids": [1], "status": "approved"})),
        false,
    )
    .await;
    assert!(matches!(status, 401 | 403), "{status}");
    let (status, _, _) = api(&s, "GET", "/api/comments?status=pending", None, false).await;
    assert!(matches!(status, 401 | 403), "{status}");
    s.shutdown().await;
}
