use crate::model::{ResourceId, Version};

/// Everything that can go wrong in the store. The HTTP layer maps these to
/// statuses: `Busy` -> 503, `Conflict` -> 409, the not-found family -> 404,
/// input errors -> 400/422, `Database`/`Migration`/`Backup` -> 500.
#[derive(Debug, thiserror::Error)]
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
    #[error("{0} already exists")]
    Duplicate(String),
    #[error("{0} is still in use")]
    InUse(String),
    #[error("the database is busy, try again later")]
    Busy,
    #[error("database error: {0}")]
    Database(String),
    #[error("migration failed: {0}")]
    Migration(String),
    #[error("backup failed: {0}")]
    Backup(String),
}

impl StoreError {
    pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
