//! The store's one error type.
//!
//! Each case says what a caller can do about it. This crate knows nothing of
//! HTTP: the single function that turns a [`StoreError`] into a status and a
//! message for a visitor lives in the web layer. What it is meant to answer:
//! `Busy` and `Unavailable` -> 503 (retry later; the details go to the log, not
//! to the visitor), `Conflict` -> 409, the not-found family -> 404, input
//! errors (`InvalidInput`, `UnknownCategory`, `UnknownPredicate`,
//! `PredicateNotAllowed`, `Duplicate`, `InUse`) -> 400, `HtmlTooComplex` -> 422,
//! `StorageFull` -> 507, and `Database`/`Migration`/`Backup` -> 500.
//!
//! Failures of the database keep the driver's error as their
//! [`source`](std::error::Error::source) (a `rusqlite::Error` or a
//! `sqlx::Error`), so a log shows the whole chain and a caller can downcast.
//! Their `Display` includes the driver's message as well, because most callers
//! print only the outermost error.

use std::borrow::Cow;
use std::fmt;

use crate::html_limits::HtmlLimit;
use crate::ids::{ResourceId, Version};

/// An error from another library, kept whole.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("resource {0} not found")]
    ResourceNotFound(String),
    #[error("edge not found")]
    EdgeNotFound,
    #[error("revision {0} not found")]
    RevisionNotFound(i64),
    #[error("identity not found")]
    IdentityNotFound,
    #[error("unknown category {0:?}")]
    UnknownCategory(String),
    #[error("unknown predicate {0:?}")]
    UnknownPredicate(String),
    #[error("predicate {predicate:?} does not allow {role} of category {category:?}")]
    PredicateNotAllowed {
        predicate: String,
        /// "subject" or "object"
        role: &'static str,
        category: String,
    },
    #[error(
        "resource {id} was changed by someone else: expected version {expected}, it is now {actual}"
    )]
    Conflict {
        id: ResourceId,
        expected: Version,
        actual: Version,
    },
    #[error("{field}: {reason}")]
    InvalidInput { field: String, reason: String },
    /// An HTML property refused before sanitising, because cleaning it would
    /// take far longer than its size suggests (see [`HtmlLimit`]).
    #[error("{field}: this HTML cannot be stored: {limit}")]
    HtmlTooComplex { field: String, limit: HtmlLimit },
    #[error("{0} already exists")]
    Duplicate(String),
    #[error("{0} is still in use")]
    InUse(String),
    /// No connection (or, on SQLite, the writer) within the pool's deadline.
    #[error("the database is busy, try again later")]
    Busy,
    /// The database server is down or refuses us: connection refused, unknown
    /// host, failed authentication, no such database, or a connection lost
    /// under a running query.
    #[error(
        "the database is down or unreachable ({source}); check that it is running and that its address and credentials are right"
    )]
    Unavailable {
        #[source]
        source: DatabaseError,
    },
    /// The disk the database writes to is full: the write was rolled back, nothing
    /// was changed, and writes succeed again once there is space.
    #[error("the database's disk is full; nothing was written ({source})")]
    StorageFull {
        #[source]
        source: DatabaseError,
    },
    #[error("database error: {0}")]
    Database(#[source] DatabaseError),
    /// A migration failed; its transaction was rolled back, so it left nothing
    /// behind. `module` is `core` for the store's own migrations.
    #[error("migration {version:04}_{name} of {module} failed: {source}")]
    Migration {
        module: String,
        version: i64,
        name: &'static str,
        #[source]
        source: DatabaseError,
    },
    #[error("backup failed: {reason}{}", Suffix(.source))]
    Backup {
        reason: String,
        #[source]
        source: Option<BoxError>,
    },
}

impl StoreError {
    /// The database could not answer now (busy, down or unreachable) but the
    /// request may succeed later: 503 with `Retry-After`, not a broken page.
    pub fn is_temporary(&self) -> bool {
        matches!(self, StoreError::Busy | StoreError::Unavailable { .. })
    }

    /// [`StoreError::InvalidInput`]: `field` and what is wrong with it.
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// A backup or restore failed because of `source`.
    pub(crate) fn backup(reason: impl Into<String>, source: impl Into<BoxError>) -> Self {
        StoreError::Backup {
            reason: reason.into(),
            source: Some(source.into()),
        }
    }

    /// A backup or restore was refused for a reason of its own.
    pub(crate) fn backup_refused(reason: impl Into<String>) -> Self {
        StoreError::Backup {
            reason: reason.into(),
            source: None,
        }
    }

    /// A task on the blocking pool panicked or was cancelled.
    pub(crate) fn task_failed(e: tokio::task::JoinError) -> Self {
        StoreError::Database(DatabaseError::new("a store task failed", e))
    }
}

/// ": {source}" when there is one.
struct Suffix<'a>(&'a Option<BoxError>);

impl fmt::Display for Suffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(e) => write!(f, ": {e}"),
            None => Ok(()),
        }
    }
}

/// A failure reported by the database or its driver, with what the store was
/// doing when it happened. [`source`](std::error::Error::source) is the
/// driver's own error.
#[derive(Debug)]
pub struct DatabaseError(Repr);

#[derive(Debug)]
enum Repr {
    Driver {
        context: Option<Cow<'static, str>>,
        source: BoxError,
    },
    /// The database answered something the store cannot make sense of.
    Unexpected(Cow<'static, str>),
}

impl DatabaseError {
    /// `source` happened while the store was doing `context`.
    pub(crate) fn new(context: impl Into<Cow<'static, str>>, source: impl Into<BoxError>) -> Self {
        DatabaseError(Repr::Driver {
            context: Some(context.into()),
            source: source.into(),
        })
    }

    /// A driver's error, without more to say about it.
    pub(crate) fn driver(source: impl Into<BoxError>) -> Self {
        DatabaseError(Repr::Driver {
            context: None,
            source: source.into(),
        })
    }

    /// An answer the store cannot make sense of (an insert that returned no
    /// row): there is no driver error to keep.
    pub(crate) fn unexpected(what: impl Into<Cow<'static, str>>) -> Self {
        DatabaseError(Repr::Unexpected(what.into()))
    }
}

impl fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Driver {
                context: Some(context),
                source,
            } => write!(f, "{context}: {source}"),
            Repr::Driver {
                context: None,
                source,
            } => source.fmt(f),
            Repr::Unexpected(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for DatabaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0 {
            Repr::Driver { source, .. } => Some(&**source),
            Repr::Unexpected(_) => None,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// `Ok` also when what `made` tried to make exists already (another node, or
/// an earlier start, made it first): for what a module makes when a store
/// opens (its category, its initial resources), which is as good as done.
pub fn made_or_there<T>(
    made: std::result::Result<T, StoreError>,
) -> std::result::Result<(), StoreError> {
    match made {
        Ok(_) | Err(StoreError::Duplicate(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn database_errors_keep_the_driver_error_as_their_source() {
        let driver = rusqlite::Error::InvalidQuery;
        let text = driver.to_string();
        let err = StoreError::Database(DatabaseError::new("reading resource 7", driver));
        assert_eq!(
            err.to_string(),
            format!("database error: reading resource 7: {text}")
        );
        let source = err.source().and_then(|s| s.source()).expect("driver error");
        assert!(source.is::<rusqlite::Error>(), "{source:?}");
    }

    #[test]
    fn backup_errors_show_their_source_when_they_have_one() {
        let refused = StoreError::backup_refused("/tmp/x already exists");
        assert_eq!(refused.to_string(), "backup failed: /tmp/x already exists");
        assert!(refused.source().is_none());
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no pg_dump");
        let failed = StoreError::backup("cannot run pg_dump", io);
        assert_eq!(
            failed.to_string(),
            "backup failed: cannot run pg_dump: no pg_dump"
        );
        assert!(failed.source().is_some_and(|s| s.is::<std::io::Error>()));
    }
}
