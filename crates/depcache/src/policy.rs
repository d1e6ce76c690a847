//! How long an entry is fresh, and what may be served after that.
//!
//! Freshness and grace are per entry because the model that stores a value knows how
//! stale it may be shown; whether a value invalidated by a dependency flush may be
//! shown while it is recomputed is per call, because correctness comes first and only
//! the caller knows it can tolerate it.

use std::time::Duration;

/// The lifetime of a cached value and what to do around its end.
///
/// A `Duration` converts into a policy with only a time to live, so
/// `cache.set(key, value, Duration::from_secs(60), &deps)` works.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    pub(crate) ttl: Duration,
    pub(crate) grace: Duration,
    pub(crate) serve_stale_after_flush: bool,
    pub(crate) stale_if_error: Duration,
}

impl Policy {
    /// Fresh for `ttl` after it is stored; no grace.
    pub fn ttl(ttl: Duration) -> Self {
        Self {
            ttl,
            grace: Duration::ZERO,
            serve_stale_after_flush: false,
            stale_if_error: Duration::ZERO,
        }
    }

    /// After expiry, keep the old value for up to `grace`: callers that arrive while
    /// another caller recomputes it get the old value at once
    /// (stale-while-revalidate), and a failed recomputation leaves it in place for the
    /// next ones (stale-if-error). Used by `get_or_lead` and `get_or_compute`.
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Also serve a value whose dependencies were flushed, within its grace period,
    /// while another caller recomputes it, and join a computation that started
    /// before a flush instead of starting another. Off by default: a flush normally
    /// means the old value is wrong. Only `get_or_lead` and `get_or_compute` look
    /// at this.
    pub fn serve_stale_after_flush(mut self) -> Self {
        self.serve_stale_after_flush = true;
        self
    }
}

impl Policy {
    /// After expiry, keep the old value for up to `window` for a caller whose
    /// recomputation failed: [`Leader::stale_if_error`](crate::Leader::stale_if_error)
    /// hands it over (Varnish's saint mode: a database that is down does not turn
    /// every expired page into an error). Unlike grace, nobody gets it while a
    /// recomputation may still succeed. A value whose dependencies were flushed is
    /// never kept for this: it is known to be wrong, not merely old.
    pub fn stale_if_error(mut self, window: Duration) -> Self {
        self.stale_if_error = window;
        self
    }
}

impl From<Duration> for Policy {
    fn from(ttl: Duration) -> Self {
        Self::ttl(ttl)
    }
}
