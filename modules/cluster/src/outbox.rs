//! The outbox: every committed change, written in the change's own transaction
//! and announced there with `pg_notify`, which PostgreSQL delivers only when
//! that transaction commits. A write that rolls back leaves no row and sends
//! nothing; one that commits cannot commit without its notification.

use bulwark_store::{ChangeEvent, ChangeNote, CommitHook, Migration, ModuleSql, StoreError};

use crate::wire::{Body, Envelope, INLINE_LIMIT, WireChange};

pub(crate) const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "outbox",
    sqlite: include_str!("../migrations/sqlite/0001_outbox.sql"),
    postgres: include_str!("../migrations/postgres/0001_outbox.sql"),
}];

/// How long outbox rows are kept: a node that reads a stored envelope does so
/// within milliseconds of the notification; one that comes back later flushes
/// everything anyway.
pub(crate) const KEEP_MILLIS: i64 = 10 * 60 * 1000;

/// The store's commit hook for one node.
pub(crate) struct Outbox {
    pub origin: String,
    pub channel: String,
}

impl CommitHook for Outbox {
    fn before_commit(
        &self,
        tx: &mut ModuleSql<'_>,
        change: &ChangeEvent,
        _notes: &[ChangeNote],
    ) -> Result<(), StoreError> {
        // A write that only announced something changed nothing to tell.
        if !tx.is_postgres() || change.is_nothing() {
            return Ok(());
        }
        let body = Envelope {
            origin: self.origin.clone(),
            body: Body::Change(WireChange::from_event(change)),
        }
        .to_json();
        let row = tx
            .query_one(
                "INSERT INTO cluster_outbox (origin, body, created) VALUES ($1, $2, $3) RETURNING id",
                &[
                    self.origin.as_str().into(),
                    body.as_str().into(),
                    now_millis().into(),
                ],
            )?
            .expect("INSERT .. RETURNING gives a row");
        let note = if body.len() <= INLINE_LIMIT {
            body
        } else {
            Envelope {
                origin: self.origin.clone(),
                body: Body::Stored(row.int(0)),
            }
            .to_json()
        };
        tx.execute(
            "SELECT pg_notify($1, $2)",
            &[self.channel.as_str().into(), note.into()],
        )?;
        Ok(())
    }
}

pub(crate) fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
