//! `/metrics` of the starter with every module, on SQLite and on
//! PostgreSQL: the numbers a person on call is woken for are there with the
//! values the site's tables hold (mail, redirects, webhooks, comments,
//! backups, imports, database size and disk), and the paths that found
//! nothing are counted by path.

use crate::accounts;
use crate::common;
use crate::databases as db;

use common::*;

/// The value of the sample whose text up to the value is `sample` (name and
/// labels as written), if the scrape has it.
fn value(scrape: &str, sample: &str) -> Option<f64> {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(sample)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

async fn the_metrics_name_what_the_tables_hold(database: Option<&str>) {
    let s = accounts::starter_edited(|text| {
        if let Some(schema) = database {
            *text = text.replacen(
                "[database]\n",
                &format!(
                    "[database]\nurl = \"{}\"\nschema = \"{schema}\"\n",
                    db::pg_url()
                ),
                1,
            );
        }
        // Nothing listens there: the mail waits to be retried.
        text.push_str(
            "\n[mail]\nsmtp = \"smtp://127.0.0.1:9\"\nfrom = \"site@example.org\"\n\
             retry_delay_ms = 3600000\n",
        );
    })
    .await;
    let store = s.models["default"].store.clone();
    store
        .run(|s| {
            s.module_write(|sql| {
                sql.execute(
                    "INSERT INTO redirect (from_path, to_path, status, hits, created) \
                     VALUES ('/old', '/en/', 301, 7, 0), ('/older', '/en/', 301, 0, 0)",
                    &[],
                )?;
                sql.execute(
                    "INSERT INTO webhook_endpoint (url, secret, events, categories, created) \
                     VALUES ('http://127.0.0.1:9/', 'whsec_AAAA', '[]', '[]', 0)",
                    &[],
                )?;
                sql.execute(
                    "INSERT INTO mail_outbox (recipient, subject, body, attempts, \
                     next_attempt_at, created_at) VALUES \
                     ('a@example.org', 'One', '', 0, 0, 0), \
                     ('b@example.org', 'Two', '', 3, 0, 0), \
                     ('c@example.org', 'Three', '', 8, NULL, 0)",
                    &[],
                )?;
                Ok(())
            })
        })
        .await
        .unwrap();
    for _ in 0..2 {
        assert_eq!(get(s.addr, "localhost", "/no/such/page").await.status, 404);
    }
    let scrape = get(s.addr, "localhost", "/metrics").await;
    assert_eq!(scrape.status, 200);
    let scrape = scrape.text();
    let site = "site=\"default\"";
    for (sample, expected) in [
        (format!("bulwark_redirect_rules{{{site}}}"), 2.0),
        (format!("bulwark_redirect_hits_total{{{site}}}"), 7.0),
        (
            format!("bulwark_redirect_rule_hits_total{{{site},from=\"/old\"}}"),
            7.0,
        ),
        (
            format!("bulwark_not_found_path_total{{{site},path=\"/no/such/page\"}}"),
            2.0,
        ),
        (
            format!("bulwark_webhook_messages{{{site},endpoint=\"1\",state=\"queued\"}}"),
            0.0,
        ),
        (
            format!("bulwark_webhook_messages{{{site},endpoint=\"1\",state=\"failed\"}}"),
            0.0,
        ),
        (
            format!("bulwark_comments{{{site},status=\"pending\"}}"),
            0.0,
        ),
        (
            format!("bulwark_import_jobs{{{site},state=\"running\"}}"),
            0.0,
        ),
        (
            format!("bulwark_backup_schedule_seconds{{{site}}}"),
            86400.0,
        ),
        (format!("bulwark_backups{{{site}}}"), 0.0),
        (format!("bulwark_backup_failures_total{{{site}}}"), 0.0),
    ] {
        assert_eq!(
            value(&scrape, &sample),
            Some(expected),
            "{sample} in\n{scrape}"
        );
    }
    // The outbox: the sender may have tried the first mail by now (and
    // failed: nothing listens), so it is queued or retrying.
    let outbox = |state: &str| {
        value(
            &scrape,
            &format!("bulwark_mail_outbox{{{site},state=\"{state}\"}}"),
        )
        .unwrap_or_else(|| panic!("{state} in\n{scrape}"))
    };
    assert_eq!(outbox("queued") + outbox("retrying"), 2.0);
    assert_eq!(outbox("failed"), 1.0);
    assert_eq!(outbox("sent"), 0.0);
    let oldest = value(
        &scrape,
        &format!("bulwark_mail_outbox_oldest_seconds{{{site}}}"),
    )
    .unwrap();
    assert!(oldest > 1e9, "queued at the epoch: {oldest}");
    let bytes = value(&scrape, &format!("bulwark_database_bytes{{{site}}}")).unwrap();
    assert!(bytes > 10_000.0, "{bytes}");
    let free = value(&scrape, &format!("bulwark_disk_free_bytes{{{site}}}")).unwrap();
    let size = value(&scrape, &format!("bulwark_disk_size_bytes{{{site}}}")).unwrap();
    assert!(free > 0.0 && free <= size, "{free} of {size}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_the_metrics_name_what_the_tables_hold() {
    the_metrics_name_what_the_tables_hold(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_the_metrics_name_what_the_tables_hold() {
    let schema = db::pg_schema("metrics");
    the_metrics_name_what_the_tables_hold(Some(&schema)).await;
    db::drop_schema(&schema);
}
