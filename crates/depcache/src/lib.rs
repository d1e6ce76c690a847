//! Bulwark's dependency cache: an in-process key/value cache whose entries are
//! invalidated by flushing the *dependency keys* they were computed from.
//!
//! # What it is for
//!
//! A model reads `rsc:42` and `cat:article` from the store, turns them into a value
//! and caches it under some key, naming those dependency keys. When resource 42 is
//! saved, the store flushes `rsc:42`, and every cached value that depended on it
//! stops being served, however many there are, without anyone listing them. This is
//! Zotonic's depcache, with single flight, grace, a byte budget and generations.
//!
//! # How it works
//!
//! - **Dependencies by serial.** Each dependency key has a serial; a flush bumps it
//!   (one atomic add). An entry stores the serials its dependencies had *before* the
//!   value was computed; a read serves the entry only if they are all unchanged and
//!   its time to live has not passed. Stale entries are dropped by the read that
//!   finds them or by a background sweeper.
//!   To keep reads cheap, a read skips the per-dependency check while no dependency
//!   at all was flushed since the entry was last found current (one shared epoch).
//! - **Single flight.** [`Depcache::get_or_compute`] runs one computation per
//!   missing key and hands its result to every concurrent caller. Errors and panics
//!   reach every waiter; nothing failed or stale is stored; no waiter hangs. A flush
//!   during the computation keeps its result from being stored, and callers that
//!   arrive after the flush start a new computation instead of joining the old one.
//! - **Grace, stale-if-error, early refresh**, per entry through [`Policy`].
//! - **Byte budget.** Values report their size through [`Weigh`]; storage is a
//!   `moka` cache bounded by weight (TinyLFU admission and eviction).
//! - **Generations.** The cache generation is part of every key;
//!   [`Depcache::bump_generation`] retires everything at once.
//! - **Stats** ([`Depcache::stats`]) from striped atomic counters.
//! - [`RequestMemo`]: a plain map that lives for one request, in front of the cache.
//!
//! `get`, `set` and the flushes are synchronous and never wait, so template code can
//! call them from a synchronous context; `get_or_compute` is async (tokio), and
//! [`Depcache::get_or_compute_blocking`] serves synchronous code on tokio's blocking
//! pool. Reads hand out [`Cached`] values: the stored entry itself behind an `Arc`,
//! dereferencing to the value, so a hit costs what a plain `Arc` cache's hit does.
//!
//! # What it does not do
//!
//! No persistence, no web or database code, no cross-node invalidation (a flush
//! observer, [`Depcache::observe_flushes`], is the hook for that). Values are shared
//! through `Arc`, never copied or serialised. No eviction policy of its own: moka's
//! TinyLFU decides what goes when the budget is full (and may decline to admit a new
//! entry then), moka's expiry removes entries whose stale windows ended, and the
//! sweeper removes invalidated and retired ones. Keys are not weighed individually
//! (a fixed overhead per entry stands in). The per-request memo does not track
//! dependencies: clear it when the request flushes anything.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use bulwark_depcache::{Depcache, DependencyKey, Policy};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), bulwark_depcache::Error> {
//! let cache: Depcache<String, String> = Depcache::default();
//! let rsc_42 = DependencyKey::new("rsc:42");
//!
//! let title = cache
//!     .get_or_compute(
//!         "title:42",
//!         Policy::ttl(Duration::from_secs(3600)).with_grace(Duration::from_secs(10)),
//!         &[rsc_42.clone()],
//!         || async { Ok::<_, std::io::Error>("Hello".to_string()) },
//!     )
//!     .await?;
//! assert_eq!(*title, "Hello");
//! assert_eq!(cache.get("title:42").as_deref().map(String::as_str), Some("Hello"));
//!
//! // Resource 42 was saved: everything computed from it goes, in O(1).
//! cache.flush_dependency(&rsc_42);
//! assert_eq!(cache.get("title:42"), None);
//! # Ok(())
//! # }
//! ```

mod cache;
mod dependency;
mod flight;
mod memo;
mod policy;
mod stats;
mod weigh;

use std::sync::Arc;

pub use cache::{Cached, Config, DEFAULT_BUDGET_BYTES, Depcache, FlushEvent, Generation};
pub use dependency::{Dependencies, DependencyKey, Serial};
pub use memo::{DEFAULT_MEMO_LIMIT, RequestMemo};
pub use policy::Policy;
pub use stats::Stats;
pub use weigh::Weigh;

/// What a computation may fail with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why [`Depcache::get_or_compute`] has no value to give.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// The computation returned an error (shared by every caller that waited).
    #[error("computing the cached value failed: {0}")]
    Compute(Arc<dyn std::error::Error + Send + Sync>),
    /// The computation panicked; the panic was caught so waiters are not left hanging.
    #[error("computing the cached value panicked: {0}")]
    ComputePanicked(Arc<str>),
}
