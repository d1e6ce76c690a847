//! Dependency keys and their serials.
//!
//! Why serials and not a dependency graph: a graph (dependency -> set of cached
//! keys) makes a flush cost as much as the number of dependants, needs a lock that
//! writers and flushers share, and must be kept in sync with every eviction. A serial
//! per dependency key makes a flush one atomic increment, however many entries
//! depend on the key. The price is paid lazily: an entry remembers the serials of its
//! dependencies when it is stored, and a read compares them with the current ones.
//!
//! Each dependency key owns a small shared cell holding its serial. An entry (or a
//! computation in flight) keeps an `Arc` to the cell, so checking a dependency on the
//! read path is one atomic load, without hashing the key. The table that maps
//! dependency keys to cells only needs to know the cells somebody still holds: a cell
//! referenced by nothing but the table guards nothing, so the sweeper drops it. A
//! flush of a dependency key that is not in the table has nothing to invalidate and
//! does not insert it (reading its serial does), which keeps the table bounded by the
//! dependencies of live entries and computations, and of recent reads.
//!
//! Serials are handed out by one *flush clock*, which ticks on every flush of any key:
//! a flush sets the key's serial to the new tick. So a key's serial only grows, and
//! two equal readings of it mean it was not flushed in between, even if the sweeper
//! dropped its cell meanwhile. That matters because callers read serials without
//! holding the cells (a render records `(key, serial)` pairs as it reads, and the page
//! is stored only if they are all unchanged afterwards). Each shard keeps a *floor*:
//! the highest tick of a flush of one of its keys that had no cell, and the last
//! serial of any cell it dropped; a new cell starts at the floor. A flush while a key
//! has no cell thus still moves the key's serial, and dropping a cell never moves it
//! back. (Keys of one shard share the floor, so a key whose cell was dropped while a
//! computation used it may also move when a neighbour without a cell is flushed: a
//! value then goes uncached once, it is never served stale.) The clock also tells a
//! computation in flight whether anything was flushed since it started.
//!
//! Checking every dependency on every read would still cost a cache miss or two
//! per dependency (the cells are scattered in memory). So the table also counts
//! flushes of keys that have a cell in one *flush epoch*, and an entry remembers the
//! epoch at which its dependencies were last found current: while the epoch has not
//! moved, no dependency at all was flushed, and the read skips the per-dependency
//! check. A flush bumps the key's serial before the epoch, and a check reads the epoch
//! before the serials, so an entry can only be marked current at an epoch that
//! already includes every flush it must see.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;

/// A key naming a piece of data that cached values depend on, such as `rsc:42`,
/// `cat:article` or `edges:42:author`. Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DependencyKey(Arc<str>);

impl DependencyKey {
    /// A dependency key with this name.
    pub fn new(name: impl AsRef<str>) -> Self {
        Self(Arc::from(name.as_ref()))
    }

    /// The key's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for DependencyKey {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

impl From<String> for DependencyKey {
    fn from(name: String) -> Self {
        Self(Arc::from(name))
    }
}

impl fmt::Debug for DependencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for DependencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a dependency key stands: it changes every time the key is flushed and never
/// comes back to an earlier value, so a serial read before some work and found
/// unchanged after it proves the key was not flushed meanwhile.
///
/// Read with [`Depcache::serial`](crate::Depcache::serial) *before* reading the data
/// the key guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Serial(u64);

impl Serial {
    /// The number behind the serial, for display and metrics.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// The shared serial of one dependency key.
#[derive(Debug, Default)]
struct DependencyCell {
    serial: AtomicU64,
}

/// The serials of a set of dependency keys (and the cache generation), taken at one
/// moment. Take them *before* reading the data the dependencies guard: a flush that
/// happens after the capture then makes the stored value stale, as it must.
///
/// Obtained from [`Depcache::capture`](crate::Depcache::capture).
#[derive(Clone)]
pub struct Dependencies {
    pub(crate) generation: u64,
    /// The flush epoch read before the serials were.
    pub(crate) epoch: u64,
    captured: Box<[(Arc<DependencyCell>, Serial)]>,
}

impl Dependencies {
    /// True while none of the dependencies has been flushed since the capture.
    #[inline]
    pub(crate) fn are_current(&self) -> bool {
        self.captured
            .iter()
            .all(|(cell, serial)| cell.serial.load(Ordering::Acquire) == serial.0)
    }

    /// True when the captured serials are exactly `read`, key by key (`read` being the
    /// list the capture was made from).
    pub(crate) fn matches(&self, read: &[(DependencyKey, Serial)]) -> bool {
        self.captured.len() == read.len()
            && self
                .captured
                .iter()
                .zip(read)
                .all(|((_, captured), (_, read))| captured == read)
    }

    /// How many dependency keys were captured.
    pub fn len(&self) -> usize {
        self.captured.len()
    }

    /// True when no dependency key was captured.
    pub fn is_empty(&self) -> bool {
        self.captured.is_empty()
    }
}

impl fmt::Debug for Dependencies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dependencies")
            .field("generation", &self.generation)
            .field("epoch", &self.epoch)
            .field("len", &self.captured.len())
            .finish()
    }
}

const SHARDS: usize = 64;

#[derive(Default)]
struct DependencyShard {
    cells: RwLock<HashMap<DependencyKey, Arc<DependencyCell>>>,
    /// The serial of every key of this shard that has no cell (see the module docs).
    floor: AtomicU64,
}

/// Dependency key -> serial cell, sharded so flushes and captures of different
/// keys do not contend.
pub(crate) struct DependencyTable {
    hasher: RandomState,
    shards: Box<[DependencyShard]>,
    /// Ticks on every flush, of any key; serials are its ticks.
    clock: AtomicU64,
    /// Number of flushes that bumped the serial of a cell, of any key.
    epoch: AtomicU64,
}

impl DependencyTable {
    pub(crate) fn new() -> Self {
        Self {
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| DependencyShard::default()).collect(),
            clock: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
        }
    }

    fn shard(&self, key: &DependencyKey) -> &DependencyShard {
        &self.shards[self.hasher.hash_one(key) as usize % SHARDS]
    }

    fn cell(&self, key: &DependencyKey) -> Arc<DependencyCell> {
        let shard = self.shard(key);
        if let Some(cell) = shard.cells.read().get(key) {
            return Arc::clone(cell);
        }
        let mut cells = shard.cells.write();
        let cell = cells.entry(key.clone()).or_insert_with(|| {
            // Under the write lock, so no flush of this key runs meanwhile: the new
            // cell reads as the key read without one.
            Arc::new(DependencyCell {
                serial: AtomicU64::new(shard.floor.load(Ordering::Acquire)),
            })
        });
        Arc::clone(cell)
    }

    /// The flush epoch; unchanged means no serial of a cell was bumped.
    #[inline]
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The flush clock; unchanged means nothing at all was flushed.
    #[inline]
    pub(crate) fn clock(&self) -> u64 {
        self.clock.load(Ordering::Acquire)
    }

    pub(crate) fn capture<'a>(
        &self,
        generation: u64,
        keys: impl IntoIterator<Item = &'a DependencyKey>,
    ) -> Dependencies {
        let epoch = self.epoch();
        let captured = keys
            .into_iter()
            .map(|key| {
                let cell = self.cell(key);
                let serial = Serial(cell.serial.load(Ordering::Acquire));
                (cell, serial)
            })
            .collect();
        Dependencies {
            generation,
            epoch,
            captured,
        }
    }

    /// Moves the serial of `key` to a new tick of the clock. Returns the new serial,
    /// or `None` when nothing holds the key (then no stored value depends on it).
    pub(crate) fn flush(&self, key: &DependencyKey) -> Option<Serial> {
        // Under the read lock: `prune` cannot drop the cell between the lookup and
        // the bump, and `cell` cannot create one without seeing the new floor.
        let shard = self.shard(key);
        let cells = shard.cells.read();
        let tick = self.clock.fetch_add(1, Ordering::AcqRel) + 1;
        let Some(cell) = cells.get(key) else {
            shard.floor.fetch_max(tick, Ordering::AcqRel);
            return None;
        };
        // fetch_max: concurrent flushes of one key must not move it back.
        cell.serial.fetch_max(tick, Ordering::AcqRel);
        // After the serial, so whoever sees the new epoch also sees the new serial.
        self.epoch.fetch_add(1, Ordering::AcqRel);
        Some(Serial(tick))
    }

    /// The current serial of `key`. The key gets a cell, so that until the sweeper
    /// drops it, only flushes of this key move its serial.
    pub(crate) fn serial(&self, key: &DependencyKey) -> Serial {
        Serial(self.cell(key).serial.load(Ordering::Acquire))
    }

    /// Drops the cells no entry or computation holds any more.
    pub(crate) fn prune(&self) {
        for shard in self.shards.iter() {
            // Look before taking the write lock, so a sweep of a table with nothing to
            // prune never blocks captures.
            let prunable = shard
                .cells
                .read()
                .values()
                .any(|cell| Arc::strong_count(cell) == 1);
            if prunable {
                shard.cells.write().retain(|_, cell| {
                    let held = Arc::strong_count(cell) > 1;
                    if !held {
                        // The key now reads as the floor: never below what it read.
                        shard
                            .floor
                            .fetch_max(cell.serial.load(Ordering::Acquire), Ordering::AcqRel);
                    }
                    held
                });
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.cells.read().len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_is_current_until_a_dependency_is_flushed() {
        let table = DependencyTable::new();
        let deps = table.capture(0, &["rsc:1".into(), "cat:article".into()]);
        assert!(deps.are_current());
        assert_eq!(table.flush(&"rsc:2".into()), None);
        assert!(deps.are_current());
        assert!(table.flush(&"rsc:1".into()).is_some());
        assert!(!deps.are_current());
    }

    #[test]
    fn prune_keeps_held_cells_and_drops_the_rest() {
        let table = DependencyTable::new();
        let held = table.capture(0, &["rsc:1".into()]);
        drop(table.capture(0, &["rsc:2".into()]));
        assert_eq!(table.len(), 2);
        table.prune();
        assert_eq!(table.len(), 1);
        table.flush(&"rsc:1".into());
        assert!(!held.are_current());
    }

    #[test]
    fn a_flush_of_a_key_without_a_cell_still_moves_its_serial() {
        let table = DependencyTable::new();
        let rsc_1 = DependencyKey::new("rsc:1");
        let read = table.serial(&rsc_1);
        table.prune();
        assert_eq!(table.len(), 0);
        assert_eq!(table.flush(&rsc_1), None, "nothing held it");
        let captured = table.capture(0, [&rsc_1]);
        assert!(
            !captured.matches(&[(rsc_1.clone(), read)]),
            "a cell created after the flush does not bring the old serial back"
        );
    }

    #[test]
    fn a_serial_read_ignores_flushes_of_other_keys_until_its_cell_is_dropped() {
        let table = DependencyTable::new();
        let keys: Vec<DependencyKey> = (0..64).map(|i| format!("rsc:{i}").into()).collect();
        let read: Vec<(DependencyKey, Serial)> = keys
            .iter()
            .map(|key| (key.clone(), table.serial(key)))
            .collect();
        for i in 64..1000 {
            table.flush(&DependencyKey::new(format!("rsc:{i}")));
        }
        assert!(table.capture(0, &keys).matches(&read));
    }

    #[test]
    fn a_serial_read_before_its_cell_was_pruned_sees_a_later_flush() {
        let table = DependencyTable::new();
        let rsc_1 = DependencyKey::new("rsc:1");
        let held = table.capture(0, [&rsc_1]);
        table.flush(&rsc_1);
        let read = table.serial(&rsc_1);
        drop(held);
        table.prune();
        assert_eq!(table.len(), 0);
        assert_eq!(table.serial(&rsc_1), read, "pruning alone changes nothing");
        assert!(table.capture(0, [&rsc_1]).matches(&[(rsc_1.clone(), read)]));
        table.prune();
        table.flush(&rsc_1);
        assert!(!table.capture(0, [&rsc_1]).matches(&[(rsc_1.clone(), read)]));
    }

    #[test]
    fn a_key_with_a_cell_ignores_flushes_of_other_keys() {
        let table = DependencyTable::new();
        let rsc_1 = DependencyKey::new("rsc:1");
        let _held = table.capture(0, [&rsc_1]);
        let read = table.serial(&rsc_1);
        for i in 2..200 {
            table.flush(&DependencyKey::new(format!("rsc:{i}")));
        }
        assert_eq!(table.serial(&rsc_1), read);
    }
}
