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
