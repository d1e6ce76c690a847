//! Time-based one-time passwords (RFC 6238), as authenticator apps make them:
//! HMAC-SHA-1, 6 digits, a 30-second step, a 160-bit secret shown in base32.
//!
//! The arithmetic is the `totp-rs` crate's (its token comparison is
//! constant-time); this file fixes the parameters, makes secrets and the
//! `otpauth://` provisioning URI, and finds *which* step a code is for, so the
//! caller can refuse a step that was used before (RFC 6238, section 5.2: a
//! code is accepted once). A code for the current step or one step either side
//! is accepted, for clocks that are a little off and codes typed at the end of
//! their step.

use std::time::{SystemTime, UNIX_EPOCH};

use rand::Rng;
use totp_rs::{Algorithm, Builder, Secret};

/// Seconds per step.
pub const STEP_SECONDS: u64 = 30;
/// Digits of a code.
pub const DIGITS: u8 = 6;
/// Steps either side of the current one whose codes are accepted.
const SKEW_STEPS: u64 = 1;
/// RFC 4226's recommended secret length: 160 bits.
const SECRET_BYTES: usize = 20;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TotpError {
    #[error("the TOTP secret is not base32 of at least 128 bits")]
    BadSecret,
    #[error("making the provisioning URI: {0}")]
    Uri(#[source] totp_rs::TotpError),
}

/// A TOTP secret with the parameters above. Its `Debug` hides the secret.
#[derive(Clone)]
pub struct TotpKey {
    secret: Secret,
    /// The secret in base32, as stored and as people type it into an app.
    base32: String,
}

impl std::fmt::Debug for TotpKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TotpKey(..)")
    }
}

impl TotpKey {
    /// A new random secret of 160 bits, from the operating system's generator
    /// by way of `rand`'s thread generator.
    pub fn random() -> TotpKey {
        let bytes: [u8; SECRET_BYTES] = rand::rng().random();
        TotpKey::from_bytes(&bytes).expect("160 bits are enough")
    }

    /// A secret from its raw bytes (at least 128 bits).
    pub fn from_bytes(bytes: &[u8]) -> Result<TotpKey, TotpError> {
        if bytes.len() < 16 {
            return Err(TotpError::BadSecret);
        }
        let secret = Secret::new(bytes.into());
        let base32 = secret.to_base32();
        Ok(TotpKey { secret, base32 })
    }

    /// A secret from base32 (RFC 4648); case, spaces and padding do not matter.
    pub fn from_base32(text: &str) -> Result<TotpKey, TotpError> {
        let cleaned: String = text
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '=')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let secret = Secret::try_from_base32(&cleaned).map_err(|_| TotpError::BadSecret)?;
        TotpKey::from_bytes(secret.as_bytes())
    }

    /// The secret in base32 without padding, upper case.
    pub fn base32(&self) -> &str {
        &self.base32
    }

    /// The code for `step` (Unix time / 30 s), six digits with leading zeros.
    pub fn code_at_step(&self, step: u64) -> String {
        self.totp(None, "")
            .generate(step * STEP_SECONDS)
            .to_string()
    }

    /// The code for a moment given in seconds since the Unix epoch.
    pub fn code_at(&self, unix_seconds: u64) -> String {
        self.code_at_step(unix_seconds / STEP_SECONDS)
    }

    /// The step `code` is for, if it is the code of the step of `unix_seconds`
    /// or of one either side, and that step is later than `after` (the last
    /// step accepted before: its code and earlier ones are replays). Spaces in
    /// the code (`123 456`, as apps show it) are ignored.
    pub fn matching_step(&self, code: &str, unix_seconds: u64, after: Option<u64>) -> Option<u64> {
        let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        let totp = self.totp(None, "");
        let now = unix_seconds / STEP_SECONDS;
        (now.saturating_sub(SKEW_STEPS)..=now + SKEW_STEPS)
            .filter(|step| after.is_none_or(|last| *step > last))
            // `check` with no skew compares with one step's code, in constant time.
            .find(|step| totp.check(&code, step * STEP_SECONDS).is_some())
    }

    /// The `otpauth://totp/...` URI an authenticator app reads (from a QR code
    /// or pasted): `issuer` is the site, `account` the username. A `:` in
    /// either (the URI format forbids it in both) shows as `.`.
    pub fn provisioning_uri(&self, issuer: &str, account: &str) -> Result<String, TotpError> {
        self.totp(Some(issuer.replace(':', ".")), &account.replace(':', "."))
            .to_url()
            .map_err(TotpError::Uri)
    }

    fn totp(&self, issuer: Option<String>, account: &str) -> totp_rs::Totp {
        Builder::new()
            .with_algorithm(Algorithm::SHA1)
            .with_digits(DIGITS)
            .with_skew(0)
            .with_step_duration(STEP_SECONDS)
            .with_secret(self.secret.clone())
            .with_issuer(issuer)
            .with_account_name(account)
            // The parameters are fixed above and the secret checked in
            // `from_bytes`; `build` would only check them again.
            .build_noncompliant()
    }
}

/// Seconds since the Unix epoch, now.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238, appendix B: the SHA-1 seed is the 20 ASCII bytes
    /// "12345678901234567890"; the 8-digit codes there, cut to the last six.
    const RFC_6238_SHA1: [(u64, &str); 6] = [
        (59, "94287082"),
        (1111111109, "07081804"),
        (1111111111, "14050471"),
        (1234567890, "89005924"),
        (2000000000, "69279037"),
        (20000000000, "65353130"),
    ];

    fn rfc_key() -> TotpKey {
        TotpKey::from_bytes(b"12345678901234567890").unwrap()
    }

    #[test]
    fn the_rfc_6238_test_vectors_give_their_codes() {
        let key = rfc_key();
        for (time, eight) in RFC_6238_SHA1 {
            let six = &eight[2..];
            assert_eq!(key.code_at(time), six, "T = {time}");
            let step = time / STEP_SECONDS;
            assert_eq!(key.matching_step(six, time, None), Some(step), "T = {time}");
        }
    }

    #[test]
    fn the_base32_form_is_the_same_secret() {
        let key = rfc_key();
        assert_eq!(key.base32(), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
        let again = TotpKey::from_base32("gezd gnbv gy3t qojq gezd gnbv gy3t qojq").unwrap();
        assert_eq!(again.code_at(59), "287082");
        assert!(TotpKey::from_base32("not base32!").is_err());
        assert!(
            TotpKey::from_base32("GEZDGNBVGY3TQOJQ").is_err(),
            "80 bits are too few"
        );
    }

    #[test]
    fn a_code_is_accepted_one_step_either_side_and_not_further() {
        let key = rfc_key();
        let now = 1234567890;
        let step = now / STEP_SECONDS;
        for (offset, accepted) in [(-2, false), (-1, true), (0, true), (1, true), (2, false)] {
            let code = key.code_at_step(step.checked_add_signed(offset).unwrap());
            let expected = accepted.then(|| step.checked_add_signed(offset).unwrap());
            assert_eq!(
                key.matching_step(&code, now, None),
                expected,
                "offset {offset}"
            );
        }
    }

    #[test]
    fn a_code_for_the_last_accepted_step_or_an_earlier_one_is_refused() {
        let key = rfc_key();
        let now = 1234567890;
        let step = now / STEP_SECONDS;
        let code = key.code_at_step(step);
        assert_eq!(key.matching_step(&code, now, Some(step - 1)), Some(step));
        assert_eq!(key.matching_step(&code, now, Some(step)), None, "replay");
        // After a code from an app running ahead was accepted, the current
        // step's code is older than it.
        assert_eq!(key.matching_step(&code, now, Some(step + 1)), None);
        let next = key.code_at_step(step + 1);
        assert_eq!(key.matching_step(&next, now, Some(step)), Some(step + 1));
    }

    #[test]
    fn malformed_codes_are_refused_and_spaces_are_ignored() {
        let key = rfc_key();
        let code = key.code_at(59);
        assert_eq!(key.matching_step("287 082", 59, None), Some(1));
        for bad in ["", "28708", "2870820", "+87082", "28708a", "-87082"] {
            assert_eq!(key.matching_step(bad, 59, None), None, "{bad:?}");
        }
        assert_eq!(code, "287082");
    }

    #[test]
    fn the_provisioning_uri_names_the_site_and_the_user() {
        let key = rfc_key();
        let uri = key.provisioning_uri("shop", "ann").unwrap();
        assert_eq!(
            uri,
            "otpauth://totp/shop:ann?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=shop"
        );
        let odd = key.provisioning_uri("shop", "a:b c").unwrap();
        assert!(odd.starts_with("otpauth://totp/shop:a.b%20c?"), "{odd}");
    }

    #[test]
    fn random_secrets_are_160_bits_and_differ() {
        let (a, b) = (TotpKey::random(), TotpKey::random());
        assert_eq!(a.base32().len(), 32);
        assert_ne!(a.base32(), b.base32());
        assert!(!format!("{a:?}").contains(a.base32()));
    }
}
