//! Backups: a consistent snapshot taken while the site keeps writing.
//!
//! SQLite: `VACUUM INTO` on a read connection copies one read transaction's
//! view (WAL keeps it stable while the writer goes on) into a new, compact
//! file. PostgreSQL: every table's rows in one `REPEATABLE READ` transaction
//! (`backup_pg.rs`). A restore either goes into an empty database, or
//! replaces everything in a live one at once, never merging into its data.

use std::path::Path;

use crate::db::params;
use crate::error::{DatabaseError, Result, StoreError};
use crate::store::{Database, Store, StoreConfig};

impl Store {
    /// Write a snapshot of the whole database to `dest` (which must not exist):
    /// a SQLite file, or a plain SQL dump of the store's schema.
    pub fn backup(&self, dest: &Path) -> Result<()> {
        if dest.exists() {
            return Err(StoreError::backup_refused(format!(
                "{} already exists",
                dest.display()
            )));
        }
        let dest_str = dest
            .to_str()
            .ok_or_else(|| StoreError::backup_refused("the destination path is not UTF-8"))?
            .to_owned();
        if self.sqlite_backend().is_some() {
            return self.with_sqlite_reader(|c| {
                // VACUUM INTO may not run on a query_only connection.
                c.execute_batch("PRAGMA query_only = OFF")
                    .map_err(|e| StoreError::backup("preparing the reader", e))?;
                let r = c.execute("VACUUM INTO ?1", [&dest_str]);
                let _ = c.execute_batch("PRAGMA query_only = ON");
                r.map(|_| ())
                    .map_err(|e| StoreError::backup(format!("writing {dest_str}"), e))
            });
        }
        let pg = self
            .pg_backend()
            .ok_or_else(|| StoreError::backup_refused("unknown backend"))?;
        self.pg_snapshot(pg, dest)
    }

    /// Restore a backup made by [`Store::backup`] into the empty database that
    /// `config` names, then open it. A non-empty target is refused.
    pub async fn restore(backup: &Path, config: StoreConfig) -> Result<Store> {
        if !backup.exists() {
            return Err(StoreError::backup_refused(format!(
                "{} does not exist",
                backup.display()
            )));
        }
        match &config.database {
            Database::Sqlite { path } => {
                if path.exists() && std::fs::metadata(path).map(|m| m.len() > 0).unwrap_or(true) {
                    return Err(StoreError::backup_refused(format!(
                        "{} is not empty",
                        path.display()
                    )));
                }
                std::fs::copy(backup, path)
                    .map_err(|e| StoreError::backup("copying the backup", e))?;
            }
            Database::Postgres { url, schema } => {
                let schema = schema.clone().unwrap_or_else(|| "public".to_owned());
                // Refuse to restore over data: the schema must have no tables.
                let probe = Store::pg_table_count(url, &schema).await?;
                if probe > 0 {
                    return Err(StoreError::backup_refused(format!(
                        "schema {schema:?} is not empty"
                    )));
                }
                let store = Store::open(config).await?;
                let restoring = store.clone();
                let path = backup.to_path_buf();
                tokio::task::spawn_blocking(move || restoring.restore_in_place(&path))
                    .await
                    .map_err(StoreError::task_failed)??;
                return Ok(store);
            }
        }
        Store::open(config).await
    }

    /// Put a backup made by [`Store::backup`] back into this live store,
    /// replacing everything in it at once: readers see the old data or the
    /// new, never a mix (SQLite's online backup API on the writer connection;
    /// on PostgreSQL one transaction that empties and fills every table). The
    /// backup must come from the same schema (the same migrations of the store
    /// and of every module), so nothing is half-migrated. Then every cache of
    /// the site is told that anything may have changed, on every node (a
    /// change event with [`ChangeEvent::everything`](crate::ChangeEvent),
    /// which commit hooks pass on).
    pub fn restore_in_place(&self, backup: &Path) -> Result<()> {
        if let Some(pg) = self.pg_backend() {
            self.pg_restore_in_place(pg, backup)?;
            return self.changed_everything();
        }
        self.sqlite_restore_in_place(backup)?;
        self.changed_everything()
    }

    /// Tells every cache of the site, here and on the other nodes, that
    /// anything may have changed.
    pub fn changed_everything(&self) -> Result<()> {
        self.write(|_, changes| {
            changes.everything = true;
            Ok(())
        })
    }

    fn sqlite_restore_in_place(&self, backup: &Path) -> Result<()> {
        let source = rusqlite::Connection::open_with_flags(
            backup,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::backup(format!("opening {}", backup.display()), e))?;
        let applied = |c: &rusqlite::Connection| -> rusqlite::Result<Vec<String>> {
            let mut names = Vec::new();
            for sql in [
                "SELECT 'store ' || version FROM schema_migrations ORDER BY version",
                "SELECT module || ' ' || version FROM module_migration ORDER BY module, version",
            ] {
                let mut stmt = c.prepare(sql)?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                for row in rows {
                    names.push(row?);
                }
            }
            Ok(names)
        };
        let theirs = applied(&source).map_err(|e| {
            StoreError::backup(format!("{} is not a backup of a site", backup.display()), e)
        })?;
        self.with_sqlite_writer(|writer| {
            let ours =
                applied(writer).map_err(|e| StoreError::backup("reading the migrations", e))?;
            if theirs != ours {
                return Err(StoreError::backup_refused(format!(
                    "{} was made with other migrations than this site has (it has {} of them, \
                     the site {}): restore it with the Bulwark version that made it",
                    backup.display(),
                    theirs.len(),
                    ours.len()
                )));
            }
            // One step copies every page inside one write transaction of the
            // writer: readers (WAL) keep the old snapshot until it commits.
            rusqlite::backup::Backup::new(&source, writer)
                .and_then(|b| b.run_to_completion(i32::MAX, std::time::Duration::ZERO, None))
                .map_err(|e| StoreError::backup(format!("restoring {}", backup.display()), e))
        })
    }

    async fn pg_table_count(url: &str, schema: &str) -> Result<i64> {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(url)
            .await
            .map_err(|e| StoreError::backup("connecting to the target database", e))?;
        let row: (i64,) = sqlx::query_as(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
        )
        .bind(schema)
        .fetch_one(&mut c)
        .await
        .map_err(|e| StoreError::backup(format!("looking for tables in schema {schema:?}"), e))?;
        let _ = c.close().await;
        Ok(row.0)
    }

    /// Refresh the query planner's statistics: after an import, so searches
    /// get good plans at once instead of after the next automatic analyse.
    pub fn analyze(&self) -> Result<()> {
        self.write(|c, _| {
            c.execute_batch("ANALYZE")?;
            Ok(())
        })
    }

    /// Check the database's internal consistency: SQLite's integrity and
    /// foreign-key checks, and on both backends that every resource's category
    /// exists. Returns the problems found (empty when all is well).
    pub fn check_consistency(&self) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        if let Some(b) = self.sqlite_backend() {
            // A fresh connection: FTS5's integrity check on a long-lived
            // reader can compare against stale cached state and report a
            // checksum mismatch that is not there.
            let fresh = rusqlite::Connection::open_with_flags(
                &b.path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .map_err(|e| {
                StoreError::Database(DatabaseError::new(
                    format!("opening {} to check it", b.path.display()),
                    e,
                ))
            })?;
            {
                let c = &mut crate::db::SqliteConn(&fresh);
                let c: &mut dyn crate::db::Conn = c;
                for r in c.query("PRAGMA integrity_check", &[])? {
                    let t = r.text(0);
                    if t != "ok" {
                        problems.push(t);
                    }
                }
                for r in c.query("PRAGMA foreign_key_check", &[])? {
                    problems.push(format!("foreign key: {:?}", r.opt_text(0)));
                }
            }
        }
        self.read(|c| {
            let orphans = c
                .query_one(
                    "SELECT count(*) FROM rsc r LEFT JOIN category k ON k.id = r.category_id WHERE k.id IS NULL",
                    &params![],
                )?
                .map(|r| r.int(0))
                .unwrap_or(0);
            if orphans > 0 {
                problems.push(format!("{orphans} resources without a category"));
            }
            Ok(())
        })?;
        Ok(problems)
    }
}
