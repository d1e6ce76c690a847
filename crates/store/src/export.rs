//! Reading a whole site out, a page at a time (an export: `bulwark export`),
//! and what an import needs to find again what it brought before: the key
//! each imported resource came with (table `import_key`) and the site's own
//! unique id, which makes its export's keys (`<uid>:<id>`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::batch::Batch;
use crate::db::params;
use crate::edge::edge_from_row;
use crate::error::{DatabaseError, Result, StoreError};
use crate::model::*;
use crate::resource::{RSC_COLUMNS, resource_from_row};
use crate::store::Store;

/// Where the site's unique id is kept.
const UID_SETTING: &str = "site.uid";

impl Store {
    /// Up to `limit` resources with ids above `after`, in id order; only
    /// those changed at or after `since` when it is given.
    pub fn resources_page(
        &self,
        after: ResourceId,
        limit: usize,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<Resource>> {
        let sql = format!(
            "SELECT {RSC_COLUMNS} FROM rsc r LEFT JOIN rsc c ON c.id = r.category_id \
             WHERE r.id > $1 AND r.modified >= $2 ORDER BY r.id LIMIT $3"
        );
        let since = since.map_or(i64::MIN, to_millis);
        self.read(|c| {
            c.query(&sql, &params![after.0, since, limit as i64])?
                .iter()
                .map(resource_from_row)
                .collect()
        })
    }

    /// Up to `limit` edges with ids above `after`, in id order.
    pub fn edges_page(&self, after: i64, limit: usize) -> Result<Vec<Edge>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT e.id, e.subject_id, p.name, e.object_id, e.seq, e.creator_id, e.created \
                 FROM edge e JOIN rsc p ON p.id = e.predicate_id WHERE e.id > $1 ORDER BY e.id LIMIT $2",
                &params![after, limit as i64],
            )?
            .iter()
            .map(edge_from_row)
            .collect())
        })
    }

    /// The keys imported resources came with.
    pub fn import_keys(&self) -> Result<HashMap<ResourceId, String>> {
        self.read(|c| {
            Ok(c.query("SELECT rsc_id, key FROM import_key", &params![])?
                .iter()
                .map(|r| (ResourceId(r.int(0)), r.text(1)))
                .collect())
        })
    }

    /// The site's unique id (made the first time it is asked for): what its
    /// export's keys start with.
    pub fn site_uid(&self) -> Result<String> {
        let fresh = {
            use std::hash::{BuildHasher, RandomState};
            let a = RandomState::new().hash_one(std::time::SystemTime::now());
            let b = RandomState::new().hash_one(std::process::id());
            format!("{a:016x}{b:016x}")
        };
        self.config_value_or_insert(UID_SETTING, &fresh)
    }
}

impl Batch<'_> {
    /// The resource an import made for `key` before, if any.
    pub fn keyed(&mut self, key: &str) -> Result<Option<ResourceId>> {
        Ok(self
            .conn
            .query_one(
                "SELECT rsc_id FROM import_key WHERE key = $1",
                &params![key],
            )?
            .map(|r| ResourceId(r.int(0))))
    }

    /// Remembers that resource `id` was imported under `key`.
    pub fn set_key(&mut self, key: &str, id: ResourceId) -> Result<()> {
        self.conn.execute(
            "INSERT INTO import_key (key, rsc_id) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET rsc_id = excluded.rsc_id",
            &params![key, id.0],
        )?;
        Ok(())
    }

    /// Keeps an older version of resource `id` as a revision (an import's),
    /// unless it has one of that version; `true` when it was added.
    pub fn keep_revision(
        &mut self,
        id: ResourceId,
        version: Version,
        snapshot: &serde_json::Value,
        modifier: Option<ResourceId>,
        created: DateTime<Utc>,
    ) -> Result<bool> {
        let there = self.conn.query_one(
            "SELECT 1 FROM revision WHERE rsc_id = $1 AND version = $2",
            &params![id.0, version.0],
        )?;
        if there.is_some() {
            return Ok(false);
        }
        let snapshot = serde_json::to_string(snapshot).map_err(|e| {
            StoreError::Database(DatabaseError::new("writing a revision snapshot", e))
        })?;
        self.conn.execute(
            "INSERT INTO revision (rsc_id, version, snapshot, modifier_id, created) \
             VALUES ($1, $2, $3, $4, $5)",
            &params![
                id.0,
                version.0,
                snapshot,
                modifier.map(|m| m.0),
                to_millis(created)
            ],
        )?;
        self.changes.add(crate::dependency::revisions(id));
        Ok(true)
    }
}
