//! The `webhook_endpoint` table: the URLs told of what happens, with their
//! secrets and what they asked for; and the copy every node keeps in memory
//! for the commit hook, which must decide without a query whether a change
//! concerns anybody.
//!
//! The functions here call the store and must run where blocking is allowed
//! (`Store::run`).

use std::sync::Arc;

use base64::Engine;
use chrono::{DateTime, TimeZone, Utc};
use serde::Serialize;

use bulwark_store::{DependencyKey, SqlRow, Store, StoreError};

/// Every event a webhook can be told of.
pub const EVENTS: &[&str] = &[
    "resource.created",
    "resource.changed",
    "resource.published",
    "resource.unpublished",
    "resource.deleted",
    "comment.posted",
    "form.submitted",
    "user.created",
];

/// The key a change of the endpoints flushes: every node reads them again.
pub fn endpoints_key() -> DependencyKey {
    DependencyKey::new("webhooks")
}

/// An endpoint as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Endpoint {
    pub id: i64,
    pub url: String,
    /// `whsec_` and the base64 of the signing key.
    #[serde(skip)]
    pub secret: String,
    /// Empty: every event.
    pub events: Vec<String>,
    /// Empty: every category.
    pub categories: Vec<String>,
    pub description: String,
    pub active: bool,
    pub created: DateTime<Utc>,
}

impl Endpoint {
    /// Whether it wants `event` about something in `categories` (a resource's
    /// own and those above; empty when the event is about no resource).
    pub fn wants(&self, event: &str, categories: &[String]) -> bool {
        self.active
            && (self.events.is_empty() || self.events.iter().any(|e| e == event))
            && (self.categories.is_empty()
                || categories.is_empty()
                || self.categories.iter().any(|c| categories.contains(c)))
    }

    /// The signing key, from the secret.
    pub fn key(&self) -> Vec<u8> {
        let encoded = self.secret.strip_prefix("whsec_").unwrap_or(&self.secret);
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap_or_default()
    }
}

/// What a new endpoint is made of.
#[derive(Debug, Clone)]
pub struct NewEndpoint {
    pub url: String,
    pub events: Vec<String>,
    pub categories: Vec<String>,
    pub description: String,
}

/// Why an endpoint was not made.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("{0:?} is not an http:// or https:// address")]
    Url(String),
    #[error("{0:?} is not an event: the events are {events}", events = EVENTS.join(", "))]
    Event(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl NewEndpoint {
    /// Checks what was asked for.
    pub fn check(&self) -> Result<(), EndpointError> {
        let url = self.url.trim();
        let host = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
            .unwrap_or("");
        if host.is_empty()
            || host.starts_with('/')
            || url.len() > 2000
            || url.contains(char::is_whitespace)
        {
            return Err(EndpointError::Url(self.url.clone()));
        }
        if let Some(unknown) = self.events.iter().find(|e| !EVENTS.contains(&e.as_str())) {
            return Err(EndpointError::Event(unknown.clone()));
        }
        Ok(())
    }
}

const COLUMNS: &str = "id, url, secret, events, categories, description, active, created";

fn from_row(row: &SqlRow) -> Endpoint {
    Endpoint {
        id: row.int(0),
        url: row.text(1),
        secret: row.text(2),
        events: serde_json::from_str(&row.text(3)).unwrap_or_default(),
        categories: serde_json::from_str(&row.text(4)).unwrap_or_default(),
        description: row.text(5),
        active: row.int(6) != 0,
        created: Utc
            .timestamp_millis_opt(row.int(7))
            .single()
            .unwrap_or_default(),
    }
}

/// A new secret: `whsec_` and 32 random bytes in base64, as the Standard
/// Webhooks libraries expect.
pub fn new_secret() -> String {
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(rand::random::<[u8; 32]>())
    )
}

/// Every endpoint, oldest first.
pub fn load(store: &Store) -> Result<Vec<Endpoint>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query(
                &format!("SELECT {COLUMNS} FROM webhook_endpoint ORDER BY id"),
                &[],
            )?
            .iter()
            .map(from_row)
            .collect())
    })
}

/// Makes an endpoint (with a new secret); gives it back, secret included.
pub fn add(store: &Store, new: &NewEndpoint) -> Result<Endpoint, EndpointError> {
    new.check()?;
    let events = serde_json::to_string(&new.events).unwrap_or_else(|_| "[]".into());
    let categories = serde_json::to_string(&new.categories).unwrap_or_else(|_| "[]".into());
    let made = store.module_write(|sql| {
        let row = sql
            .query_one(
                &format!(
                    "INSERT INTO webhook_endpoint (url, secret, events, categories, description, active, created) \
                     VALUES ($1, $2, $3, $4, $5, 1, $6) RETURNING {COLUMNS}"
                ),
                &[
                    new.url.trim().into(),
                    new_secret().into(),
                    events.into(),
                    categories.into(),
                    new.description.as_str().into(),
                    Utc::now().timestamp_millis().into(),
                ],
            )?
            .expect("INSERT .. RETURNING gives a row");
        sql.flush(endpoints_key());
        Ok(from_row(&row))
    })?;
    Ok(made)
}

/// Turns endpoint `id` on or off; whether there is one.
pub fn set_active(store: &Store, id: i64, active: bool) -> Result<bool, StoreError> {
    store.module_write(|sql| {
        let changed = sql.execute(
            "UPDATE webhook_endpoint SET active = $1 WHERE id = $2",
            &[i64::from(active).into(), id.into()],
        )?;
        sql.flush(endpoints_key());
        Ok(changed > 0)
    })
}

/// Removes endpoint `id` and its messages; whether there was one.
pub fn remove(store: &Store, id: i64) -> Result<bool, StoreError> {
    store.module_write(|sql| {
        sql.execute(
            "DELETE FROM webhook_delivery WHERE endpoint_id = $1",
            &[id.into()],
        )?;
        let gone = sql.execute("DELETE FROM webhook_endpoint WHERE id = $1", &[id.into()])?;
        sql.flush(endpoints_key());
        Ok(gone > 0)
    })
}

/// The endpoints as every node holds them, swapped whole when they change.
#[derive(Default)]
pub struct Endpoints(parking_lot::RwLock<Arc<Vec<Endpoint>>>);

impl Endpoints {
    pub fn current(&self) -> Arc<Vec<Endpoint>> {
        self.0.read().clone()
    }

    pub fn replace(&self, fresh: Vec<Endpoint>) {
        *self.0.write() = Arc::new(fresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(events: &[&str], categories: &[&str]) -> Endpoint {
        Endpoint {
            id: 1,
            url: "http://127.0.0.1:1/hook".into(),
            secret: new_secret(),
            events: events.iter().map(|e| e.to_string()).collect(),
            categories: categories.iter().map(|c| c.to_string()).collect(),
            description: String::new(),
            active: true,
            created: Utc::now(),
        }
    }

    #[test]
    fn an_endpoint_wants_its_events_about_its_categories_and_below() {
        let article = vec!["article".to_string(), "text".to_string()];
        let all = endpoint(&[], &[]);
        assert!(all.wants("resource.changed", &article));
        let texts = endpoint(&["resource.published"], &["text"]);
        assert!(
            texts.wants("resource.published", &article),
            "article is below text"
        );
        assert!(!texts.wants("resource.changed", &article));
        assert!(!texts.wants("resource.published", &["person".to_string()]));
        assert!(
            texts.wants("resource.published", &[]),
            "an event about no resource"
        );
        let mut off = all.clone();
        off.active = false;
        assert!(!off.wants("resource.changed", &article));
    }

    #[test]
    fn a_secret_holds_a_32_byte_key_and_new_endpoints_are_checked() {
        assert_eq!(endpoint(&[], &[]).key().len(), 32);
        let new = |url: &str, events: &[&str]| NewEndpoint {
            url: url.into(),
            events: events.iter().map(|e| e.to_string()).collect(),
            categories: Vec::new(),
            description: String::new(),
        };
        assert!(
            new("https://example.org/hook", &["comment.posted"])
                .check()
                .is_ok()
        );
        assert!(matches!(
            new("ftp://x", &[]).check(),
            Err(EndpointError::Url(_))
        ));
        assert!(matches!(
            new("https:///x", &[]).check(),
            Err(EndpointError::Url(_))
        ));
        assert!(matches!(
            new("https://x", &["nope"]).check(),
            Err(EndpointError::Event(_))
        ));
    }
}
