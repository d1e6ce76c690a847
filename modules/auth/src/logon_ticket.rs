//! The step between a right password and the second factor. After the
//! password, the logon page asks for the code alone and carries a ticket that
//! says "this password was right a moment ago", so nobody types the password
//! twice and it is never written back into a page.
//!
//! The ticket is `expires.mac`: an HMAC-SHA256, under a key of the site's own
//! (made the first time, kept in the database so every node checks what another
//! issued), of the person, the expiry and the password hash the password
//! matched. It holds for [`TICKET_LIFE`], and a new password (a new hash) ends
//! it at once. A ticket stands in for the password only: the code is still
//! checked, and still counted by the logon throttle, as before.

use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use bulwark_store::{ResourceId, Store, StoreError};

/// How long after the password its ticket holds.
pub const TICKET_LIFE: Duration = Duration::from_secs(5 * 60);

const KEY_SETTING: &str = "secret.auth.logon_ticket_key";

/// The site's ticket key, made the first time.
pub fn key(store: &Store) -> Result<Vec<u8>, StoreError> {
    let made = hex::encode(rand::random::<[u8; 32]>());
    Ok(store
        .config_value_or_insert(KEY_SETTING, &made)?
        .into_bytes())
}

fn mac(key: &[u8], person: ResourceId, expires: u64, password_hash: &str) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("any key");
    mac.update(format!("logon ticket\n{}\n{expires}\n{password_hash}", person.0).as_bytes());
    mac
}

/// A ticket for `person`, whose password (stored as `password_hash`) was right
/// at `now` (Unix seconds).
pub fn issue(key: &[u8], person: ResourceId, password_hash: &str, now: u64) -> String {
    let expires = now + TICKET_LIFE.as_secs();
    let tag = mac(key, person, expires, password_hash)
        .finalize()
        .into_bytes();
    format!("{expires}.{}", hex::encode(tag))
}

/// Whether `ticket` was issued for `person` with this password hash and has
/// not expired at `now`.
pub fn holds(key: &[u8], ticket: &str, person: ResourceId, password_hash: &str, now: u64) -> bool {
    let Some((expires, tag)) = ticket.split_once('.') else {
        return false;
    };
    let (Ok(expires), Ok(tag)) = (expires.parse::<u64>(), hex::decode(tag)) else {
        return false;
    };
    expires >= now
        && mac(key, person, expires, password_hash)
            .verify_slice(&tag)
            .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"a key for the test";
    const HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$salt$hash";

    #[test]
    fn a_ticket_holds_for_its_person_and_password_until_it_expires() {
        let mia = ResourceId(7);
        let ticket = issue(KEY, mia, HASH, 1_000);
        assert!(holds(KEY, &ticket, mia, HASH, 1_000));
        assert!(holds(
            KEY,
            &ticket,
            mia,
            HASH,
            1_000 + TICKET_LIFE.as_secs()
        ));
        assert!(
            !holds(KEY, &ticket, mia, HASH, 1_001 + TICKET_LIFE.as_secs()),
            "expired"
        );
        assert!(
            !holds(KEY, &ticket, ResourceId(8), HASH, 1_000),
            "another person"
        );
        assert!(
            !holds(KEY, &ticket, mia, "$argon2id$new", 1_000),
            "the password changed"
        );
        assert!(
            !holds(b"another key", &ticket, mia, HASH, 1_000),
            "another site"
        );
    }

    #[test]
    fn a_changed_or_malformed_ticket_does_not_hold() {
        let mia = ResourceId(7);
        let ticket = issue(KEY, mia, HASH, 1_000);
        let (expires, tag) = ticket.split_once('.').unwrap();
        let later = format!("{}.{tag}", expires.parse::<u64>().unwrap() + 3600);
        assert!(!holds(KEY, &later, mia, HASH, 1_000), "a later expiry");
        for bad in ["", ".", "x.y", "1000", &format!("{expires}.{}", &tag[2..])] {
            assert!(!holds(KEY, bad, mia, HASH, 1_000), "{bad:?}");
        }
    }
}
