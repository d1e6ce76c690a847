//! Versioned plain-SQL migrations, applied in order when a store opens. Each
//! runs in the transaction that records it, so a failed migration leaves the
//! database as it was. Files live in `migrations/{sqlite,postgres,common}`.

use crate::db::{Dialect, params};
use crate::error::{Result, StoreError};
use crate::store::Store;

struct Migration {
    version: i64,
    name: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "schema",
        sqlite: include_str!("../migrations/sqlite/0001_schema.sql"),
        postgres: include_str!("../migrations/postgres/0001_schema.sql"),
    },
    Migration {
        version: 2,
        name: "seed",
        sqlite: include_str!("../migrations/common/0002_seed.sql"),
        postgres: include_str!("../migrations/common/0002_seed.sql"),
    },
    Migration {
        version: 3,
        name: "ids",
        sqlite: include_str!("../migrations/sqlite/0003_ids.sql"),
        postgres: include_str!("../migrations/postgres/0003_ids.sql"),
    },
    Migration {
        version: 4,
        name: "deleted",
        sqlite: include_str!("../migrations/common/0004_deleted.sql"),
        postgres: include_str!("../migrations/common/0004_deleted.sql"),
    },
];

pub(crate) fn migrate(store: &Store) -> Result<()> {
    let applied_any = store.write(|c, _| {
        if c.dialect() == Dialect::Postgres {
            // Several nodes may start at once: one migrates, the others wait.
            c.execute(
                "SELECT pg_advisory_xact_lock(hashtext(current_schema()))",
                &[],
            )?;
        }
        c.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT PRIMARY KEY,
                name TEXT NOT NULL,
                applied BIGINT NOT NULL
            )",
        )?;
        let done: Vec<i64> = c
            .query("SELECT version FROM schema_migrations", &[])?
            .iter()
            .map(|r| r.int(0))
            .collect();
        let mut applied = false;
        for m in MIGRATIONS.iter().filter(|m| !done.contains(&m.version)) {
            let sql = match c.dialect() {
                Dialect::Sqlite => m.sqlite,
                Dialect::Postgres => m.postgres,
            };
            c.execute_batch(sql).map_err(|e| {
                StoreError::Migration(format!("{:04}_{}: {}", m.version, m.name, e.message))
            })?;
            c.execute(
                "INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)",
                &params![m.version, m.name, chrono::Utc::now().timestamp_millis()],
            )?;
            applied = true;
        }
        Ok(applied)
    })?;
    if applied_any {
        store.renumber_categories()?;
    }
    Ok(())
}

/// The newest schema version this build knows.
pub fn schema_version() -> i64 {
    MIGRATIONS.last().map(|m| m.version).unwrap_or(0)
}
