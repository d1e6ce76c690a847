//! `get_or_compute`: single flight, flushes during computation, failures, grace,
//! stale-if-error and early refresh. Every wait is bounded by a timeout, so a hang is
//! a failure, not a stuck test run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bulwark_depcache::{Cached, Config, Depcache, DependencyKey, Error, Policy};
use tokio::sync::{Barrier, Notify};
use tokio::time::{sleep, timeout};

const HOUR: Duration = Duration::from_secs(3600);
const LIMIT: Duration = Duration::from_secs(10);

type Cache = Depcache<String, String>;

fn cache() -> Cache {
    Depcache::new(Config {
        sweep_interval: None,
        ..Config::default()
    })
}

fn key(name: &str) -> String {
    name.to_string()
}

#[derive(Debug, thiserror::Error)]
#[error("the store is down")]
struct StoreDown;

fn ok(value: &str) -> Result<String, StoreDown> {
    Ok(value.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_callers_share_one_computation() {
    let cache = cache();
    let runs = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(Barrier::new(1000));
    let mut callers = Vec::new();
    for _ in 0..1000 {
        let (cache, runs, start) = (cache.clone(), Arc::clone(&runs), Arc::clone(&start));
        callers.push(tokio::spawn(async move {
            start.wait().await;
            cache
                .get_or_compute("page", HOUR, &[], move || async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    // Long enough that every caller arrives while it runs.
                    sleep(Duration::from_millis(500)).await;
                    ok("rendered")
                })
                .await
        }));
    }
    for caller in callers {
        let value = timeout(LIMIT, caller)
            .await
            .expect("no caller hangs")
            .unwrap();
        assert_eq!(*value.unwrap(), "rendered");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let stats = cache.stats();
    // On a loaded machine a straggler may arrive after the value is stored: a hit.
    assert_eq!(stats.coalesced_waits + stats.hits, 999, "{stats:?}");
    assert!(stats.coalesced_waits > 900, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_computation_reaches_every_waiter_and_is_not_cached() {
    let cache = cache();
    let runs = Arc::new(AtomicUsize::new(0));
    let mut callers = Vec::new();
    for _ in 0..100 {
        let (cache, runs) = (cache.clone(), Arc::clone(&runs));
        callers.push(tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, &[], move || async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    sleep(Duration::from_millis(100)).await;
                    Err::<String, _>(StoreDown)
                })
                .await
        }));
    }
    for caller in callers {
        let result = timeout(LIMIT, caller)
            .await
            .expect("no caller hangs")
            .unwrap();
        match result {
            Err(Error::Compute(error)) => assert_eq!(error.to_string(), "the store is down"),
            other => panic!("expected the computation's error, got {other:?}"),
        }
    }
    assert!(runs.load(Ordering::SeqCst) < 100, "failures are shared too");
    assert_eq!(cache.get("k"), None);
    let value = cache
        .get_or_compute("k", HOUR, &[], || async { ok("recovered") })
        .await
        .unwrap();
    assert_eq!(*value, "recovered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_computation_leaves_no_waiter_hanging() {
    let cache = cache();
    let mut callers = Vec::new();
    for _ in 0..100 {
        let cache = cache.clone();
        callers.push(tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, &[], || async {
                    sleep(Duration::from_millis(50)).await;
                    if true {
                        panic!("template exploded");
                    }
                    ok("never")
                })
                .await
        }));
    }
    for caller in callers {
        let result = timeout(LIMIT, caller).await.expect("no caller hangs");
        match result.expect("the panic does not escape get_or_compute") {
            Err(Error::ComputePanicked(message)) => assert_eq!(&*message, "template exploded"),
            other => panic!("expected a caught panic, got {other:?}"),
        }
    }
    assert_eq!(cache.get("k"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_take_over_when_the_computing_caller_is_cancelled() {
    let cache = cache();
    let leader_started = Arc::new(Notify::new());
    let started = Arc::clone(&leader_started);
    let leader = {
        let cache = cache.clone();
        tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, &[], move || async move {
                    started.notify_one();
                    sleep(HOUR).await;
                    ok("never")
                })
                .await
        })
    };
    leader_started.notified().await;
    let waiter = {
        let cache = cache.clone();
        tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, &[], || async { ok("from the waiter") })
                .await
        })
    };
    let deadline = tokio::time::Instant::now() + LIMIT;
    while cache.stats().coalesced_waits == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the waiter never joined"
        );
        sleep(Duration::from_millis(1)).await;
    }
    leader.abort();
    let value = timeout(LIMIT, waiter)
        .await
        .expect("the waiter does not hang");
    assert_eq!(*value.unwrap().unwrap(), "from the waiter");
    assert_eq!(cache.stats().coalesced_waits, 1);
}

/// Runs a computation for `key` depending on `dep` that waits for `release`, and
/// returns its task once the computation has started.
async fn start_blocked_computation(
    cache: &Cache,
    key_name: &str,
    dep: &DependencyKey,
    value: &'static str,
    release: Arc<Notify>,
) -> tokio::task::JoinHandle<Result<Cached<String>, Error>> {
    let started = Arc::new(Notify::new());
    let task = {
        let (cache, dep, started) = (cache.clone(), dep.clone(), Arc::clone(&started));
        let key = key(key_name);
        tokio::spawn(async move {
            cache
                .get_or_compute(&key, HOUR, &[dep], move || async move {
                    started.notify_one();
                    release.notified().await;
                    ok(value)
                })
                .await
        })
    };
    timeout(LIMIT, started.notified()).await.unwrap();
    task
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_computed_across_a_dependency_flush_is_not_served_fresh() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:42");
    let release = Arc::new(Notify::new());
    let old =
        start_blocked_computation(&cache, "title", &dep, "old title", Arc::clone(&release)).await;

    cache.flush_dependency(&dep);

    // A caller arriving after the flush does not join the stale computation.
    let fresh_runs = Arc::new(AtomicUsize::new(0));
    let runs = Arc::clone(&fresh_runs);
    let fresh = cache.get_or_compute(
        "title",
        HOUR,
        std::slice::from_ref(&dep),
        move || async move {
            runs.fetch_add(1, Ordering::SeqCst);
            ok("new title")
        },
    );
    let fresh = timeout(LIMIT, fresh).await.unwrap().unwrap();
    assert_eq!(*fresh, "new title");
    assert_eq!(fresh_runs.load(Ordering::SeqCst), 1);

    release.notify_one();
    let old = timeout(LIMIT, old).await.unwrap().unwrap().unwrap();
    assert_eq!(*old, "old title", "its own caller started before the flush");
    assert_eq!(
        cache.get("title").as_deref().map(String::as_str),
        Some("new title"),
        "the stale result did not replace the fresh one"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_computed_across_a_flush_of_its_only_dependency_is_not_stored() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:42");
    let release = Arc::new(Notify::new());
    let old = start_blocked_computation(&cache, "title", &dep, "old", Arc::clone(&release)).await;
    cache.flush_dependency(&dep);
    release.notify_one();
    timeout(LIMIT, old).await.unwrap().unwrap().unwrap();
    assert_eq!(cache.get("title"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_computed_across_a_flush_of_its_key_is_not_stored() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:42");
    let release = Arc::new(Notify::new());
    let old = start_blocked_computation(&cache, "title", &dep, "old", Arc::clone(&release)).await;
    cache.flush("title");
    release.notify_one();
    timeout(LIMIT, old).await.unwrap().unwrap().unwrap();
    assert_eq!(cache.get("title"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_computed_across_flush_all_is_not_stored() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:42");
    let release = Arc::new(Notify::new());
    let old = start_blocked_computation(&cache, "title", &dep, "old", Arc::clone(&release)).await;
    cache.flush_all();
    release.notify_one();
    timeout(LIMIT, old).await.unwrap().unwrap().unwrap();
    assert_eq!(cache.get("title"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grace_serves_the_old_value_at_once_while_one_task_recomputes() {
    let cache = cache();
    let policy = Policy::ttl(Duration::from_millis(50)).with_grace(HOUR);
    cache
        .get_or_compute("k", policy, &[], || async { ok("v1") })
        .await
        .unwrap();
    sleep(Duration::from_millis(80)).await;

    let runs = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    for _ in 0..50 {
        let (runs, release) = (Arc::clone(&runs), Arc::clone(&release));
        let value = timeout(
            Duration::from_millis(500),
            cache.get_or_compute("k", policy, &[], move || async move {
                runs.fetch_add(1, Ordering::SeqCst);
                release.notified().await;
                ok("v2")
            }),
        )
        .await
        .expect("a grace hit does not wait for the recomputation")
        .unwrap();
        assert_eq!(*value, "v1");
    }
    release.notify_one();
    let deadline = tokio::time::Instant::now() + LIMIT;
    while cache.get("k").as_deref().map(String::as_str) != Some("v2") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the refresh did not land"
        );
        sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "exactly one recomputation");
    assert_eq!(cache.stats().grace_hits, 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_dependency_flush_grace_applies_only_when_the_caller_opts_in() {
    let cache = cache();
    let dep = [DependencyKey::new("rsc:1")];
    let policy = Policy::ttl(HOUR).with_grace(HOUR);
    cache.set(key("k"), "old".into(), policy, &dep);
    cache.flush_dependency(&dep[0]);

    let release = Arc::new(Notify::new());
    let blocked = Arc::clone(&release);
    let opted_in = cache
        .get_or_compute(
            "k",
            policy.serve_stale_after_flush(),
            &dep,
            move || async move {
                blocked.notified().await;
                ok("new")
            },
        )
        .await
        .unwrap();
    assert_eq!(*opted_in, "old", "opted in: served stale while recomputing");

    // Without opting in, the caller waits for the recomputation already running.
    let waiting = cache.get_or_compute("k", policy, &dep, || async { ok("unused") });
    release.notify_one();
    let value = timeout(LIMIT, waiting).await.unwrap().unwrap();
    assert_eq!(*value, "new");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_if_error_serves_the_old_value_when_the_recompute_fails() {
    let cache = cache();
    let policy = Policy::ttl(Duration::from_millis(20)).with_stale_if_error(HOUR);
    cache
        .get_or_compute("k", policy, &[], || async { ok("old") })
        .await
        .unwrap();
    sleep(Duration::from_millis(40)).await;
    let value = cache
        .get_or_compute("k", policy, &[], || async { Err::<String, _>(StoreDown) })
        .await
        .unwrap();
    assert_eq!(*value, "old");
    assert_eq!(cache.stats().stale_if_error_serves, 1);
    // Without a stale window the error comes through.
    let error = cache
        .get_or_compute("other", policy, &[], || async {
            Err::<String, _>(StoreDown)
        })
        .await;
    assert!(matches!(error, Err(Error::Compute(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn early_refresh_recomputes_a_hot_entry_before_it_expires() {
    let cache = cache();
    // A slow computation and a huge beta: XFetch fires on the first hit.
    let policy = Policy::ttl(HOUR).with_early_refresh(1e9);
    cache
        .get_or_compute("k", policy, &[], || async {
            sleep(Duration::from_millis(5)).await;
            ok("v1")
        })
        .await
        .unwrap();
    let hit = cache
        .get_or_compute("k", policy, &[], || async { ok("v2") })
        .await
        .unwrap();
    assert_eq!(*hit, "v1", "the reader does not wait");
    let deadline = tokio::time::Instant::now() + LIMIT;
    while cache.get("k").as_deref().map(String::as_str) != Some("v2") {
        assert!(tokio::time::Instant::now() < deadline, "no early refresh");
        sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(cache.stats().early_refreshes, 1);
}

#[tokio::test]
async fn without_early_refresh_a_fresh_hit_never_recomputes() {
    let cache = cache();
    cache.set(key("k"), "v1".into(), HOUR, &[]);
    for _ in 0..100 {
        let value = cache
            .get_or_compute("k", HOUR, &[], || async { ok("v2") })
            .await
            .unwrap();
        assert_eq!(*value, "v1");
    }
    sleep(Duration::from_millis(20)).await;
    assert_eq!(cache.get("k").as_deref().map(String::as_str), Some("v1"));
    assert_eq!(cache.stats().early_refreshes, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_variant_shares_one_computation_across_blocking_threads() {
    let cache = cache();
    let runs = Arc::new(AtomicUsize::new(0));
    let mut callers = Vec::new();
    for _ in 0..20 {
        let (cache, runs) = (cache.clone(), Arc::clone(&runs));
        callers.push(tokio::task::spawn_blocking(move || {
            cache.get_or_compute_blocking("k", HOUR, &[], move || {
                runs.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(100));
                ok("computed on the blocking pool")
            })
        }));
    }
    for caller in callers {
        let value = timeout(LIMIT, caller).await.expect("no caller hangs");
        assert_eq!(*value.unwrap().unwrap(), "computed on the blocking pool");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let panicked = tokio::task::spawn_blocking(move || {
        cache.get_or_compute_blocking("p", HOUR, &[], || -> Result<String, StoreDown> {
            panic!("blocking computation exploded")
        })
    });
    let result = timeout(LIMIT, panicked).await.unwrap().unwrap();
    assert!(
        matches!(result, Err(Error::ComputePanicked(message)) if &*message == "blocking computation exploded")
    );
}
