//! Versioned plain-SQL migrations: the store's own (`core`), applied when a
//! store opens, and those a module brings for its tables
//! ([`Store::migrate_module`]). Both go through [`apply`]: one implementation.
//!
//! Each migration runs in the transaction that records it, so a failed one
//! leaves the database as it was, and those before it stay applied. A ledger
//! table remembers what ran: `schema_migrations` for the core (it has to exist
//! before any migration does), `module_migration` (made by core migration 5)
//! for modules, keyed by module and version so two modules may both have a
//! version 1. On PostgreSQL every migration transaction first takes one
//! advisory lock per schema and then checks the ledger again: several nodes
//! may start at once, one migrates and the others find the work done.
//!
//! The core's files live in `migrations/{sqlite,postgres,common}` (`common`
//! for SQL that is the same on both backends); modules keep theirs the same
//! way.

use crate::db::{Conn, DbFailure, Dialect, params};
use crate::error::{DatabaseError, Result, StoreError};
use crate::model::Props;
use crate::names::check_name;
use crate::sanitize::sanitize_stored_props;
use crate::store::Store;

/// One step of a schema: SQL for each backend (often the same text), applied
/// once per database in `version` order. The SQL may hold several statements
/// but no `BEGIN` or `COMMIT`: the store runs it in a transaction of its own.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Positive and strictly increasing within one list.
    pub version: i64,
    /// A short name for messages and the ledger (`sessions`, `media_files`).
    pub name: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
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
    Migration {
        version: 5,
        name: "module_migration",
        sqlite: include_str!("../migrations/common/0005_module_migration.sql"),
        postgres: include_str!("../migrations/common/0005_module_migration.sql"),
    },
    // No SQL: the work is `resource::resanitize_stored`, below.
    Migration {
        version: 6,
        name: "attribute_safe_html",
        sqlite: "",
        postgres: "",
    },
    // Made the sessions table until the accounts module took it over (its
    // migration 3, which keeps the table and rows a database already has).
    Migration {
        version: 7,
        name: "sessions",
        sqlite: "",
        postgres: "",
    },
    Migration {
        version: 8,
        name: "publication_window",
        sqlite: include_str!("../migrations/common/0008_publication_window.sql"),
        postgres: include_str!("../migrations/common/0008_publication_window.sql"),
    },
    Migration {
        version: 9,
        name: "import_key",
        sqlite: include_str!("../migrations/common/0009_import_key.sql"),
        postgres: include_str!("../migrations/common/0009_import_key.sql"),
    },
    Migration {
        version: 10,
        name: "node_presence",
        sqlite: include_str!("../migrations/common/0010_node_presence.sql"),
        postgres: include_str!("../migrations/common/0010_node_presence.sql"),
    },
    Migration {
        version: 11,
        name: "translations",
        sqlite: include_str!("../migrations/sqlite/0011_translations.sql"),
        postgres: include_str!("../migrations/postgres/0011_translations.sql"),
    },
];

/// A core migration's work done in Rust, inside its transaction.
type DataMigration = fn(&mut dyn Conn) -> Result<()>;

/// Core migrations that SQL cannot express, run in the transaction of the
/// migration with the same version (after its SQL), and so recorded in the
/// same ledger: they run once per database, and a failed one is tried again
/// at the next open.
const CORE_CODE: &[(i64, DataMigration)] = &[
    // Values stored by the sanitiser before HTML was written without quotes
    // would still break out of a quoted attribute: sanitise them again.
    (6, resanitize_stored),
];

/// Where applied migrations are recorded.
#[derive(Clone, Copy)]
enum Ledger<'a> {
    Core,
    Module(&'a str),
}

impl Ledger<'_> {
    fn name(self) -> String {
        match self {
            Ledger::Core => "core".to_owned(),
            Ledger::Module(m) => m.to_owned(),
        }
    }

    fn applied(self, c: &mut dyn Conn) -> Result<Vec<i64>> {
        let rows = match self {
            Ledger::Core => c.query("SELECT version FROM schema_migrations", &[])?,
            Ledger::Module(m) => c.query(
                "SELECT version FROM module_migration WHERE module = $1",
                &params![m],
            )?,
        };
        Ok(rows.iter().map(|r| r.int(0)).collect())
    }

    fn record(self, c: &mut dyn Conn, m: &Migration) -> Result<()> {
        let now = chrono::Utc::now().timestamp_millis();
        match self {
            Ledger::Core => c.execute(
                "INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)",
                &params![m.version, m.name, now],
            )?,
            Ledger::Module(module) => c.execute(
                "INSERT INTO module_migration (module, version, name, applied) VALUES ($1, $2, $3, $4)",
                &params![module, m.version, m.name, now],
            )?,
        };
        Ok(())
    }
}

/// Serialise migrations across nodes until the transaction ends. A migration
/// may take longer than a request's statement timeout (and waiting for
/// another node's is expected): none for this transaction.
fn lock(c: &mut dyn Conn) -> Result<()> {
    if c.dialect() == Dialect::Postgres {
        c.execute("SET LOCAL statement_timeout = 0", &[])?;
        c.execute(
            "SELECT pg_advisory_xact_lock(hashtext(current_schema()))",
            &[],
        )?;
    }
    Ok(())
}

fn check_order(ledger: Ledger<'_>, migrations: &[Migration]) -> Result<()> {
    let mut previous = 0;
    for m in migrations {
        if m.version <= previous {
            return Err(StoreError::invalid(
                format!("migrations of {}", ledger.name()),
                format!(
                    "version {} ({}) follows version {previous}: versions must be positive and strictly increasing",
                    m.version, m.name
                ),
            ));
        }
        previous = m.version;
    }
    Ok(())
}

/// Apply what `ledger` does not list yet, in order, each in its own
/// transaction.
fn apply(store: &Store, ledger: Ledger<'_>, migrations: &[Migration]) -> Result<()> {
    check_order(ledger, migrations)?;
    let done = store.write(|c, _| {
        lock(c)?;
        if let Ledger::Core = ledger {
            c.execute_batch(
                "CREATE TABLE IF NOT EXISTS schema_migrations (
                    version BIGINT PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied BIGINT NOT NULL
                )",
            )?;
        }
        ledger.applied(c)
    })?;
    let mut applied_any = false;
    for m in migrations.iter().filter(|m| !done.contains(&m.version)) {
        let applied = store.write(|c, _| {
            lock(c)?;
            // Another node may have got here first.
            if ledger.applied(c)?.contains(&m.version) {
                return Ok(false);
            }
            let sql = match c.dialect() {
                Dialect::Sqlite => m.sqlite,
                Dialect::Postgres => m.postgres,
            };
            if !sql.is_empty() {
                c.execute_batch(sql).map_err(|e| match e.failure {
                    DbFailure::Unreachable => StoreError::from(e),
                    _ => StoreError::Migration {
                        module: ledger.name(),
                        version: m.version,
                        name: m.name,
                        source: DatabaseError::driver(e.source),
                    },
                })?;
            }
            if let Ledger::Core = ledger {
                for (_, code) in CORE_CODE.iter().filter(|(v, _)| *v == m.version) {
                    code(c)?;
                }
            }
            ledger.record(c, m)?;
            Ok(true)
        })?;
        if applied {
            tracing::info!(module = %ledger.name(), "applied migration {:04}_{}", m.version, m.name);
        }
        applied_any |= applied;
    }
    if applied_any {
        // A migration may have added categories (the seed does).
        store.renumber_categories()?;
    }
    Ok(())
}

pub(crate) fn migrate(store: &Store) -> Result<()> {
    apply(store, Ledger::Core, MIGRATIONS)
}

impl Store {
    /// Bring a module's tables up to date: apply those of `migrations` that
    /// this database has not seen for `module`, in version order, each in the
    /// transaction that records it. Applying the same list again does nothing;
    /// several nodes may call this at once. A list whose versions are not
    /// positive and strictly increasing is refused before anything runs; a
    /// migration that fails is [`StoreError::Migration`] and leaves nothing
    /// behind (those before it stay applied).
    ///
    /// `module` is a lowercase identifier (`auth`, `media`); versions count per
    /// module. Prefix a module's tables with its name: modules share the schema.
    pub fn migrate_module(&self, module: &str, migrations: &[Migration]) -> Result<()> {
        check_name("module", module)?;
        apply(self, Ledger::Module(module), migrations)
    }
}

/// The newest schema version this build knows.
pub fn schema_version() -> i64 {
    MIGRATIONS.last().map(|m| m.version).unwrap_or(0)
}

/// Sanitise every stored resource's properties again with today's
/// sanitiser (a core migration, once per database). A value that does not
/// change is not written; one that does keeps its version and makes no
/// revision, as a browser shows it the same. Runs in the migration's
/// transaction, at open, before the site serves: a page at a time, so memory
/// stays small however many resources there are.
pub(crate) fn resanitize_stored(c: &mut dyn Conn) -> Result<()> {
    const PAGE: i64 = 500;
    let mut after = 0;
    let mut rewritten = 0;
    loop {
        let rows = c.query(
            "SELECT id, props FROM rsc WHERE id > $1 ORDER BY id LIMIT $2",
            &params![after, PAGE],
        )?;
        for row in &rows {
            let id = row.int(0);
            let text = row.text(1);
            let stored: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                StoreError::Database(DatabaseError::new(
                    format!("stored props of resource {id} are not JSON"),
                    e,
                ))
            })?;
            let mut props = Props::try_from(stored)?;
            sanitize_stored_props(&mut props).map_err(|e| {
                StoreError::invalid(
                    format!("resource {id}"),
                    format!("cannot be sanitised again: {e}"),
                )
            })?;
            let json = serde_json::to_string(&props.0)
                .map_err(|e| StoreError::invalid("props", e.to_string()))?;
            if json != text {
                c.execute(
                    "UPDATE rsc SET props = $1 WHERE id = $2",
                    &params![json, id],
                )?;
                rewritten += 1;
            }
        }
        match rows.last() {
            Some(last) if rows.len() as i64 == PAGE => after = last.int(0),
            _ => break,
        }
    }
    if rewritten > 0 {
        tracing::info!("sanitised the properties of {rewritten} stored resources again");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(version: i64) -> Migration {
        Migration {
            version,
            name: "step",
            sqlite: "",
            postgres: "",
        }
    }

    #[test]
    fn core_migrations_are_in_order() {
        check_order(Ledger::Core, MIGRATIONS).unwrap();
    }

    #[test]
    fn versions_must_be_positive_and_strictly_increasing() {
        let m = Ledger::Module("demo");
        check_order(m, &[step(1), step(2), step(10)]).unwrap();
        check_order(m, &[]).unwrap();
        for bad in [
            vec![step(2), step(1)],
            vec![step(1), step(1)],
            vec![step(0)],
            vec![step(-3)],
        ] {
            assert!(
                matches!(check_order(m, &bad), Err(StoreError::InvalidInput { .. })),
                "{bad:?}"
            );
        }
    }
}
