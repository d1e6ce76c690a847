//! Properties checked over generated operation sequences.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bulwark_depcache::{Computed, Config, Depcache, DependencyKey, Leader, Lookup, Serial, Weigh};
use proptest::prelude::*;
use tokio::sync::Notify;

const HOUR: Duration = Duration::from_secs(3600);
const DEPS: u8 = 5;

fn dependency(index: u8) -> DependencyKey {
    DependencyKey::new(format!("rsc:{index}"))
}

fn dependencies(mask: u8) -> Vec<DependencyKey> {
    (0..DEPS)
        .filter(|index| mask & (1 << index) != 0)
        .map(dependency)
        .collect()
}

#[derive(Clone, Debug)]
enum Operation {
    Set {
        key: u8,
        deps: u8,
    },
    /// Capture serials, then a flush happens, then the value is stored.
    SetAfterFlush {
        key: u8,
        deps: u8,
        flushed: u8,
    },
    FlushDependency(u8),
    Flush(u8),
    Get(u8),
    BumpGeneration,
    Sweep,
}

fn operation() -> impl Strategy<Value = Operation> {
    prop_oneof![
        4 => (0..8u8, 0..32u8).prop_map(|(key, deps)| Operation::Set { key, deps }),
        1 => (0..8u8, 0..32u8, 0..DEPS)
            .prop_map(|(key, deps, flushed)| Operation::SetAfterFlush { key, deps, flushed }),
        3 => (0..DEPS).prop_map(Operation::FlushDependency),
        1 => (0..8u8).prop_map(Operation::Flush),
        6 => (0..8u8).prop_map(Operation::Get),
        1 => Just(Operation::BumpGeneration),
        1 => Just(Operation::Sweep),
    ]
}

/// What a correct cache must answer: per key, the last value stored and whether a
/// flush has invalidated it since.
#[derive(Default)]
struct Model {
    entries: HashMap<u8, (u64, u8, bool)>,
}

impl Model {
    fn flush_dependency(&mut self, index: u8) {
        for (_, deps, valid) in self.entries.values_mut() {
            if *deps & (1 << index) != 0 {
                *valid = false;
            }
        }
    }

    fn expected(&self, key: u8) -> Option<u64> {
        match self.entries.get(&key) {
            Some((value, _, true)) => Some(*value),
            _ => None,
        }
    }
}

fn quiet_cache<V: Weigh + Send + Sync + 'static>(budget_bytes: u64) -> Depcache<u8, V> {
    Depcache::new(Config {
        budget_bytes,
        sweep_interval: None,
    })
}

/// The serials of the dependencies in `mask`, as a computation reads them.
fn read_serials<V>(cache: &Depcache<u8, V>, mask: u8) -> Vec<(DependencyKey, Serial)>
where
    V: Weigh + Send + Sync + 'static,
{
    dependencies(mask)
        .into_iter()
        .map(|dep| {
            let serial = cache.serial(&dep);
            (dep, serial)
        })
        .collect()
}

/// What a computation read from a model store: the version of each dependency in
/// `mask`, and how many times everything had been flushed.
#[derive(Clone, Debug, PartialEq)]
struct Snapshot {
    mask: u8,
    versions: [u64; DEPS as usize],
    era: u64,
}

impl Weigh for Snapshot {
    fn weigh(&self) -> usize {
        size_of::<Self>()
    }
}

impl Snapshot {
    /// True when nothing this value read had been flushed at `seen`.
    fn is_at_least(&self, seen: &Snapshot) -> bool {
        self.era >= seen.era
            && (0..DEPS as usize)
                .filter(|index| self.mask & (1 << index) != 0)
                .all(|index| self.versions[index] >= seen.versions[index])
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Failure;

#[derive(Clone, Debug)]
enum Step {
    /// A caller asks for `key`; if it leads, its computation reads `mask`, at once
    /// or only when it lands.
    Ask {
        key: u8,
        mask: u8,
        reads_late: bool,
    },
    FlushDependency(u8),
    FlushKey(u8),
    FlushAll,
    /// The `n`th running leader lands with its value.
    Finish(usize),
    Fail(usize),
    /// The `n`th running leader goes away (a cancelled request).
    Abandon(usize),
    Get(u8),
    Sweep,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..3u8, 0..32u8, any::<bool>())
            .prop_map(|(key, mask, reads_late)| Step::Ask { key, mask, reads_late }),
        4 => (0..DEPS).prop_map(Step::FlushDependency),
        1 => (0..3u8).prop_map(Step::FlushKey),
        1 => Just(Step::FlushAll),
        4 => any::<usize>().prop_map(Step::Finish),
        1 => any::<usize>().prop_map(Step::Fail),
        1 => any::<usize>().prop_map(Step::Abandon),
        2 => (0..3u8).prop_map(Step::Get),
        1 => Just(Step::Sweep),
    ]
}

type Cache = Depcache<u8, Snapshot>;
type Asking<'a> = Pin<Box<dyn Future<Output = Lookup<u8, Snapshot, Failure>> + 'a>>;

/// A caller's `get_or_lead`, polled by hand.
struct Caller<'a> {
    asking: Asking<'a>,
    /// What the store held when it asked.
    seen: Snapshot,
    mask: u8,
    reads_late: bool,
}

struct Running {
    leader: Leader<u8, Snapshot, Failure>,
    mask: u8,
    /// Serials and data, if the computation read them when it started.
    read: Option<(Vec<(DependencyKey, Serial)>, Snapshot)>,
}

/// The model store: a version per dependency, and the number of flush_all calls.
struct Store {
    versions: [u64; DEPS as usize],
    era: u64,
}

impl Store {
    fn now(&self, mask: u8) -> Snapshot {
        Snapshot {
            mask,
            versions: self.versions,
            era: self.era,
        }
    }

    /// Serials first, then the data they guard, as a render does.
    fn read(&self, cache: &Cache, mask: u8) -> (Vec<(DependencyKey, Serial)>, Snapshot) {
        (read_serials(cache, mask), self.now(mask))
    }
}

/// Polls `caller` once: `Err` gives it back when it still waits.
fn poll<'a>(caller: Caller<'a>) -> Result<(Lookup<u8, Snapshot, Failure>, Caller<'a>), Caller<'a>> {
    let mut caller = caller;
    match caller
        .asking
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(lookup) => Ok((lookup, caller)),
        Poll::Pending => Err(caller),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// After `flush_dependency(d)` no read returns a value stored before the flush
    /// with `d` among its dependencies, and (with room to spare and long TTLs) every
    /// value not invalidated is still returned.
    #[test]
    fn reads_after_a_dependency_flush_never_return_values_stored_before_it(
        operations in prop::collection::vec(operation(), 1..80)
    ) {
        let cache: Depcache<u8, u64> = quiet_cache(u64::MAX);
        let mut model = Model::default();
        let mut next_value = 0u64;
        for operation in operations {
            match operation {
                Operation::Set { key, deps } => {
                    next_value += 1;
                    cache.set(key, next_value, HOUR, &dependencies(deps));
                    model.entries.insert(key, (next_value, deps, true));
                }
                Operation::SetAfterFlush { key, deps, flushed } => {
                    next_value += 1;
                    let captured = cache.capture(&dependencies(deps));
                    cache.flush_dependency(&dependency(flushed));
                    model.flush_dependency(flushed);
                    cache.set_captured(key, next_value, HOUR, captured);
                    let valid = deps & (1 << flushed) == 0;
                    model.entries.insert(key, (next_value, deps, valid));
                }
                Operation::FlushDependency(index) => {
                    cache.flush_dependency(&dependency(index));
                    model.flush_dependency(index);
                }
                Operation::Flush(key) => {
                    cache.flush(&key);
                    model.entries.remove(&key);
                }
                Operation::Get(key) => {
                    let got = cache.get(&key).map(|value| *value);
                    prop_assert_eq!(got, model.expected(key), "key {}", key);
                }
                Operation::BumpGeneration => {
                    cache.bump_generation();
                    model.entries.clear();
                }
                Operation::Sweep => cache.sweep(),
            }
        }
        for key in 0..8 {
            prop_assert_eq!(cache.get(&key).map(|value| *value), model.expected(key));
        }
    }

    /// After eviction has run, the stored weight exceeds the budget by at most one
    /// entry.
    #[test]
    fn the_budget_is_never_exceeded_by_more_than_one_entry_after_eviction(
        sizes in prop::collection::vec(1usize..20_000, 1..300),
        budget in 10_000u64..200_000,
    ) {
        let cache: Depcache<u16, String> = Depcache::new(Config {
            budget_bytes: budget,
            sweep_interval: None,
        });
        let mut heaviest = 0u64;
        for (key, size) in sizes.iter().enumerate() {
            let value = "x".repeat(*size);
            // The entry's weight: the value plus the per-entry overhead (< 256 bytes).
            heaviest = heaviest.max(value.weigh() as u64 + 256);
            cache.set(key as u16, value, HOUR, &[DependencyKey::new("cat:x")]);
            if key % 7 == 0 {
                cache.get(&(key as u16 / 2));
            }
            if key % 50 == 0 {
                cache.sweep();
                let used = cache.stats().bytes_used;
                prop_assert!(used <= budget + heaviest, "used {} budget {}", used, budget);
            }
        }
        cache.sweep();
        let used = cache.stats().bytes_used;
        prop_assert!(used <= budget + heaviest, "used {} budget {}", used, budget);
    }

    /// A value computed while some dependencies are flushed is stored (and served)
    /// only if none of its own dependencies was among them.
    #[test]
    fn a_value_computed_across_concurrent_flushes_is_served_only_if_untouched(
        deps in 0..32u8,
        flushed in prop::collection::vec(0..DEPS, 0..4),
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let cache: Depcache<u8, u64> = quiet_cache(u64::MAX);
        let started = Arc::new(Notify::new());
        let release = Arc::new(Notify::new());
        let computation = {
            let (cache, started, release) =
                (cache.clone(), Arc::clone(&started), Arc::clone(&release));
            runtime.spawn(async move {
                cache
                    .get_or_compute(&1, HOUR, async || {
                        let read = read_serials(&cache, deps);
                        started.notify_one();
                        release.notified().await;
                        Ok::<_, ()>(Computed::new(7, read))
                    })
                    .await
            })
        };
        runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), started.notified()).await.unwrap();
        });
        for index in &flushed {
            cache.flush_dependency(&dependency(*index));
        }
        release.notify_one();
        let computed = runtime
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), computation).await })
            .expect("the computation finishes")
            .unwrap()
            .unwrap();
        prop_assert_eq!(*computed, 7);
        let untouched = flushed.iter().all(|index| deps & (1 << index) == 0);
        prop_assert_eq!(cache.get(&1).map(|value| *value), untouched.then_some(7));
    }

    /// Whatever interleaving of callers, flushes and leaders that land, fail or go
    /// away: no caller gets a value computed from data older than a flush that had
    /// completed when it asked; what is stored is current; and once every leader is
    /// gone, every waiter gets an answer (none hangs).
    #[test]
    fn no_caller_gets_a_value_older_than_a_flush_completed_before_it_asked(
        steps in prop::collection::vec(step(), 1..60)
    ) {
        let cache: Cache = quiet_cache(u64::MAX);
        let mut store = Store { versions: [0; DEPS as usize], era: 0 };
        let mut waiting: Vec<Caller<'_>> = Vec::new();
        let mut running: Vec<Running> = Vec::new();

        for step in steps {
            match step {
                Step::Ask { key, mask, reads_late } => {
                    let cache = &cache;
                    let asking: Asking<'_> =
                        Box::pin(async move { cache.get_or_lead(&key, HOUR).await });
                    waiting.push(Caller { asking, seen: store.now(mask), mask, reads_late });
                }
                Step::FlushDependency(index) => {
                    store.versions[index as usize] += 1;
                    cache.flush_dependency(&dependency(index));
                }
                Step::FlushKey(key) => cache.flush(&key),
                Step::FlushAll => {
                    store.era += 1;
                    cache.flush_all();
                }
                Step::Finish(n) if !running.is_empty() => {
                    let Running { leader, mask, read } = running.remove(n % running.len());
                    let (serials, value) = read.unwrap_or_else(|| store.read(&cache, mask));
                    let handed = leader.finish(value.clone(), &serials);
                    prop_assert_eq!(&*handed, &value);
                }
                Step::Fail(n) if !running.is_empty() => {
                    running.remove(n % running.len()).leader.fail(Failure);
                }
                Step::Abandon(n) if !running.is_empty() => {
                    drop(running.remove(n % running.len()));
                }
                Step::Finish(_) | Step::Fail(_) | Step::Abandon(_) => {}
                Step::Get(key) => {
                    if let Some(value) = cache.get(&key) {
                        let now = store.now(value.mask);
                        prop_assert!(value.is_at_least(&now), "stored {:?}, now {:?}", *value, now);
                    }
                }
                Step::Sweep => cache.sweep(),
            }
            let mut still_waiting = Vec::new();
            for caller in waiting.drain(..) {
                match poll(caller) {
                    Err(caller) => still_waiting.push(caller),
                    Ok((Lookup::Value(value), caller)) => {
                        prop_assert!(
                            value.is_at_least(&caller.seen),
                            "got {:?}, asked after {:?}", *value, caller.seen
                        );
                    }
                    Ok((Lookup::Failed(Failure), _)) => {}
                    Ok((Lookup::Lead(leader), caller)) => {
                        let read = (!caller.reads_late).then(|| store.read(&cache, caller.mask));
                        running.push(Running { leader, mask: caller.mask, read });
                    }
                }
            }
            waiting = still_waiting;
        }

        // Every leader goes away; each round, the waiters it leaves retry, and one
        // leads (then goes away too) or all get an answer.
        drop(running);
        while !waiting.is_empty() {
            let before = waiting.len();
            let mut still_waiting = Vec::new();
            for caller in waiting.drain(..) {
                match poll(caller) {
                    Err(caller) => still_waiting.push(caller),
                    Ok((Lookup::Value(value), caller)) => {
                        prop_assert!(value.is_at_least(&caller.seen));
                    }
                    Ok((Lookup::Failed(Failure), _)) => {}
                    Ok((Lookup::Lead(leader), _)) => drop(leader),
                }
            }
            prop_assert!(still_waiting.len() < before, "a waiter hangs");
            waiting = still_waiting;
        }
    }
}
