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
//! referenced by nothing but the table guards nothing, so the sweeper drops it and a
//! later capture starts again at serial 0. A flush of a dependency key that is not in
//! the table has nothing to invalidate and does not insert it, which keeps the table
//! bounded by the dependencies of live entries and computations.
//!
//! Checking every dependency on every read would still cost a cache miss or two
//! per dependency (the cells are scattered in memory). So the table also counts
//! flushes of any key in one *flush epoch*, and an entry remembers the epoch at which
//! its dependencies were last found current: while the epoch has not moved, no
//! dependency at all was flushed, and the read skips the per-dependency check. A flush
//! bumps the key's serial before the epoch, and a check reads the epoch before the
//! serials, so an entry can only be marked current at an epoch that already includes
//! every flush it must see.

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

/// How many times a dependency key has been flushed (since its cell was created).
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
/// Obtained from [`Depcache::capture`](crate::Depcache::capture); `get_or_compute`
/// captures on its own before it runs the computation.
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

type DependencyShard = RwLock<HashMap<DependencyKey, Arc<DependencyCell>>>;

/// Dependency key -> serial cell, sharded so flushes and captures of different
/// keys do not contend.
pub(crate) struct DependencyTable {
    hasher: RandomState,
    shards: Box<[DependencyShard]>,
    /// Number of flushes that bumped a serial, of any key.
    epoch: AtomicU64,
}

impl DependencyTable {
    pub(crate) fn new() -> Self {
        Self {
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
            epoch: AtomicU64::new(0),
        }
    }

    fn shard(&self, key: &DependencyKey) -> &DependencyShard {
        &self.shards[self.hasher.hash_one(key) as usize % SHARDS]
    }

    fn cell(&self, key: &DependencyKey) -> Arc<DependencyCell> {
        let shard = self.shard(key);
        if let Some(cell) = shard.read().get(key) {
            return Arc::clone(cell);
        }
        Arc::clone(shard.write().entry(key.clone()).or_default())
    }

    /// The flush epoch; unchanged means no serial was bumped.
    #[inline]
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    pub(crate) fn capture(&self, generation: u64, keys: &[DependencyKey]) -> Dependencies {
        let epoch = self.epoch();
        let captured = keys
            .iter()
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

    /// Bumps the serial of `key`. Returns the new serial, or `None` when nothing
    /// holds the key (then there is nothing to invalidate).
    pub(crate) fn flush(&self, key: &DependencyKey) -> Option<Serial> {
        // Bumping under the read lock keeps `prune` from dropping the cell between
        // the lookup and the increment.
        let shard = self.shard(key).read();
        let cell = shard.get(key)?;
        let serial = Serial(cell.serial.fetch_add(1, Ordering::AcqRel) + 1);
        // After the serial, so whoever sees the new epoch also sees the new serial.
        self.epoch.fetch_add(1, Ordering::AcqRel);
        Some(serial)
    }

    /// The current serial of `key`; 0 for a key nothing depends on.
    pub(crate) fn serial(&self, key: &DependencyKey) -> Serial {
        let shard = self.shard(key).read();
        Serial(
            shard
                .get(key)
                .map_or(0, |cell| cell.serial.load(Ordering::Acquire)),
        )
    }

    /// Drops the cells no entry or computation holds any more.
    pub(crate) fn prune(&self) {
        for shard in self.shards.iter() {
            // Look before taking the write lock, so a sweep of a table with nothing to
            // prune never blocks captures.
            let prunable = shard
                .read()
                .values()
                .any(|cell| Arc::strong_count(cell) == 1);
            if prunable {
                shard.write().retain(|_, cell| Arc::strong_count(cell) > 1);
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|shard| shard.read().len()).sum()
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
        assert_eq!(table.flush(&"rsc:1".into()), Some(Serial(1)));
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
        assert_eq!(table.serial(&"rsc:2".into()), Serial(0));
    }
}
