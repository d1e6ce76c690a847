//! Properties checked over generated operation sequences.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bulwark_depcache::{Config, Depcache, DependencyKey, Weigh};
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
                    .get_or_compute(&1, HOUR, &dependencies(deps), move || async move {
                        started.notify_one();
                        release.notified().await;
                        Ok::<_, std::io::Error>(7)
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
}
