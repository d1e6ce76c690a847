//! Backups: a consistent snapshot taken while the site keeps writing.
//!
//! SQLite: `VACUUM INTO` on a read connection copies one read transaction's
//! view (WAL keeps it stable while the writer goes on) into a new, compact
//! file. PostgreSQL: `pg_dump`, which reads one snapshot too. Restore goes
//! into an empty database only: it never merges into live data.

use std::path::Path;
use std::process::Command;

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
        let out = Command::new("pg_dump")
            .arg("--no-owner")
            .arg("--no-privileges")
            .arg("--schema")
            .arg(&pg.schema)
            .arg("--file")
            .arg(&dest_str)
            .arg("--dbname")
            .arg(&pg.url)
            .output()
            .map_err(|e| StoreError::backup("cannot run pg_dump", e))?;
        if !out.status.success() {
            return Err(StoreError::backup_refused(format!(
                "pg_dump failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(())
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
                let out = Command::new("psql")
                    .arg("--quiet")
                    .arg("--no-psqlrc")
                    .arg("--set")
                    .arg("ON_ERROR_STOP=1")
                    .arg("--file")
                    .arg(backup)
                    .arg("--dbname")
                    .arg(url)
                    .output()
                    .map_err(|e| StoreError::backup("cannot run psql", e))?;
                if !out.status.success() {
                    return Err(StoreError::backup_refused(format!(
                        "restore failed: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    )));
                }
            }
        }
        Store::open(config).await
    }

    /// Put a backup made by [`Store::backup`] back into this live SQLite
    /// store, replacing everything in it at once (SQLite's online backup API
    /// on the writer connection: readers see the old data or the new, never a
    /// mix). The backup must come from the same schema (the same migrations of
    /// the store and of every module), so nothing is half-migrated. Whoever
    /// calls this flushes what caches hold; the change event here only flushes
    /// what depends on the search index and the category tree.
    ///
    /// PostgreSQL is refused: a dump is restored into an empty schema
    /// ([`Store::restore`]), with the nodes stopped.
    pub fn restore_in_place(&self, backup: &Path) -> Result<()> {
        self.sqlite_backend().ok_or_else(|| {
            StoreError::backup_refused(
                "a PostgreSQL site is restored into an empty schema with the nodes stopped, \
                 not while it serves",
            )
        })?;
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
