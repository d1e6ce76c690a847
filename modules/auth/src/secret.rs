//! The module's random secrets and how it stores them: session tokens, reset
//! tokens and recovery codes are random, so a plain SHA-256 of each is what
//! the database keeps (a slow password hash would add nothing).

use sha2::{Digest, Sha256};

/// 256 bits from the operating system's generator (by way of `rand`'s thread
/// generator, a CSPRNG seeded from it), as 64 lowercase hex digits.
pub(crate) fn random_hex() -> String {
    let bytes: [u8; 32] = rand::random();
    hex::encode(bytes)
}

/// SHA-256 of `bytes`, as 64 lowercase hex digits.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_64_hex_digits_and_hashes_are_sha256() {
        let a = random_hex();
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_ne!(a, random_hex());
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
