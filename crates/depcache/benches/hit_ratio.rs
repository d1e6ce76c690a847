//! Hit cost of depcache relative to a plain `moka::sync::Cache` get, measured in
//! interleaved rounds and taking the best round of each, so that load from other
//! processes on a shared machine hits both sides alike. Prints one line per case.
//!
//! Run: `cargo bench -p bulwark-depcache --bench hit_ratio`

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bulwark_depcache::{Computed, Config, Depcache, DependencyKey};

const KEYS: usize = 10_000;
const READS: usize = 1_000_000;
const ROUNDS: usize = 15;
const HOUR: Duration = Duration::from_secs(3600);

/// Nanoseconds per read of the fastest of `ROUNDS` runs of `run`.
struct Best(f64);

impl Best {
    fn record(&mut self, reads: usize, run: impl FnOnce()) {
        let started = Instant::now();
        run();
        self.0 = self
            .0
            .min(started.elapsed().as_nanos() as f64 / reads as f64);
    }
}

fn on_two_threads(read: &(dyn Fn(usize) + Sync)) {
    std::thread::scope(|scope| {
        for thread in 0..2 {
            scope.spawn(move || {
                for n in 0..READS {
                    read(thread * 7919 + n);
                }
            });
        }
    });
}

const TASKS: usize = 64;

/// Runs `TASKS` tasks made by `task(first_read_index)` on a 2-worker runtime; each
/// does `READS / TASKS` reads.
fn on_64_tasks<F, Fut>(runtime: &tokio::runtime::Runtime, task: F)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS).map(|t| tokio::spawn(task(t * 7919))).collect();
        for task in tasks {
            task.await.unwrap();
        }
    })
}

fn main() {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("rsc:{i}:title")).collect();
    let floor: moka::sync::Cache<String, Arc<String>> = moka::sync::Cache::new(u64::MAX);
    let cache: Depcache<String, String> = Depcache::new(Config::default());
    for (i, key) in keys.iter().enumerate() {
        let value = format!("The title of resource {i}, long enough to be a realistic value");
        floor.insert(key.clone(), Arc::new(value.clone()));
        let deps = [
            DependencyKey::new(format!("rsc:{i}")),
            DependencyKey::new(format!("cat:{}", i % 10)),
        ];
        cache.set(key.clone(), value, HOUR, &deps);
    }
    floor.run_pending_tasks();
    cache.sweep();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();

    let (mut floor_one, mut get_one, mut compute_one) =
        (Best(f64::MAX), Best(f64::MAX), Best(f64::MAX));
    let (mut floor_two, mut get_two) = (Best(f64::MAX), Best(f64::MAX));
    let (mut floor_tasks, mut get_tasks, mut compute_tasks) =
        (Best(f64::MAX), Best(f64::MAX), Best(f64::MAX));
    let workers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let keys = Arc::new(keys);
    for _ in 0..ROUNDS {
        floor_one.record(READS, || {
            for n in 0..READS {
                black_box(floor.get(keys[n % KEYS].as_str()));
            }
        });
        get_one.record(READS, || {
            for n in 0..READS {
                black_box(cache.get(keys[n % KEYS].as_str()));
            }
        });
        compute_one.record(READS, || {
            runtime.block_on(async {
                for n in 0..READS {
                    let hit = cache
                        .get_or_compute(keys[n % KEYS].as_str(), HOUR, async || {
                            Ok::<_, ()>(Computed::new(String::new(), Vec::new()))
                        })
                        .await;
                    black_box(hit.unwrap());
                }
            })
        });
        floor_two.record(2 * READS, || {
            on_two_threads(&|n| {
                black_box(floor.get(keys[n % KEYS].as_str()));
            })
        });
        get_two.record(2 * READS, || {
            on_two_threads(&|n| {
                black_box(cache.get(keys[n % KEYS].as_str()));
            })
        });
        floor_tasks.record(READS, || {
            on_64_tasks(&workers, |first| {
                let (floor, keys) = (floor.clone(), Arc::clone(&keys));
                async move {
                    for n in first..first + READS / TASKS {
                        black_box(floor.get(keys[n % KEYS].as_str()));
                    }
                }
            })
        });
        get_tasks.record(READS, || {
            on_64_tasks(&workers, |first| {
                let (cache, keys) = (cache.clone(), Arc::clone(&keys));
                async move {
                    for n in first..first + READS / TASKS {
                        black_box(cache.get(keys[n % KEYS].as_str()));
                    }
                }
            })
        });
        compute_tasks.record(READS, || {
            on_64_tasks(&workers, |first| {
                let (cache, keys) = (cache.clone(), Arc::clone(&keys));
                async move {
                    for n in first..first + READS / TASKS {
                        let hit = cache
                            .get_or_compute(keys[n % KEYS].as_str(), HOUR, async || {
                                Ok::<_, ()>(Computed::new(String::new(), Vec::new()))
                            })
                            .await;
                        black_box(hit.unwrap());
                    }
                }
            })
        });
    }
    let line = |case: &str, floor: &Best, ours: &Best| {
        println!(
            "{case}: moka get {:.1} ns, depcache {:.1} ns, ratio {:.2}x",
            floor.0,
            ours.0,
            ours.0 / floor.0
        );
    };
    println!(
        "best of {ROUNDS} interleaved rounds of {READS} reads over {KEYS} keys (2 dependencies each)"
    );
    line("hit, 1 thread, get", &floor_one, &get_one);
    line("hit, 1 thread, get_or_compute", &floor_one, &compute_one);
    line(
        "hit, 2 threads, get (wall time per read)",
        &floor_two,
        &get_two,
    );
    line(
        "hit, 64 tasks on 2 workers, get (wall time per read)",
        &floor_tasks,
        &get_tasks,
    );
    line(
        "hit, 64 tasks on 2 workers, get_or_compute (wall time per read)",
        &floor_tasks,
        &compute_tasks,
    );
}
