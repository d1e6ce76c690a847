//! The second factor's identities: a person's TOTP secret and recovery codes.
//!
//! The accounts module (`modules/auth`, `second_factor.rs`) makes the secrets,
//! checks the codes and decides; the store keeps what it is handed, in the
//! identity table like every other way to log on, so a person's identities
//! go with the person:
//!
//! - `totp_pending` (key: the person's id, secret: the base32 secret): handed
//!   out at enrolment, not yet confirmed with a code. At most one per person.
//! - `totp` (key: the person's id, secret: `<last step>:<base32 secret>`): the
//!   confirmed secret, and the last time step a code was accepted for. The two
//!   share one value so that accepting a step is one compare-and-swap
//!   ([`Store::advance_totp_step`]): of two logons racing with the same code
//!   (or with a re-enrolment) only one changes the row, on SQLite and
//!   PostgreSQL alike, without locks.
//! - `recovery_code` (key: the SHA-256 of the code in lower-case hex): one row
//!   per unused code; using one deletes its row, so only one of two racing
//!   uses succeeds.
//!
//! Like password hashes, the shapes are checked: a TOTP secret must be base32
//! of at least 128 bits (RFC 4226's minimum), a recovery code must be a
//! SHA-256, so a plain code cannot be stored by mistake.

use chrono::Utc;

use crate::db::map_unique;
use crate::db::{Conn, params};
use crate::dependency;
use crate::error::{Result, StoreError};
use crate::model::{IdentityKind, ResourceId};
use crate::resource::require_resource;
use crate::store::Store;

/// 128 bits in base32, without padding.
const MIN_TOTP_SECRET_LEN: usize = 26;
const MAX_TOTP_SECRET_LEN: usize = 128;

/// A person's confirmed TOTP secret, as the accounts module checks codes
/// against it. Its `Debug` hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct TotpSecret {
    /// RFC 4648 base32, upper case, without padding.
    pub secret: String,
    /// The last time step (Unix time / 30 s) a code was accepted for; a code
    /// for this step or an earlier one is a replay.
    pub last_step: u64,
}

impl std::fmt::Debug for TotpSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TotpSecret")
            .field("secret", &"..")
            .field("last_step", &self.last_step)
            .finish()
    }
}

impl TotpSecret {
    /// The value of the `totp` row's secret column.
    fn stored(&self) -> String {
        format!("{}:{}", self.last_step, self.secret)
    }

    fn from_stored(value: &str) -> Result<TotpSecret> {
        value
            .split_once(':')
            .and_then(|(step, secret)| {
                Some(TotpSecret {
                    secret: secret.to_owned(),
                    last_step: step.parse().ok()?,
                })
            })
            .ok_or_else(|| StoreError::invalid("totp", "the stored value is not <step>:<secret>"))
    }
}

fn check_totp_secret(secret: &str) -> Result<()> {
    let shaped = (MIN_TOTP_SECRET_LEN..=MAX_TOTP_SECRET_LEN).contains(&secret.len())
        && secret
            .bytes()
            .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b));
    if shaped {
        Ok(())
    } else {
        Err(StoreError::invalid(
            "totp secret",
            format!(
                "not base32 (A-Z, 2-7) of {MIN_TOTP_SECRET_LEN} to {MAX_TOTP_SECRET_LEN} characters"
            ),
        ))
    }
}

fn check_recovery_code_hash(hash: &str) -> Result<()> {
    if hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(StoreError::invalid(
            "recovery code hash",
            "not a SHA-256 in lower-case hex: the store keeps hashes of recovery codes, never the codes",
        ))
    }
}

/// The key of a person's `totp` and `totp_pending` rows.
fn person_key(person: ResourceId) -> String {
    person.0.to_string()
}

fn secret_of(c: &mut dyn Conn, person: ResourceId, kind: IdentityKind) -> Result<Option<String>> {
    Ok(c.query_one(
        "SELECT secret FROM identity WHERE rsc_id = $1 AND kind = $2",
        &params![person.0, kind.as_str()],
    )?
    .and_then(|r| r.opt_text(0)))
}

fn insert(
    c: &mut dyn Conn,
    person: ResourceId,
    kind: IdentityKind,
    key: String,
    secret: Option<String>,
) -> Result<()> {
    c.execute(
        "INSERT INTO identity (rsc_id, kind, key, secret, created) VALUES ($1, $2, $3, $4, $5)",
        &params![
            person.0,
            kind.as_str(),
            key,
            secret,
            Utc::now().timestamp_millis()
        ],
    )
    .map_err(|e| map_unique(e, || kind.as_str().to_owned()))?;
    Ok(())
}

fn delete_kind(c: &mut dyn Conn, person: ResourceId, kind: IdentityKind) -> Result<u64> {
    Ok(c.execute(
        "DELETE FROM identity WHERE rsc_id = $1 AND kind = $2",
        &params![person.0, kind.as_str()],
    )?)
}

fn replace_recovery_codes(c: &mut dyn Conn, person: ResourceId, hashes: &[String]) -> Result<()> {
    delete_kind(c, person, IdentityKind::RecoveryCode)?;
    for hash in hashes {
        insert(c, person, IdentityKind::RecoveryCode, hash.clone(), None)?;
    }
    Ok(())
}

fn count_recovery_codes(c: &mut dyn Conn, person: ResourceId) -> Result<usize> {
    let row = c.query_one(
        "SELECT COUNT(*) FROM identity WHERE rsc_id = $1 AND kind = $2",
        &params![person.0, IdentityKind::RecoveryCode.as_str()],
    )?;
    Ok(row.map_or(0, |r| r.int(0).max(0) as usize))
}

impl Store {
    /// Hands `person` a TOTP secret to confirm, replacing one handed out
    /// before (a confirmed secret stays until this one is confirmed).
    pub fn set_pending_totp_secret(&self, person: ResourceId, secret: &str) -> Result<()> {
        check_totp_secret(secret)?;
        let secret = secret.to_owned();
        self.write(|c, ch| {
            require_resource(c, person, "identity")?;
            delete_kind(c, person, IdentityKind::TotpPending)?;
            insert(
                c,
                person,
                IdentityKind::TotpPending,
                person_key(person),
                Some(secret),
            )?;
            ch.add(dependency::identity(person));
            Ok(())
        })
    }

    /// The TOTP secret handed out to `person` and not yet confirmed.
    pub fn pending_totp_secret(&self, person: ResourceId) -> Result<Option<String>> {
        self.read(|c| secret_of(c, person, IdentityKind::TotpPending))
    }

    /// Makes the pending `secret` the person's confirmed one, `step` (the one
    /// its confirming code was for) its last accepted step and
    /// `recovery_code_hashes` its only recovery codes, in one transaction.
    /// `false` (and nothing changed) when `secret` is no longer the pending
    /// one: another enrolment started, or a racing confirmation was first.
    pub fn activate_totp_secret(
        &self,
        person: ResourceId,
        secret: &str,
        step: u64,
        recovery_code_hashes: &[String],
    ) -> Result<bool> {
        check_totp_secret(secret)?;
        for hash in recovery_code_hashes {
            check_recovery_code_hash(hash)?;
        }
        let active = TotpSecret {
            secret: secret.to_owned(),
            last_step: step,
        };
        self.write(|c, ch| {
            let claimed = c.execute(
                "DELETE FROM identity WHERE rsc_id = $1 AND kind = $2 AND secret = $3",
                &params![
                    person.0,
                    IdentityKind::TotpPending.as_str(),
                    active.secret.as_str()
                ],
            )?;
            if claimed != 1 {
                return Ok(false);
            }
            delete_kind(c, person, IdentityKind::Totp)?;
            insert(
                c,
                person,
                IdentityKind::Totp,
                person_key(person),
                Some(active.stored()),
            )?;
            replace_recovery_codes(c, person, recovery_code_hashes)?;
            ch.add(dependency::identity(person));
            Ok(true)
        })
    }

    /// The person's confirmed TOTP secret, if it has one.
    pub fn totp_secret(&self, person: ResourceId) -> Result<Option<TotpSecret>> {
        self.read(|c| secret_of(c, person, IdentityKind::Totp))?
            .map(|value| TotpSecret::from_stored(&value))
            .transpose()
    }

    /// Records that a code for `step` was accepted, if the person's TOTP is
    /// still `seen` (as read before checking the code) and `step` is later
    /// than its last step. `false` means the code must be refused: the step
    /// was used meanwhile (a replay racing the first use), or the secret
    /// changed.
    pub fn advance_totp_step(
        &self,
        person: ResourceId,
        seen: &TotpSecret,
        step: u64,
    ) -> Result<bool> {
        if step <= seen.last_step {
            return Ok(false);
        }
        let next = TotpSecret {
            secret: seen.secret.clone(),
            last_step: step,
        };
        self.write(|c, _| {
            let changed = c.execute(
                "UPDATE identity SET secret = $1 WHERE rsc_id = $2 AND kind = $3 AND secret = $4",
                &params![
                    next.stored(),
                    person.0,
                    IdentityKind::Totp.as_str(),
                    seen.stored()
                ],
            )?;
            // Only the last step changed: nothing cached depends on it.
            Ok(changed == 1)
        })
    }

    /// Replaces all of the person's recovery codes; `false` (and nothing
    /// changed) when it has no confirmed TOTP secret, which they stand in for.
    pub fn replace_recovery_code_hashes(
        &self,
        person: ResourceId,
        hashes: &[String],
    ) -> Result<bool> {
        for hash in hashes {
            check_recovery_code_hash(hash)?;
        }
        self.write(|c, ch| {
            if secret_of(c, person, IdentityKind::Totp)?.is_none() {
                return Ok(false);
            }
            replace_recovery_codes(c, person, hashes)?;
            ch.add(dependency::identity(person));
            Ok(true)
        })
    }

    /// Uses up the recovery code with this hash: `Some(codes left)` if the
    /// person had it (it is gone now), `None` if not.
    pub fn use_recovery_code_hash(&self, person: ResourceId, hash: &str) -> Result<Option<usize>> {
        if check_recovery_code_hash(hash).is_err() {
            return Ok(None);
        }
        self.write(|c, ch| {
            let used = c.execute(
                "DELETE FROM identity WHERE rsc_id = $1 AND kind = $2 AND key = $3",
                &params![person.0, IdentityKind::RecoveryCode.as_str(), hash],
            )?;
            if used != 1 {
                return Ok(None);
            }
            ch.add(dependency::identity(person));
            Ok(Some(count_recovery_codes(c, person)?))
        })
    }

    /// How many unused recovery codes the person has.
    pub fn recovery_code_count(&self, person: ResourceId) -> Result<usize> {
        self.read(|c| count_recovery_codes(c, person))
    }

    /// Removes the person's second factor: confirmed and pending TOTP secrets
    /// and recovery codes. `false` if there was none of them.
    pub fn remove_second_factor(&self, person: ResourceId) -> Result<bool> {
        self.write(|c, ch| {
            let mut removed = 0;
            for kind in [
                IdentityKind::Totp,
                IdentityKind::TotpPending,
                IdentityKind::RecoveryCode,
            ] {
                removed += delete_kind(c, person, kind)?;
            }
            if removed > 0 {
                ch.add(dependency::identity(person));
            }
            Ok(removed > 0)
        })
    }
}
