//! Scheduled publication: a resource whose publication window opens or closes
//! becomes visible or invisible without any write, so nothing would flush the
//! pages that show (or leave out) it, and they would stay as they were until
//! their time to live ran out.
//!
//! The publication task sleeps until the next moment a window opens or closes
//! (one index probe on each end of the window), then emits the change event an
//! update of the resources concerned would have emitted: their keys, their
//! categories' and search's. It wakes early after every change event, since a
//! write may have set a sooner moment. Every node of a cluster runs its own
//! task against the shared database, so each flushes its own caches at that
//! moment, without a message (a node whose clock is late flushes late by as much).

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::db::params;
use crate::error::Result;
use crate::model::{ChangeEvent, ChangeKind, from_millis, to_millis};
use crate::resource::{RSC_COLUMNS, resource_from_row, resource_keys};
use crate::store::{Changes, Store};

/// The longest the task sleeps without looking again (a boundary set directly
/// in the database, by another program, is found within this).
const LONGEST_SLEEP: Duration = Duration::from_secs(60);
/// After a change event woke it, the task waits this long before looking, so a
/// burst of writes costs one look, not one each.
const SETTLE: Duration = Duration::from_millis(100);
/// After a failed look, the next one comes this much later.
const RETRY: Duration = Duration::from_secs(5);

impl Store {
    /// The first moment after `after` when some resource's publication window
    /// opens or closes, if any will.
    pub fn next_publication_boundary(&self, after: DateTime<Utc>) -> Result<Option<DateTime<Utc>>> {
        self.read(|c| {
            let row = c.query_one(
                "SELECT MIN(t) FROM ( \
                   SELECT MIN(publication_start) AS t FROM rsc WHERE publication_start > $1 \
                   UNION ALL \
                   SELECT MIN(publication_end) AS t FROM rsc WHERE publication_end > $1) b",
                &params![to_millis(after)],
            )?;
            Ok(row.and_then(|r| r.opt_int(0)).map(from_millis))
        })
    }

    /// The change that publication windows opening or closing in `(from, to]`
    /// made: what an update of each of those resources would flush. `None` when
    /// no window opened or closed then.
    pub fn publication_changes(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Option<ChangeEvent>> {
        self.read(|c| {
            let sql = format!(
                "SELECT {RSC_COLUMNS} FROM rsc r LEFT JOIN rsc c ON c.id = r.category_id \
                 WHERE (r.publication_start > $1 AND r.publication_start <= $2) \
                    OR (r.publication_end > $1 AND r.publication_end <= $2)"
            );
            let rows = c.query(&sql, &params![to_millis(from), to_millis(to)])?;
            let mut changes = Changes::default();
            for row in rows {
                let resource = resource_from_row(&row)?;
                changes.resource(resource.id, ChangeKind::Updated);
                resource_keys(c, &resource, &mut changes)?;
            }
            Ok(changes.into_event())
        })
    }

    /// Starts the task that emits [`publication_changes`](Store::publication_changes)
    /// when windows open or close (see the module's documentation).
    pub fn spawn_publication_task(&self) -> tokio::task::JoinHandle<()> {
        let store = self.clone();
        self.spawn_while_open(async move {
            let mut checked = Utc::now();
            loop {
                let next = store
                    .run(move |s| s.next_publication_boundary(checked))
                    .await;
                let sleep = match next {
                    Ok(Some(at)) => (at - Utc::now())
                        .to_std()
                        .unwrap_or(Duration::ZERO)
                        .min(LONGEST_SLEEP),
                    Ok(None) => LONGEST_SLEEP,
                    Err(e) => {
                        tracing::warn!(error = %e, "looking for the next publication boundary");
                        RETRY
                    }
                };
                let woken = tokio::select! {
                    _ = tokio::time::sleep(sleep) => false,
                    _ = store.inner.publication_wakeup.notified() => true,
                };
                if woken {
                    tokio::time::sleep(SETTLE).await;
                }
                let now = Utc::now();
                match store
                    .run(move |s| s.publication_changes(checked, now))
                    .await
                {
                    Ok(changed) => {
                        checked = now;
                        if let Some(event) = changed {
                            store.announce(event);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "reading resources whose publication window moved");
                        tokio::time::sleep(RETRY).await;
                    }
                }
            }
        })
    }
}
