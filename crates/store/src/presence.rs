//! Which servers use this database: each writes its row every few seconds.
//! Several servers on one PostgreSQL schema must all run the `cluster`
//! module, or each keeps serving pages the others' writes made stale; the
//! server refuses to start in that case (`web`'s store opening asks here).

use crate::db::params;
use crate::error::Result;
use crate::store::Store;

/// A server as it says itself: who (stable across its restarts: the machine
/// and the site's folder), what a person reads, and whether it runs the
/// cluster module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePresence {
    pub node: String,
    pub description: String,
    pub clustered: bool,
}

impl Store {
    /// Records that `me` is here now; returns the other servers seen in the
    /// last `window_ms`.
    pub fn present(&self, me: &NodePresence, window_ms: i64) -> Result<Vec<NodePresence>> {
        let now = chrono::Utc::now().timestamp_millis();
        self.write(|c, _| {
            c.execute(
                "INSERT INTO node_presence (node, description, clustered, seen) \
                 VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (node) DO UPDATE SET description = excluded.description, \
                 clustered = excluded.clustered, seen = excluded.seen",
                &params![me.node.as_str(), me.description.as_str(), me.clustered, now],
            )?;
            let rows = c.query(
                "SELECT node, description, clustered FROM node_presence \
                 WHERE node <> $1 AND seen > $2 ORDER BY node",
                &params![me.node.as_str(), now - window_ms],
            )?;
            Ok(rows
                .iter()
                .map(|r| NodePresence {
                    node: r.text(0),
                    description: r.text(1),
                    clustered: r.bool(2),
                })
                .collect())
        })
    }

    /// This server leaves (it stops).
    pub fn absent(&self, node: &str) -> Result<()> {
        self.write(|c, _| {
            c.execute("DELETE FROM node_presence WHERE node = $1", &params![node])?;
            Ok(())
        })
    }
}

/// Held while a server opens a site (its modules' tables and first content):
/// two servers starting at once on one PostgreSQL schema take turns, so the
/// second finds what the first made instead of making it again. A session
/// lock on a connection of its own, released when dropped (the connection
/// closes). Nothing on SQLite, whose writer is one already.
pub struct OpeningLock(#[allow(dead_code)] Option<sqlx::PgConnection>);

impl Store {
    /// Waits for and takes the [`OpeningLock`] of this store's schema.
    pub async fn opening_lock(&self) -> Result<OpeningLock> {
        use sqlx::Connection;
        let Some(pg) = self.pg_backend() else {
            return Ok(OpeningLock(None));
        };
        let options = pg.pool.connect_options();
        let failed = |e| crate::error::StoreError::from(crate::db::pg_error(e));
        let mut c = sqlx::PgConnection::connect_with(&options)
            .await
            .map_err(failed)?;
        sqlx::raw_sql("SELECT pg_advisory_lock(hashtext('bulwark opening ' || current_schema()))")
            .execute(&mut c)
            .await
            .map_err(failed)?;
        Ok(OpeningLock(Some(c)))
    }
}
