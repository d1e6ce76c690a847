//! Password reset tokens: what a reset mail's link carries, and how it is
//! checked and used.
//!
//! A token is 256 random bits, written into the link as 64 hex digits. The
//! database keeps only its SHA-256 (table `auth_password_reset`), so someone
//! who reads the database (or a backup) cannot use a pending link; a plain
//! hash is enough because the token is random, not a password. A token is
//! **single use** (using it records when, and a used token is refused with a
//! message saying so), **expires** (`[auth] reset_expiry`, an hour by
//! default), and issuing a new one for a person deletes their older ones.
//!
//! The functions here call the store and must run where blocking is allowed.
//! The pages and endpoints that use them are in `reset_pages.rs`.

use std::time::Duration;

use crate::secret::{random_hex, sha256_hex};
use chrono::{DateTime, Utc};

use bulwark_store::{ResourceId, Store, StoreError};

/// How long a reset link works unless `[auth] reset_expiry` says otherwise.
pub const RESET_EXPIRY: Duration = Duration::from_secs(3600);

/// Used and expired tokens are kept this long (so that a link used a second
/// time gets "used", not "unknown"), then deleted when another is issued.
const KEEP_OLD_TOKENS: Duration = Duration::from_secs(7 * 24 * 3600);

/// The secret a reset link carries. Its `Debug` hides it.
pub struct ResetToken(String);

impl ResetToken {
    /// 256 random bits ([`random_hex`]).
    pub fn random() -> ResetToken {
        ResetToken(random_hex())
    }

    /// The token as the link carries it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ResetToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResetToken(..)")
    }
}

/// What the database keeps of a token: its SHA-256, in hex.
fn token_hash(token: &str) -> String {
    sha256_hex(token.trim().as_bytes())
}

/// Why a token cannot be used; each says so in words a person can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenProblem {
    /// Never issued, mistyped, or replaced by a newer one.
    Unknown,
    Used,
    Expired,
}

impl TokenProblem {
    /// For the JSON API: `unknown`, `used`, `expired`.
    pub fn code(self) -> &'static str {
        match self {
            TokenProblem::Unknown => "unknown",
            TokenProblem::Used => "used",
            TokenProblem::Expired => "expired",
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            TokenProblem::Unknown => {
                "This reset link is not valid: it may be incomplete, or a newer one replaced it. \
                 Use the link in the latest mail, or ask for a new one."
            }
            TokenProblem::Used => {
                "This reset link was used already: a link works only once. \
                 Ask for a new one if you need to."
            }
            TokenProblem::Expired => "This reset link has expired. Ask for a new one.",
        }
    }
}

impl std::fmt::Display for TokenProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

fn millis(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn duration_millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Stores `token` for `person`, valid for `expiry` from `now`; the person's
/// older tokens stop working (and long-finished ones of anyone are dropped).
pub fn issue_token(
    store: &Store,
    person: ResourceId,
    token: &ResetToken,
    now: DateTime<Utc>,
    expiry: Duration,
) -> Result<(), StoreError> {
    let hash = token_hash(token.as_str());
    let now = millis(now);
    let expires = now.saturating_add(duration_millis(expiry));
    let forget_before = now.saturating_sub(duration_millis(KEEP_OLD_TOKENS));
    store.module_write(|sql| {
        sql.execute(
            "DELETE FROM auth_password_reset WHERE rsc_id = $1 OR expires < $2",
            &[person.0.into(), forget_before.into()],
        )?;
        sql.execute(
            "INSERT INTO auth_password_reset (token_hash, rsc_id, created, expires) \
             VALUES ($1, $2, $3, $4)",
            &[hash.into(), person.0.into(), now.into(), expires.into()],
        )?;
        Ok(())
    })
}

/// Whom `token` would reset the password of, without using it.
pub fn check_token(
    store: &Store,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Result<ResourceId, TokenProblem>, StoreError> {
    let hash = token_hash(token);
    store.module_read(|sql| {
        let row = sql.query_one(
            "SELECT rsc_id, expires, used FROM auth_password_reset WHERE token_hash = $1",
            &[hash.into()],
        )?;
        Ok(match row {
            None => Err(TokenProblem::Unknown),
            Some(r) if r.opt_int(2).is_some() => Err(TokenProblem::Used),
            Some(r) if r.int(1) <= millis(now) => Err(TokenProblem::Expired),
            Some(r) => Ok(ResourceId(r.int(0))),
        })
    })
}

/// Uses `token`: whom it resets the password of, and from now on it is
/// refused as used. Of two requests with one token, one wins.
pub fn use_token(
    store: &Store,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Result<ResourceId, TokenProblem>, StoreError> {
    let hash = token_hash(token);
    let now = millis(now);
    store.module_write(|sql| {
        let row = sql.query_one(
            "UPDATE auth_password_reset SET used = $2 \
             WHERE token_hash = $1 AND used IS NULL AND expires > $2 RETURNING rsc_id",
            &[hash.clone().into(), now.into()],
        )?;
        if let Some(r) = row {
            return Ok(Ok(ResourceId(r.int(0))));
        }
        let why = sql.query_one(
            "SELECT used FROM auth_password_reset WHERE token_hash = $1",
            &[hash.into()],
        )?;
        Ok(Err(match why {
            None => TokenProblem::Unknown,
            Some(r) if r.opt_int(0).is_some() => TokenProblem::Used,
            Some(_) => TokenProblem::Expired,
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_256_random_bits_in_hex_and_only_its_sha256_is_kept() {
        let a = ResetToken::random();
        let b = ResetToken::random();
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.as_str(), b.as_str());
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(!format!("{a:?}").contains(a.as_str()));
    }
}
