//! Single flight: one computation per key, however many callers ask at once.
//!
//! The first caller that misses becomes the *leader*: it registers a flight for the
//! key and gets a [`Leader`], computes the value itself, and lands the flight with
//! [`Leader::finish`] or [`Leader::fail`]. Callers that miss while the flight is
//! registered subscribe to it and wait for the landing.
//!
//! # Why the leader computes inline
//!
//! The leader runs the computation in its own task, as part of its own call, rather
//! than in a spawned one. The computation that needs single flight most is a page
//! render, and a render borrows its request (`&RequestCtx<'_>`): it cannot be moved
//! into a `'static` task. Inline, the computation may borrow anything the caller
//! has, and a leader that should outlive its caller can still be moved into a
//! spawned task, since a [`Leader`] owns what it needs. Synchronous code on tokio's
//! blocking pool calls `Handle::current().block_on(cache.get_or_compute(..))` and
//! computes on its own thread.
//!
//! # Why dependencies are given after the computation
//!
//! A render's dependencies are only known once it ran: every model read records its
//! dependency key with the [`Serial`] the key had *when it was read*. So the leader
//! hands them over with the value, and the value is stored only if every one of those
//! serials is still current; otherwise the value goes to the leader and its waiters
//! but is not stored, and the next caller computes again. Serials only grow (see
//! `dependency.rs`), so "unchanged" means "not flushed since it was read".
//!
//! Because a flight cannot know what it depends on before it lands, it assumes that
//! any flush concerns it: a caller that arrives after a flush of anything since the
//! flight started does not join it, and starts a flight of its own instead (which
//! replaces the old one for later callers). The old flight's result still goes to its
//! own waiters, who arrived before the flush. Under a steady stream of writes this
//! means one computation per key per flush interval rather than one per key; never
//! one per caller. A flight also takes no new waiters once it has landed.
//!
//! # Failures
//!
//! - [`Leader::fail`] hands a copy of the failure to every waiter and stores nothing.
//!   A value stored before, now expired or flushed, stays where it is and keeps being
//!   served as grace (stale-if-error): a database that is down does not empty the
//!   cache.
//! - [`Leader::fail_and_discard_stale`] does the same but first removes that stale
//!   value, for failures that mean "this no longer exists" (a page that is now a 404).
//! - A leader that goes away without landing (its future dropped, a panic unwinding
//!   through it) unregisters the flight and closes the channel: the waiters see it
//!   close and try again, one of them becoming the new leader. A panic is not caught:
//!   it unwinds through the leader's own call like any panic in its own code. So no
//!   waiter hangs on a leader that is gone, and none is handed a failure it cannot
//!   tell from a real one.
//!
//! # Grace
//!
//! A caller that finds an expired value within its grace period (or a flushed one,
//! when its policy says [`serve_stale_after_flush`](Policy::serve_stale_after_flush))
//! gets that value at once if a flight for the key is running, and leads a new flight
//! otherwise: one caller recomputes, the others are not kept waiting.

use std::any::Any;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hash, RandomState};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::Error;
use crate::cache::{Cached, Depcache, Entry, Inner, KeyRef, VersionedKey};
use crate::dependency::{DependencyKey, DependencyTable, Serial};
use crate::policy::Policy;
use crate::weigh::Weigh;

/// How a flight landed. The failure is type-erased because the error type is chosen
/// per call, while the flights of a cache are shared by every call.
type Landing<V> = Result<Cached<V>, Arc<dyn Any + Send + Sync>>;

pub(crate) struct Flight<V> {
    landing: watch::Sender<Option<Landing<V>>>,
    /// The flush clock when the flight started.
    started_at: u64,
    /// Set when the flight landed or `flush(key)` detached it: nobody joins it any
    /// more (and, when detached, its value is not stored).
    closed: AtomicBool,
}

impl<V> Flight<V> {
    fn is_joinable(&self, dependencies: &DependencyTable) -> bool {
        !self.closed.load(Ordering::Acquire) && dependencies.clock() == self.started_at
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
    Lead(Arc<Flight<V>>),
    Wait(watch::Receiver<Option<Landing<V>>>),
    /// Somebody is computing and the caller has a stale value to serve meanwhile.
    Running,
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

    /// Joins the flight for `key`, or starts one. With a stale value at hand, any
    /// running flight (joinable or not) will do: the caller serves the stale value.
    /// A caller that accepts values from before a flush (`stale_after_flush`) also
    /// joins a flight that started before one: under a steady stream of writes to
    /// other keys, a rush on one page still causes one computation.
    fn join_or_lead(
        &self,
        key: &VersionedKey<K>,
        dependencies: &DependencyTable,
        has_stale: bool,
        stale_after_flush: bool,
    ) -> Role<V> {
        let mut shard = self.shard(key).lock();
        if let Some(flight) = shard.get(key) {
            if has_stale {
                return Role::Running;
            }
            if (stale_after_flush && !flight.closed.load(Ordering::Acquire))
                || flight.is_joinable(dependencies)
            {
                return Role::Wait(flight.landing.subscribe());
            }
        }
        let flight = Arc::new(Flight {
            landing: watch::Sender::new(None),
            started_at: dependencies.clock(),
            closed: AtomicBool::new(false),
        });
        shard.insert(key.clone(), Arc::clone(&flight));
        Role::Lead(flight)
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
            flight.closed.store(true, Ordering::Release);
        }
    }
}

/// What [`Depcache::get_or_lead`] found for a key.
pub enum Lookup<K, V, E>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    /// A value to answer with: fresh from the cache, stale within its grace period
    /// while another caller recomputes it, or what the leader this caller waited for
    /// computed (stored or not).
    Value(Cached<V>),
    /// The leader this caller waited for failed with this error (a clone of it).
    Failed(E),
    /// Nobody is computing the value: this caller computes it and lands the flight.
    Lead(Leader<K, V, E>),
}

impl<K, V, E> fmt::Debug for Lookup<K, V, E>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + fmt::Debug + 'static,
    E: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lookup::Value(value) => f.debug_tuple("Value").field(value).finish(),
            Lookup::Failed(error) => f.debug_tuple("Failed").field(error).finish(),
            Lookup::Lead(_) => f.write_str("Lead"),
        }
    }
}

/// The caller that computes a missing value for everyone who asks meanwhile.
///
/// Land the flight with [`finish`](Self::finish), [`fail`](Self::fail) or
/// [`fail_and_discard_stale`](Self::fail_and_discard_stale). Dropping it without
/// landing (a cancelled request, a panic) sends the waiters back to try again, one of
/// them becoming the next leader. It owns what it needs, so it may be moved into a
/// spawned task.
pub struct Leader<K, V, E>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    inner: Arc<Inner<K, V>>,
    key: VersionedKey<K>,
    flight: Arc<Flight<V>>,
    policy: Policy,
    error: PhantomData<fn() -> E>,
}

impl<K, V, E> Leader<K, V, E>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
    E: Clone + Send + Sync + 'static,
{
    /// Hands `value` to the waiters and stores it, if none of `dependencies` was
    /// flushed since its serial was read (and the key was not flushed, nor the cache
    /// cleared, since the flight started). Returns the value for this caller either
    /// way.
    ///
    /// Read each serial with [`Depcache::serial`] before reading what it guards, and
    /// after this leader was made: a serial read earlier would let callers that
    /// arrived after a flush take a value that predates it.
    pub fn finish(self, value: V, dependencies: &[(DependencyKey, Serial)]) -> Cached<V> {
        let inner = &self.inner;
        let captured = inner
            .dependencies
            .capture(self.key.generation, dependencies.iter().map(|(key, _)| key));
        let current =
            captured.matches(dependencies) && inner.current_generation() == self.key.generation;
        let entry = Entry::new(value, &self.policy, captured);
        if current {
            self.store(&entry);
        }
        self.land(Ok(Cached(Arc::clone(&entry))));
        Cached(entry)
    }

    /// Hands a copy of `error` to the waiters and stores nothing. A stale value stored
    /// before stays and is still served as grace (stale-if-error).
    pub fn fail(self, error: E) {
        self.land(Err(Arc::new(error)));
    }

    /// Like [`fail`](Self::fail), but first removes the stale value stored before, so
    /// it is no longer served as grace: for failures that mean the thing is gone (a
    /// page that became a 404, a 410 or a redirect). A fresh value another flight
    /// stored meanwhile stays.
    pub fn fail_and_discard_stale(self, error: E) {
        self.inner.remove_stale(&self.key);
        self.land(Err(Arc::new(error)));
    }

    /// The value stored before for this key, for a leader whose computation
    /// failed: one that expired within its stale-if-error window
    /// ([`Policy::stale_if_error`]) with its dependencies still current, or, if this
    /// call's policy serves flushed values as grace, one flushed within its grace
    /// period. Hand it to the waiters with [`fail`](Self::fail)'s error if they
    /// should serve it too.
    pub fn stale_if_error(&self) -> Option<Cached<V>> {
        let entry = self.inner.entries.get(&self.key)?;
        let now = Instant::now();
        let usable = if entry.dependencies_current(&self.inner.dependencies) {
            now < entry.retain_until
        } else {
            self.policy.serve_stale_after_flush && now < entry.grace_until
        };
        if usable {
            self.inner.counters.stale_if_error.increment();
            Some(Cached(entry))
        } else {
            None
        }
    }

    /// Stores `entry` unless `flush(key)` detached the flight.
    fn store(&self, entry: &Arc<Entry<V>>) {
        if self.flight.closed.load(Ordering::Acquire) {
            return;
        }
        let key = self.inner.store(self.key.key.clone(), entry);
        // A flush(key) between the check above and the insert marked the flight before
        // invalidating; catch it here. (A dependency flush needs no such care: the entry
        // carries the old serial and fails every read.)
        if self.flight.closed.load(Ordering::Acquire) {
            self.inner.remove_owned_if_same(key, entry);
        }
    }

    fn land(self, landing: Landing<V>) {
        // Callers that come after the landing find the stored value, or compute
        // afresh: the outcome is only for those that waited. (That also keeps a
        // waiter that cannot take a failure of this type from joining it again.)
        self.flight.closed.store(true, Ordering::Release);
        self.flight.landing.send_replace(Some(landing));
        // Dropping `self` unregisters the flight.
    }
}

impl<K, V, E> Drop for Leader<K, V, E>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    fn drop(&mut self) {
        // If the leader did not land, dropping the last sender (once the flight is
        // unregistered) wakes the waiters, who try again.
        self.inner.flights.finish(&self.key, &self.flight);
    }
}

impl<K, V, E> fmt::Debug for Leader<K, V, E>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Leader")
            .field("generation", &self.key.generation)
            .finish_non_exhaustive()
    }
}

/// What a computation run by [`Depcache::get_or_compute`] produced: the value and the
/// dependency keys it read, each with the serial it had when it was read.
#[derive(Debug)]
pub struct Computed<V> {
    value: V,
    dependencies: Vec<(DependencyKey, Serial)>,
}

impl<V> Computed<V> {
    /// `value`, computed from data guarded by `dependencies` (serials as read).
    pub fn new(value: V, dependencies: Vec<(DependencyKey, Serial)>) -> Self {
        Self {
            value,
            dependencies,
        }
    }
}

impl<K, V> Depcache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    /// The value for `key`, or the turn to compute it.
    ///
    /// - A fresh value is returned at once.
    /// - If a computation of `key` is running, this waits for it and returns its value
    ///   or a clone of its failure; if it goes away without landing, this tries again.
    ///   A value expired within its grace period (or flushed, if `policy` says
    ///   [`serve_stale_after_flush`](Policy::serve_stale_after_flush)) is returned at
    ///   once instead of waiting.
    /// - Otherwise this caller leads: it gets a [`Leader`], computes the value itself
    ///   (the computation may borrow from the caller) and lands the flight.
    ///
    /// `policy` says whether a flushed value may be served meanwhile, and applies to
    /// the value the leader stores. A waiter whose error type differs from the
    /// leader's treats its failure like a leader gone away.
    pub async fn get_or_lead<Q, E>(&self, key: &Q, policy: impl Into<Policy>) -> Lookup<K, V, E>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        E: Clone + Send + Sync + 'static,
    {
        let policy = policy.into();
        let inner = &self.inner;
        loop {
            let generation = inner.current_generation();
            let mut stale = None;
            if let Some(entry) = inner.entries.get(&KeyRef { generation, key }) {
                let current = entry.dependencies_current(&inner.dependencies);
                let now = entry.needs_clock.then(Instant::now);
                if current && now.is_none_or(|now| now < entry.fresh_until) {
                    inner.counters.hits.increment();
                    return Lookup::Value(Cached(entry));
                }
                let now = now.unwrap_or_else(Instant::now);
                if (current || policy.serve_stale_after_flush) && now < entry.grace_until {
                    stale = Some(entry);
                }
            }
            let versioned = VersionedKey {
                generation,
                key: key.to_owned(),
            };
            match inner.flights.join_or_lead(
                &versioned,
                &inner.dependencies,
                stale.is_some(),
                policy.serve_stale_after_flush,
            ) {
                Role::Running => {
                    inner.counters.grace_hits.increment();
                    return Lookup::Value(Cached(stale.expect("Running only with a stale value")));
                }
                Role::Lead(flight) => {
                    let leader = Leader {
                        inner: Arc::clone(inner),
                        key: versioned,
                        flight,
                        policy,
                        error: PhantomData,
                    };
                    // Another flight may have stored a value and gone between the
                    // lookup above and this turn (a waiter woken by a leader that
                    // went away, slower than the one that took over): take it.
                    // Dropping the leader sends anyone who joined it meanwhile back
                    // to find the same value.
                    if let Some(entry) = inner.entries.get(&KeyRef { generation, key })
                        && entry.dependencies_current(&inner.dependencies)
                        && (!entry.needs_clock || Instant::now() < entry.fresh_until)
                    {
                        inner.counters.hits.increment();
                        return Lookup::Value(Cached(entry));
                    }
                    inner.counters.misses.increment();
                    return Lookup::Lead(leader);
                }
                Role::Wait(mut landing) => {
                    inner.counters.misses.increment();
                    inner.counters.coalesced_waits.increment();
                    let landed = match landing.wait_for(Option::is_some).await {
                        Ok(landed) => landed.clone().expect("waited for Some"),
                        // The leader went away without landing: try again.
                        Err(_) => continue,
                    };
                    match landed {
                        Ok(value) => return Lookup::Value(value),
                        Err(failure) => match failure.downcast_ref::<E>() {
                            Some(error) => return Lookup::Failed(error.clone()),
                            None => continue,
                        },
                    }
                }
            }
        }
    }

    /// The value for `key`, computing it with `compute` when it is missing: the
    /// one-call form of [`get_or_lead`](Self::get_or_lead).
    ///
    /// Concurrent callers share one run of `compute`, which runs inline in the
    /// caller that leads (so it may borrow from it, mutably too: `async || { .. }`;
    /// the others' closures are dropped unused). `compute` returns the value with the dependency keys it read and
    /// their serials as read ([`Computed`]); the value is stored only if none of them
    /// was flushed meanwhile. A failure reaches every waiter as
    /// [`Error::Waited`] and the leader as [`Error::Leader`]; nothing is stored, and a
    /// stale value stays available for grace.
    pub async fn get_or_compute<Q, F, E>(
        &self,
        key: &Q,
        policy: impl Into<Policy>,
        compute: F,
    ) -> Result<Cached<V>, Error<E>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        F: AsyncFnOnce() -> Result<Computed<V>, E>,
        E: Clone + Send + Sync + 'static,
    {
        match self.get_or_lead(key, policy).await {
            Lookup::Value(value) => Ok(value),
            Lookup::Failed(error) => Err(Error::Waited(error)),
            Lookup::Lead(leader) => match compute().await {
                Ok(computed) => Ok(leader.finish(computed.value, &computed.dependencies)),
                Err(error) => {
                    leader.fail(error.clone());
                    Err(Error::Leader(error))
                }
            },
        }
    }
}
