//! The store's commit hook (the same mechanism the cluster module keeps its
//! outbox with): inside the transaction of every change, the messages the
//! endpoints asked for are written to `webhook_delivery`. They commit with
//! the change or not at all: a change is never told without having happened,
//! nor lost because the server stopped right after it.
//!
//! What a change is told as:
//! - a resource inserted: `resource.created` (and `resource.published` when
//!   it is published);
//! - updated: `resource.changed`, and `resource.published` or
//!   `resource.unpublished` when its published flag moved (the flag each
//!   resource had is kept in `webhook_published`);
//! - deleted: `resource.deleted`;
//! - what a module announced in the write (`comment.posted`,
//!   `form.submitted`, `user.created`; [`ModuleSql::announce`]).
//!
//! A write nobody asked about costs a read of the in-memory endpoints; with
//! no endpoint at all, nothing.

use std::sync::Arc;

use chrono::Utc;
use serde_json::{Value, json};

use bulwark_store::{
    ChangeEvent, ChangeKind, ChangeNote, CommitHook, ModuleSql, ResourceFacts, ResourceId,
    StoreError,
};

use crate::endpoints::Endpoints;

pub(crate) struct QueueMessages {
    /// The site's, while it enables the module (a reload that leaves the
    /// module out drops them, and the hook queues nothing more).
    pub endpoints: std::sync::Weak<Endpoints>,
    /// Woken once something was queued (the worker also looks now and then,
    /// for what was queued by a write that had not committed yet).
    pub queued: Arc<tokio::sync::Notify>,
}

/// A message before it is queued for each endpoint that wants it.
struct Message {
    event: &'static str,
    data: Value,
    categories: Vec<String>,
}

fn resource_data(facts: &ResourceFacts) -> Value {
    json!({
        "id": facts.id.0,
        "name": facts.name,
        "category": facts.categories.first(),
        "title": facts.title,
        "published": facts.published,
        "version": facts.version,
    })
}

impl CommitHook for QueueMessages {
    fn before_commit(
        &self,
        tx: &mut ModuleSql<'_>,
        change: &ChangeEvent,
        notes: &[ChangeNote],
    ) -> Result<(), StoreError> {
        let Some(endpoints) = self.endpoints.upgrade().map(|e| e.current()) else {
            return Ok(());
        };
        if !endpoints.iter().any(|e| e.active) {
            return Ok(());
        }
        let mut messages = Vec::new();
        for changed in &change.resources {
            let Some(facts) = tx.resource_facts(changed.id)? else {
                continue;
            };
            let data = resource_data(&facts);
            let mut events = Vec::new();
            match changed.kind {
                ChangeKind::Inserted => {
                    events.push("resource.created");
                    if facts.published {
                        events.push("resource.published");
                    }
                }
                ChangeKind::Updated => {
                    events.push("resource.changed");
                    match was_published(tx, changed.id)? {
                        Some(false) if facts.published => events.push("resource.published"),
                        Some(true) if !facts.published => events.push("resource.unpublished"),
                        _ => {}
                    }
                }
                ChangeKind::Deleted => events.push("resource.deleted"),
            }
            remember_published(tx, &facts)?;
            for event in events {
                messages.push(Message {
                    event,
                    data: data.clone(),
                    categories: facts.categories.clone(),
                });
            }
        }
        for note in notes {
            // A note about a resource (a comment's page, a form) is filtered
            // by that resource's categories.
            let about = note.payload.get("rsc").and_then(Value::as_i64);
            let categories = match about {
                Some(id) => tx
                    .resource_facts(ResourceId(id))?
                    .map(|f| f.categories)
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            messages.push(Message {
                event: note.kind,
                data: note.payload.clone(),
                categories,
            });
        }
        let now = Utc::now();
        let mut queued = false;
        for message in messages {
            let wanted: Vec<_> = endpoints
                .iter()
                .filter(|e| e.wants(message.event, &message.categories))
                .collect();
            if wanted.is_empty() {
                continue;
            }
            let id = format!("msg_{}", hex::encode(rand::random::<[u8; 12]>()));
            let body = json!({
                "type": message.event,
                "timestamp": now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                "data": message.data,
            })
            .to_string();
            for endpoint in wanted {
                tx.execute(
                    "INSERT INTO webhook_delivery (endpoint_id, message_id, event, payload, state, \
                     attempts, next_attempt, created) VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5)",
                    &[
                        endpoint.id.into(),
                        id.as_str().into(),
                        message.event.into(),
                        body.as_str().into(),
                        now.timestamp_millis().into(),
                    ],
                )?;
                queued = true;
            }
        }
        if queued {
            self.queued.notify_one();
        }
        Ok(())
    }
}

/// Whether resource `id` was published when last seen (`None`: never seen).
fn was_published(tx: &mut ModuleSql<'_>, id: ResourceId) -> Result<Option<bool>, StoreError> {
    Ok(tx
        .query_one(
            "SELECT published FROM webhook_published WHERE rsc_id = $1",
            &[id.0.into()],
        )?
        .map(|r| r.int(0) != 0))
}

fn remember_published(tx: &mut ModuleSql<'_>, facts: &ResourceFacts) -> Result<(), StoreError> {
    if facts.deleted {
        tx.execute(
            "DELETE FROM webhook_published WHERE rsc_id = $1",
            &[facts.id.0.into()],
        )?;
        return Ok(());
    }
    tx.execute(
        "INSERT INTO webhook_published (rsc_id, published) VALUES ($1, $2) \
         ON CONFLICT (rsc_id) DO UPDATE SET published = excluded.published",
        &[facts.id.0.into(), i64::from(facts.published).into()],
    )?;
    Ok(())
}
