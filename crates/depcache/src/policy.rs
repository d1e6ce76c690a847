//! How long an entry is fresh, and what may be served after that.
//!
//! Freshness, grace and stale-if-error are per entry because the model that stores a
//! value knows how stale it may be shown; whether a value invalidated by a
//! dependency flush may be shown while it is recomputed is per call, because
//! correctness comes first and only the caller knows it can tolerate it.

use std::time::Duration;

/// The lifetime of a cached value and what to do around its end.
///
/// A `Duration` converts into a policy with only a time to live, so
/// `cache.set(key, value, Duration::from_secs(60), &deps)` works.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    pub(crate) ttl: Duration,
    pub(crate) grace: Duration,
    pub(crate) stale_if_error: Duration,
    pub(crate) early_refresh_beta: Option<f64>,
    pub(crate) serve_stale_after_flush: bool,
}

impl Policy {
    /// Fresh for `ttl` after it is stored; no grace, no stale-if-error.
    pub fn ttl(ttl: Duration) -> Self {
        Self {
            ttl,
            grace: Duration::ZERO,
            stale_if_error: Duration::ZERO,
            early_refresh_beta: None,
            serve_stale_after_flush: false,
        }
    }

    /// After expiry, keep serving the old value for up to `grace` while one task
    /// recomputes it (stale-while-revalidate). Used by `get_or_compute`.
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// When a recomputation fails up to `window` after expiry, answer with the old
    /// value instead of the error (and count it).
    pub fn with_stale_if_error(mut self, window: Duration) -> Self {
        self.stale_if_error = window;
        self
    }

    /// Recompute hot entries before they expire, in the background, with the
    /// probabilistic rule of Vattani et al. (XFetch, PVLDB 8(8), 2015): refresh when
    /// `now - delta * beta * ln(rand()) >= expiry`, `delta` being the measured
    /// compute time. `beta = 1.0` is the paper's default; larger refreshes earlier.
    pub fn with_early_refresh(mut self, beta: f64) -> Self {
        self.early_refresh_beta = Some(beta.max(0.0));
        self
    }

    /// Also serve a value whose dependencies were flushed, within its grace period,
    /// while one task recomputes it. Off by default: a flush normally means the old
    /// value is wrong. Only `get_or_compute` looks at this.
    pub fn serve_stale_after_flush(mut self) -> Self {
        self.serve_stale_after_flush = true;
        self
    }
}

impl From<Duration> for Policy {
    fn from(ttl: Duration) -> Self {
        Self::ttl(ttl)
    }
}
