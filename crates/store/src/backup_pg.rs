//! A PostgreSQL site's data as one consistent snapshot, and put back in place.
//!
//! The snapshot is every table of the site's schema in `COPY` text form,
//! read in one `REPEATABLE READ` transaction (one snapshot, while the site
//! goes on writing), tables in an order their foreign keys allow. The file
//! starts with a JSON line naming the migrations the data was made under;
//! then, per table, a JSON line (`{"table": .., "columns": [..]}`) and its
//! rows, ended by `\.` (a line no row can be: backslashes in data are
//! doubled). Table names are unqualified, so a snapshot goes into any
//! schema. `pg_dump` is not used: its output names the schema, and a restore
//! in place needs the rows alone.
//!
//! A restore in place replaces every table's rows in one transaction: readers
//! see the old data until it commits, then the new. Migration ledgers and the
//! nodes' own bookkeeping (`cluster_outbox`: other nodes remember how far
//! they read it; `node_presence`) are neither copied nor replaced.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use futures_util::TryStreamExt;
use serde::{Deserialize, Serialize};
use sqlx::{AssertSqlSafe, Row};

use crate::db::block_on;
use crate::error::{Result, StoreError};
use crate::store::{PgBackend, Store};

/// What the snapshot's first line says.
#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    migrations: Vec<String>,
}

const FORMAT: &str = "bulwark-pg-copy-1";

#[derive(Serialize, Deserialize)]
struct TableHeader {
    table: String,
    columns: Vec<String>,
}

/// Not the site's data: kept as each database has them.
const KEPT: [&str; 4] = [
    "schema_migrations",
    "module_migration",
    "cluster_outbox",
    "node_presence",
];

impl TableHeader {
    /// The `COPY` statement of this table's columns, `TO STDOUT` or `FROM
    /// STDIN`.
    fn copy(&self, direction: &str) -> String {
        let columns: Vec<String> = self.columns.iter().map(|c| quote(c)).collect();
        format!(
            "COPY {} ({}) {direction}",
            quote(&self.table),
            columns.join(", ")
        )
    }
}

/// A connection of the pool inside a transaction begun with `begin`.
async fn begun(
    pg: &PgBackend,
    begin: &'static str,
) -> Result<sqlx::pool::PoolConnection<sqlx::Postgres>> {
    let mut c = pg
        .pool
        .acquire()
        .await
        .map_err(failed("connecting to the database"))?;
    sqlx::raw_sql(begin)
        .execute(&mut *c)
        .await
        .map_err(failed("starting the transaction"))?;
    Ok(c)
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn failed(what: &str) -> impl FnOnce(sqlx::Error) -> StoreError + '_ {
    move |e| StoreError::backup(what.to_owned(), e)
}

/// The migrations applied, as `store N` and `<module> N`, sorted.
async fn migrations(c: &mut sqlx::PgConnection) -> Result<Vec<String>> {
    let rows = sqlx::query(
        "SELECT 'store ' || version FROM schema_migrations \
         UNION ALL SELECT module || ' ' || version FROM module_migration",
    )
    .fetch_all(&mut *c)
    .await
    .map_err(failed("reading the migrations"))?;
    let mut names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    names.sort();
    Ok(names)
}

/// The schema's tables with their columns (generated ones left out), parents
/// before the tables whose foreign keys point at them (where they do not go
/// round).
async fn tables(c: &mut sqlx::PgConnection) -> Result<Vec<TableHeader>> {
    let rows = sqlx::query(
        "SELECT c.relname::text, a.attname::text FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         JOIN pg_attribute a ON a.attrelid = c.oid \
         WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') \
           AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' \
         ORDER BY c.relname, a.attnum",
    )
    .fetch_all(&mut *c)
    .await
    .map_err(failed("listing the tables"))?;
    let mut found: Vec<TableHeader> = Vec::new();
    for row in rows {
        let (table, column): (String, String) = (row.get(0), row.get(1));
        if KEPT.contains(&table.as_str()) {
            continue;
        }
        match found.last_mut() {
            Some(last) if last.table == table => last.columns.push(column),
            _ => found.push(TableHeader {
                table,
                columns: vec![column],
            }),
        }
    }
    let keys = sqlx::query(
        "SELECT child.relname::text, parent.relname::text FROM pg_constraint k \
         JOIN pg_class child ON child.oid = k.conrelid \
         JOIN pg_class parent ON parent.oid = k.confrelid \
         JOIN pg_namespace n ON n.oid = child.relnamespace \
         WHERE k.contype = 'f' AND n.nspname = current_schema()",
    )
    .fetch_all(&mut *c)
    .await
    .map_err(failed("reading the foreign keys"))?;
    let parents: Vec<(String, String)> = keys.iter().map(|r| (r.get(0), r.get(1))).collect();
    // Parents first: repeatedly take the tables whose parents are all taken.
    let mut ordered: Vec<TableHeader> = Vec::with_capacity(found.len());
    while !found.is_empty() {
        let ready = found.iter().position(|t| {
            parents.iter().all(|(child, parent)| {
                child != &t.table
                    || parent == &t.table
                    || !found.iter().any(|other| &other.table == parent)
            })
        });
        // A cycle of foreign keys: what is left goes as it is.
        let at = ready.unwrap_or(0);
        ordered.push(found.remove(at));
    }
    Ok(ordered)
}

impl Store {
    /// Writes the schema's data to `dest` in one snapshot (see the module
    /// documentation).
    pub(crate) fn pg_snapshot(&self, pg: &PgBackend, dest: &Path) -> Result<()> {
        let file = std::fs::File::create_new(dest)
            .map_err(|e| StoreError::backup(format!("creating {}", dest.display()), e))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        block_on(&pg.handle, async {
            let mut c = begun(pg, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await?;
            let written = write_snapshot(&mut c, &mut out).await;
            let _ = sqlx::raw_sql("ROLLBACK").execute(&mut *c).await;
            written
        })?;
        out.flush()
            .and_then(|()| out.get_ref().sync_all())
            .map_err(|e| StoreError::backup(format!("writing {}", dest.display()), e))
    }

    /// Replaces the schema's data with a snapshot's, in one transaction.
    pub(crate) fn pg_restore_in_place(&self, pg: &PgBackend, backup: &Path) -> Result<()> {
        let file = std::fs::File::open(backup)
            .map_err(|e| StoreError::backup(format!("opening {}", backup.display()), e))?;
        let mut input = BufReader::with_capacity(1 << 16, file);
        let mut line = String::new();
        input
            .read_line(&mut line)
            .map_err(|e| StoreError::backup(format!("reading {}", backup.display()), e))?;
        let header: Header = serde_json::from_str(&line)
            .ok()
            .filter(|h: &Header| h.format == FORMAT)
            .ok_or_else(|| {
                StoreError::backup_refused(format!(
                    "{} is not a PostgreSQL snapshot of a site",
                    backup.display()
                ))
            })?;
        block_on(&pg.handle, async {
            let mut c = begun(pg, "BEGIN").await?;
            let restored = replace_data(&mut c, &header, &mut input).await;
            let end = if restored.is_ok() {
                "COMMIT"
            } else {
                "ROLLBACK"
            };
            let ended = sqlx::raw_sql(end).execute(&mut *c).await;
            restored?;
            ended.map_err(failed("committing the restore"))?;
            Ok(())
        })
    }
}

async fn write_snapshot(c: &mut sqlx::PgConnection, out: &mut impl Write) -> Result<()> {
    let io = |e: std::io::Error| StoreError::backup("writing the snapshot", e);
    let header = Header {
        format: FORMAT.to_owned(),
        migrations: migrations(c).await?,
    };
    writeln!(out, "{}", serde_json::to_string(&header).expect("a header")).map_err(io)?;
    for table in tables(c).await? {
        writeln!(out, "{}", serde_json::to_string(&table).expect("a header")).map_err(io)?;
        let copy = table.copy("TO STDOUT");
        let mut rows = c
            .copy_out_raw(&copy)
            .await
            .map_err(failed("copying a table out"))?;
        while let Some(chunk) = rows
            .try_next()
            .await
            .map_err(failed("copying a table out"))?
        {
            out.write_all(&chunk).map_err(io)?;
        }
        out.write_all(b"\\.\n").map_err(io)?;
    }
    Ok(())
}

async fn replace_data(
    c: &mut sqlx::PgConnection,
    header: &Header,
    input: &mut impl BufRead,
) -> Result<()> {
    let ours = migrations(c).await?;
    if ours != header.migrations {
        return Err(StoreError::backup_refused(format!(
            "the backup was made with other migrations than this site has (it has {} of them, \
             the site {}): restore it with the Bulwark version that made it",
            header.migrations.len(),
            ours.len()
        )));
    }
    let tables = tables(c).await?;
    // Foreign keys go round (a category is a resource of a category): each is
    // checked at the end of the load instead of at each row, then made as it
    // was again, all inside the transaction.
    let immediate = sqlx::query(
        "SELECT child.relname::text, k.conname::text FROM pg_constraint k \
         JOIN pg_class child ON child.oid = k.conrelid \
         JOIN pg_namespace n ON n.oid = child.relnamespace \
         WHERE k.contype = 'f' AND n.nspname = current_schema() AND NOT k.condeferrable",
    )
    .fetch_all(&mut *c)
    .await
    .map_err(failed("reading the foreign keys"))?;
    let immediate: Vec<(String, String)> = immediate.iter().map(|r| (r.get(0), r.get(1))).collect();
    let alter = |deferrable: &str| {
        immediate
            .iter()
            .map(|(table, key)| {
                format!(
                    "ALTER TABLE {} ALTER CONSTRAINT {} {deferrable};",
                    quote(table),
                    quote(key)
                )
            })
            .collect::<String>()
    };
    sqlx::raw_sql(AssertSqlSafe(format!(
        "{} SET CONSTRAINTS ALL DEFERRED;",
        alter("DEFERRABLE INITIALLY IMMEDIATE")
    )))
    .execute(&mut *c)
    .await
    .map_err(failed("deferring the foreign keys"))?;
    let all: Vec<String> = tables.iter().map(|t| quote(&t.table)).collect();
    if !all.is_empty() {
        sqlx::raw_sql(AssertSqlSafe(format!(
            "TRUNCATE {} CASCADE",
            all.join(", ")
        )))
        .execute(&mut *c)
        .await
        .map_err(failed("emptying the tables"))?;
    }
    let io = |e: std::io::Error| StoreError::backup("reading the backup", e);
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        let table: TableHeader = serde_json::from_slice(&line)
            .map_err(|e| StoreError::backup("a table's header in the backup", e))?;
        if !tables.iter().any(|t| t.table == table.table) {
            return Err(StoreError::backup_refused(format!(
                "the backup has a table {:?} this site does not",
                table.table
            )));
        }
        let copy = table.copy("FROM STDIN");
        let mut sink = c
            .copy_in_raw(&copy)
            .await
            .map_err(failed("copying a table in"))?;
        let mut batch: Vec<u8> = Vec::with_capacity(1 << 16);
        let mut ended = false;
        loop {
            line.clear();
            if input.read_until(b'\n', &mut line).map_err(io)? == 0 {
                break;
            }
            if line == b"\\.\n" {
                ended = true;
                break;
            }
            batch.extend_from_slice(&line);
            if batch.len() >= 1 << 16 {
                sink.send(std::mem::take(&mut batch))
                    .await
                    .map_err(failed("copying a table in"))?;
            }
        }
        if !ended {
            let _ = sink.abort("the backup ends inside a table").await;
            return Err(StoreError::backup_refused(format!(
                "the backup ends inside table {:?}: it is cut short",
                table.table
            )));
        }
        if !batch.is_empty() {
            sink.send(batch)
                .await
                .map_err(failed("copying a table in"))?;
        }
        sink.finish().await.map_err(failed("copying a table in"))?;
    }
    sqlx::raw_sql(AssertSqlSafe(format!(
        "SET CONSTRAINTS ALL IMMEDIATE; {}",
        alter("NOT DEFERRABLE")
    )))
    .execute(&mut *c)
    .await
    .map_err(failed("checking the foreign keys"))?;
    // Sequences go on from the restored ids.
    let serials = sqlx::query(
        "SELECT c.relname::text, a.attname::text, pg_get_serial_sequence(quote_ident(c.relname), a.attname) \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         JOIN pg_attribute a ON a.attrelid = c.oid \
         WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 \
           AND NOT a.attisdropped \
           AND pg_get_serial_sequence(quote_ident(c.relname), a.attname) IS NOT NULL",
    )
    .fetch_all(&mut *c)
    .await
    .map_err(failed("finding the sequences"))?;
    for row in serials {
        let (table, column, sequence): (String, String, String) =
            (row.get(0), row.get(1), row.get(2));
        if KEPT.contains(&table.as_str()) {
            continue;
        }
        sqlx::query(AssertSqlSafe(format!(
            "SELECT setval($1::regclass, COALESCE((SELECT max({}) FROM {}), 0) + 1, false)",
            quote(&column),
            quote(&table)
        )))
        .bind(sequence)
        .execute(&mut *c)
        .await
        .map_err(failed("setting a sequence"))?;
    }
    Ok(())
}
