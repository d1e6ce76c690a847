//! What a site counts as it serves (requests, page cache hits...), read once
//! a second for its live figures (`figures.rs`).

use std::sync::atomic::{AtomicU64, Ordering};

/// What the core counts per site as it serves (relaxed atomics: a figure a
/// request late is still right).
#[derive(Debug, Default)]
pub struct Counters {
    /// Every answer of the site (not an alias's redirect).
    pub(crate) requests: AtomicU64,
    /// Pages answered from the page cache, or from a render another request led.
    pub(crate) page_hits: AtomicU64,
    /// Pages that had to be rendered for the cache.
    pub(crate) page_misses: AtomicU64,
}

impl Counters {
    pub(crate) fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
