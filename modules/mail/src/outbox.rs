//! The outbox: mail waiting to be sent, in the site's database (table
//! `mail_outbox`, made by this module's migration).
//!
//! A row is written when a mail is queued ([`enqueue`]) and is due at once.
//! Sending first **claims** the row: one statement raises its `attempts` and
//! moves `next_attempt_at` to when the next try would be due, on the
//! condition that nobody else claimed it since it was read. So several
//! senders (two nodes on one PostgreSQL database, or the old and new sender of
//! a site that reloaded) never send a mail twice at once, and a sender that
//! dies in the middle of a send leaves the mail to be tried again at that
//! time: delivery is at least once. A sent mail keeps its row with `sent_at`
//! and an empty body (a reset link is a secret); a mail given up on keeps
//! `next_attempt_at` empty. Both are purged after [`KEEP_FINISHED`].
//!
//! The functions here call the store and must run where blocking is allowed
//! (`Store::run`).

use std::time::Duration;

use chrono::{DateTime, Utc};

use bulwark_store::{Migration, SqlRow, Store, StoreError};

use crate::Mail;
use crate::settings::RetryPolicy;

pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "outbox",
        sqlite: include_str!("../migrations/sqlite/0001_outbox.sql"),
        postgres: include_str!("../migrations/postgres/0001_outbox.sql"),
    },
    Migration {
        version: 2,
        name: "reply_to",
        sqlite: include_str!("../migrations/common/0002_reply_to.sql"),
        postgres: include_str!("../migrations/common/0002_reply_to.sql"),
    },
];

/// Sent mail and mail given up on are deleted this long after.
pub const KEEP_FINISHED: Duration = Duration::from_secs(30 * 24 * 3600);

/// A queued mail's row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MailId(pub i64);

impl std::fmt::Display for MailId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A row of the outbox as it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxMail {
    pub id: MailId,
    pub recipient: String,
    pub subject: String,
    pub attempts: u32,
    /// When the next send is due; `None` once sent or given up.
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub sent_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl OutboxMail {
    /// Neither sent nor going to be tried again.
    pub fn given_up(&self) -> bool {
        self.sent_at.is_none() && self.next_attempt_at.is_none()
    }
}

/// A mail this sender claimed and now sends.
#[derive(Debug)]
pub(crate) struct Claimed {
    pub id: MailId,
    pub mail: Mail,
    /// Including this one.
    pub attempts: u32,
}

fn millis(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn after(at: DateTime<Utc>, wait: Duration) -> DateTime<Utc> {
    at + chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::MAX)
}

/// Writes `mail` to the outbox, due now. The site's sender sends it when woken
/// (the `SendMail` observer wakes it) or at its next look.
pub fn enqueue(store: &Store, mail: &Mail) -> Result<MailId, StoreError> {
    let now = millis(Utc::now());
    store.module_write(|sql| {
        let row = sql.query_one(
            "INSERT INTO mail_outbox (recipient, subject, body, attempts, next_attempt_at, created_at, reply_to) \
             VALUES ($1, $2, $3, 0, $4, $4, $5) RETURNING id",
            &[
                mail.to().into(),
                mail.subject().into(),
                mail.text().into(),
                now.into(),
                mail.reply_to().map(str::to_owned).into(),
            ],
        )?;
        Ok(MailId(row.map_or(0, |r| r.int(0))))
    })
}

/// Every mail in the outbox, oldest first.
pub fn mails(store: &Store) -> Result<Vec<OutboxMail>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query(
                "SELECT id, recipient, subject, attempts, next_attempt_at, last_error, sent_at, created_at \
                 FROM mail_outbox ORDER BY id",
                &[],
            )?
            .iter()
            .map(outbox_mail)
            .collect())
    })
}

fn outbox_mail(r: &SqlRow) -> OutboxMail {
    OutboxMail {
        id: MailId(r.int(0)),
        recipient: r.text(1),
        subject: r.text(2),
        attempts: u32::try_from(r.int(3)).unwrap_or(u32::MAX),
        next_attempt_at: r.opt_time(4),
        last_error: r.opt_text(5),
        sent_at: r.opt_time(6),
        created_at: r.time(7),
    }
}

/// Claims up to `limit` mails that are due at `now` (see the module comment).
pub(crate) fn claim_due(
    store: &Store,
    now: DateTime<Utc>,
    limit: usize,
    retry: &RetryPolicy,
) -> Result<Vec<Claimed>, StoreError> {
    store.module_write(|sql| {
        let due = sql.query(
            "SELECT id, recipient, subject, body, attempts, reply_to FROM mail_outbox \
             WHERE sent_at IS NULL AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1 \
             ORDER BY next_attempt_at, id LIMIT $2",
            &[
                millis(now).into(),
                i64::try_from(limit).unwrap_or(i64::MAX).into(),
            ],
        )?;
        let mut claimed = Vec::new();
        for r in due {
            let (id, seen) = (r.int(0), r.int(4));
            let attempts = u32::try_from(seen + 1).unwrap_or(u32::MAX);
            // Past the retry limit, the mail is given up on where it stands
            // (a sender stopped in the middle of its last try).
            if attempts > retry.max_attempts {
                sql.execute(
                    "UPDATE mail_outbox SET next_attempt_at = NULL WHERE id = $1 AND attempts = $2",
                    &[id.into(), seen.into()],
                )?;
                continue;
            }
            let next = after(now, retry.delay_after(attempts));
            let changed = sql.execute(
                "UPDATE mail_outbox SET attempts = $3, next_attempt_at = $4 \
                 WHERE id = $1 AND attempts = $2 AND sent_at IS NULL",
                &[
                    id.into(),
                    seen.into(),
                    (seen + 1).into(),
                    millis(next).into(),
                ],
            )?;
            if changed == 1 {
                claimed.push(Claimed {
                    id: MailId(id),
                    mail: Mail::stored(r.text(1), r.text(2), r.text(3), r.opt_text(5)),
                    attempts,
                });
            }
        }
        Ok(claimed)
    })
}

/// The mail went out: it is kept without its body.
pub(crate) fn record_sent(store: &Store, id: MailId, at: DateTime<Utc>) -> Result<(), StoreError> {
    store.module_write(|sql| {
        sql.execute(
            "UPDATE mail_outbox SET sent_at = $2, body = '', next_attempt_at = NULL, last_error = NULL \
             WHERE id = $1",
            &[id.0.into(), millis(at).into()],
        )?;
        Ok(())
    })
}

/// The send failed with `error`; with `give_up`, the mail is not tried again
/// (otherwise it stays due when its claim said).
pub(crate) fn record_failure(
    store: &Store,
    id: MailId,
    error: &str,
    give_up: bool,
) -> Result<(), StoreError> {
    store.module_write(|sql| {
        let sql_text = if give_up {
            "UPDATE mail_outbox SET last_error = $2, next_attempt_at = NULL WHERE id = $1"
        } else {
            "UPDATE mail_outbox SET last_error = $2 WHERE id = $1"
        };
        sql.execute(sql_text, &[id.0.into(), error.into()])?;
        Ok(())
    })
}

/// When the earliest mail still to send is due, if any.
pub(crate) fn next_due(store: &Store) -> Result<Option<DateTime<Utc>>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query_one(
                "SELECT MIN(next_attempt_at) FROM mail_outbox \
                 WHERE sent_at IS NULL AND next_attempt_at IS NOT NULL",
                &[],
            )?
            .and_then(|r| r.opt_time(0)))
    })
}

/// Deletes sent mail and mail given up on that are older than [`KEEP_FINISHED`].
pub(crate) fn purge_finished(store: &Store, now: DateTime<Utc>) -> Result<u64, StoreError> {
    let before = millis(now) - i64::try_from(KEEP_FINISHED.as_millis()).unwrap_or(i64::MAX);
    store.module_write(|sql| {
        sql.execute(
            "DELETE FROM mail_outbox WHERE \
             (sent_at IS NOT NULL AND sent_at < $1) \
             OR (sent_at IS NULL AND next_attempt_at IS NULL AND created_at < $1)",
            &[before.into()],
        )
    })
}

/// The outbox as a person on call reads it, for `/metrics`: mail by state
/// (`queued`: not tried yet; `retrying`: tried, waiting for another try;
/// `failed`: given up on; `sent`: kept [`KEEP_FINISHED`]) and how long the
/// oldest mail not sent yet has waited (0 with none).
pub(crate) fn metrics(
    store: &Store,
    now: DateTime<Utc>,
) -> Result<Vec<bulwark_web::Metric>, StoreError> {
    use bulwark_web::Metric;
    let row = store.module_read(|sql| {
        sql.query_one(
            "SELECT \
               COALESCE(SUM(CASE WHEN sent_at IS NULL AND next_attempt_at IS NOT NULL \
                 AND attempts = 0 THEN 1 ELSE 0 END), 0), \
               COALESCE(SUM(CASE WHEN sent_at IS NULL AND next_attempt_at IS NOT NULL \
                 AND attempts > 0 THEN 1 ELSE 0 END), 0), \
               COALESCE(SUM(CASE WHEN sent_at IS NULL AND next_attempt_at IS NULL \
                 THEN 1 ELSE 0 END), 0), \
               COALESCE(SUM(CASE WHEN sent_at IS NOT NULL THEN 1 ELSE 0 END), 0), \
               MIN(CASE WHEN sent_at IS NULL AND next_attempt_at IS NOT NULL \
                 THEN created_at END) \
             FROM mail_outbox",
            &[],
        )
    })?;
    let Some(row) = row else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (i, state) in ["queued", "retrying", "failed", "sent"].iter().enumerate() {
        out.push(
            Metric::gauge(
                "bulwark_mail_outbox",
                "Mail in the site's outbox, by state: queued (not tried yet), retrying \
                 (a send failed; another try is due), failed (given up on), sent (kept \
                 30 days).",
                row.int(i) as f64,
            )
            .with("state", *state),
        );
    }
    let oldest = row.opt_int(4).map_or(0.0, |created| {
        (millis(now) - created).max(0) as f64 / 1000.0
    });
    out.push(Metric::gauge(
        "bulwark_mail_outbox_oldest_seconds",
        "How long the oldest mail not sent yet (queued or retrying) has waited; 0 with none.",
        oldest,
    ));
    Ok(out)
}
