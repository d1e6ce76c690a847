//! The outbox against a real SMTP server (aiosmtpd) on a real site, SQLite and
//! PostgreSQL: a queued mail arrives and is kept without its body; a server
//! that is down at first gets the mail once it is up; a mail that never gets
//! through is given up after `max_attempts`.

use crate::common;
use crate::databases as db;
use crate::smtp;

use std::time::Duration;

use bulwark_module_mail::{Mail, OutboxMail, enqueue, outbox};
use bulwark_store::Store;
use bulwark_testkit::eventually;
use smtp::{SmtpSink, free_port};

/// Site `news` with the mail module, sending to `port`, retrying quickly.
async fn mail_site(port: u16, extra: &str) -> common::TestServer {
    let site = format!(
        r#"
hostname = "news.test"
default = true
modules = ["mail"]

[mail]
smtp = "smtp://127.0.0.1:{port}"
from = "Bulwark <noreply@news.test>"
retry_delay_ms = 300
poll_interval_ms = 200
timeout_ms = 2000
{extra}
"#
    );
    common::start(&[("news/site.toml", site.as_str())], |_| {}).await
}

async fn queue(store: &Store, to: &str, subject: &str, text: &str) {
    let mail = Mail::new(to, subject, text).unwrap();
    store.run(move |s| enqueue(s, &mail)).await.unwrap();
}

async fn outbox_rows(store: &Store) -> Vec<OutboxMail> {
    store.run(outbox::mails).await.unwrap()
}

/// Waits until the outbox's rows satisfy `done`.
async fn wait_for_outbox(
    store: &Store,
    what: &str,
    done: impl Fn(&[OutboxMail]) -> bool,
) -> Vec<OutboxMail> {
    eventually(what, Duration::from_secs(20), || async {
        let rows = outbox_rows(store).await;
        done(&rows).then_some(rows)
    })
    .await
}

async fn a_queued_mail_arrives_and_is_kept_without_its_body(database: &str) {
    let sink = SmtpSink::start();
    let s = mail_site(sink.port, database).await;
    let store = s.models["news"].store.clone();
    queue(
        &store,
        "ann@example.org",
        "Hello Ann",
        "First line\nsecret-link-text\n",
    )
    .await;

    let got = sink.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(got[0].header("To").as_deref(), Some("ann@example.org"));
    assert_eq!(got[0].header("Subject").as_deref(), Some("Hello Ann"));
    assert_eq!(
        got[0].header("From").as_deref(),
        Some("Bulwark <noreply@news.test>")
    );
    assert!(got[0].body().contains("secret-link-text"), "{}", got[0].raw);

    let rows = wait_for_outbox(&store, "marked sent", |r| r[0].sent_at.is_some()).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].attempts, 1);
    assert_eq!(rows[0].next_attempt_at, None);
    let body: String = store
        .run(|s| {
            s.module_read(|sql| {
                Ok(sql
                    .query_one("SELECT body FROM mail_outbox", &[])?
                    .unwrap()
                    .text(0))
            })
        })
        .await
        .unwrap();
    assert_eq!(body, "", "a sent mail's text (a reset link) is not kept");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_queued_mail_arrives_and_is_kept_without_its_body() {
    a_queued_mail_arrives_and_is_kept_without_its_body("").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_queued_mail_arrives_and_is_kept_without_its_body() {
    let schema = db::pg_schema("mail");
    let database = format!(
        "[database]\nurl = \"{}\"\nschema = \"{schema}\"\n",
        db::pg_url()
    );
    a_queued_mail_arrives_and_is_kept_without_its_body(&database).await;
    db::drop_schema(&schema);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mail_for_a_server_that_is_down_is_retried_and_arrives_once_it_is_up() {
    let port = free_port();
    let s = mail_site(port, "").await;
    let store = s.models["news"].store.clone();
    queue(&store, "bob@example.org", "Retried", "Still here\n").await;

    let rows = wait_for_outbox(&store, "a failed attempt", |r| {
        r[0].attempts >= 1 && r[0].last_error.is_some()
    })
    .await;
    assert_eq!(rows[0].sent_at, None);
    assert!(rows[0].next_attempt_at.is_some(), "it is tried again");

    let sink = SmtpSink::start_on(port);
    let got = sink.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(got[0].header("Subject").as_deref(), Some("Retried"));
    let rows = wait_for_outbox(&store, "marked sent", |r| r[0].sent_at.is_some()).await;
    assert!(rows[0].attempts >= 2, "{rows:?}");
    assert_eq!(rows[0].last_error, None);
    // Once only, however many looks the sender took since: a mail queued
    // after it arrives in a later look, which would have sent it again.
    queue(&store, "bob@example.org", "Later", "Next\n").await;
    let got = sink.wait_for(2, Duration::from_secs(20)).await;
    let retried = got
        .iter()
        .filter(|m| m.header("Subject").as_deref() == Some("Retried"))
        .count();
    assert_eq!((got.len(), retried), (2, 1));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mail_that_never_gets_through_is_given_up_after_max_attempts() {
    let s = mail_site(free_port(), "max_attempts = 2").await;
    let store = s.models["news"].store.clone();
    queue(&store, "cy@example.org", "Lost", "Nobody listens\n").await;
    let rows = wait_for_outbox(&store, "given up", |r| r[0].given_up()).await;
    assert_eq!(rows[0].attempts, 2);
    assert!(rows[0].last_error.as_deref().is_some_and(|e| !e.is_empty()));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_without_mail_settings_starts_and_bad_settings_name_their_key() {
    let site = "hostname = \"news.test\"\ndefault = true\nmodules = [\"mail\"]\n";
    let s = common::start(&[("news/site.toml", site)], |_| {}).await;
    assert_eq!(
        common::get(s.addr, "news.test", "/nothing").await.status,
        404
    );
    s.shutdown().await;

    let dir = tempfile::tempdir().unwrap();
    common::write(
        &dir.path().join("news/site.toml"),
        &format!("{site}[mail]\nsmtp = \"smtp://127.0.0.1:25\"\n"),
    );
    let errors = common::load_sites(dir.path(), Default::default())
        .await
        .err()
        .expect("no sender address is refused");
    let text = errors[0].to_string();
    assert!(text.contains("mail.from"), "{text}");
}
