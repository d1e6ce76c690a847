//! Brute force: logon attempts (and password reset requests) counted in the
//! site's database, so every node of a cluster counts the same, and counted
//! *before* the password is checked, one atomic increment per counter, so
//! that 300 guesses sent at once get no more checks than the limit allows.
//!
//! - **Per client address** (IPv6 per /64): past `logon_attempts` within
//!   `logon_window`, logon answers 429 with `Retry-After` until the window
//!   ends, without checking anything. The attempts of a logon that succeeds
//!   are given back.
//! - **Per account**, from every address together: past the same number, the
//!   account is not locked (anyone could lock anyone out, the owner included)
//!   but slowed down: each further attempt waits [`SLOW_DOWN`] before its check.
//!   The owner, at their own address, still gets in; a guesser spread over many
//!   addresses gets `logon_attempts` tries per address and slow answers.
//!
//! An unknown username is counted like a known one, so the answers do not tell
//! them apart. Password reset requests use the same counters with their own
//! names and limit (`reset_pages.rs`).

use std::net::IpAddr;
use std::time::Duration;

use bulwark_store::{Store, StoreError};
use chrono::Utc;

/// How long an attempt on an account past its limit waits before its check.
pub const SLOW_DOWN: Duration = Duration::from_secs(1);

/// What a throttle counts: attempts per client address, per account, and
/// (for reset mails) per person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleKey(String);

impl ThrottleKey {
    /// A client address; IPv6 per /64 (one customer's network).
    pub fn address(address: IpAddr) -> ThrottleKey {
        ThrottleKey(format!("addr:{}", bulwark_http::visitor_network(address)))
    }

    /// Posts of one kind (`comment`, `form`) from a client address.
    pub fn posts_from(kind: &str, address: IpAddr) -> ThrottleKey {
        ThrottleKey(format!(
            "{kind}:addr:{}",
            bulwark_http::visitor_network(address)
        ))
    }

    /// An account as it was named (a username or an address, any case).
    pub fn account(name: &str) -> ThrottleKey {
        ThrottleKey(format!("user:{}", name.trim().to_lowercase()))
    }

    /// A person, whichever name found them.
    pub fn person(person: bulwark_store::ResourceId) -> ThrottleKey {
        ThrottleKey(format!("person:{}", person.0))
    }

    /// One form ticket (by its tag), for counting its uses.
    pub fn ticket(tag: &str) -> ThrottleKey {
        ThrottleKey(format!("use:{tag}"))
    }
}

/// One counter's state after an attempt was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    /// Attempts in the current window, this one included.
    pub attempts: u64,
    /// Until the window ends.
    pub left: Duration,
}

/// A site's counters of one kind (`logon`, `reset`, `post`), with their limit and
/// window.
pub struct Throttle {
    store: Store,
    kind: &'static str,
    pub limit: u32,
    window: Duration,
}

impl Throttle {
    pub fn new(store: Store, kind: &'static str, limit: u32, window: Duration) -> Throttle {
        Throttle {
            store,
            kind,
            limit,
            window,
        }
    }

    fn stored_key(&self, key: &ThrottleKey) -> String {
        format!("{}:{}", self.kind, key.0)
    }

    /// Counts one attempt on every key, in one transaction: each increment is
    /// atomic (a row's `UPDATE`), so concurrent attempts on every node each
    /// see their own count. A window that ended starts again at this attempt.
    pub async fn count(&self, keys: &[ThrottleKey]) -> Result<Vec<Count>, StoreError> {
        let keys: Vec<String> = keys.iter().map(|k| self.stored_key(k)).collect();
        let window = i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX);
        self.store
            .run(move |s| {
                let now = Utc::now().timestamp_millis();
                s.module_write(|sql| {
                    let mut counts = Vec::with_capacity(keys.len());
                    for key in &keys {
                        let row = sql.query_one(
                            "INSERT INTO auth_throttle (key, since, attempts) VALUES ($1, $2, 1) \
                             ON CONFLICT (key) DO UPDATE SET \
                             attempts = CASE WHEN auth_throttle.since <= $3 THEN 1 \
                                        ELSE auth_throttle.attempts + 1 END, \
                             since = CASE WHEN auth_throttle.since <= $3 THEN $2 \
                                     ELSE auth_throttle.since END \
                             RETURNING attempts, since",
                            &[
                                key.as_str().into(),
                                now.into(),
                                now.saturating_sub(window).into(),
                            ],
                        )?;
                        let (attempts, since) = row.map_or((1, now), |r| (r.int(0), r.int(1)));
                        let left = (since.saturating_add(window) - now).max(0);
                        counts.push(Count {
                            attempts: attempts.max(0) as u64,
                            left: Duration::from_millis(left as u64),
                        });
                    }
                    Ok(counts)
                })
            })
            .await
    }

    /// Gives one attempt back to `key` (a logon that succeeded).
    pub async fn give_back(&self, key: &ThrottleKey) -> Result<(), StoreError> {
        let key = self.stored_key(key);
        self.store
            .run(move |s| {
                s.module_write(|sql| {
                    sql.execute(
                        "UPDATE auth_throttle SET attempts = attempts - 1 \
                         WHERE key = $1 AND attempts > 0",
                        &[key.as_str().into()],
                    )?;
                    Ok(())
                })
            })
            .await
    }

    /// Forgets `key`'s attempts (the account's, when its owner logged on).
    pub async fn clear(&self, key: &ThrottleKey) -> Result<(), StoreError> {
        let key = self.stored_key(key);
        self.store
            .run(move |s| {
                s.module_write(|sql| {
                    sql.execute(
                        "DELETE FROM auth_throttle WHERE key = $1",
                        &[key.as_str().into()],
                    )?;
                    Ok(())
                })
            })
            .await
    }

    /// `Some(wait)` when a count is past this throttle's limit.
    pub fn over(&self, count: Count) -> Option<Duration> {
        (count.attempts > u64::from(self.limit)).then_some(count.left)
    }

    /// Removes windows that ended (run now and then).
    pub fn sweep_blocking(&self) -> Result<u64, StoreError> {
        let before = Utc::now().timestamp_millis()
            - i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX / 2);
        let kind = format!("{}:%", self.kind);
        self.store.module_write(|sql| {
            sql.execute(
                "DELETE FROM auth_throttle WHERE key LIKE $1 AND since <= $2",
                &[kind.as_str().into(), before.into()],
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_count_per_64() {
        let a = ThrottleKey::address("2001:db8:1:2::1".parse().unwrap());
        let b = ThrottleKey::address("2001:db8:1:2:ffff::9".parse().unwrap());
        assert_eq!(a, b);
        assert_eq!(ThrottleKey::account(" Ada"), ThrottleKey::account("ada"));
    }
}
