//! # bulwark-store: Bulwark's data model on SQLite and PostgreSQL
//!
//! **What it is for.** Everything in a Bulwark site is a *resource*: an id, an
//! optional unique name, a category, publication state, visibility, and all
//! other properties in one JSON document. Resources sit in a category tree,
//! are connected by ordered *edges* labelled with *predicates*, keep their
//! earlier states as *revisions*, and may carry *identities* (username with a
//! password hash the accounts module made, e-mail). A *pivot* extracts
//! titles, dates and words into indexed columns for *search*; *config* holds per-site settings. This crate
//! stores all of that, on SQLite (one file per site, nothing to install) or on
//! PostgreSQL (shared by several nodes), with the same behaviour on both.
//!
//! **How it works.**
//! - The domain logic is written once, as synchronous code over a tiny
//!   connection trait (`db.rs`); rusqlite and sqlx (PostgreSQL only) sit
//!   behind it. One conformance suite therefore tests one implementation.
//! - Every data method on [`Store`] is synchronous, because the template
//!   layer reads models synchronously from blocking threads. Async code calls
//!   [`Store::run`], which hops to tokio's blocking pool; PostgreSQL is driven
//!   there with `Handle::block_on`. A runtime worker is never blocked.
//! - Writes run in one transaction each. Updates are optimistic: they name the
//!   [`Version`] they are based on and a stale one is a [`StoreError::Conflict`].
//!   Text properties are sanitised on write (ammonia, a fixed whitelist, no
//!   raw quotes), so templates print them without escaping, in element
//!   content and in quoted attributes alike. Sanitising happens before the
//!   write's transaction, so a slow one never holds the database's writer.
//! - Every committed write emits a [`ChangeEvent`], after commit and never
//!   for a rollback: the [`DependencyKey`]s it makes stale (the depcache's
//!   key type, built only by the constructors in [`dependency`]) and which
//!   resources it inserted, updated or deleted ([`ResourceChange`]).
//! - Writes queue the resource for the pivot in the same transaction; the
//!   pivot task ([`Store::spawn_pivot_task`]) indexes batches (FTS5 on SQLite,
//!   `tsvector` + GIN on PostgreSQL).
//! - A resource whose publication window opens or closes changes what
//!   visitors see without any write: the publication task
//!   ([`Store::spawn_publication_task`]) sleeps until the next such moment and
//!   then emits the change event an update of those resources would have.
//! - Plain-SQL migrations (`migrations/`) run when a store opens; a module
//!   brings its own tables as a list of [`Migration`]s for
//!   [`Store::migrate_module`], applied by the same code, and works on them
//!   with [`Store::module_read`] and [`Store::module_write`] (bound SQL, one
//!   transaction per write; a write names the dependency keys it changed, if
//!   any). The accounts module keeps sessions and second factors that way.
//! - Pools: SQLite in WAL mode with one writer and several readers; a
//!   PostgreSQL pool with a minimum of one connection, an idle timeout, a
//!   small maximum and an acquire deadline that surfaces as
//!   [`StoreError::Busy`]. A server that is down or refuses us is
//!   [`StoreError::Unavailable`]; every database failure keeps the driver's
//!   error as its source.
//!
//! **What it deliberately does not do.** No access control (the ACL lives in
//! `bulwark-acl`'s access policy; the store keeps visibility and filters searches by the
//! [`VisibilityFilter`] the policy computed, so pages of results stay full), no caching (that is the
//! depcache, fed by the change events), no media files (a media module will keep them), no
//! cross-node event fan-out (the cluster module adds it: its outbox commits
//! with each change through the [`CommitHook`], and what other nodes committed
//! comes back through [`Store::announce`]),
//! no HTTP (the web layer turns a [`StoreError`] into a status, in one place),
//! and no ORM: SQL is plain, bound, and in one place per operation.

mod backup;
mod backup_pg;
mod batch;
pub use batch::{Batch, Prepared};
mod category;
mod config;
mod db;
pub mod dependency;
mod edge;
mod error;
mod export;
mod facts;
mod html_limits;
mod identity;
mod ids;
mod migrate;
mod model;
mod module_sql;
mod names;
pub use names::check_name;
mod pivot;
mod presence;
mod publication;
mod resource;
mod sanitize;
mod search;
mod store;
mod translation;
pub use translation::{
    PUBLISHED_LANGUAGES, TRANS, any_text, is_language_code, text_in, translated, translations,
};

pub use bulwark_depcache::DependencyKey;
pub use config::{SECRET_CONFIG_PREFIX, is_secret_config_key};
pub use error::{DatabaseError, Result, StoreError, made_or_there};
pub use facts::ResourceFacts;
pub use migrate::{Migration, schema_version};
pub use model::{
    Category, ChangeEvent, ChangeKind, DateField, Deletion, Edge, EditableScope, Identity,
    IdentityKind, NewResource, Predicate, Props, PropsChange, Resource, ResourceChange, ResourceId,
    ResourceUpdate, Revision, SanitizedUpdate, ScopeGroup, SearchPage, SearchQuery, SortKey,
    Version, Visibility, VisibilityFilter,
};
pub use module_sql::{ModuleSql, SqlParam, SqlRow};
pub use presence::{NodePresence, OpeningLock};
pub use resource::RestorePublication;
pub use sanitize::{
    HtmlLimit, MAX_HTML_NESTING, MAX_STRING_LEN, StoredTag, check_html_limits, html_to_plain,
    sanitize_html_value, sanitize_text_value, sanitized_props, stored_tags,
};
pub use store::{ChangeNote, CommitHook, Database, PoolOptions, PoolStatus, Store, StoreConfig};
