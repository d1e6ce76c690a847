//! Many writes in one transaction: an import's batch. What the store's own
//! methods do one transaction at a time (create, update, connect, a module's
//! rows), a [`Batch`] does inside one, so a hundred imported posts cost one
//! commit (one fsync) and either all of them stand or none.
//!
//! Properties are sanitised before the transaction begins, as everywhere
//! ([`Store::prepare`], [`ResourceUpdate::sanitize`]): the batch holds the
//! writer only for the writes themselves.

use crate::db::Conn;
use crate::edge::insert_edge_in;
use crate::error::Result;
use crate::model::*;
use crate::module_sql::ModuleSql;
use crate::resource::{PreparedResource, apply_update, insert_resource, load, prepare};
use crate::store::{Changes, Store};

/// A new resource whose properties are sanitised, for [`Batch::create`].
pub struct Prepared(PreparedResource);

/// The writes of one transaction ([`Store::batch`]).
pub struct Batch<'a> {
    pub(crate) conn: &'a mut dyn Conn,
    pub(crate) changes: &'a mut Changes,
}

impl Batch<'_> {
    /// Creates a resource ([`Store::create_resource`]); returns its id.
    pub fn create(&mut self, new: Prepared) -> Result<ResourceId> {
        insert_resource(self.conn, new.0, self.changes)
    }

    /// Updates a resource ([`Store::update_sanitized`]).
    pub fn update(&mut self, update: SanitizedUpdate) -> Result<Resource> {
        apply_update(self.conn, update, self.changes)
    }

    /// The resource with this id, as this transaction sees it.
    pub fn resource(&mut self, id: ResourceId) -> Result<Option<Resource>> {
        load(self.conn, id)
    }

    /// The resource with this unique name, as this transaction sees it.
    pub fn resource_by_name(&mut self, name: &str) -> Result<Option<Resource>> {
        match crate::resource::id_by_name(self.conn, name)? {
            Some(id) => load(self.conn, id),
            None => Ok(None),
        }
    }

    /// Connects `subject` to `object` ([`Store::insert_edge`]): appended at
    /// the end of the subject's list, or left as it is when it exists;
    /// `true` when it was made now.
    pub fn connect(
        &mut self,
        subject: ResourceId,
        predicate: &str,
        object: ResourceId,
    ) -> Result<bool> {
        insert_edge_in(self.conn, self.changes, subject, predicate, object, None)
            .map(|(_, made)| made)
    }

    /// A module's own tables, in this transaction ([`Store::module_write`]).
    pub fn sql(&mut self) -> ModuleSql<'_> {
        ModuleSql::in_write(self.conn, self.changes)
    }
}

impl Store {
    /// Sanitises a new resource's properties, for a [`Batch`].
    pub fn prepare(&self, new: NewResource) -> Result<Prepared> {
        prepare(new).map(Prepared)
    }

    /// Runs `f` in one transaction on the writer: every write it makes
    /// commits when it returns `Ok`, and none when it returns `Err`. One
    /// change event names everything the batch changed.
    pub fn batch<T>(&self, f: impl FnOnce(&mut Batch<'_>) -> Result<T>) -> Result<T> {
        self.write(|conn, changes| f(&mut Batch { conn, changes }))
    }
}
