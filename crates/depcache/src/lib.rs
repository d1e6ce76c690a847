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
//! - **Dependencies by serial.** Each dependency key has a serial; a flush moves it
//!   to the next tick of a cache-wide flush clock (a few atomic operations), so it
//!   never comes back. An entry stores the serials its dependencies had *before* the
//!   value was computed; a read serves the entry only if they are all unchanged and
//!   its time to live has not passed. Stale entries are dropped by the read that
//!   finds them or by a background sweeper.
//!   To keep reads cheap, a read skips the per-dependency check while no dependency
//!   at all was flushed since the entry was last found current (one shared epoch).
//! - **Single flight.** [`Depcache::get_or_lead`] makes one caller per missing key
//!   the leader, which computes the value *inline*, in its own task (a page render
//!   borrows its request and cannot be spawned), and hands it over with the
//!   dependency keys it read and their serials *as read* (a render only knows its
//!   dependencies once it ran). The value is stored only if none of those was flushed
//!   meanwhile; either way it goes to every caller that waited. A failure reaches
//!   every waiter as a clone of the leader's error, and nothing is stored; a leader
//!   that goes away (cancelled, panicked) sends its waiters back to try again, so
//!   none hangs. Callers that arrive after a flush do not join a computation that
//!   started before it. [`Depcache::get_or_compute`] is the one-call form.
//! - **Grace** and **stale-if-error**, per entry through [`Policy`]: while one caller
//!   recomputes an expired (or, if the caller opts in, flushed) value, the others get
//!   the old one at once, and a failed recomputation leaves it in place.
//! - **Byte budget.** Values report their size through [`Weigh`]; storage is a
//!   `moka` cache bounded by weight (TinyLFU admission and eviction).
//! - **Generations.** The cache generation is part of every key;
//!   [`Depcache::bump_generation`] retires everything at once.
//! - **Stats** ([`Depcache::stats`]) from striped atomic counters.
//! - [`RequestMemo`]: a map that lives for one request, in front of the cache.
//!
//! `get`, `set` and the flushes are synchronous and never wait, so template code can
//! call them from a synchronous context; `get_or_lead` and `get_or_compute` are async
//! (tokio; synchronous code on the blocking pool can `block_on` them). Reads hand out
//! [`Cached`] values: the stored entry itself behind an `Arc`, dereferencing to the
//! value, so a hit costs what a plain `Arc` cache's hit does.
//!
//! # What it does not do
//!
//! No persistence, no web or database code, no cross-node invalidation (a flush
//! observer, [`Depcache::observe_flushes`], is the hook for that). Values are shared
//! through `Arc`, never copied or serialised. No eviction policy of its own: moka's
//! TinyLFU decides what goes when the budget is full (and may decline to admit a new
//! entry then), moka's expiry removes entries whose grace ended, and the sweeper
//! removes invalidated and retired ones. Keys are not weighed individually (a fixed
//! overhead per entry stands in). Nothing is recomputed in the background: the
//! leader computes in its own task (a [`Leader`] can be moved into a spawned one),
//! and there is no refresh ahead of expiry. The per-request memo does not track
//! dependencies: clear it when the request flushes anything.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use bulwark_depcache::{Computed, Depcache, DependencyKey, Policy};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), bulwark_depcache::Error<std::io::ErrorKind>> {
//! let cache: Depcache<String, String> = Depcache::default();
//! let rsc_42 = DependencyKey::new("rsc:42");
//! let store_title = String::from("Hello"); // borrowed by the computation below
//!
//! let title = cache
//!     .get_or_compute(
//!         "title:42",
//!         Policy::ttl(Duration::from_secs(3600)).with_grace(Duration::from_secs(10)),
//!         || async {
//!             // Serial first, then the data it guards.
//!             let read = vec![(rsc_42.clone(), cache.serial(&rsc_42))];
//!             Ok::<_, std::io::ErrorKind>(Computed::new(store_title.clone(), read))
//!         },
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

pub use cache::{Cached, Config, DEFAULT_BUDGET_BYTES, Depcache, FlushEvent, Generation};
pub use dependency::{Dependencies, DependencyKey, Serial};
pub use flight::{Computed, Leader, Lookup};
pub use memo::{DEFAULT_MEMO_LIMIT, RequestMemo};
pub use policy::Policy;
pub use stats::Stats;
pub use weigh::Weigh;

/// Why [`Depcache::get_or_compute`] has no value to give: the computation failed,
/// in this caller or in the one it waited for. The error is the computation's own
/// (the leader's original, a clone for each waiter).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error<E> {
    /// This caller ran the computation, and it failed.
    #[error("computing the cached value failed")]
    Leader(#[source] E),
    /// This caller waited for another caller's computation, which failed.
    #[error("the computation this caller waited for failed")]
    Waited(#[source] E),
}

impl<E> Error<E> {
    /// The computation's error, whoever ran it.
    pub fn into_inner(self) -> E {
        match self {
            Error::Leader(error) | Error::Waited(error) => error,
        }
    }
}
