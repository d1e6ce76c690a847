//! Brute force: wrong passwords counted per account and per client address
//! (IPv6 per /64); past `logon_attempts` within `logon_window`, logon answers
//! 429 with `Retry-After` until the window ends, without checking the
//! password. An unknown username is counted like a known one, so the answers
//! do not tell them apart. Counts are kept by each node in memory.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One key's wrong attempts in the current window.
#[derive(Debug)]
struct Window {
    failures: u32,
    since: Instant,
}

pub struct LogonThrottle {
    limit: u32,
    window: Duration,
    windows: moka::sync::Cache<String, Arc<Mutex<Window>>>,
}

impl LogonThrottle {
    pub fn new(limit: u32, window: Duration) -> LogonThrottle {
        LogonThrottle {
            limit,
            window,
            windows: moka::sync::Cache::builder()
                .max_capacity(1_000_000)
                .time_to_live(window)
                .build(),
        }
    }

    /// The keys an attempt counts against.
    pub fn keys(username: &str, address: IpAddr) -> [String; 2] {
        let address = match address {
            IpAddr::V4(a) => a.to_string(),
            IpAddr::V6(a) => {
                let s = a.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        };
        [
            format!("user:{}", username.trim().to_lowercase()),
            format!("addr:{address}"),
        ]
    }

    /// `Err(retry_after)` when any key has used up its attempts.
    pub fn check(&self, keys: &[String]) -> Result<(), Duration> {
        let now = Instant::now();
        let mut wait = None;
        for key in keys {
            if let Some(w) = self.windows.get(key) {
                let w = w.lock().expect("never poisoned");
                let elapsed = now.duration_since(w.since);
                if w.failures >= self.limit && elapsed < self.window {
                    let left = self.window - elapsed;
                    wait = Some(wait.map_or(left, |d: Duration| d.max(left)));
                }
            }
        }
        wait.map_or(Ok(()), Err)
    }

    pub fn failed(&self, keys: &[String]) {
        let now = Instant::now();
        for key in keys {
            let w = self.windows.get_with(key.clone(), || {
                Arc::new(Mutex::new(Window {
                    failures: 0,
                    since: now,
                }))
            });
            let mut w = w.lock().expect("never poisoned");
            if now.duration_since(w.since) >= self.window {
                *w = Window {
                    failures: 0,
                    since: now,
                };
            }
            w.failures += 1;
        }
    }

    /// A correct password clears the account's count (not the address's).
    pub fn succeeded(&self, account_key: &str) {
        self.windows.invalidate(account_key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_failure_closes_both_keys_until_the_window_ends() {
        let t = LogonThrottle::new(3, Duration::from_millis(200));
        let keys = LogonThrottle::keys("Ada", "10.0.0.1".parse().unwrap());
        for _ in 0..3 {
            assert!(t.check(&keys).is_ok());
            t.failed(&keys);
        }
        let wait = t.check(&keys).unwrap_err();
        assert!(wait <= Duration::from_millis(200));
        // Another account from the same address is refused too.
        let other = LogonThrottle::keys("bob", "10.0.0.1".parse().unwrap());
        assert!(t.check(&other).is_err());
        // The same account from elsewhere as well.
        let elsewhere = LogonThrottle::keys("ADA ", "10.0.0.2".parse().unwrap());
        assert!(t.check(&elsewhere).is_err());
        std::thread::sleep(Duration::from_millis(250));
        assert!(t.check(&keys).is_ok());
    }

    #[test]
    fn ipv6_addresses_count_per_64() {
        let a = LogonThrottle::keys("x", "2001:db8:1:2::1".parse().unwrap());
        let b = LogonThrottle::keys("x", "2001:db8:1:2:ffff::9".parse().unwrap());
        assert_eq!(a[1], b[1]);
    }
}
