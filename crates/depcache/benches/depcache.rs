//! Depcache against a plain `moka` cache as the floor, in the same run.
//!
//! Run: `cargo bench -p bulwark-depcache --bench depcache -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use bulwark_depcache::{Computed, Config, Depcache, DependencyKey};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const KEYS: usize = 10_000;
const HOUR: Duration = Duration::from_secs(3600);

fn keys() -> Vec<String> {
    (0..KEYS).map(|i| format!("rsc:{i}:title")).collect()
}

fn value(i: usize) -> String {
    format!("The title of resource {i}, long enough to be a realistic value")
}

fn floor_cache(keys: &[String]) -> moka::sync::Cache<String, Arc<String>> {
    let cache = moka::sync::Cache::new(u64::MAX);
    for (i, key) in keys.iter().enumerate() {
        cache.insert(key.clone(), Arc::new(value(i)));
    }
    cache.run_pending_tasks();
    cache
}

/// Every entry depends on its resource and on its category, as a model read would.
fn depcache(keys: &[String]) -> Depcache<String, String> {
    let cache = Depcache::new(Config::default());
    for (i, key) in keys.iter().enumerate() {
        let deps = [
            DependencyKey::new(format!("rsc:{i}")),
            DependencyKey::new(format!("cat:{}", i % 10)),
        ];
        cache.set(key.clone(), value(i), HOUR, &deps);
    }
    cache.sweep();
    cache
}

fn hit_latency(c: &mut Criterion) {
    let keys = keys();
    let floor = floor_cache(&keys);
    let cache = depcache(&keys);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("hit_single_thread");
    group.throughput(Throughput::Elements(1));
    group.bench_function("moka_sync_get_floor", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % KEYS;
            black_box(floor.get(keys[i].as_str()))
        })
    });
    group.bench_function("depcache_get", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % KEYS;
            black_box(cache.get(keys[i].as_str()))
        })
    });
    group.bench_function("depcache_get_or_compute", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let started = Instant::now();
                for n in 0..iters as usize {
                    let key = keys[n % KEYS].as_str();
                    let hit = cache
                        .get_or_compute(key, HOUR, async || {
                            Ok::<_, ()>(Computed::new(String::new(), Vec::new()))
                        })
                        .await;
                    black_box(hit.unwrap());
                }
                started.elapsed()
            })
        })
    });
    group.finish();
}

/// `iters` reads spread over `threads` OS threads; wall-clock time.
fn read_on_threads(threads: usize, iters: u64, read: impl Fn(usize) + Sync) -> Duration {
    let per_thread = (iters as usize).div_ceil(threads);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (barrier, read) = (&barrier, &read);
            scope.spawn(move || {
                barrier.wait();
                for n in 0..per_thread {
                    read(t * 7919 + n);
                }
                barrier.wait();
            });
        }
        barrier.wait();
        let started = Instant::now();
        barrier.wait();
        started.elapsed()
    })
}

fn read_throughput_threads(c: &mut Criterion) {
    let keys = keys();
    let floor = floor_cache(&keys);
    let cache = depcache(&keys);
    let mut group = c.benchmark_group("read_throughput_2_threads");
    group.throughput(Throughput::Elements(1));
    group.bench_function("moka_sync_get_floor", |b| {
        b.iter_custom(|iters| {
            read_on_threads(2, iters, |n| {
                black_box(floor.get(keys[n % KEYS].as_str()));
            })
        })
    });
    group.bench_function("depcache_get", |b| {
        b.iter_custom(|iters| {
            read_on_threads(2, iters, |n| {
                black_box(cache.get(keys[n % KEYS].as_str()));
            })
        })
    });
    group.finish();
}

const TASKS: usize = 64;

/// Wall time of `iters` reads spread over `TASKS` tasks; `task(first, reads)` makes
/// one task that reads keys `first..first + reads` (modulo `KEYS`).
fn time_on_tasks<F, Fut>(runtime: &tokio::runtime::Runtime, iters: u64, task: F) -> Duration
where
    F: Fn(usize, usize) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let per_task = (iters as usize).div_ceil(TASKS);
    runtime.block_on(async {
        let started = Instant::now();
        let tasks: Vec<_> = (0..TASKS)
            .map(|t| tokio::spawn(task(t * 7919, per_task)))
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        started.elapsed()
    })
}

fn read_throughput_tasks(c: &mut Criterion) {
    let keys = Arc::new(keys());
    let floor = floor_cache(&keys);
    let cache = depcache(&keys);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let mut group = c.benchmark_group("read_throughput_64_tasks");
    group.throughput(Throughput::Elements(1));
    group.bench_function("moka_sync_get_floor", |b| {
        b.iter_custom(|iters| {
            time_on_tasks(&runtime, iters, |first, reads| {
                let (floor, keys) = (floor.clone(), Arc::clone(&keys));
                async move {
                    for n in first..first + reads {
                        black_box(floor.get(keys[n % KEYS].as_str()));
                    }
                }
            })
        })
    });
    group.bench_function("depcache_get", |b| {
        b.iter_custom(|iters| {
            time_on_tasks(&runtime, iters, |first, reads| {
                let (cache, keys) = (cache.clone(), Arc::clone(&keys));
                async move {
                    for n in first..first + reads {
                        black_box(cache.get(keys[n % KEYS].as_str()));
                    }
                }
            })
        })
    });
    group.bench_function("depcache_get_or_compute", |b| {
        b.iter_custom(|iters| {
            time_on_tasks(&runtime, iters, |first, reads| {
                let (cache, keys) = (cache.clone(), Arc::clone(&keys));
                async move {
                    for n in first..first + reads {
                        let hit = cache
                            .get_or_compute(keys[n % KEYS].as_str(), HOUR, async || {
                                Ok::<_, ()>(Computed::new(String::new(), Vec::new()))
                            })
                            .await;
                        black_box(hit.unwrap());
                    }
                }
            })
        })
    });
    group.finish();
}

const CALLERS: usize = 1000;

/// Total time of `iters` stampedes: each spawns `CALLERS` tasks asking for one new
/// key at once (`call(key)` makes one caller) and waits for all of them.
fn time_stampedes<F, Fut, T>(
    runtime: &tokio::runtime::Runtime,
    iters: u64,
    round: &mut u64,
    call: F,
) -> Duration
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        *round += 1;
        let key = *round;
        total += runtime.block_on(async {
            let started = Instant::now();
            let callers: Vec<_> = (0..CALLERS).map(|_| tokio::spawn(call(key))).collect();
            for caller in callers {
                black_box(caller.await.unwrap());
            }
            started.elapsed()
        });
    }
    total
}

fn stampede(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("stampede_1000_tasks");
    group.sample_size(20);
    group.throughput(Throughput::Elements(CALLERS as u64));
    let cache: Depcache<u64, String> = Depcache::new(Config::default());
    group.bench_function("depcache_get_or_compute", |b| {
        let mut round = 0u64;
        b.iter_custom(|iters| {
            time_stampedes(&runtime, iters, &mut round, |key| {
                let cache = cache.clone();
                async move {
                    cache
                        .get_or_compute(&key, HOUR, async || {
                            tokio::task::yield_now().await;
                            Ok::<_, ()>(Computed::new(value(7), Vec::new()))
                        })
                        .await
                        .unwrap()
                }
            })
        })
    });
    let moka_future: moka::future::Cache<u64, Arc<String>> = moka::future::Cache::new(u64::MAX);
    group.bench_function("moka_future_get_with_reference", |b| {
        let mut round = 0u64;
        b.iter_custom(|iters| {
            time_stampedes(&runtime, iters, &mut round, |key| {
                let cache = moka_future.clone();
                async move {
                    cache
                        .get_with(key, async {
                            tokio::task::yield_now().await;
                            Arc::new(value(7))
                        })
                        .await
                }
            })
        })
    });
    group.finish();
}

fn flush_with_many_dependants(c: &mut Criterion) {
    const DEPENDANTS: usize = 100_000;
    let keys: Vec<String> = (0..DEPENDANTS).map(|i| format!("page:{i}")).collect();
    let cache: Depcache<String, String> = Depcache::new(Config {
        sweep_interval: None,
        ..Config::default()
    });
    let article = DependencyKey::new("cat:article");
    for (i, key) in keys.iter().enumerate() {
        cache.set(key.clone(), value(i), HOUR, std::slice::from_ref(&article));
    }
    cache.sweep();
    assert_eq!(cache.stats().entries, DEPENDANTS as u64);
    let mut group = c.benchmark_group("flush_dependency_100k_dependants");
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::new("flush", DEPENDANTS), |b| {
        b.iter(|| cache.flush_dependency(black_box(&article)))
    });
    // Every dependant is now stale; each read finds that out (and drops the entry).
    assert!(
        keys.iter()
            .step_by(997)
            .all(|key| cache.get(key.as_str()).is_none())
    );
    group.bench_function(
        BenchmarkId::new("flush_then_read_a_dependant", DEPENDANTS),
        |b| {
            let mut i = 0;
            b.iter(|| {
                cache.flush_dependency(&article);
                i = (i + 1) % DEPENDANTS;
                black_box(cache.get(keys[i].as_str()))
            })
        },
    );
    group.finish();
}

criterion_group!(
    benches,
    hit_latency,
    read_throughput_threads,
    read_throughput_tasks,
    stampede,
    flush_with_many_dependants
);
criterion_main!(benches);
