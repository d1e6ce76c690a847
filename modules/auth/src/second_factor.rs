//! The second factor: a TOTP code from an authenticator app, or a recovery code.
//!
//! **Enrolment** takes two steps, so nobody is locked out by a secret their
//! app never received: [`start_enrolment`] hands out a new secret (base32 and
//! an `otpauth://` URI) and keeps it *pending*; [`confirm_enrolment`] with a
//! code the app made from it makes it the account's secret and returns ten new
//! recovery codes, shown this once. Until then an earlier secret, if any, stays
//! in force.
//!
//! **Checking** ([`verify_second_factor`]) takes what the person typed: six
//! digits are a TOTP code (see [`crate::totp`]: the current step or one either
//! side, and never a step at or before the last one accepted, so a code works
//! once); anything else is tried as a recovery code, which works once too.
//!
//! **Recovery codes** are 16 random characters (80 bits) from Crockford's
//! base32 alphabet, shown as `xxxx-xxxx-xxxx-xxxx`. Only their SHA-256 is
//! stored: they are random and long, so a fast hash is as good as argon2 here,
//! and checking one costs nothing. [`regenerate_recovery_codes`] replaces them
//! all.
//!
//! **Requiring it**: `[auth] require_second_factor` names user groups
//! ([`crate::AuthSettings`]); [`second_factor_required`] says whether a person
//! is in one of them or in a group that extends one.
//!
//! The TOTP secret itself has to be stored as it is (the server computes the
//! codes from it): whoever reads the database or a backup can make codes.
//!
//! The functions here run on a thread that may block (they call the store).
//! How many wrong codes someone may try is the logon's business: with three
//! codes valid at any moment, guessing one of a million needs a limit on
//! attempts, like passwords.

use crate::second_factor_table as table;
use crate::secret::sha256_hex;
use bulwark_store::{ResourceId, Store, StoreError};
use rand::Rng;

use crate::accounts::{self, AccountError};
use crate::settings::AuthSettings;
use crate::totp::{self, TotpError, TotpKey};

/// Recovery codes made at a time.
pub const RECOVERY_CODES: usize = 10;
/// Crockford's base32: no I, L, O or U to misread.
const RECOVERY_ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
/// 16 characters of 5 bits: 80 bits.
const RECOVERY_CODE_CHARS: usize = 16;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecondFactorError {
    #[error("there is no enrolment to confirm: start one first")]
    NoPendingEnrolment,
    #[error(
        "the code does not match the new secret: check that the device's clock is right and try the next code"
    )]
    WrongCode,
    #[error("the account has no second factor")]
    NotEnrolled,
    #[error(transparent)]
    Totp(#[from] TotpError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A secret handed out by [`start_enrolment`], for the person's app. Its
/// `Debug` hides it.
pub struct PendingEnrolment {
    /// Base32, for typing into an app.
    pub secret: String,
    /// `otpauth://totp/<site>:<username>?secret=...&issuer=<site>`, for a QR
    /// code or pasting.
    pub uri: String,
}

impl PendingEnrolment {
    /// The URI as a QR code in SVG, black on white, at least 200 pixels wide,
    /// for an enrolment page.
    pub fn qr_svg(&self) -> String {
        self.qr_code()
            .render::<qrcode::render::svg::Color>()
            .min_dimensions(200, 200)
            .build()
    }

    /// The URI as a QR code in Unicode half blocks, for a terminal with a dark
    /// background (the blocks are the light modules).
    pub fn qr_text(&self) -> String {
        use qrcode::render::unicode::Dense1x2;
        self.qr_code()
            .render::<Dense1x2>()
            .dark_color(Dense1x2::Light)
            .light_color(Dense1x2::Dark)
            .build()
    }

    fn qr_code(&self) -> qrcode::QrCode {
        // A few hundred bytes at most (a username is at most 80 characters);
        // a QR code holds over 2,000.
        qrcode::QrCode::new(self.uri.as_bytes()).expect("the URI fits in a QR code")
    }
}

impl std::fmt::Debug for PendingEnrolment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PendingEnrolment(..)")
    }
}

/// New recovery codes, to show the person once (only their hashes are kept).
/// Its `Debug` hides them.
pub struct RecoveryCodes(Vec<String>);

impl RecoveryCodes {
    /// The codes as shown: `xxxx-xxxx-xxxx-xxxx`.
    pub fn codes(&self) -> &[String] {
        &self.0
    }

    fn new() -> (RecoveryCodes, Vec<String>) {
        let mut rng = rand::rng();
        let codes: Vec<String> = (0..RECOVERY_CODES)
            .map(|_| {
                let chars: Vec<u8> = (0..RECOVERY_CODE_CHARS)
                    .map(|_| RECOVERY_ALPHABET[rng.random_range(0..RECOVERY_ALPHABET.len())])
                    .collect();
                chars
                    .chunks(4)
                    .map(|group| std::str::from_utf8(group).expect("ASCII"))
                    .collect::<Vec<_>>()
                    .join("-")
            })
            .collect();
        let hashes = codes
            .iter()
            .map(|code| recovery_code_hash(code).expect("a code made here is well-formed"))
            .collect();
        (RecoveryCodes(codes), hashes)
    }
}

impl std::fmt::Debug for RecoveryCodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecoveryCodes({} codes)", self.0.len())
    }
}

/// The SHA-256 (lower-case hex) of a recovery code as typed: case, spaces and
/// dashes do not matter, and the letters Crockford's alphabet leaves out are
/// read as the digits they look like. `None` if it cannot be one.
fn recovery_code_hash(typed: &str) -> Option<String> {
    let normalised: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| match c.to_ascii_lowercase() {
            'o' => '0',
            'i' | 'l' => '1',
            c => c,
        })
        .collect();
    let shaped = normalised.len() == RECOVERY_CODE_CHARS
        && normalised.bytes().all(|b| RECOVERY_ALPHABET.contains(&b));
    if !shaped {
        return None;
    }
    Some(sha256_hex(normalised.as_bytes()))
}

/// What [`verify_second_factor`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecondFactorCheck {
    /// A TOTP code for a step not used before.
    Accepted,
    /// An unused recovery code, now used up; `remaining` are left (tell the
    /// person when they run low).
    AcceptedRecoveryCode { remaining: usize },
    /// Wrong, used before, too old, or the account has no second factor.
    Refused,
}

/// Hands `person` a new TOTP secret to put in an authenticator app and
/// confirm with [`confirm_enrolment`]. `issuer` (the site's name) and
/// `username` label the entry in the app.
pub fn start_enrolment(
    store: &Store,
    person: ResourceId,
    issuer: &str,
    username: &str,
) -> Result<PendingEnrolment, SecondFactorError> {
    let key = TotpKey::random();
    let uri = key.provisioning_uri(issuer, username)?;
    table::set_pending_totp_secret(store, person, key.base32())?;
    Ok(PendingEnrolment {
        secret: key.base32().to_owned(),
        uri,
    })
}

/// The enrolment `person` started and has not confirmed yet, to show again
/// (after a mistyped code), or `None`.
pub fn pending_enrolment(
    store: &Store,
    person: ResourceId,
    issuer: &str,
    username: &str,
) -> Result<Option<PendingEnrolment>, SecondFactorError> {
    let Some(secret) = table::pending_totp_secret(store, person)? else {
        return Ok(None);
    };
    let key = TotpKey::from_base32(&secret)?;
    Ok(Some(PendingEnrolment {
        uri: key.provisioning_uri(issuer, username)?,
        secret,
    }))
}

/// Confirms the pending secret with a code the app made from it: from now on
/// the account needs a second factor. Returns the new recovery codes (an
/// earlier secret and its codes are replaced).
pub fn confirm_enrolment(
    store: &Store,
    person: ResourceId,
    code: &str,
) -> Result<RecoveryCodes, SecondFactorError> {
    confirm_enrolment_at(store, person, code, totp::unix_now())
}

/// [`confirm_enrolment`] at a given moment (seconds since the Unix epoch).
pub fn confirm_enrolment_at(
    store: &Store,
    person: ResourceId,
    code: &str,
    unix_seconds: u64,
) -> Result<RecoveryCodes, SecondFactorError> {
    let pending =
        table::pending_totp_secret(store, person)?.ok_or(SecondFactorError::NoPendingEnrolment)?;
    let key = TotpKey::from_base32(&pending)?;
    let step = key
        .matching_step(code, unix_seconds, None)
        .ok_or(SecondFactorError::WrongCode)?;
    let (codes, hashes) = RecoveryCodes::new();
    // The confirming step counts as used: its code cannot log on afterwards.
    if table::activate_totp_secret(store, person, key.base32(), step, &hashes)? {
        Ok(codes)
    } else {
        // Another enrolment started (or this one was confirmed) meanwhile.
        Err(SecondFactorError::NoPendingEnrolment)
    }
}

/// Removes the person's second factor (secret, pending secret, recovery
/// codes); `false` if it had none.
pub fn disable(store: &Store, person: ResourceId) -> Result<bool, StoreError> {
    table::remove_second_factor(store, person)
}

/// Whether the person has a confirmed second factor (then the logon must ask
/// for a code).
pub fn has_second_factor(store: &Store, person: ResourceId) -> Result<bool, StoreError> {
    Ok(table::totp_secret(store, person)?.is_some())
}

/// Checks what the person typed as their second factor; see the module
/// comment. A code that is accepted is used up.
pub fn verify_second_factor(
    store: &Store,
    person: ResourceId,
    code: &str,
) -> Result<SecondFactorCheck, StoreError> {
    verify_second_factor_at(store, person, code, totp::unix_now())
}

/// [`verify_second_factor`] at a given moment (seconds since the Unix epoch).
pub fn verify_second_factor_at(
    store: &Store,
    person: ResourceId,
    code: &str,
    unix_seconds: u64,
) -> Result<SecondFactorCheck, StoreError> {
    let Some(active) = table::totp_secret(store, person)? else {
        return Ok(SecondFactorCheck::Refused);
    };
    let digits: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if digits.len() == usize::from(totp::DIGITS) && digits.bytes().all(|b| b.is_ascii_digit()) {
        let Ok(key) = TotpKey::from_base32(&active.secret) else {
            return Ok(SecondFactorCheck::Refused);
        };
        let accepted = match key.matching_step(&digits, unix_seconds, Some(active.last_step)) {
            Some(step) => table::advance_totp_step(store, person, &active, step)?,
            None => false,
        };
        return Ok(if accepted {
            SecondFactorCheck::Accepted
        } else {
            SecondFactorCheck::Refused
        });
    }
    let Some(hash) = recovery_code_hash(code) else {
        return Ok(SecondFactorCheck::Refused);
    };
    Ok(match table::use_recovery_code_hash(store, person, &hash)? {
        Some(remaining) => SecondFactorCheck::AcceptedRecoveryCode { remaining },
        None => SecondFactorCheck::Refused,
    })
}

/// Ten new recovery codes for an account with a second factor, replacing all
/// of its earlier ones.
pub fn regenerate_recovery_codes(
    store: &Store,
    person: ResourceId,
) -> Result<RecoveryCodes, SecondFactorError> {
    let (codes, hashes) = RecoveryCodes::new();
    if table::replace_recovery_code_hashes(store, person, &hashes)? {
        Ok(codes)
    } else {
        Err(SecondFactorError::NotEnrolled)
    }
}

/// How many unused recovery codes the person has.
pub fn recovery_codes_left(store: &Store, person: ResourceId) -> Result<usize, StoreError> {
    table::recovery_code_count(store, person)
}

/// Whether `[auth] require_second_factor` applies to the person: it counts in
/// one of the groups named (directly, or by a group that extends it). A named
/// group that does not exist is an error, not a silent "no".
pub fn second_factor_required(
    store: &Store,
    person: ResourceId,
    settings: &AuthSettings,
) -> Result<bool, AccountError> {
    let required = settings.require_second_factor();
    if required.is_empty() {
        return Ok(false);
    }
    let counted = accounts::counted_group_ids(store, person)?;
    for group in &required {
        if counted.contains(&accounts::group_id(store, group)?) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_codes_are_ten_different_80_bit_codes_in_groups_of_four() {
        let (codes, hashes) = RecoveryCodes::new();
        assert_eq!(codes.codes().len(), RECOVERY_CODES);
        for code in codes.codes() {
            assert_eq!(code.len(), 19, "{code}");
            assert_eq!(code.split('-').count(), 4, "{code}");
        }
        let mut unique = hashes.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), RECOVERY_CODES);
        assert!(!format!("{codes:?}").contains(&codes.codes()[0]));
    }

    #[test]
    fn the_qr_code_is_svg_and_terminal_text_of_the_uri() {
        let pending = PendingEnrolment {
            secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ".to_owned(),
            uri: "otpauth://totp/shop:ann?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=shop"
                .to_owned(),
        };
        let svg = pending.qr_svg();
        assert!(svg.contains("<svg") && svg.ends_with("</svg>"), "{svg}");
        assert!(!svg.contains("otpauth"), "the URI is drawn, not written");
        let text = pending.qr_text();
        assert!(text.lines().count() > 10 && text.contains('▀'), "{text}");
        let other = PendingEnrolment {
            secret: String::new(),
            uri: pending.uri.replace("ann", "bob"),
        };
        assert_ne!(other.qr_svg(), svg);
    }

    #[test]
    fn a_recovery_code_hashes_the_same_however_it_is_typed() {
        let hash = recovery_code_hash("0123-4567-89ab-cdef").unwrap();
        assert_eq!(hash.len(), 64);
        for typed in [
            "0123456789abcdef",
            "O123-4567-89AB-CDEF",
            " 0i23 4567 89ab cdef ",
            "0l23-4567-89ab-cdef",
        ] {
            assert_eq!(
                recovery_code_hash(typed).as_deref(),
                Some(&*hash),
                "{typed}"
            );
        }
        for bad in [
            "",
            "0123-4567-89ab-cde",
            "0123-4567-89ab-cdeff",
            "0123-4567-89ab-cdeu",
        ] {
            assert_eq!(recovery_code_hash(bad), None, "{bad}");
        }
    }
}
