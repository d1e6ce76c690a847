//! Token buckets: how fast one client may publish, and (in the push module) how
//! fast one address may make new clients. A bucket holds up to `burst` tokens and
//! gains `per_second` of them a second; each act takes one, and an act without a
//! token is refused with the time until the next one.

use std::time::{Duration, Instant};

/// A sustained rate and the burst allowed above it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub per_second: f64,
    pub burst: u32,
}

impl Rate {
    /// How long an unused bucket takes to fill up again: after that it is the same
    /// as a new one (so a table of buckets may forget it).
    pub fn refill_time(&self) -> Duration {
        Duration::from_secs_f64(
            f64::from(self.burst.max(1)) / self.per_second.max(f64::MIN_POSITIVE),
        )
        .min(Duration::from_secs(24 * 3600))
    }
}

/// One bucket; starts full.
#[derive(Debug)]
pub struct TokenBucket {
    tokens: f64,
    updated: Instant,
}

impl TokenBucket {
    pub fn new(rate: Rate) -> TokenBucket {
        TokenBucket {
            tokens: f64::from(rate.burst),
            updated: Instant::now(),
        }
    }

    /// How long since the bucket was last used: past its rate's
    /// [`refill_time`](Rate::refill_time) it is full again.
    pub fn idle(&self) -> Duration {
        self.updated.elapsed()
    }

    /// Takes a token, or says how long until there is one.
    pub fn take(&mut self, rate: Rate) -> Result<(), Duration> {
        let now = Instant::now();
        let gained = now.duration_since(self.updated).as_secs_f64() * rate.per_second;
        self.tokens = (self.tokens + gained).min(f64::from(rate.burst));
        self.updated = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        let wait = (1.0 - self.tokens) / rate.per_second.max(f64::MIN_POSITIVE);
        Err(Duration::from_secs_f64(wait.min(24.0 * 3600.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_says_when_to_come_back() {
        let rate = Rate {
            per_second: 2.0,
            burst: 3,
        };
        let mut bucket = TokenBucket::new(rate);
        for _ in 0..3 {
            assert!(bucket.take(rate).is_ok());
        }
        let wait = bucket.take(rate).unwrap_err();
        assert!(
            wait > Duration::from_millis(400) && wait <= Duration::from_millis(500),
            "{wait:?}"
        );
        assert_eq!(rate.refill_time(), Duration::from_millis(1500));
    }
}
