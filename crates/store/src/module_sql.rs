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
//! Deliberately small: no access to the store's own tables (a module reaches
//! those through the store's typed methods), and no query builder. A write
//! sends a change event only for the dependency keys it names with
//! [`ModuleSql::flush`] (the accounts module names a session it ended, so every
//! node's cache of it goes); a module's rows are not resources, so nothing else
//! depends on them.

use bulwark_depcache::DependencyKey;

use crate::db::map_unique;
use crate::db::require_resource;
use crate::db::{Conn, Dialect, Param, Row};
use crate::error::Result;
use crate::model::ResourceId;
use crate::store::{Changes, Store};

/// A value bound to a `$n` placeholder: `7_i64.into()`, `"text".into()`,
/// `None::<String>.into()`.
pub type SqlParam = Param;

/// One row a query returned; columns by position (`int(0)`, `opt_text(2)`).
pub type SqlRow = Row;

/// The connection a module's closure gets: in a transaction for
/// [`Store::module_write`], a plain read connection for [`Store::module_read`].
pub struct ModuleSql<'a> {
    pub(crate) conn: &'a mut dyn Conn,
    /// The change event of a [`Store::module_write`]; none in a read.
    changes: Option<&'a mut Changes>,
}

impl<'a> ModuleSql<'a> {
    pub(crate) fn new(conn: &'a mut dyn Conn) -> ModuleSql<'a> {
        ModuleSql {
            conn,
            changes: None,
        }
    }

    /// In a write's transaction, naming what it changes in `changes`.
    pub(crate) fn in_write(conn: &'a mut dyn Conn, changes: &'a mut Changes) -> ModuleSql<'a> {
        ModuleSql {
            conn,
            changes: Some(changes),
        }
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

    /// Names a dependency key this write changed: when the transaction
    /// commits, the change event carries it to this node's caches and, in a
    /// cluster, every other node's. In a [`Store::module_read`] there is
    /// nothing to flush: a debug build panics, a release build ignores it.
    pub fn flush(&mut self, key: DependencyKey) {
        debug_assert!(self.changes.is_some(), "flush in a module_read");
        if let Some(changes) = self.changes.as_deref_mut() {
            changes.add(key);
        }
    }

    /// Says that something happened in this write (`comment.posted` with the
    /// comment), for the commit hooks to hear in the same transaction (the
    /// webhooks module queues its messages from it). In a
    /// [`Store::module_read`] there is nothing to announce: a debug build
    /// panics, a release build ignores it.
    pub fn announce(&mut self, kind: &'static str, payload: serde_json::Value) {
        debug_assert!(self.changes.is_some(), "announce in a module_read");
        if let Some(changes) = self.changes.as_deref_mut() {
            changes.note(crate::store::ChangeNote { kind, payload });
        }
    }

    /// [`StoreError::ResourceNotFound`](crate::StoreError::ResourceNotFound)
    /// (naming `what`) unless resource `id` exists: for a row of the module's
    /// that stands for a resource.
    pub fn require_resource(&mut self, id: ResourceId, what: &str) -> Result<()> {
        require_resource(self.conn, id, what)
    }
}

impl Store {
    /// Runs `f` on a read connection, outside a transaction: for a module's
    /// reads of its own tables.
    pub fn module_read<T>(&self, f: impl FnOnce(&mut ModuleSql<'_>) -> Result<T>) -> Result<T> {
        self.read(|conn| f(&mut ModuleSql::new(conn)))
    }

    /// Runs `f` in one transaction on the writer: committed when it returns
    /// `Ok`, rolled back when it returns `Err`. For a module's writes to its
    /// own tables; the change event names only what [`ModuleSql::flush`] named.
    pub fn module_write<T>(&self, f: impl FnOnce(&mut ModuleSql<'_>) -> Result<T>) -> Result<T> {
        self.write(|conn, changes| {
            f(&mut ModuleSql {
                conn,
                changes: Some(changes),
            })
        })
    }
}
