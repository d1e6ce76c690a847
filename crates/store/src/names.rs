//! Unique names (of resources, categories, predicates, modules): what one
//! may be, checked in one place.

use crate::error::{Result, StoreError};

pub(crate) const MAX_NAME_LEN: usize = 80;

/// A unique name: lowercase identifier, so it is safe in URLs and keys.
pub fn check_name(field: &str, name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return Err(StoreError::invalid(
            field,
            format!("must be 1 to {MAX_NAME_LEN} characters"),
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(StoreError::invalid(
            field,
            format!("{name:?}: only a-z, 0-9 and '_', not starting with a digit"),
        ));
    }
    Ok(())
}
