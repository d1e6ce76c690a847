//! Passwords: the one place they are hashed and checked.
//!
//! **Cost.** Argon2id with OWASP's minimum recommended parameters: 19 MiB of
//! memory, 2 iterations, 1 lane (OWASP Password Storage Cheat Sheet, "Argon2id":
//! "m=19456 (19 MiB), t=2, p=1"). A hash is a PHC string that carries its own
//! parameters, so raising them later leaves old hashes verifiable.
//!
//! **Never on the async workers.** A hash takes tens of milliseconds of one core
//! and 19 MiB: the async paths ([`Passwords::hash`], [`Passwords::verify_or_dummy`])
//! run it on tokio's blocking pool, as many at once as half the machine's cores
//! (at least one), pinned to that many cores of their own ([`crate::hashing_cores`]).
//! Whoever waits longer than the queue deadline for a turn gets
//! [`PasswordError::Busy`] instead of piling up: a logon storm costs at most
//! those cores and that memory, and pages keep being served on the others. (With
//! one hash per core, a storm on two cores took both from the page workers: a
//! cached page's p99 went from 0.2 ms to 5-30 ms; bench/sessions.sh.) A turn is
//! held until the hash is really done, even when the request that asked went away.
//!
//! **Same answer, same time.** Comparing the computed hash with the stored one is
//! constant-time (the `password-hash` crate compares its `Output`s with `subtle`),
//! and [`Passwords::verify_or_dummy`] spends one full verification when there is
//! no stored hash (an unknown user), so timing does not tell whether a username
//! exists.
//!
//! The blocking forms ([`Passwords::hash_blocking`], [`Passwords::verify_blocking`]) are for callers that are
//! already on a thread that may block and serve no requests: the command line and
//! a site's first start.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

use crate::hashing_cores::HashingCores;

/// Shorter new passwords are refused.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Longer passwords are refused outright, before any hashing: argon2 accepts any
/// length, and nobody types more.
pub const MAX_PASSWORD_BYTES: usize = 1024;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PasswordError {
    #[error("the password is too short: use at least {min} characters")]
    TooShort { min: usize },
    #[error("the password is too long: at most {max} bytes")]
    TooLong { max: usize },
    /// Every hashing turn stayed taken for the whole queue deadline; try later
    /// (503 on a request).
    #[error("too many passwords are being checked right now; try again in a moment")]
    Busy { waited: Duration },
    /// The cost does not make valid argon2 parameters.
    #[error("password hashing cost: {0}")]
    Cost(#[source] argon2::Error),
    #[error("hashing the password: {0}")]
    Hashing(#[source] argon2::password_hash::Error),
    #[error("hashing the password: the worker thread failed: {0}")]
    Task(#[source] tokio::task::JoinError),
}

/// A password as someone typed it, for checking. Its `Debug` hides it.
pub struct Password(String);

impl Password {
    pub fn new(password: String) -> Result<Password, PasswordError> {
        if password.len() > MAX_PASSWORD_BYTES {
            return Err(PasswordError::TooLong {
                max: MAX_PASSWORD_BYTES,
            });
        }
        Ok(Password(password))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(..)")
    }
}

/// A password that is about to be set: long enough, and not too long.
#[derive(Debug)]
pub struct NewPassword(Password);

impl NewPassword {
    pub fn new(password: String) -> Result<NewPassword, PasswordError> {
        if password.chars().count() < MIN_PASSWORD_CHARS {
            return Err(PasswordError::TooShort {
                min: MIN_PASSWORD_CHARS,
            });
        }
        Password::new(password).map(NewPassword)
    }

    /// A random password of 20 letters and digits (about 119 bits), from the
    /// operating system's generator by way of `rand`'s thread generator.
    pub fn random() -> (NewPassword, String) {
        use rand::Rng;
        let text: String = rand::rng()
            .sample_iter(rand::distr::Alphanumeric)
            .take(20)
            .map(char::from)
            .collect();
        (NewPassword(Password(text.clone())), text)
    }
}

/// The argon2id cost of new hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashCost {
    pub memory_kib: u32,
    pub iterations: u32,
    pub parallelism: u32,
}

impl Default for HashCost {
    /// OWASP: m = 19 MiB, t = 2, p = 1 (see the module comment).
    fn default() -> Self {
        HashCost {
            memory_kib: 19 * 1024,
            iterations: 2,
            parallelism: 1,
        }
    }
}

/// How many hashes may run at once and how long one may wait for a turn.
#[derive(Debug, Clone, Copy)]
pub struct HashLimits {
    pub concurrency: usize,
    pub queue_deadline: Duration,
}

impl Default for HashLimits {
    /// Half the cores (at least one); two seconds in the queue.
    fn default() -> Self {
        HashLimits {
            concurrency: std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
            queue_deadline: Duration::from_secs(2),
        }
    }
}

/// Hashes and checks passwords, at most `concurrency` at once (one value per
/// process: the cores it guards are the machine's, not a site's).
pub struct Passwords {
    argon2: Argon2<'static>,
    turns: Arc<Semaphore>,
    queue_deadline: Duration,
    /// Where the async paths hash: as many cores as turns, kept apart from the
    /// page workers' others.
    cores: HashingCores,
    /// What an unknown user's password is checked against: made with the same
    /// cost on first use.
    dummy_hash: OnceLock<String>,
}

impl Passwords {
    pub fn new(cost: HashCost, limits: HashLimits) -> Result<Passwords, PasswordError> {
        let params = Params::new(cost.memory_kib, cost.iterations, cost.parallelism, None)
            .map_err(PasswordError::Cost)?;
        Ok(Passwords {
            argon2: Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
            turns: Arc::new(Semaphore::new(limits.concurrency.max(1))),
            queue_deadline: limits.queue_deadline,
            cores: HashingCores::last(limits.concurrency.max(1)),
            dummy_hash: OnceLock::new(),
        })
    }

    /// A PHC string for `password` with a fresh random salt, on this thread.
    pub fn hash_blocking(&self, password: &NewPassword) -> Result<String, PasswordError> {
        self.argon2
            .hash_password(password.0.bytes())
            .map(|hash| hash.to_string())
            .map_err(PasswordError::Hashing)
    }

    /// Whether `password` matches `hash` (a PHC string), on this thread. The
    /// cost is the one recorded in the hash.
    pub fn verify_blocking(&self, password: &Password, hash: &str) -> bool {
        self.argon2.verify_password(password.bytes(), hash).is_ok()
    }

    /// Makes the hash an unknown user's password is checked against now, so
    /// the first such logon takes no longer than any other (blocks).
    pub fn prepare_blocking(&self) -> Result<(), PasswordError> {
        self.dummy_hash().map(|_| ())
    }

    fn dummy_hash(&self) -> Result<&str, PasswordError> {
        if let Some(hash) = self.dummy_hash.get() {
            return Ok(hash);
        }
        let (password, _) = NewPassword::random();
        let hash = self.hash_blocking(&password)?;
        Ok(self.dummy_hash.get_or_init(|| hash))
    }

    /// A PHC string for `password`, computed off the async workers when a
    /// turn is free within the queue deadline.
    pub async fn hash(self: &Arc<Self>, password: NewPassword) -> Result<String, PasswordError> {
        self.off_workers(move |me| me.hash_blocking(&password))
            .await?
    }

    /// Whether `password` matches `stored`; with no stored hash (an unknown
    /// user) a dummy hash is checked instead, at the same cost, and the answer
    /// is `false`. Off the async workers, like [`hash`](Self::hash).
    pub async fn verify_or_dummy(
        self: &Arc<Self>,
        password: Password,
        stored: Option<String>,
    ) -> Result<bool, PasswordError> {
        self.off_workers(move |me| match stored {
            Some(hash) => Ok(me.verify_blocking(&password, &hash)),
            None => {
                let dummy = me.dummy_hash()?;
                let _ = me.verify_blocking(&password, dummy);
                Ok(false)
            }
        })
        .await?
    }

    /// Runs `work` on the blocking pool once a turn is free; past the queue
    /// deadline, [`PasswordError::Busy`].
    async fn off_workers<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&Passwords) -> T + Send + 'static,
    ) -> Result<T, PasswordError> {
        let turn = tokio::time::timeout(self.queue_deadline, self.turns.clone().acquire_owned())
            .await
            .map_err(|_| PasswordError::Busy {
                waited: self.queue_deadline,
            })?
            .expect("the semaphore is never closed");
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            // The turn ends when the hash does, not when the caller gives up.
            let _turn = turn;
            me.cores.run(|| work(&me))
        })
        .await
        .map_err(PasswordError::Task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passwords(limits: HashLimits) -> Arc<Passwords> {
        Arc::new(Passwords::new(HashCost::default(), limits).unwrap())
    }

    fn new_password(text: &str) -> NewPassword {
        NewPassword::new(text.to_owned()).unwrap()
    }

    #[tokio::test]
    async fn a_hashed_password_verifies_and_a_wrong_one_does_not() {
        let p = passwords(HashLimits::default());
        let hash = p.hash(new_password("correct horse")).await.unwrap();
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{hash}"
        );
        assert!(!hash.contains("correct horse"));
        let check = |text: &str| {
            let (p, hash) = (p.clone(), hash.clone());
            let password = Password::new(text.to_owned()).unwrap();
            async move { p.verify_or_dummy(password, Some(hash)).await.unwrap() }
        };
        assert!(check("correct horse").await);
        assert!(!check("correct horsE").await);
        assert!(!check("").await);
    }

    #[tokio::test]
    async fn the_same_password_hashes_differently_each_time() {
        let p = passwords(HashLimits::default());
        let a = p.hash(new_password("correct horse")).await.unwrap();
        let b = p.hash(new_password("correct horse")).await.unwrap();
        assert_ne!(a, b, "each hash has its own salt");
    }

    #[tokio::test]
    async fn an_unknown_user_is_checked_against_a_dummy_and_refused() {
        let p = passwords(HashLimits::default());
        let password = Password::new("correct horse".to_owned()).unwrap();
        assert!(!p.verify_or_dummy(password, None).await.unwrap());
        let dummy = p.dummy_hash.get().expect("the dummy hash was made");
        assert!(
            dummy.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "same cost: {dummy}"
        );
    }

    #[test]
    fn short_and_overlong_new_passwords_are_refused() {
        assert!(matches!(
            NewPassword::new("seven77".to_owned()),
            Err(PasswordError::TooShort { min: 8 })
        ));
        assert!(NewPassword::new("eight888".to_owned()).is_ok());
        // Characters, not bytes: eight non-ASCII letters are enough.
        assert!(NewPassword::new("ääääääää".to_owned()).is_ok());
        assert!(matches!(
            NewPassword::new("x".repeat(MAX_PASSWORD_BYTES + 1)),
            Err(PasswordError::TooLong { .. })
        ));
        assert!(matches!(
            Password::new("x".repeat(MAX_PASSWORD_BYTES + 1)),
            Err(PasswordError::TooLong { .. })
        ));
    }

    #[test]
    fn a_password_never_shows_in_debug_output() {
        let p = new_password("correct horse");
        assert!(!format!("{p:?}").contains("horse"));
    }

    #[tokio::test]
    async fn a_saturated_gate_answers_busy_after_its_deadline_and_serves_again_once_free() {
        let p = passwords(HashLimits {
            concurrency: 2,
            queue_deadline: Duration::from_millis(50),
        });
        // Every turn taken, as by two long hashes in flight.
        let held = p.turns.clone().acquire_many_owned(2).await.unwrap();
        let started = std::time::Instant::now();
        let err = p.hash(new_password("correct horse")).await.unwrap_err();
        assert!(matches!(err, PasswordError::Busy { .. }), "{err:?}");
        assert!(started.elapsed() >= Duration::from_millis(50));
        let err = p
            .verify_or_dummy(Password::new("x".to_owned()).unwrap(), None)
            .await
            .unwrap_err();
        assert!(matches!(err, PasswordError::Busy { .. }), "{err:?}");
        drop(held);
        assert!(p.hash(new_password("correct horse")).await.is_ok());
    }
}
