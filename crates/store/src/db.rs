//! The one seam between the domain logic and the two database drivers.
//!
//! Every store operation is written once, as synchronous code against [`Conn`]:
//! a connection that runs parameterised SQL and hands back rows of plain
//! [`Cell`]s. SQLite (rusqlite) is synchronous by nature; PostgreSQL (sqlx) is
//! reached with `Handle::block_on` from the calling thread, which must therefore
//! be a blocking thread (the render path runs there anyway; async callers go
//! through `Store::run`). Writing the logic once is what keeps the two backends
//! honest: the conformance suite tests one implementation with two dialects,
//! not two implementations.
//!
//! SQL is written with PostgreSQL's `$1` placeholders; for SQLite they are
//! rewritten to `?1`, which SQLite binds by number as well. Parameters are always
//! bound, never spliced into the text: data can never become SQL.

use crate::error::{BoxError, DatabaseError, Result, StoreError};
use crate::ids::ResourceId;

/// Which SQL dialect a connection speaks; the few statements that differ ask this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A bound parameter. Nulls carry their type because PostgreSQL checks it.
#[derive(Debug, Clone)]
pub enum Param {
    Int(Option<i64>),
    Text(Option<String>),
    Bool(bool),
    /// Bytes as they are (a BLOB in SQLite, a BYTEA in PostgreSQL).
    Bytes(Vec<u8>),
}

impl From<i64> for Param {
    fn from(v: i64) -> Self {
        Param::Int(Some(v))
    }
}
impl From<Option<i64>> for Param {
    fn from(v: Option<i64>) -> Self {
        Param::Int(v)
    }
}
impl From<&str> for Param {
    fn from(v: &str) -> Self {
        Param::Text(Some(v.to_owned()))
    }
}
impl From<String> for Param {
    fn from(v: String) -> Self {
        Param::Text(Some(v))
    }
}
impl From<Option<String>> for Param {
    fn from(v: Option<String>) -> Self {
        Param::Text(v)
    }
}
impl From<Option<&str>> for Param {
    fn from(v: Option<&str>) -> Self {
        Param::Text(v.map(str::to_owned))
    }
}
impl From<bool> for Param {
    fn from(v: bool) -> Self {
        Param::Bool(v)
    }
}
impl From<Vec<u8>> for Param {
    fn from(v: Vec<u8>) -> Self {
        Param::Bytes(v)
    }
}

/// `params![a, b, c]` builds a `[Param; N]`.
macro_rules! params {
    () => { [] as [$crate::db::Param; 0] };
    ($($p:expr),+ $(,)?) => { [$($crate::db::Param::from($p)),+] };
}
pub(crate) use params;

/// One value read back from the database.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Bool(bool),
    Bytes(Vec<u8>),
}

pub struct Row(pub(crate) Vec<Cell>);

impl Row {
    pub fn int(&self, i: usize) -> i64 {
        match &self.0[i] {
            Cell::Int(v) => *v,
            Cell::Bool(b) => *b as i64,
            Cell::Float(f) => *f as i64,
            other => panic!("column {i}: expected integer, got {other:?}"),
        }
    }
    pub fn opt_int(&self, i: usize) -> Option<i64> {
        match &self.0[i] {
            Cell::Null => None,
            _ => Some(self.int(i)),
        }
    }
    pub fn bool(&self, i: usize) -> bool {
        self.int(i) != 0
    }
    pub fn text(&self, i: usize) -> String {
        match &self.0[i] {
            Cell::Text(s) => s.clone(),
            Cell::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("column {i}: expected text, got {other:?}"),
        }
    }
    pub fn opt_text(&self, i: usize) -> Option<String> {
        match &self.0[i] {
            Cell::Null => None,
            _ => Some(self.text(i)),
        }
    }
    /// A moment kept as milliseconds since the Unix epoch (how every table
    /// of the store and its modules keeps times).
    pub fn time(&self, i: usize) -> chrono::DateTime<chrono::Utc> {
        crate::model::from_millis(self.int(i))
    }
    pub fn opt_time(&self, i: usize) -> Option<chrono::DateTime<chrono::Utc>> {
        self.opt_int(i).map(crate::model::from_millis)
    }
    /// A BLOB (SQLite) or BYTEA (PostgreSQL) column, taken out of the row.
    pub fn take_bytes(&mut self, i: usize) -> Vec<u8> {
        match std::mem::replace(&mut self.0[i], Cell::Null) {
            Cell::Bytes(b) => b,
            Cell::Text(s) => s.into_bytes(),
            other => panic!("column {i}: expected bytes, got {other:?}"),
        }
    }
}

/// What kind of failure a driver error was, so the domain code can turn a
/// constraint violation into an error a user can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DbFailure {
    Unique,
    ForeignKey,
    /// The server is down, refused us, or dropped the connection.
    Unreachable,
    /// Not now: a lock held elsewhere, a statement past its timeout, a
    /// serialisation failure. The same request may work in a moment.
    Busy,
    /// No space left where the database writes.
    StorageFull,
    Other,
}

/// A driver's error and what kind of failure it was.
#[derive(Debug)]
pub(crate) struct DbError {
    pub failure: DbFailure,
    pub source: BoxError,
}

impl DbError {
    /// The store's error for this failure, saying what the store was doing.
    pub fn during(self, context: impl Into<std::borrow::Cow<'static, str>>) -> StoreError {
        classify(self.failure, DatabaseError::new(context, self.source))
    }
}

impl From<DbError> for StoreError {
    fn from(e: DbError) -> Self {
        classify(e.failure, DatabaseError::driver(e.source))
    }
}

fn classify(failure: DbFailure, source: DatabaseError) -> StoreError {
    match failure {
        DbFailure::Unreachable => StoreError::Unavailable { source },
        DbFailure::Busy => StoreError::Busy,
        DbFailure::StorageFull => StoreError::StorageFull { source },
        DbFailure::Unique | DbFailure::ForeignKey | DbFailure::Other => {
            StoreError::Database(source)
        }
    }
}

pub(crate) type DbResult<T> = Result<T, DbError>;

/// A database connection that the domain logic drives synchronously.
pub(crate) trait Conn {
    fn dialect(&self) -> Dialect;
    fn execute(&mut self, sql: &str, params: &[Param]) -> DbResult<u64>;
    fn query(&mut self, sql: &str, params: &[Param]) -> DbResult<Vec<Row>>;
    /// Several statements without parameters (migrations).
    fn execute_batch(&mut self, sql: &str) -> DbResult<()>;

    /// Like `query`, but planned for these parameter values every time.
    /// PostgreSQL switches a prepared statement to a generic plan after five
    /// runs; for search, where the parameters decide between an index walk
    /// and a full scan, that plan is often the wrong one.
    fn query_planned(&mut self, sql: &str, params: &[Param]) -> DbResult<Vec<Row>> {
        self.query(sql, params)
    }

    fn query_one(&mut self, sql: &str, params: &[Param]) -> DbResult<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }
}

// ---------------------------------------------------------------------------
// SQLite

pub(crate) struct SqliteConn<'a>(pub &'a rusqlite::Connection);

/// `$12` -> `?12`. Our SQL never has `$` inside string literals.
fn sqlite_placeholders(sql: &str) -> std::borrow::Cow<'_, str> {
    if sql.contains('$') {
        std::borrow::Cow::Owned(sql.replace('$', "?"))
    } else {
        std::borrow::Cow::Borrowed(sql)
    }
}

fn sqlite_error(e: rusqlite::Error) -> DbError {
    let failure = match &e {
        rusqlite::Error::SqliteFailure(f, _) => match f.extended_code {
            rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => DbFailure::Unique,
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => DbFailure::ForeignKey,
            _ if f.code == rusqlite::ErrorCode::DiskFull => DbFailure::StorageFull,
            _ if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
            {
                DbFailure::Busy
            }
            _ if matches!(
                f.code,
                rusqlite::ErrorCode::SystemIoFailure | rusqlite::ErrorCode::CannotOpen
            ) =>
            {
                DbFailure::Unreachable
            }
            _ => DbFailure::Other,
        },
        _ => DbFailure::Other,
    };
    DbError {
        failure,
        source: Box::new(e),
    }
}

fn bind_sqlite(stmt: &mut rusqlite::Statement<'_>, params: &[Param]) -> DbResult<()> {
    for (i, p) in params.iter().enumerate() {
        let r = match p {
            Param::Int(v) => stmt.raw_bind_parameter(i + 1, v),
            Param::Text(v) => stmt.raw_bind_parameter(i + 1, v),
            Param::Bool(v) => stmt.raw_bind_parameter(i + 1, v),
            Param::Bytes(v) => stmt.raw_bind_parameter(i + 1, v),
        };
        r.map_err(sqlite_error)?;
    }
    Ok(())
}

impl Conn for SqliteConn<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Param]) -> DbResult<u64> {
        let mut stmt = self
            .0
            .prepare_cached(&sqlite_placeholders(sql))
            .map_err(sqlite_error)?;
        bind_sqlite(&mut stmt, params)?;
        stmt.raw_execute().map(|n| n as u64).map_err(sqlite_error)
    }

    fn query(&mut self, sql: &str, params: &[Param]) -> DbResult<Vec<Row>> {
        let mut stmt = self
            .0
            .prepare_cached(&sqlite_placeholders(sql))
            .map_err(sqlite_error)?;
        bind_sqlite(&mut stmt, params)?;
        let n = stmt.column_count();
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sqlite_error)? {
            let mut cells = Vec::with_capacity(n);
            for i in 0..n {
                use rusqlite::types::ValueRef;
                cells.push(match row.get_ref(i).map_err(sqlite_error)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(v) => Cell::Int(v),
                    ValueRef::Real(v) => Cell::Float(v),
                    ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Cell::Bytes(b.to_vec()),
                });
            }
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn execute_batch(&mut self, sql: &str) -> DbResult<()> {
        self.0.execute_batch(sql).map_err(sqlite_error)
    }
}

// ---------------------------------------------------------------------------
// PostgreSQL

/// Drive a future to completion from synchronous code. On a blocking thread
/// (the intended caller) this is a plain `block_on`; called by mistake on a
/// multi-threaded runtime's worker, `block_in_place` first hands the worker's
/// other tasks to another thread, so the runtime is not stalled and nothing
/// panics.
pub(crate) fn block_on<F: std::future::Future>(
    handle: &tokio::runtime::Handle,
    fut: F,
) -> F::Output {
    tokio::task::block_in_place(|| handle.block_on(fut))
}

pub(crate) struct PgConn<'a> {
    pub handle: &'a tokio::runtime::Handle,
    pub conn: &'a mut sqlx::PgConnection,
}

pub(crate) fn pg_error(e: sqlx::Error) -> DbError {
    let failure = match &e {
        sqlx::Error::Database(d) => match d.code().as_deref() {
            Some("23505") => DbFailure::Unique,
            Some("23503") => DbFailure::ForeignKey,
            Some("53100") => DbFailure::StorageFull,
            Some(code) if pg_unreachable_code(code) => DbFailure::Unreachable,
            Some(code) if pg_busy_code(code) => DbFailure::Busy,
            _ => DbFailure::Other,
        },
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => DbFailure::Unreachable,
        sqlx::Error::PoolTimedOut => DbFailure::Busy,
        _ => DbFailure::Other,
    };
    DbError {
        failure,
        source: Box::new(e),
    }
}

/// SQLSTATEs that mean "the server cannot be used", not "this statement
/// failed": connection exceptions (08), failed authentication (28), an unknown
/// database (3D000), and a server shutting down or starting up (57P01-57P03).
/// SQLSTATEs that say the server cannot serve us now: connection exceptions
/// (08), refused logons (28), a database that is not there, a server shutting
/// down or starting (57P01-03), too many connections or no memory (53000,
/// 53200, 53300), a read-only standby after a failover (25006), an I/O error
/// on its side (58030).
fn pg_unreachable_code(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("28")
        || matches!(
            code,
            "3D000" | "57P01" | "57P02" | "57P03" | "53000" | "53200" | "53300" | "25006" | "58030"
        )
}

/// SQLSTATEs of a request that may work in a moment: a statement cancelled by
/// its timeout (57014), a lock not had in time (55P03), a serialisation
/// failure or deadlock (40001, 40P01).
fn pg_busy_code(code: &str) -> bool {
    matches!(code, "57014" | "55P03" | "40001" | "40P01")
}

fn bind_pg<'q>(
    mut q: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    params: &[Param],
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    for p in params {
        q = match p {
            Param::Int(v) => q.bind(*v),
            Param::Text(v) => q.bind(v.clone()),
            Param::Bool(v) => q.bind(*v),
            Param::Bytes(v) => q.bind(v.clone()),
        };
    }
    q
}

fn pg_cell(row: &sqlx::postgres::PgRow, i: usize) -> DbResult<Cell> {
    use sqlx::{Column, Row as _, TypeInfo};
    let ty = row.columns()[i].type_info().name().to_owned();
    let cell = match ty.as_str() {
        "INT8" => row.try_get::<Option<i64>, _>(i).map(|v| v.map(Cell::Int)),
        "INT4" => row
            .try_get::<Option<i32>, _>(i)
            .map(|v| v.map(|v| Cell::Int(v as i64))),
        "INT2" => row
            .try_get::<Option<i16>, _>(i)
            .map(|v| v.map(|v| Cell::Int(v as i64))),
        "BOOL" => row.try_get::<Option<bool>, _>(i).map(|v| v.map(Cell::Bool)),
        "FLOAT8" => row.try_get::<Option<f64>, _>(i).map(|v| v.map(Cell::Float)),
        "FLOAT4" => row
            .try_get::<Option<f32>, _>(i)
            .map(|v| v.map(|v| Cell::Float(v as f64))),
        "BYTEA" => row
            .try_get::<Option<Vec<u8>>, _>(i)
            .map(|v| v.map(Cell::Bytes)),
        _ => row
            .try_get::<Option<String>, _>(i)
            .map(|v| v.map(Cell::Text)),
    }
    .map_err(pg_error)?;
    Ok(cell.unwrap_or(Cell::Null))
}

impl PgConn<'_> {
    /// Run a query; `prepared` keeps the statement (and, after five runs,
    /// its generic plan) on the connection.
    fn fetch(&mut self, sql: &str, params: &[Param], prepared: bool) -> DbResult<Vec<Row>> {
        let q = bind_pg(
            sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).persistent(prepared),
            params,
        );
        let conn = &mut *self.conn;
        let rows =
            block_on(self.handle, async move { q.fetch_all(conn).await }).map_err(pg_error)?;
        rows.iter()
            .map(|r| {
                use sqlx::Row as _;
                (0..r.len())
                    .map(|i| pg_cell(r, i))
                    .collect::<DbResult<Vec<_>>>()
                    .map(Row)
            })
            .collect()
    }
}

impl Conn for PgConn<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Param]) -> DbResult<u64> {
        let q = bind_pg(sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())), params);
        let conn = &mut *self.conn;
        block_on(self.handle, async move { q.execute(conn).await })
            .map(|r| r.rows_affected())
            .map_err(pg_error)
    }

    fn query(&mut self, sql: &str, params: &[Param]) -> DbResult<Vec<Row>> {
        self.fetch(sql, params, true)
    }

    fn query_planned(&mut self, sql: &str, params: &[Param]) -> DbResult<Vec<Row>> {
        // An unnamed statement is planned with its parameters each time.
        self.fetch(sql, params, false)
    }

    fn execute_batch(&mut self, sql: &str) -> DbResult<()> {
        let conn = &mut *self.conn;
        let sql = sql.to_owned();
        block_on(self.handle, async move {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(conn).await
        })
        .map(|_| ())
        .map_err(pg_error)
    }
}

/// A failed insert or update as the store says it: a unique key taken is a
/// duplicate (`what` names it), a foreign key still pointed at is in use.
pub(crate) fn map_unique(e: DbError, what: impl FnOnce() -> String) -> StoreError {
    match e.failure {
        DbFailure::Unique => StoreError::Duplicate(what()),
        DbFailure::ForeignKey => StoreError::InUse(what()),
        DbFailure::Unreachable | DbFailure::Busy | DbFailure::StorageFull | DbFailure::Other => {
            e.into()
        }
    }
}

/// `ResourceNotFound` (naming `field`) unless resource `id` exists.
pub(crate) fn require_resource(c: &mut dyn Conn, id: ResourceId, field: &str) -> Result<()> {
    if c.query_one("SELECT 1 FROM rsc WHERE id = $1", &[Param::from(id.0)])?
        .is_none()
    {
        return Err(StoreError::ResourceNotFound(format!("{id} ({field})")));
    }
    Ok(())
}
