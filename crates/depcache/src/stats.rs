//! Counters for hits, misses and the rest.
//!
//! Every read bumps a counter, so a single shared `AtomicU64` would be written by
//! every core on every hit and its cache line would bounce between them; that alone
//! costs more than the lookup. Each counter is therefore striped: a thread adds to
//! its own cache-line-sized slot, and a snapshot sums the slots. Snapshots are rare
//! (admin pages, `/metrics`); reads are not.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const STRIPES: usize = 16;

#[repr(align(128))]
#[derive(Default)]
struct Slot(AtomicU64);

#[derive(Default)]
pub(crate) struct Counter {
    slots: [Slot; STRIPES],
}

fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|stripe| *stripe)
}

impl Counter {
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        self.slots[stripe()].0.fetch_add(n, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn increment(&self) {
        self.add(1);
    }

    pub(crate) fn sum(&self) -> u64 {
        self.slots
            .iter()
            .map(|slot| slot.0.load(Ordering::Relaxed))
            .sum()
    }
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) hits: Counter,
    pub(crate) misses: Counter,
    pub(crate) coalesced_waits: Counter,
    pub(crate) grace_hits: Counter,
    pub(crate) stale_if_error: Counter,
    pub(crate) evictions: Counter,
}

/// A snapshot of a cache's counters. Counts are since the cache was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Reads answered with a fresh value.
    pub hits: u64,
    /// Reads that found no servable value (including those that then computed it
    /// or waited for it).
    pub misses: u64,
    /// Reads that waited for a computation another caller ran.
    pub coalesced_waits: u64,
    /// Reads answered with an expired (or, when allowed, invalidated) value while
    /// another caller recomputed it.
    pub grace_hits: u64,
    /// Expired values handed to a caller whose recomputation failed
    /// ([`Leader::stale_if_error`](crate::Leader::stale_if_error)).
    pub stale_if_error: u64,
    /// Entries removed to stay within the byte budget.
    pub evictions: u64,
    /// Weighted size of the stored entries, in bytes. Lags behind until the cache's
    /// pending maintenance has run.
    pub bytes_used: u64,
    /// Number of stored entries (same lag as `bytes_used`).
    pub entries: u64,
}
