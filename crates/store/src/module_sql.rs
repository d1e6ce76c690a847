//! A module's own tables: plain, bound SQL on the tables its migrations made
//! ([`Store::migrate_module`]), through the same connections, pools and
//! transactions as the store's own operations.
//!
//! A module that keeps rows of its own (the mail module's outbox, the accounts
//! module's reset tokens) reads them with [`Store::module_read`] and changes them
//! with [`Store::module_write`], which runs its closure in one transaction. SQL is
//! written once with PostgreSQL's `$1` placeholders, as everywhere in the store;
//! values are always bound ([`SqlParam`]), never spliced into the text.
//!
//! Deliberately small: no change events (a module's rows are not resources, so
//! no cache depends on them), no access to the store's own tables (a module
//! reaches those through the store's typed methods), and no query builder.

use crate::db::map_unique;
use crate::db::{Conn, Dialect, Param, Row};
use crate::error::Result;
use crate::store::Store;

/// A value bound to a `$n` placeholder: `7_i64.into()`, `"text".into()`,
/// `None::<String>.into()`.
pub type SqlParam = Param;

/// One row a query returned; columns by position (`int(0)`, `opt_text(2)`).
pub type SqlRow = Row;

/// The connection a module's closure gets: in a transaction for
/// [`Store::module_write`], a plain read connection for [`Store::module_read`].
pub struct ModuleSql<'a> {
    conn: &'a mut dyn Conn,
}

impl<'a> ModuleSql<'a> {
    pub(crate) fn new(conn: &'a mut dyn Conn) -> ModuleSql<'a> {
        ModuleSql { conn }
    }
}

impl ModuleSql<'_> {
    /// Runs one statement; returns how many rows it changed. A unique
    /// constraint it breaks is [`StoreError::Duplicate`](crate::StoreError::Duplicate).
    pub fn execute(&mut self, sql: &str, params: &[SqlParam]) -> Result<u64> {
        self.conn
            .execute(sql, params)
            .map_err(|e| map_unique(e, || "a row with that key".to_owned()))
    }

    /// Every row a query returns.
    pub fn query(&mut self, sql: &str, params: &[SqlParam]) -> Result<Vec<SqlRow>> {
        self.conn
            .query(sql, params)
            .map_err(|e| map_unique(e, || "a row with that key".to_owned()))
    }

    /// The first row a query returns, if any.
    pub fn query_one(&mut self, sql: &str, params: &[SqlParam]) -> Result<Option<SqlRow>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Whether the database is PostgreSQL (else SQLite), for the rare
    /// statement that must differ.
    pub fn is_postgres(&self) -> bool {
        self.conn.dialect() == Dialect::Postgres
    }
}

impl Store {
    /// Runs `f` on a read connection, outside a transaction: for a module's
    /// reads of its own tables.
    pub fn module_read<T>(&self, f: impl FnOnce(&mut ModuleSql<'_>) -> Result<T>) -> Result<T> {
        self.read(|conn| f(&mut ModuleSql { conn }))
    }

    /// Runs `f` in one transaction on the writer: committed when it returns
    /// `Ok`, rolled back when it returns `Err`. For a module's writes to its
    /// own tables; sends no change event.
    pub fn module_write<T>(&self, f: impl FnOnce(&mut ModuleSql<'_>) -> Result<T>) -> Result<T> {
        self.write(|conn, _changes| f(&mut ModuleSql { conn }))
    }
}
