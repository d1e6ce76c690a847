//! What a voter sends, checked: three distinct projects, a name, an e-mail
//! address and a postcode; and the signed tokens that keep the form honest.
//!
//! A voter has no session, so the form's CSRF protection cannot ride on one.
//! Instead the form carries a *ballot token*, the time it was issued and a
//! random nonce signed with the site's voting key (HMAC-SHA256, one key in the
//! database shared by every node, so any node accepts a form another node
//! served). A post needs a valid token no older than [`BALLOT_LIFETIME`], and a
//! browser that says the post comes from another site (`Origin`,
//! `Sec-Fetch-Site`) is refused before that. The confirmation page's link is
//! signed the same way, so vote ids cannot be walked.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How long a form may be open before it is posted.
pub const BALLOT_LIFETIME: Duration = Duration::from_secs(2 * 3600);
/// Projects a voter picks.
pub const PICKS: usize = 3;

/// The site's signing key.
#[derive(Clone)]
pub struct VotingKey(Vec<u8>);

impl std::fmt::Debug for VotingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("VotingKey(..)")
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl VotingKey {
    pub fn new(secret: &str) -> VotingKey {
        VotingKey(secret.as_bytes().to_vec())
    }

    /// A fresh key's text (stored once per database).
    pub fn random_secret() -> String {
        hex::encode(rand::random::<[u8; 32]>())
    }

    fn sign(&self, message: &str) -> String {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("HMAC takes any key");
        mac.update(message.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    fn verify(&self, message: &str, signature: &str) -> bool {
        let Some(bytes) = unhex(signature) else {
            return false;
        };
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("HMAC takes any key");
        mac.update(message.as_bytes());
        // Compared in constant time.
        mac.verify_slice(&bytes).is_ok()
    }

    /// A new ballot token for a form.
    pub fn ballot(&self) -> String {
        self.ballot_at(now_secs())
    }

    fn ballot_at(&self, issued: u64) -> String {
        let body = format!("{issued:x}.{}", hex::encode(rand::random::<[u8; 12]>()));
        let signature = self.sign(&format!("ballot:{body}"));
        format!("{body}.{signature}")
    }

    /// Whether `token` is a ballot this site issued within its lifetime.
    pub fn ballot_is_valid(&self, token: &str) -> bool {
        self.ballot_is_valid_at(token, now_secs())
    }

    fn ballot_is_valid_at(&self, token: &str, now: u64) -> bool {
        let mut parts = token.splitn(3, '.');
        let (Some(issued), Some(nonce), Some(signature)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let Ok(issued_at) = u64::from_str_radix(issued, 16) else {
            return false;
        };
        let age = now.saturating_sub(issued_at);
        issued_at <= now + 60
            && age <= BALLOT_LIFETIME.as_secs()
            && self.verify(&format!("ballot:{issued}.{nonce}"), signature)
    }

    /// The signature in vote `id`'s confirmation link.
    pub fn receipt(&self, id: i64) -> String {
        self.sign(&format!("receipt:{id}"))
    }

    pub fn receipt_is_valid(&self, id: i64, signature: &str) -> bool {
        self.verify(&format!("receipt:{id}"), signature)
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || text.len() > 128 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A voter's details as they were typed, for showing the form again.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Typed {
    pub name: String,
    pub email: String,
    pub postcode: String,
}

/// A voter's details, checked and normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voter {
    pub name: String,
    /// Lowercased: one vote per address, however it is written.
    pub email: String,
    /// `1234AB`.
    pub postcode: String,
}

/// What is wrong with a field, as a code the template turns into words in the
/// visitor's language.
pub type Problems = std::collections::BTreeMap<&'static str, &'static str>;

impl Typed {
    /// The checked voter, or every field's problem.
    pub fn check(&self) -> Result<Voter, Problems> {
        let mut problems = Problems::new();
        let name = self.name.trim();
        let name_chars = name.chars().count();
        if name_chars == 0 {
            problems.insert("name", "missing");
        } else if !(2..=100).contains(&name_chars) || name.chars().any(char::is_control) {
            problems.insert("name", "invalid");
        }
        let email = self.email.trim().to_lowercase();
        if email.is_empty() {
            problems.insert("email", "missing");
        } else if !valid_email(&email) {
            problems.insert("email", "invalid");
        }
        let postcode: String = self
            .postcode
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_uppercase();
        if postcode.is_empty() {
            problems.insert("postcode", "missing");
        } else if !valid_postcode(&postcode) {
            problems.insert("postcode", "invalid");
        }
        if problems.is_empty() {
            Ok(Voter {
                name: name.to_owned(),
                email,
                postcode,
            })
        } else {
            Err(problems)
        }
    }
}

/// A plausible address: one `@`, a local part and a dotted domain of the
/// characters addresses use, within the lengths mail allows.
fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && local
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+/=?^_`{|}~.-".contains(c))
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..");
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
        && labels
            .last()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()));
    email.len() <= 254 && local_ok && domain_ok
}

/// A Dutch postcode without its space: four digits (no leading zero), two
/// letters.
fn valid_postcode(postcode: &str) -> bool {
    let b = postcode.as_bytes();
    b.len() == 6
        && (b'1'..=b'9').contains(&b[0])
        && b[1..4].iter().all(u8::is_ascii_digit)
        && b[4..].iter().all(u8::is_ascii_uppercase)
}

/// The three projects picked, as ids: exactly [`PICKS`] distinct ones.
pub fn parse_picks<'a>(
    values: impl Iterator<Item = &'a str>,
) -> Result<[i64; PICKS], &'static str> {
    let mut picks = Vec::new();
    for v in values {
        let id: i64 = v.trim().parse().map_err(|_| "invalid")?;
        if id <= 0 {
            return Err("invalid");
        }
        if picks.contains(&id) {
            return Err("twice");
        }
        picks.push(id);
    }
    match picks.len() {
        PICKS => Ok([picks[0], picks[1], picks[2]]),
        n if n < PICKS => Err("too_few"),
        _ => Err("too_many"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(name: &str, email: &str, postcode: &str) -> Typed {
        Typed {
            name: name.into(),
            email: email.into(),
            postcode: postcode.into(),
        }
    }

    #[test]
    fn a_voter_is_normalised() {
        let voter = typed("  Anna de Vries ", "Anna@Example.NL ", "1234 ab")
            .check()
            .unwrap();
        assert_eq!(
            voter,
            Voter {
                name: "Anna de Vries".into(),
                email: "anna@example.nl".into(),
                postcode: "1234AB".into()
            }
        );
    }

    #[test]
    fn each_bad_field_is_named() {
        let problems = typed("", "not an address", "0123 AB").check().unwrap_err();
        assert_eq!(problems.get("name"), Some(&"missing"));
        assert_eq!(problems.get("email"), Some(&"invalid"));
        assert_eq!(problems.get("postcode"), Some(&"invalid"));
        for bad in [
            "a@b", "@x.nl", "a@x..nl", "a b@x.nl", "a@-x.nl", "a@x.n1", ".a@x.nl",
        ] {
            assert!(!valid_email(bad), "{bad}");
        }
        for good in ["a@x.nl", "first.last+tag@sub.example.org"] {
            assert!(valid_email(good), "{good}");
        }
        for bad in ["1234A", "12345B", "1234A1", "ABCDEF"] {
            assert!(!valid_postcode(bad), "{bad}");
        }
    }

    #[test]
    fn three_distinct_picks_are_needed() {
        assert_eq!(parse_picks(["3", "1", "2"].into_iter()), Ok([3, 1, 2]));
        assert_eq!(parse_picks(["3", "1"].into_iter()), Err("too_few"));
        assert_eq!(
            parse_picks(["3", "1", "2", "4"].into_iter()),
            Err("too_many")
        );
        assert_eq!(parse_picks(["3", "3", "2"].into_iter()), Err("twice"));
        assert_eq!(parse_picks(["3", "x", "2"].into_iter()), Err("invalid"));
    }

    #[test]
    fn a_ballot_is_valid_only_signed_by_this_key_and_within_its_lifetime() {
        let key = VotingKey::new("one");
        let token = key.ballot();
        assert!(key.ballot_is_valid(&token));
        assert!(!VotingKey::new("other").ballot_is_valid(&token));
        let mut forged = token.clone();
        forged.replace_range(0..1, if token.starts_with('0') { "1" } else { "0" });
        assert!(!key.ballot_is_valid(&forged));
        let old = key.ballot_at(now_secs() - BALLOT_LIFETIME.as_secs() - 1);
        assert!(!key.ballot_is_valid(&old));
        assert!(!key.ballot_is_valid("nonsense"));
        assert!(key.receipt_is_valid(7, &key.receipt(7)));
        assert!(!key.receipt_is_valid(8, &key.receipt(7)));
    }
}
