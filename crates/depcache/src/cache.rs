//! The cache itself: storage, lookups, flushes, the budget and the sweeper.
//!
//! Storage is a `moka::sync::Cache`: it gives lock-free concurrent reads, a byte
//! budget (`max_capacity` + a weigher) with TinyLFU admission and eviction, and
//! per-entry expiry. What moka does not give is dependency invalidation that is safe
//! against concurrent computations, so moka only holds entries; whether an entry may
//! be served is decided here, on every read, by comparing the dependency serials the
//! entry was stored with against the current ones (see `dependency.rs`).
//!
//! An entry lives in moka until the end of its grace period, so a caller can be
//! served the stale value while another recomputes it, or after that recomputation
//! failed; moka's expiry removes it then. Entries invalidated by a dependency flush
//! are dropped by the read that finds them, or by the sweeper, unless they still have
//! a grace period a caller may opt into.
//!
//! The cache generation is part of every stored key: bumping it makes every old key
//! unreachable at once (the versioned-key technique), and the sweeper and the budget
//! reclaim the old entries later.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use moka::notification::RemovalCause;
use moka::ops::compute::Op;
use moka::{Equivalent, Expiry};
use parking_lot::RwLock;

use crate::dependency::{Dependencies, DependencyKey, DependencyTable, Serial};
use crate::flight::Flights;
use crate::policy::Policy;
use crate::stats::{Counters, Stats};
use crate::weigh::Weigh;

/// The default byte budget: 100 MiB, as in Zotonic.
pub const DEFAULT_BUDGET_BYTES: u64 = 100 * 1024 * 1024;

/// Bytes charged per entry on top of its value, for the key, the entry record and
/// moka's bookkeeping. An estimate; keys are not weighed individually.
const ENTRY_OVERHEAD_BYTES: usize = 128;

/// How a [`Depcache`] is set up.
#[derive(Clone, Debug)]
pub struct Config {
    /// Total weight of the stored entries the cache keeps within, in bytes.
    pub budget_bytes: u64,
    /// How often the background sweeper removes retired and invalidated entries;
    /// `None` runs no sweeper thread (call [`Depcache::sweep`] yourself).
    pub sweep_interval: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            budget_bytes: DEFAULT_BUDGET_BYTES,
            sweep_interval: Some(Duration::from_secs(5)),
        }
    }
}

/// The cache-wide generation that is part of every key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Generation(u64);

impl Generation {
    /// The number behind the generation, for display and metrics.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// A flush, as told to flush observers (to broadcast it to other nodes, for one).
#[derive(Debug)]
#[non_exhaustive]
pub enum FlushEvent<'a, K> {
    /// [`Depcache::flush`] of one key.
    Key(&'a K),
    /// [`Depcache::flush_dependency`] of one dependency key.
    Dependency(&'a DependencyKey),
    /// [`Depcache::flush_all`].
    All,
    /// [`Depcache::bump_generation`].
    Generation(Generation),
}

type FlushObserver<K> = Arc<dyn Fn(&FlushEvent<'_, K>) + Send + Sync>;

/// The key as moka stores it: the caller's key in one generation.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct VersionedKey<K> {
    pub(crate) generation: u64,
    pub(crate) key: K,
}

impl<K: Hash> Hash for VersionedKey<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Must hash exactly like `KeyRef`, which looks these keys up.
        self.generation.hash(state);
        self.key.hash(state);
    }
}

/// A borrowed lookup key, so a read needs no clone of the caller's key.
pub(crate) struct KeyRef<'a, Q: ?Sized> {
    pub(crate) generation: u64,
    pub(crate) key: &'a Q,
}

impl<Q: Hash + ?Sized> Hash for KeyRef<'_, Q> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.generation.hash(state);
        self.key.hash(state);
    }
}

impl<K, Q> Equivalent<VersionedKey<K>> for KeyRef<'_, Q>
where
    K: Borrow<Q>,
    Q: Eq + ?Sized,
{
    fn equivalent(&self, stored: &VersionedKey<K>) -> bool {
        self.generation == stored.generation && self.key == stored.key.borrow()
    }
}

/// A value handed out by the cache: shared, never copied; dereferences to the value.
///
/// It is the stored entry itself, so a hit costs one reference count increment, as
/// in a plain `Arc` cache. For an `Arc<T>`, store `Arc<T>` as the value and clone it.
pub struct Cached<V>(pub(crate) Arc<Entry<V>>);

impl<V> Cached<V> {
    /// True when both point at the same stored value.
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        Arc::ptr_eq(&this.0, &other.0)
    }
}

impl<V> Clone for Cached<V> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<V> std::ops::Deref for Cached<V> {
    type Target = V;

    fn deref(&self) -> &V {
        &self.0.value
    }
}

impl<V> AsRef<V> for Cached<V> {
    fn as_ref(&self) -> &V {
        &self.0.value
    }
}

impl<V: fmt::Debug> fmt::Debug for Cached<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0.value, f)
    }
}

impl<V: fmt::Display> fmt::Display for Cached<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.value, f)
    }
}

impl<V: PartialEq> PartialEq for Cached<V> {
    fn eq(&self, other: &Self) -> bool {
        self.0.value == other.0.value
    }
}

impl<V: Eq> Eq for Cached<V> {}

/// A stored value with what decides whether it may be served.
///
/// `repr(C)` keeps what every hit reads (the epoch and the expiry) on the cache line
/// that the reference count, which every hit writes, is on anyway.
#[repr(C)]
pub(crate) struct Entry<V> {
    /// The flush epoch at which the dependencies were last found current.
    validated_epoch: AtomicU64,
    pub(crate) fresh_until: Instant,
    /// Whether a read must look at the clock. Entries without grace end their life at
    /// `fresh_until`, and moka, which expires them then, already looked at the clock
    /// for us.
    pub(crate) needs_clock: bool,
    pub(crate) value: V,
    pub(crate) dependencies: Dependencies,
    /// End of the grace period.
    pub(crate) grace_until: Instant,
    /// End of the stale-if-error window (at least `grace_until`); moka drops the
    /// entry then.
    pub(crate) retain_until: Instant,
    weight: u32,
}

impl<V: Weigh> Entry<V> {
    pub(crate) fn new(value: V, policy: &Policy, dependencies: Dependencies) -> Arc<Self> {
        let now = Instant::now();
        let fresh_until = add_saturating(now, policy.ttl);
        let grace_until = add_saturating(fresh_until, policy.grace);
        let retain_until = grace_until.max(add_saturating(fresh_until, policy.stale_if_error));
        let weight = value
            .weigh()
            .saturating_add(ENTRY_OVERHEAD_BYTES)
            .saturating_add(dependencies.len() * 16);
        Arc::new(Entry {
            needs_clock: retain_until > fresh_until,
            value,
            fresh_until,
            grace_until,
            retain_until,
            weight: u32::try_from(weight).unwrap_or(u32::MAX),
            validated_epoch: AtomicU64::new(dependencies.epoch),
            dependencies,
        })
    }
}

impl<V> Entry<V> {
    /// True while none of the entry's dependencies was flushed since it was stored.
    #[inline]
    pub(crate) fn dependencies_current(&self, table: &DependencyTable) -> bool {
        let epoch = table.epoch();
        if self.validated_epoch.load(Ordering::Relaxed) == epoch {
            return true;
        }
        if !self.dependencies.are_current() {
            return false;
        }
        // Racing validators may store an older epoch; that only costs a re-check.
        self.validated_epoch.store(epoch, Ordering::Relaxed);
        true
    }

    fn has_grace(&self) -> bool {
        self.grace_until > self.fresh_until
    }

    /// True when a read may serve it as it is: its dependencies are current and its
    /// time to live has not passed.
    fn is_fresh(&self, table: &DependencyTable) -> bool {
        self.dependencies_current(table) && (!self.needs_clock || Instant::now() < self.fresh_until)
    }
}

fn add_saturating(moment: Instant, duration: Duration) -> Instant {
    // A century is as good as forever for a cache and cannot overflow `Instant`.
    const FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    moment
        .checked_add(duration.min(FOREVER))
        .unwrap_or(moment + FOREVER)
}

struct EntryExpiry;

impl<K, V> Expiry<VersionedKey<K>, Arc<Entry<V>>> for EntryExpiry {
    fn expire_after_create(
        &self,
        _key: &VersionedKey<K>,
        entry: &Arc<Entry<V>>,
        created_at: Instant,
    ) -> Option<Duration> {
        Some(entry.retain_until.saturating_duration_since(created_at))
    }

    fn expire_after_update(
        &self,
        _key: &VersionedKey<K>,
        entry: &Arc<Entry<V>>,
        updated_at: Instant,
        _duration_until_expiry: Option<Duration>,
    ) -> Option<Duration> {
        Some(entry.retain_until.saturating_duration_since(updated_at))
    }
}

pub(crate) struct Inner<K, V> {
    pub(crate) entries: moka::sync::Cache<VersionedKey<K>, Arc<Entry<V>>>,
    pub(crate) dependencies: DependencyTable,
    generation: AtomicU64,
    pub(crate) flights: Flights<K, V>,
    pub(crate) counters: Arc<Counters>,
    observers: RwLock<Vec<FlushObserver<K>>>,
    /// Dropping this stops the sweeper thread.
    _sweeper_stop: Option<mpsc::Sender<()>>,
}

/// The dependency cache. Cheap to clone: clones share the same storage.
///
/// See the [crate documentation](crate) for how it works.
pub struct Depcache<K, V> {
    pub(crate) inner: Arc<Inner<K, V>>,
}

impl<K, V> Clone for Depcache<K, V> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K, V> fmt::Debug for Depcache<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Depcache")
            .field("generation", &self.inner.generation.load(Ordering::Relaxed))
            .field("entries", &self.inner.entries.entry_count())
            .field("bytes_used", &self.inner.entries.weighted_size())
            .finish()
    }
}

impl<K, V> Default for Depcache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new(Config::default())
    }
}

impl<K, V> Depcache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    /// A cache set up by `config`; starts the sweeper thread if it asks for one.
    pub fn new(config: Config) -> Self {
        let counters = Arc::new(Counters::default());
        let listener_counters = Arc::clone(&counters);
        let entries = moka::sync::Cache::builder()
            .max_capacity(config.budget_bytes)
            .weigher(|_key: &VersionedKey<K>, entry: &Arc<Entry<V>>| entry.weight)
            .expire_after(EntryExpiry)
            .eviction_listener(move |_key, _entry, cause| {
                if cause == RemovalCause::Size {
                    listener_counters.evictions.increment();
                }
            })
            .build();
        let (sweeper_stop, sweeper_stopped) = match config.sweep_interval {
            Some(_) => {
                let (stop, stopped) = mpsc::channel();
                (Some(stop), Some(stopped))
            }
            None => (None, None),
        };
        let inner = Arc::new(Inner {
            entries,
            dependencies: DependencyTable::new(),
            generation: AtomicU64::new(0),
            flights: Flights::new(),
            counters,
            observers: RwLock::new(Vec::new()),
            _sweeper_stop: sweeper_stop,
        });
        if let (Some(interval), Some(stopped)) = (config.sweep_interval, sweeper_stopped) {
            spawn_sweeper(Arc::downgrade(&inner), interval, stopped);
        }
        Self { inner }
    }

    /// The fresh value stored for `key`, if its time to live has not passed and none
    /// of its dependencies was flushed since it was stored. Never waits.
    pub fn get<Q>(&self, key: &Q) -> Option<Cached<V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let inner = &*self.inner;
        let lookup = KeyRef {
            generation: inner.generation.load(Ordering::Acquire),
            key,
        };
        if let Some(entry) = inner.entries.get(&lookup) {
            if entry.dependencies_current(&inner.dependencies) {
                if !entry.needs_clock || Instant::now() < entry.fresh_until {
                    inner.counters.hits.increment();
                    return Some(Cached(entry));
                }
            } else if !entry.has_grace() {
                inner.remove_if_same(&lookup, &entry);
            }
        }
        inner.counters.misses.increment();
        None
    }

    /// Stores `value` for `key`, depending on `deps`, whose serials are taken now.
    ///
    /// Take care when the value was read *before* this call: a flush between that
    /// read and this call would go unnoticed. Capture the serials before reading with
    /// [`capture`](Self::capture) and store with [`set_captured`](Self::set_captured),
    /// or use [`get_or_compute`](Self::get_or_compute), which stores only if the
    /// serials read before are still current.
    pub fn set(&self, key: K, value: V, policy: impl Into<Policy>, deps: &[DependencyKey]) {
        let dependencies = self.capture(deps);
        self.set_captured(key, value, policy, dependencies);
    }

    /// Stores `value` for `key` with dependency serials captured earlier. If any of
    /// them has been flushed since, the value is stored but never served as fresh;
    /// if the generation was bumped since, it lands in the old generation.
    pub fn set_captured(
        &self,
        key: K,
        value: V,
        policy: impl Into<Policy>,
        dependencies: Dependencies,
    ) {
        let entry = Entry::new(value, &policy.into(), dependencies);
        self.inner.store(key, &entry);
    }

    /// Takes the current serials of `deps` (and the current generation), to be
    /// stored later with [`set_captured`](Self::set_captured).
    pub fn capture(&self, deps: &[DependencyKey]) -> Dependencies {
        self.inner.capture(deps)
    }

    /// The current serial of a dependency key. Read it before reading the data the key
    /// guards; if it is unchanged afterwards, the key was not flushed in between.
    pub fn serial(&self, dep: &DependencyKey) -> Serial {
        self.inner.dependencies.serial(dep)
    }

    /// Removes `key`. A computation of `key` that is running keeps its result to
    /// itself and its waiters: it is not stored, and later callers start afresh.
    pub fn flush<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let inner = &*self.inner;
        let key = VersionedKey {
            generation: inner.current_generation(),
            key: key.to_owned(),
        };
        inner.flights.detach(&key);
        inner.entries.invalidate(&key);
        inner.notify(&FlushEvent::Key(&key.key));
    }

    /// Invalidates every entry that depends on `dep`, in O(1): its serial is bumped
    /// and entries are checked when read. Computations that captured `dep` before
    /// the flush do not get their results served as fresh.
    pub fn flush_dependency(&self, dep: &DependencyKey) {
        self.inner.dependencies.flush(dep);
        self.inner.notify(&FlushEvent::Dependency(dep));
    }

    /// Removes everything. Running computations land in a retired generation.
    pub fn flush_all(&self) {
        self.inner.generation.fetch_add(1, Ordering::AcqRel);
        self.inner.entries.invalidate_all();
        self.inner.notify(&FlushEvent::All);
    }

    /// Retires every stored key at once by moving to a new generation; old entries
    /// are reclaimed by the sweeper and the budget. Returns the new generation.
    pub fn bump_generation(&self) -> Generation {
        let generation = Generation(self.inner.generation.fetch_add(1, Ordering::AcqRel) + 1);
        self.inner.notify(&FlushEvent::Generation(generation));
        generation
    }

    /// The current generation.
    pub fn generation(&self) -> Generation {
        Generation(self.inner.generation.load(Ordering::Acquire))
    }

    /// Calls `observer` after every flush made on this cache (or its clones), in the
    /// thread that flushed. Meant for telling other nodes; keep it quick.
    pub fn observe_flushes(&self, observer: impl Fn(&FlushEvent<'_, K>) + Send + Sync + 'static) {
        self.inner.observers.write().push(Arc::new(observer));
    }

    /// Removes retired and invalidated entries, runs the storage's pending
    /// maintenance (expiry and budget evictions) and forgets dependency keys nothing
    /// depends on any more. The sweeper thread calls this; readers are not blocked.
    pub fn sweep(&self) {
        self.inner.sweep();
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> Stats {
        let counters = &self.inner.counters;
        Stats {
            hits: counters.hits.sum(),
            misses: counters.misses.sum(),
            coalesced_waits: counters.coalesced_waits.sum(),
            grace_hits: counters.grace_hits.sum(),
            stale_if_error: counters.stale_if_error.sum(),
            evictions: counters.evictions.sum(),
            bytes_used: self.inner.entries.weighted_size(),
            entries: self.inner.entries.entry_count(),
        }
    }
}

impl<K, V> Inner<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    pub(crate) fn current_generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub(crate) fn capture(&self, deps: &[DependencyKey]) -> Dependencies {
        // Generation first: a flush_all between the two reads then retires this
        // capture instead of letting it pass with a half-old view.
        let generation = self.current_generation();
        self.dependencies.capture(generation, deps)
    }

    /// Stores `entry` under `key` in the generation its dependencies were captured in.
    pub(crate) fn store(&self, key: K, entry: &Arc<Entry<V>>) -> VersionedKey<K> {
        let key = VersionedKey {
            generation: entry.dependencies.generation,
            key,
        };
        self.entries.insert(key.clone(), Arc::clone(entry));
        key
    }

    /// Removes the entry for `key` only if it still is `entry`, so a newer value
    /// stored meanwhile survives.
    fn remove_if_same<Q>(&self, key: &KeyRef<'_, Q>, entry: &Arc<Entry<V>>)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        // Not atomic: a newer value stored between the check and the invalidate is
        // dropped too. That loses a fill, never serves a stale value, and keeps the
        // read path free of key clones.
        if let Some(current) = self.entries.get(key)
            && Arc::ptr_eq(&current, entry)
        {
            self.entries.invalidate(key);
        }
    }

    pub(crate) fn remove_owned_if_same(&self, key: VersionedKey<K>, entry: &Arc<Entry<V>>) {
        self.entries
            .entry(key)
            .and_compute_with(|current| match current {
                Some(current) if Arc::ptr_eq(current.value(), entry) => Op::Remove,
                _ => Op::Nop,
            });
    }

    /// Removes the entry for `key` unless it is fresh, so a stale value is no longer
    /// served as grace while a value another caller just stored survives.
    pub(crate) fn remove_stale(&self, key: &VersionedKey<K>) {
        self.entries
            .entry(key.clone())
            .and_compute_with(|current| match current {
                Some(current) if !current.value().is_fresh(&self.dependencies) => Op::Remove,
                _ => Op::Nop,
            });
    }

    fn notify(&self, event: &FlushEvent<'_, K>) {
        let observers = self.observers.read();
        for observer in observers.iter() {
            observer(event);
        }
    }

    fn sweep(&self) {
        // Apply pending removals first (flush_all, expiry), so the scan below and the
        // prune at the end see what is really left.
        self.entries.run_pending_tasks();
        let generation = self.current_generation();
        let now = Instant::now();
        let mut dead = Vec::new();
        for (key, entry) in self.entries.iter() {
            let retired = key.generation != generation;
            // A flushed value is only ever served as grace: past that it is dead,
            // even if it would have been kept longer for stale-if-error.
            let invalidated = !entry.dependencies_current(&self.dependencies)
                && (!entry.has_grace() || now >= entry.grace_until);
            if retired || invalidated {
                dead.push((key, entry));
            }
        }
        for (key, entry) in dead {
            self.remove_owned_if_same((*key).clone(), &entry);
        }
        self.entries.run_pending_tasks();
        self.dependencies.prune();
    }
}

fn spawn_sweeper<K, V>(inner: Weak<Inner<K, V>>, interval: Duration, stopped: mpsc::Receiver<()>)
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Weigh + Send + Sync + 'static,
{
    let sweeper = move || {
        // The sender never sends; it is dropped with the cache, which ends the wait.
        while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
            let Some(inner) = inner.upgrade() else {
                return;
            };
            inner.sweep();
        }
    };
    if let Err(error) = thread::Builder::new()
        .name("depcache-sweeper".into())
        .spawn(sweeper)
    {
        // Without a sweeper the cache still works: moka expires entries and the
        // budget evicts; invalidated entries just linger until read or evicted.
        eprintln!("depcache: could not start the sweeper thread: {error}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet() -> Depcache<u32, String> {
        Depcache::new(Config {
            sweep_interval: None,
            ..Config::default()
        })
    }

    #[test]
    fn the_dependency_table_forgets_keys_nothing_depends_on() {
        let cache = quiet();
        for i in 0..1000 {
            let deps = [DependencyKey::new(format!("rsc:{i}"))];
            cache.set(i, "v".into(), Duration::from_secs(60), &deps);
        }
        assert_eq!(cache.inner.dependencies.len(), 1000);
        cache.sweep();
        assert_eq!(
            cache.inner.dependencies.len(),
            1000,
            "live entries keep theirs"
        );
        for i in 0..500 {
            cache.flush_dependency(&DependencyKey::new(format!("rsc:{i}")));
        }
        cache.sweep();
        assert_eq!(cache.inner.dependencies.len(), 500);
        cache.flush_all();
        cache.sweep();
        assert_eq!(cache.inner.dependencies.len(), 0);
    }

    #[test]
    fn flushing_an_unknown_dependency_does_not_grow_the_table() {
        let cache = quiet();
        for i in 0..1000 {
            cache.flush_dependency(&DependencyKey::new(format!("rsc:{i}")));
        }
        assert_eq!(cache.inner.dependencies.len(), 0);
    }

    #[test]
    fn hot_entry_fields_share_the_first_cache_line_with_the_refcounts() {
        // Arc's two counts take 16 bytes; the epoch and the expiry follow them.
        assert_eq!(std::mem::offset_of!(Entry<String>, validated_epoch), 0);
        assert!(std::mem::offset_of!(Entry<String>, fresh_until) + 16 <= 64 - 16);
    }
}
