//! Single flight: one computation per key, however many callers ask at once.
//!
//! The first caller that misses becomes the leader: it registers a flight for the
//! key, captures the dependency serials, runs the computation in its own task and
//! publishes the result on a `watch` channel. Callers that miss while the flight is
//! registered subscribe and wait. moka's own `get_with` is not used because a flush
//! during its initialisation leaves the stale result cached and merges later callers
//! into the stale load; here a flight is only joined while its captured serials are
//! current and no `flush(key)` detached it, and its result is only stored under
//! the same condition.
//!
//! Failure modes: an error or a panic in the computation is published to every
//! waiter (the panic is caught so it cannot take the waiters with it) and nothing is
//! stored. If the leader's task is cancelled mid-computation, its guard removes the
//! flight and drops the channel; the waiters see the channel close and retry, one of
//! them becoming the new leader. So no waiter can hang on a leader that is gone.
//!
//! Grace and early refresh run the recomputation in a spawned task that holds the
//! flight, while readers keep getting the old value.

use std::any::Any;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasher, Hash, RandomState};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::cache::{Cached, Depcache, Entry, Inner, VersionedKey};
use crate::dependency::{Dependencies, DependencyKey};
use crate::policy::Policy;
use crate::weigh::Weigh;
use crate::{BoxError, Error};

type Outcome<V> = Option<Result<Cached<V>, Error>>;

pub(crate) struct Flight<V> {
    outcome: watch::Sender<Outcome<V>>,
    dependencies: Dependencies,
    /// Set by `flush(key)`: the result must not be stored.
    detached: AtomicBool,
}

impl<V> Flight<V> {
    fn is_joinable(&self) -> bool {
        !self.detached.load(Ordering::Acquire) && self.dependencies.are_current()
    }
}

const SHARDS: usize = 32;

type FlightShard<K, V> = Mutex<HashMap<VersionedKey<K>, Arc<Flight<V>>>>;

/// The computations in flight, by key.
pub(crate) struct Flights<K, V> {
    hasher: RandomState,
    shards: Box<[FlightShard<K, V>]>,
}

enum Role<V> {
    Leader(Arc<Flight<V>>),
    Waiter(watch::Receiver<Outcome<V>>),
}

impl<K: Hash + Eq + Clone, V> Flights<K, V> {
    pub(crate) fn new() -> Self {
        Self {
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, key: &VersionedKey<K>) -> &FlightShard<K, V> {
        &self.shards[self.hasher.hash_one(key) as usize % SHARDS]
    }

    /// Joins the flight for `key`, or starts one with serials from `capture`.
    fn join_or_lead(
        &self,
        key: &VersionedKey<K>,
        capture: impl FnOnce() -> Dependencies,
    ) -> Role<V> {
        let mut shard = self.shard(key).lock();
        if let Some(flight) = shard.get(key)
            && flight.is_joinable()
        {
            return Role::Waiter(flight.outcome.subscribe());
        }
        let flight = Arc::new(Flight {
            outcome: watch::Sender::new(None),
            dependencies: capture(),
            detached: AtomicBool::new(false),
        });
        shard.insert(key.clone(), Arc::clone(&flight));
        Role::Leader(flight)
    }

    /// Starts a flight for `key` unless one is running (for background refreshes,
    /// which nobody waits for).
    fn lead_if_idle(
        &self,
        key: &VersionedKey<K>,
        capture: impl FnOnce() -> Dependencies,
    ) -> Option<Arc<Flight<V>>> {
        match self.join_or_lead(key, capture) {
            Role::Leader(flight) => Some(flight),
            Role::Waiter(_) => None,
        }
    }

    fn finish(&self, key: &VersionedKey<K>, flight: &Arc<Flight<V>>) {
        let mut shard = self.shard(key).lock();
        if shard
            .get(key)
            .is_some_and(|current| Arc::ptr_eq(current, flight))
        {
            shard.remove(key);
        }
    }

    /// Marks the flight for `key` as not to be stored, and unregisters it so later
    /// callers start a new one.
    pub(crate) fn detach(&self, key: &VersionedKey<K>) {
        if let Some(flight) = self.shard(key).lock().remove(key) {
            flight.detached.store(true, Ordering::Release);
        }
    }
}

/// Unregisters the flight when the leader is done or gone. If the leader was
/// cancelled before publishing, dropping the last sender wakes the waiters.
struct FlightGuard<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    inner: Arc<Inner<K, V>>,
    key: VersionedKey<K>,
    flight: Arc<Flight<V>>,
}

impl<K, V> Drop for FlightGuard<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    fn drop(&mut self) {
        self.inner.flights.finish(&self.key, &self.flight);
    }
}

/// Turns a panic while polling into an error value.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> Arc<str> {
    if let Some(message) = panic.downcast_ref::<&str>() {
        Arc::from(*message)
    } else if let Some(message) = panic.downcast_ref::<String>() {
        Arc::from(message.as_str())
    } else {
        Arc::from("non-string panic payload")
    }
}

/// Runs the computation as leader of `guard`'s flight, stores and publishes.
async fn lead<K, V, F, Fut, E>(
    guard: FlightGuard<K, V>,
    policy: Policy,
    compute: F,
) -> Result<Cached<V>, Error>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<V, E>>,
    E: Into<BoxError>,
{
    let started = Instant::now();
    // `compute()` itself runs inside the first poll, so a panic there is caught too.
    let outcome = CatchUnwind(Box::pin(async move { compute().await })).await;
    let compute_time = started.elapsed();
    let result = match outcome {
        Ok(Ok(value)) => {
            let entry = Entry::new(
                value,
                &policy,
                guard.flight.dependencies.clone(),
                compute_time,
            );
            store_computed(&guard, &entry);
            Ok(Cached(entry))
        }
        Ok(Err(error)) => Err(Error::Compute(Arc::from(error.into()))),
        Err(panic) => Err(Error::ComputePanicked(panic_message(&*panic))),
    };
    guard.flight.outcome.send_replace(Some(result.clone()));
    drop(guard);
    result
}

fn store_computed<K, V>(guard: &FlightGuard<K, V>, entry: &Arc<Entry<V>>)
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    let flight = &guard.flight;
    if !flight.is_joinable() {
        // Flushed while computing: the value may predate the flushed data.
        return;
    }
    let key = guard.inner.store(guard.key.key.clone(), entry);
    // A flush(key) between the check above and the insert marked the flight before
    // invalidating; catch it here. (A dependency flush needs no such care: the entry
    // carries the old serial and fails every read.)
    if flight.detached.load(Ordering::Acquire) {
        guard.inner.remove_owned_if_same(key, entry);
    }
}

impl<K, V> Depcache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    /// The value for `key`, computing it with `compute` on a miss.
    ///
    /// - Concurrent callers for the same missing key share one run of `compute`
    ///   (the other callers' closures are dropped unused).
    /// - The serials of `deps` are captured before `compute` runs; if one of them
    ///   is flushed meanwhile, the result goes to the callers already waiting but
    ///   is not stored, and later callers compute afresh.
    /// - An expired entry within its grace period is returned at once while one
    ///   spawned task recomputes it (likewise an entry invalidated by a dependency
    ///   flush, if `policy` says [`serve_stale_after_flush`](Policy::serve_stale_after_flush)).
    /// - If `compute` fails or panics, every waiting caller gets the error, unless a
    ///   stale value within its stale-if-error window exists, which is returned
    ///   instead. Nothing is stored.
    ///
    /// `compute` must be `Send + 'static` because grace and early refresh run it in
    /// a spawned tokio task.
    pub async fn get_or_compute<Q, F, Fut, E>(
        &self,
        key: &Q,
        policy: impl Into<Policy>,
        deps: &[DependencyKey],
        compute: F,
    ) -> Result<Cached<V>, Error>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        let policy = policy.into();
        let inner = &self.inner;
        let mut compute = Some(compute);
        loop {
            let mut stale_if_error: Option<Arc<Entry<V>>> = None;
            if let Some(entry) = inner.lookup(key) {
                let current = entry.dependencies_current(&inner.dependencies);
                let now = entry.needs_clock.then(Instant::now);
                if current && now.is_none_or(|now| now < entry.fresh_until) {
                    inner.counters.hits.increment();
                    if let Some(now) = now
                        && entry.wants_early_refresh(now)
                        && let Some(compute) = compute.take()
                        && self.refresh_in_background(key, policy, deps, compute)
                    {
                        inner.counters.early_refreshes.increment();
                    }
                    return Ok(Cached(entry));
                }
                let now = now.unwrap_or_else(Instant::now);
                let stale_allowed = current || policy.serve_stale_after_flush;
                if stale_allowed && now < entry.grace_until {
                    if let Some(compute) = compute.take() {
                        self.refresh_in_background(key, policy, deps, compute);
                    }
                    inner.counters.grace_hits.increment();
                    return Ok(Cached(entry));
                }
                if stale_allowed && now < entry.keep_until {
                    stale_if_error = Some(entry);
                }
            }
            inner.counters.misses.increment();

            let versioned = VersionedKey {
                generation: inner.current_generation(),
                key: key.to_owned(),
            };
            let result = match inner
                .flights
                .join_or_lead(&versioned, || inner.capture(deps))
            {
                Role::Waiter(mut outcome) => {
                    inner.counters.coalesced_waits.increment();
                    match outcome.wait_for(Option::is_some).await {
                        Ok(published) => published.clone().expect("waited for Some"),
                        // The leader was cancelled before it finished: try again.
                        Err(_) => continue,
                    }
                }
                Role::Leader(flight) => {
                    let guard = FlightGuard {
                        inner: Arc::clone(inner),
                        key: versioned,
                        flight,
                    };
                    let compute = compute.take().expect("a caller leads at most once");
                    lead(guard, policy, compute).await
                }
            };
            return match (result, stale_if_error) {
                (Err(_), Some(stale)) => {
                    inner.counters.stale_if_error_serves.increment();
                    Ok(Cached(stale))
                }
                (result, _) => result,
            };
        }
    }

    /// Recomputes `key` in a spawned task unless a computation is already running.
    /// Returns whether it started one. Without a tokio runtime it does nothing: the
    /// stale value is served until it ends and a later call recomputes.
    fn refresh_in_background<Q, F, Fut, E>(
        &self,
        key: &Q,
        policy: Policy,
        deps: &[DependencyKey],
        compute: F,
    ) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        let inner = &self.inner;
        let versioned = VersionedKey {
            generation: inner.current_generation(),
            key: key.to_owned(),
        };
        let Some(flight) = inner
            .flights
            .lead_if_idle(&versioned, || inner.capture(deps))
        else {
            return false;
        };
        let guard = FlightGuard {
            inner: Arc::clone(inner),
            key: versioned,
            flight,
        };
        // On failure the stale value stays until its grace ends; there is no caller
        // to give the error to.
        runtime.spawn(async move {
            let _ = lead(guard, policy, compute).await;
        });
        true
    }
}

impl<K, V> Depcache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    /// [`get_or_compute`](Self::get_or_compute) for synchronous code running on a
    /// thread of a tokio runtime's blocking pool (`spawn_blocking`), such as a
    /// template render. `compute` runs on the blocking pool too, never on a runtime
    /// worker. Like `Handle::block_on`, this panics when called from async code or
    /// outside a tokio runtime.
    pub fn get_or_compute_blocking<Q, F, E>(
        &self,
        key: &Q,
        policy: impl Into<Policy>,
        deps: &[DependencyKey],
        compute: F,
    ) -> Result<Cached<V>, Error>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        F: FnOnce() -> Result<V, E> + Send + 'static,
        E: Into<BoxError> + Send + 'static,
    {
        let runtime = tokio::runtime::Handle::current();
        let compute = move || async move {
            match tokio::task::spawn_blocking(compute).await {
                Ok(result) => result.map_err(Into::into),
                // Re-raise so the single flight reports it as a panic to every waiter.
                Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
                Err(error) => Err(BoxError::from(error)),
            }
        };
        runtime.block_on(self.get_or_compute(key, policy, deps, compute))
    }
}
