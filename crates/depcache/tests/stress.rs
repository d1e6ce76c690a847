//! Readers, writers and flushers hammering one cache for two seconds.
//!
//! A fake store holds a version per dependency key. Writers bump a version, flush the
//! dependency and then publish "version N is flushed". A reader notes the published
//! versions *before* reading; whatever the cache returns must have been computed from
//! at least those versions. Reads go through `get`, `get_or_compute` with and without
//! grace, and cancelled `get_or_compute` calls; computations read their serials, then
//! the store, and sometimes fail, panic or yield, and keys are flushed, all flushed
//! and retired by generation meanwhile.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bulwark_depcache::{Computed, Config, Depcache, DependencyKey, Error, Policy, Weigh};

const DEPS: usize = 4;
const KEYS: u64 = 16;
const RUN_FOR: Duration = Duration::from_secs(2);

/// The store versions a value was computed from.
#[derive(Debug)]
struct Versions([u64; DEPS]);

impl Weigh for Versions {
    fn weigh(&self) -> usize {
        size_of::<Self>()
    }
}

struct Store {
    versions: [AtomicU64; DEPS],
    flushed: [AtomicU64; DEPS],
}

fn deps_of(key: u64) -> [usize; 2] {
    [
        (key % DEPS as u64) as usize,
        ((key / DEPS as u64) % DEPS as u64) as usize,
    ]
}

fn dependency(index: usize) -> DependencyKey {
    DependencyKey::new(format!("rsc:{index}"))
}

#[derive(Clone, Debug)]
struct StoreDown;

/// Runs a future, turning a panic while polling it into `None`: a panic in a leader's
/// computation unwinds through the leader's own call.
struct CatchPanic<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchPanic<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Some(output)),
            Err(_) => Poll::Ready(None),
        }
    }
}

/// Cheap per-task randomness.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reads_never_see_values_older_than_a_completed_flush() {
    // The computations panic on purpose now and then; keep those out of the output.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&"computation panicked") {
            default_hook(info);
        }
    }));
    let cache: Depcache<u64, Versions> = Depcache::new(Config {
        budget_bytes: 64 * 1024,
        sweep_interval: Some(Duration::from_millis(5)),
    });
    let store = Arc::new(Store {
        versions: Default::default(),
        flushed: Default::default(),
    });
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));

    let mut tasks = Vec::new();
    for writer in 0..2u64 {
        let (cache, store, stop) = (cache.clone(), Arc::clone(&store), Arc::clone(&stop));
        tasks.push(tokio::spawn(async move {
            let mut dice = Dice(0x9E37_79B9_7F4A_7C15 + writer);
            while !stop.load(Ordering::SeqCst) {
                let index = dice.roll(DEPS as u64) as usize;
                let version = store.versions[index].fetch_add(1, Ordering::SeqCst) + 1;
                cache.flush_dependency(&dependency(index));
                store.flushed[index].fetch_max(version, Ordering::SeqCst);
                match dice.roll(200) {
                    0 => cache.flush_all(),
                    1 => {
                        cache.bump_generation();
                    }
                    2..=9 => cache.flush(&dice.roll(KEYS)),
                    _ => {}
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    for reader in 0..16u64 {
        let (cache, store, stop) = (cache.clone(), Arc::clone(&store), Arc::clone(&stop));
        let (reads, failures) = (Arc::clone(&reads), Arc::clone(&failures));
        tasks.push(tokio::spawn(async move {
            let mut dice = Dice(0x2545_F491_4F6C_DD1D ^ ((reader + 1) * 0x1000_0001));
            while !stop.load(Ordering::SeqCst) {
                let key = dice.roll(KEYS);
                let deps = deps_of(key);
                let seen: Vec<u64> = deps
                    .iter()
                    .map(|index| store.flushed[*index].load(Ordering::SeqCst))
                    .collect();
                let dependency_keys: Vec<DependencyKey> =
                    deps.iter().map(|index| dependency(*index)).collect();
                let check = |value: &Versions| {
                    for (slot, index) in deps.iter().enumerate() {
                        assert!(
                            value.0[*index] >= seen[slot],
                            "key {key}: served version {} of rsc:{index} after version {} was flushed",
                            value.0[*index],
                            seen[slot]
                        );
                    }
                };
                if dice.roll(3) == 0 {
                    if let Some(value) = cache.get(&key) {
                        check(&value);
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let ttl = Duration::from_micros(200 + dice.roll(2000));
                let policy = match dice.roll(2) {
                    0 => Policy::ttl(ttl),
                    _ => Policy::ttl(ttl).with_grace(Duration::from_millis(5)),
                };
                let fate = dice.roll(20);
                let compute = async || {
                    // The serials first, then the store they guard.
                    let read = dependency_keys
                        .iter()
                        .map(|dep| (dep.clone(), cache.serial(dep)))
                        .collect();
                    let mut versions = [0; DEPS];
                    for index in deps {
                        versions[index] = store.versions[index].load(Ordering::SeqCst);
                    }
                    match fate {
                        0 => return Err(StoreDown),
                        1 => panic!("computation panicked"),
                        2..=5 => tokio::task::yield_now().await,
                        _ => {}
                    }
                    Ok(Computed::new(Versions(versions), read))
                };
                let call = CatchPanic(Box::pin(cache.get_or_compute(&key, policy, compute)));
                let result = if dice.roll(10) == 0 {
                    // Cancel some callers, leaders included, mid-flight.
                    match tokio::time::timeout(Duration::from_micros(50), call).await {
                        Ok(result) => result,
                        Err(_) => continue,
                    }
                } else {
                    tokio::time::timeout(Duration::from_secs(10), call)
                        .await
                        .expect("no caller hangs")
                };
                match result {
                    Some(Ok(value)) => check(&value),
                    Some(Err(Error::Leader(StoreDown) | Error::Waited(StoreDown))) | None => {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
                reads.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }

    let started = Instant::now();
    tokio::time::sleep(RUN_FOR).await;
    stop.store(true, Ordering::SeqCst);
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("every task stops")
            .expect("no invariant was violated");
    }
    assert!(started.elapsed() < RUN_FOR + Duration::from_secs(10));
    let reads = reads.load(Ordering::Relaxed);
    assert!(reads > 1000, "only {reads} reads ran");
    assert!(
        failures.load(Ordering::Relaxed) > 0,
        "failure paths were exercised"
    );
    let stats = cache.stats();
    assert!(stats.hits > 0 && stats.misses > 0, "{stats:?}");
    eprintln!("{reads} reads; {stats:?}");
}
