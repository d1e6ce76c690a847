//! Second factors as rows of the module's table `auth_second_factor`
//! (migration 4): a person's TOTP secret and recovery codes. `second_factor.rs`
//! makes the secrets, checks the codes and decides; this file keeps what it is
//! handed. The rows go with the person (a foreign key), and a change names the
//! person's [`dependency::identity`] key, as any change of how they log on does.
//!
//! - `totp_pending` (secret: the base32 secret): handed out at enrolment, not
//!   yet confirmed with a code. At most one per person.
//! - `totp` (secret: `<last step>:<base32 secret>`): the confirmed secret, and
//!   the last time step a code was accepted for. The two share one value so
//!   that accepting a step is one compare-and-swap ([`advance_totp_step`]): of
//!   two logons racing with the same code (or with a re-enrolment) only one
//!   changes the row, on SQLite and PostgreSQL alike, without locks.
//! - `recovery_code` (key: the SHA-256 of the code in lower-case hex): one row
//!   per unused code; using one deletes its row, so only one of two racing
//!   uses succeeds.
//!
//! Like password hashes, the shapes are checked: a TOTP secret must be base32
//! of at least 128 bits (RFC 4226's minimum), a recovery code must be a
//! SHA-256, so a plain code cannot be stored by mistake.

use bulwark_store::{ModuleSql, ResourceId, Store, StoreError, dependency};
use chrono::Utc;

type Result<T> = std::result::Result<T, StoreError>;

/// What a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Totp,
    TotpPending,
    RecoveryCode,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Totp => "totp",
            Kind::TotpPending => "totp_pending",
            Kind::RecoveryCode => "recovery_code",
        }
    }
}

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

fn secret_of(sql: &mut ModuleSql<'_>, person: ResourceId, kind: Kind) -> Result<Option<String>> {
    Ok(sql
        .query_one(
            "SELECT secret FROM auth_second_factor WHERE person_id = $1 AND kind = $2",
            &[person.0.into(), kind.as_str().into()],
        )?
        .and_then(|r| r.opt_text(0)))
}

/// A row; `key` is empty for the two secrets.
fn insert(
    sql: &mut ModuleSql<'_>,
    person: ResourceId,
    kind: Kind,
    key: &str,
    secret: Option<String>,
) -> Result<()> {
    sql.execute(
        "INSERT INTO auth_second_factor (person_id, kind, key, secret, created) \
         VALUES ($1, $2, $3, $4, $5)",
        &[
            person.0.into(),
            kind.as_str().into(),
            key.into(),
            secret.into(),
            Utc::now().timestamp_millis().into(),
        ],
    )?;
    Ok(())
}

fn delete_kind(sql: &mut ModuleSql<'_>, person: ResourceId, kind: Kind) -> Result<u64> {
    sql.execute(
        "DELETE FROM auth_second_factor WHERE person_id = $1 AND kind = $2",
        &[person.0.into(), kind.as_str().into()],
    )
}

fn replace_recovery_codes(
    sql: &mut ModuleSql<'_>,
    person: ResourceId,
    hashes: &[String],
) -> Result<()> {
    delete_kind(sql, person, Kind::RecoveryCode)?;
    for hash in hashes {
        insert(sql, person, Kind::RecoveryCode, hash, None)?;
    }
    Ok(())
}

fn count_recovery_codes(sql: &mut ModuleSql<'_>, person: ResourceId) -> Result<usize> {
    let row = sql.query_one(
        "SELECT COUNT(*) FROM auth_second_factor WHERE person_id = $1 AND kind = $2",
        &[person.0.into(), Kind::RecoveryCode.as_str().into()],
    )?;
    Ok(row.map_or(0, |r| r.int(0).max(0) as usize))
}

/// Hands `person` a TOTP secret to confirm, replacing one handed out before
/// (a confirmed secret stays until this one is confirmed).
pub fn set_pending_totp_secret(store: &Store, person: ResourceId, secret: &str) -> Result<()> {
    check_totp_secret(secret)?;
    store.module_write(|sql| {
        sql.require_resource(person, "identity")?;
        delete_kind(sql, person, Kind::TotpPending)?;
        insert(sql, person, Kind::TotpPending, "", Some(secret.to_owned()))?;
        sql.flush(dependency::identity(person));
        Ok(())
    })
}

/// The TOTP secret handed out to `person` and not yet confirmed.
pub fn pending_totp_secret(store: &Store, person: ResourceId) -> Result<Option<String>> {
    store.module_read(|sql| secret_of(sql, person, Kind::TotpPending))
}

/// Makes the pending `secret` the person's confirmed one, `step` (the one its
/// confirming code was for) its last accepted step and `recovery_code_hashes`
/// its only recovery codes, in one transaction. `false` (and nothing changed)
/// when `secret` is no longer the pending one: another enrolment started, or
/// a racing confirmation was first.
pub fn activate_totp_secret(
    store: &Store,
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
    store.module_write(|sql| {
        let claimed = sql.execute(
            "DELETE FROM auth_second_factor WHERE person_id = $1 AND kind = $2 AND secret = $3",
            &[
                person.0.into(),
                Kind::TotpPending.as_str().into(),
                active.secret.as_str().into(),
            ],
        )?;
        if claimed != 1 {
            return Ok(false);
        }
        delete_kind(sql, person, Kind::Totp)?;
        insert(sql, person, Kind::Totp, "", Some(active.stored()))?;
        replace_recovery_codes(sql, person, recovery_code_hashes)?;
        sql.flush(dependency::identity(person));
        Ok(true)
    })
}

/// The person's confirmed TOTP secret, if it has one.
pub fn totp_secret(store: &Store, person: ResourceId) -> Result<Option<TotpSecret>> {
    store
        .module_read(|sql| secret_of(sql, person, Kind::Totp))?
        .map(|value| TotpSecret::from_stored(&value))
        .transpose()
}

/// Records that a code for `step` was accepted, if the person's TOTP is still
/// `seen` (as read before checking the code) and `step` is later than its
/// last step. `false` means the code must be refused: the step was used
/// meanwhile (a replay racing the first use), or the secret changed.
pub fn advance_totp_step(
    store: &Store,
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
    store.module_write(|sql| {
        let changed = sql.execute(
            "UPDATE auth_second_factor SET secret = $1 \
             WHERE person_id = $2 AND kind = $3 AND secret = $4",
            &[
                next.stored().into(),
                person.0.into(),
                Kind::Totp.as_str().into(),
                seen.stored().into(),
            ],
        )?;
        // Only the last step changed: nothing cached depends on it.
        Ok(changed == 1)
    })
}

/// Replaces all of the person's recovery codes; `false` (and nothing
/// changed) when it has no confirmed TOTP secret, which they stand in for.
pub fn replace_recovery_code_hashes(
    store: &Store,
    person: ResourceId,
    hashes: &[String],
) -> Result<bool> {
    for hash in hashes {
        check_recovery_code_hash(hash)?;
    }
    store.module_write(|sql| {
        if secret_of(sql, person, Kind::Totp)?.is_none() {
            return Ok(false);
        }
        replace_recovery_codes(sql, person, hashes)?;
        sql.flush(dependency::identity(person));
        Ok(true)
    })
}

/// Uses up the recovery code with this hash: `Some(codes left)` if the
/// person had it (it is gone now), `None` if not.
pub fn use_recovery_code_hash(
    store: &Store,
    person: ResourceId,
    hash: &str,
) -> Result<Option<usize>> {
    if check_recovery_code_hash(hash).is_err() {
        return Ok(None);
    }
    store.module_write(|sql| {
        let used = sql.execute(
            "DELETE FROM auth_second_factor WHERE person_id = $1 AND kind = $2 AND key = $3",
            &[
                person.0.into(),
                Kind::RecoveryCode.as_str().into(),
                hash.into(),
            ],
        )?;
        if used != 1 {
            return Ok(None);
        }
        sql.flush(dependency::identity(person));
        Ok(Some(count_recovery_codes(sql, person)?))
    })
}

/// How many unused recovery codes the person has.
pub fn recovery_code_count(store: &Store, person: ResourceId) -> Result<usize> {
    store.module_read(|sql| count_recovery_codes(sql, person))
}

/// Removes the person's second factor: confirmed and pending TOTP secrets and
/// recovery codes. `false` if there was none of them.
pub fn remove_second_factor(store: &Store, person: ResourceId) -> Result<bool> {
    store.module_write(|sql| {
        let removed = sql.execute(
            "DELETE FROM auth_second_factor WHERE person_id = $1",
            &[person.0.into()],
        )?;
        if removed > 0 {
            sql.flush(dependency::identity(person));
        }
        Ok(removed > 0)
    })
}
