//! Single flight through `get_or_lead` and `get_or_compute`: an inline leader,
//! dependencies given after the computation, shared failures, leaders that go away,
//! and grace. Every wait is bounded by a timeout, so a hang is a failure, not a stuck
//! test run; "at once" is checked by polling a call exactly once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bulwark_depcache::{
    Computed, Config, Depcache, DependencyKey, Error, Leader, Lookup, Policy, Serial,
};
use bulwark_testkit::eventually;
use tokio::sync::Notify;
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

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("the store is down")]
struct StoreDown;

/// What a computation reports: `value`, read after taking the serials of `deps`.
fn computed(cache: &Cache, value: &str, deps: &[DependencyKey]) -> Computed<String> {
    Computed::new(value.to_string(), read_serials(cache, deps))
}

fn read_serials(cache: &Cache, deps: &[DependencyKey]) -> Vec<(DependencyKey, Serial)> {
    deps.iter()
        .map(|dep| (dep.clone(), cache.serial(dep)))
        .collect()
}

fn stored(cache: &Cache, key: &str) -> Option<String> {
    cache.get(key).map(|value| (*value).clone())
}

/// A future polled by hand, so a test can tell "ready at once" from "waiting".
struct Polled<F: Future>(Pin<Box<F>>);

impl<F: Future> Polled<F> {
    fn new(future: F) -> Self {
        Self(Box::pin(future))
    }

    fn poll(&mut self) -> Option<F::Output> {
        match self
            .0
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(output) => Some(output),
            Poll::Pending => None,
        }
    }
}

/// The output of `future` if it is ready on its first poll, without waiting.
fn at_once<F: Future>(future: F) -> Option<F::Output> {
    Polled::new(future).poll()
}

/// The output of `future`, which must not take long: a hang fails the test.
async fn bounded<F: Future>(future: F) -> F::Output {
    timeout(LIMIT, future)
        .await
        .expect("the call does not hang")
}

async fn lead(cache: &Cache, key: &str, policy: Policy) -> Leader<String, String, StoreDown> {
    match bounded(cache.get_or_lead(key, policy)).await {
        Lookup::Lead(leader) => leader,
        other => panic!("expected to lead, got {other:?}"),
    }
}

/// Waits until `n` callers in all have waited for another caller's computation.
async fn until_waiting(cache: &Cache, n: u64) {
    eventually("the callers join the flight", LIMIT, || async {
        (cache.stats().coalesced_waits >= n).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_leader_computes_inline_borrowing_from_its_caller() {
    let cache = cache();
    // Neither is 'static, and the computation even mutates one.
    let path = String::from("/about");
    let mut renders = 0;
    let page = bounded(cache.get_or_compute("page:/about", HOUR, async || {
        renders += 1;
        Ok::<_, StoreDown>(computed(&cache, &format!("page for {path}"), &[]))
    }))
    .await
    .unwrap();
    assert_eq!(*page, "page for /about");
    assert_eq!(renders, 1);
    assert_eq!(
        stored(&cache, "page:/about").as_deref(),
        Some("page for /about")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_callers_share_one_computation() {
    let cache = cache();
    let runs = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    let mut callers = Vec::new();
    for _ in 0..100 {
        let (cache, runs, release) = (cache.clone(), Arc::clone(&runs), Arc::clone(&release));
        callers.push(tokio::spawn(async move {
            cache
                .get_or_compute("page", HOUR, async || {
                    runs.fetch_add(1, Ordering::SeqCst);
                    release.notified().await;
                    Ok::<_, StoreDown>(computed(&cache, "rendered", &[]))
                })
                .await
        }));
    }
    until_waiting(&cache, 99).await;
    release.notify_one();
    for caller in callers {
        let value = timeout(LIMIT, caller)
            .await
            .expect("no caller hangs")
            .unwrap();
        assert_eq!(*value.unwrap(), "rendered");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(cache.stats().coalesced_waits, 99);
}

#[tokio::test]
async fn a_fresh_value_is_returned_without_computing() {
    let cache = cache();
    cache.set("k".into(), "v1".into(), HOUR, &[]);
    for _ in 0..100 {
        let value = bounded(cache.get_or_compute(
            "k",
            HOUR,
            async || -> Result<Computed<String>, StoreDown> { panic!("a hit computes nothing") },
        ))
        .await
        .unwrap();
        assert_eq!(*value, "v1");
    }
}

#[tokio::test]
async fn a_dependency_flushed_during_the_computation_keeps_the_value_out_of_the_cache() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:42");
    let leader = lead(&cache, "title", HOUR.into()).await;
    let read = read_serials(&cache, std::slice::from_ref(&dep));
    // A caller that joined before the flush is handed the value all the same.
    let mut waiter = Polled::new(cache.get_or_lead::<_, StoreDown>("title", HOUR));
    assert!(waiter.poll().is_none(), "it waits for the leader");

    cache.flush_dependency(&dep);

    let value = leader.finish("old title".into(), &read);
    assert_eq!(
        *value, "old title",
        "its own caller started before the flush"
    );
    match waiter.poll() {
        Some(Lookup::Value(value)) => assert_eq!(*value, "old title"),
        other => panic!("expected the leader's value, got {other:?}"),
    }
    assert_eq!(stored(&cache, "title"), None);
    let runs = AtomicUsize::new(0);
    let again = bounded(cache.get_or_compute("title", HOUR, async || {
        runs.fetch_add(1, Ordering::SeqCst);
        Ok::<_, StoreDown>(computed(&cache, "new title", std::slice::from_ref(&dep)))
    }))
    .await
    .unwrap();
    assert_eq!(*again, "new title");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the next call computes again"
    );
}

#[tokio::test]
async fn callers_arriving_after_a_flush_do_not_join_the_computation_that_started_before_it() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:42");
    let old = lead(&cache, "title", HOUR.into()).await;
    let old_read = read_serials(&cache, std::slice::from_ref(&dep));

    cache.flush_dependency(&dep);

    // Not kept waiting for the old computation: it computes afresh, at once.
    let fresh = at_once(cache.get_or_compute("title", HOUR, async || {
        Ok::<_, StoreDown>(computed(&cache, "new title", std::slice::from_ref(&dep)))
    }))
    .expect("does not wait for the stale flight")
    .unwrap();
    assert_eq!(*fresh, "new title");

    assert_eq!(*old.finish("old title".into(), &old_read), "old title");
    assert_eq!(
        stored(&cache, "title").as_deref(),
        Some("new title"),
        "the stale result did not replace the fresh one"
    );
}

#[tokio::test]
async fn callers_that_accept_stale_values_join_a_computation_across_an_unrelated_flush() {
    // A rush on one page while other data changes: one computation, not one per
    // flush (the page cache's policy).
    let cache = cache();
    let dep = DependencyKey::new("rsc:42");
    let policy = Policy::ttl(HOUR).with_grace(HOUR).serve_stale_after_flush();
    let leader = lead(&cache, "page", policy).await;
    let read = read_serials(&cache, std::slice::from_ref(&dep));
    cache.flush_dependency(&DependencyKey::new("rsc:7"));
    let joined = cache.get_or_lead::<str, StoreDown>("page", policy);
    let mut joined = std::pin::pin!(joined);
    assert!(
        at_once(joined.as_mut()).is_none(),
        "it waits for the running computation instead of starting another"
    );
    leader.finish("the page".into(), &read);
    match bounded(joined).await {
        Lookup::Value(v) => assert_eq!(*v, "the page"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_serial_read_before_anything_depended_on_its_key_still_sees_a_flush() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:7");
    let leader = lead(&cache, "k", HOUR.into()).await;
    // Nothing depends on rsc:7 yet: the flush has no entry to invalidate, but the
    // value was read before it.
    let read = read_serials(&cache, std::slice::from_ref(&dep));
    cache.flush_dependency(&dep);
    leader.finish("read before the flush".into(), &read);
    assert_eq!(stored(&cache, "k"), None);
}

#[tokio::test]
async fn a_value_computed_across_a_flush_of_its_key_is_not_stored() {
    let cache = cache();
    let leader = lead(&cache, "title", HOUR.into()).await;
    cache.flush("title");
    leader.finish("old".into(), &[]);
    assert_eq!(stored(&cache, "title"), None);
}

#[tokio::test]
async fn a_value_computed_across_flush_all_is_not_stored() {
    let cache = cache();
    let leader = lead(&cache, "title", HOUR.into()).await;
    cache.flush_all();
    leader.finish("old".into(), &[]);
    assert_eq!(stored(&cache, "title"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_reaches_every_waiter_and_nothing_is_stored() {
    let cache = cache();
    let runs = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    let leader = {
        let (cache, runs, release) = (cache.clone(), Arc::clone(&runs), Arc::clone(&release));
        tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, async || {
                    runs.fetch_add(1, Ordering::SeqCst);
                    release.notified().await;
                    Err::<Computed<String>, _>(StoreDown)
                })
                .await
        })
    };
    until_started(&runs).await;
    let mut waiters = Vec::new();
    for _ in 0..99 {
        let (cache, runs) = (cache.clone(), Arc::clone(&runs));
        waiters.push(tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, async || {
                    runs.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, StoreDown>(Computed::new("unused".to_string(), vec![]))
                })
                .await
        }));
    }
    until_waiting(&cache, 99).await;
    release.notify_one();
    let led = timeout(LIMIT, leader)
        .await
        .expect("the leader ends")
        .unwrap();
    assert_eq!(led, Err(Error::Leader(StoreDown)));
    for waiter in waiters {
        let waited = timeout(LIMIT, waiter)
            .await
            .expect("no waiter hangs")
            .unwrap();
        assert_eq!(waited, Err(Error::Waited(StoreDown)));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "one failure, shared");
    assert_eq!(stored(&cache, "k"), None);
    let value = bounded(cache.get_or_compute("k", HOUR, async || {
        Ok::<_, StoreDown>(computed(&cache, "recovered", &[]))
    }))
    .await
    .unwrap();
    assert_eq!(*value, "recovered");
}

async fn until_started(runs: &AtomicUsize) {
    eventually("the leader starts computing", LIMIT, || async {
        (runs.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_takes_over_when_the_leader_is_cancelled() {
    let cache = cache();
    let started = Arc::new(AtomicUsize::new(0));
    let leader = {
        let (cache, started) = (cache.clone(), Arc::clone(&started));
        tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, async || {
                    started.fetch_add(1, Ordering::SeqCst);
                    sleep(HOUR).await;
                    Ok::<_, StoreDown>(Computed::new("never".to_string(), vec![]))
                })
                .await
        })
    };
    until_started(&started).await;
    let waiter = {
        let cache = cache.clone();
        tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, async || {
                    Ok::<_, StoreDown>(computed(&cache, "from the waiter", &[]))
                })
                .await
        })
    };
    until_waiting(&cache, 1).await;
    leader.abort();
    let value = timeout(LIMIT, waiter)
        .await
        .expect("the waiter does not hang");
    assert_eq!(*value.unwrap().unwrap(), "from the waiter");
    assert_eq!(stored(&cache, "k").as_deref(), Some("from the waiter"));
}

#[tokio::test]
async fn a_leader_dropped_without_landing_sends_its_waiter_back_to_lead() {
    let cache = cache();
    let leader = lead(&cache, "k", HOUR.into()).await;
    let mut waiter = Polled::new(cache.get_or_lead::<_, StoreDown>("k", HOUR));
    assert!(waiter.poll().is_none());
    drop(leader);
    match waiter.poll() {
        Some(Lookup::Lead(leader)) => {
            leader.finish("from the waiter".into(), &[]);
        }
        other => panic!("expected the waiter to lead, got {other:?}"),
    }
    assert_eq!(stored(&cache, "k").as_deref(), Some("from the waiter"));
}

#[tokio::test]
async fn a_waiter_expecting_another_error_type_leads_after_the_failure() {
    #[derive(Clone, Debug)]
    struct Gone;
    let cache = cache();
    let leader = lead(&cache, "k", HOUR.into()).await;
    let mut waiter = Polled::new(cache.get_or_lead::<_, Gone>("k", HOUR));
    assert!(waiter.poll().is_none());
    leader.fail(StoreDown);
    assert!(matches!(waiter.poll(), Some(Lookup::Lead(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_unwinds_through_the_leader_and_a_waiter_computes_instead() {
    quiet_panics("template exploded");
    let cache = cache();
    let started = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    let leader = {
        let (cache, started, release) = (cache.clone(), Arc::clone(&started), Arc::clone(&release));
        tokio::spawn(async move {
            cache
                .get_or_compute(
                    "k",
                    HOUR,
                    async || -> Result<Computed<String>, StoreDown> {
                        started.fetch_add(1, Ordering::SeqCst);
                        release.notified().await;
                        panic!("template exploded")
                    },
                )
                .await
        })
    };
    until_started(&started).await;
    let runs = Arc::new(AtomicUsize::new(0));
    let mut waiters = Vec::new();
    for _ in 0..10 {
        let (cache, runs) = (cache.clone(), Arc::clone(&runs));
        waiters.push(tokio::spawn(async move {
            cache
                .get_or_compute("k", HOUR, async || {
                    runs.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, StoreDown>(computed(&cache, "rendered by a waiter", &[]))
                })
                .await
        }));
    }
    until_waiting(&cache, 10).await;
    release.notify_one();
    let led = timeout(LIMIT, leader).await.expect("the leader ends");
    assert!(led.unwrap_err().is_panic(), "the panic is the leader's own");
    for waiter in waiters {
        let value = timeout(LIMIT, waiter)
            .await
            .expect("no waiter hangs")
            .unwrap();
        assert_eq!(*value.unwrap(), "rendered by a waiter");
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "one waiter took over for all"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_computation_that_always_panics_fails_each_caller_in_its_own_task_and_none_hangs() {
    quiet_panics("always explodes");
    let cache = cache();
    let mut callers = Vec::new();
    for _ in 0..20 {
        let cache = cache.clone();
        callers.push(tokio::spawn(async move {
            cache
                .get_or_compute(
                    "k",
                    HOUR,
                    async || -> Result<Computed<String>, StoreDown> {
                        tokio::task::yield_now().await;
                        panic!("always explodes")
                    },
                )
                .await
        }));
    }
    for caller in callers {
        let result = timeout(LIMIT, caller).await.expect("no caller hangs");
        assert!(result.unwrap_err().is_panic());
    }
    assert_eq!(stored(&cache, "k"), None);
}

/// Keeps the expected panics of a test out of the output.
fn quiet_panics(message: &'static str) {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&message) {
            default_hook(info);
        }
    }));
}

/// A page cache's policy: an hour fresh, and while it is re-rendered after a flush,
/// the previous version for everyone else.
fn with_grace() -> Policy {
    Policy::ttl(HOUR).with_grace(HOUR).serve_stale_after_flush()
}

/// Stores `value` for `key` depending on `dep` through a flight, then flushes `dep`.
async fn store_then_flush(cache: &Cache, key: &str, value: &str, dep: &DependencyKey) {
    bounded(cache.get_or_compute(key, with_grace(), async || {
        Ok::<_, StoreDown>(computed(cache, value, std::slice::from_ref(dep)))
    }))
    .await
    .unwrap();
    cache.flush_dependency(dep);
    assert_eq!(stored(cache, key), None, "flushed");
}

/// The answer of a caller arriving now, which must not wait.
fn answer_at_once(cache: &Cache, key: &str, policy: Policy) -> Option<String> {
    match at_once(cache.get_or_lead::<_, StoreDown>(key, policy)) {
        Some(Lookup::Value(value)) => Some((*value).clone()),
        Some(other) => panic!("expected a value, got {other:?}"),
        None => None,
    }
}

#[tokio::test]
async fn with_grace_callers_arriving_during_a_recomputation_get_the_flushed_value_at_once() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:1");
    store_then_flush(&cache, "page", "v1", &dep).await;

    let leader = lead(&cache, "page", with_grace()).await;
    let read = read_serials(&cache, std::slice::from_ref(&dep));
    for _ in 0..50 {
        assert_eq!(
            answer_at_once(&cache, "page", with_grace()).as_deref(),
            Some("v1")
        );
    }
    assert_eq!(cache.stats().grace_hits, 50);
    assert_eq!(*leader.finish("v2".into(), &read), "v2");
    assert_eq!(stored(&cache, "page").as_deref(), Some("v2"));
}

#[tokio::test]
async fn with_grace_an_expired_value_is_served_at_once_while_one_caller_recomputes() {
    let cache = cache();
    let policy = Policy::ttl(Duration::ZERO).with_grace(HOUR);
    cache.set("k".into(), "v1".into(), policy, &[]);
    assert_eq!(stored(&cache, "k"), None, "expired at once");
    let leader = lead(&cache, "k", policy).await;
    assert_eq!(answer_at_once(&cache, "k", policy).as_deref(), Some("v1"));
    drop(leader);
}

#[tokio::test]
async fn a_flushed_value_is_not_served_as_grace_unless_the_caller_opts_in() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:1");
    store_then_flush(&cache, "page", "v1", &dep).await;
    let leader = lead(&cache, "page", with_grace()).await;

    let mut not_opted_in =
        Polled::new(cache.get_or_lead::<_, StoreDown>("page", Policy::ttl(HOUR).with_grace(HOUR)));
    assert!(
        not_opted_in.poll().is_none(),
        "it waits for the recomputation"
    );
    leader.finish("v2".into(), &read_serials(&cache, &[dep]));
    match not_opted_in.poll() {
        Some(Lookup::Value(value)) => assert_eq!(*value, "v2"),
        other => panic!("expected the new value, got {other:?}"),
    }
}

#[tokio::test]
async fn after_a_failed_recomputation_the_old_value_is_still_served_as_grace() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:1");
    store_then_flush(&cache, "page", "v1", &dep).await;

    let failed = bounded(cache.get_or_compute("page", with_grace(), async || {
        Err::<Computed<String>, _>(StoreDown)
    }))
    .await;
    assert_eq!(
        failed,
        Err(Error::Leader(StoreDown)),
        "the leader computes, and fails"
    );

    let leader = lead(&cache, "page", with_grace()).await;
    assert_eq!(
        answer_at_once(&cache, "page", with_grace()).as_deref(),
        Some("v1")
    );
    drop(leader);
}

#[tokio::test]
async fn after_a_failure_that_discards_it_the_old_value_is_no_longer_served() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:1");
    store_then_flush(&cache, "page", "v1", &dep).await;

    let gone = lead(&cache, "page", with_grace()).await;
    let mut waiter = Polled::new(cache.get_or_lead::<_, StoreDown>("page", HOUR));
    assert!(waiter.poll().is_none());
    gone.fail_and_discard_stale(StoreDown);
    assert!(matches!(waiter.poll(), Some(Lookup::Failed(StoreDown))));

    let _leader = lead(&cache, "page", with_grace()).await;
    assert_eq!(
        answer_at_once(&cache, "page", with_grace()),
        None,
        "no previous version to give: it waits"
    );
    cache.sweep();
    assert_eq!(cache.stats().entries, 0);
}

#[tokio::test]
async fn discarding_the_stale_value_keeps_a_fresh_one_another_flight_stored() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:1");
    let old = lead(&cache, "page", with_grace()).await;
    cache.flush_dependency(&dep);
    // A caller that does not accept values from before the flush starts its own
    // flight beside the old one.
    let newer = lead(&cache, "page", Policy::ttl(HOUR).with_grace(HOUR)).await;
    newer.finish(
        "v2".into(),
        &read_serials(&cache, std::slice::from_ref(&dep)),
    );
    old.fail_and_discard_stale(StoreDown);
    assert_eq!(stored(&cache, "page").as_deref(), Some("v2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_may_be_moved_into_a_spawned_task_to_outlive_its_caller() {
    let cache = cache();
    let leader = lead(&cache, "k", HOUR.into()).await;
    let computing = {
        let cache = cache.clone();
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            leader.finish(
                "computed in the background".into(),
                &read_serials(&cache, &[]),
            );
        })
    };
    let value = timeout(
        LIMIT,
        cache.get_or_compute(
            "k",
            HOUR,
            async || -> Result<Computed<String>, StoreDown> {
                panic!("the spawned leader computes")
            },
        ),
    )
    .await
    .expect("the waiter gets the spawned leader's value")
    .unwrap();
    assert_eq!(*value, "computed in the background");
    bounded(computing).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synchronous_callers_on_the_blocking_pool_share_one_computation_through_block_on() {
    let cache = cache();
    let runs = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(std::sync::Barrier::new(2));
    let mut callers = Vec::new();
    for _ in 0..8 {
        let (cache, runs, gate) = (cache.clone(), Arc::clone(&runs), Arc::clone(&gate));
        callers.push(tokio::task::spawn_blocking(move || {
            let runtime = tokio::runtime::Handle::current();
            runtime.block_on(cache.get_or_compute("k", HOUR, async || {
                runs.fetch_add(1, Ordering::SeqCst);
                // Blocking is fine here: this is the caller's own blocking thread.
                gate.wait();
                Ok::<_, StoreDown>(computed(&cache, "computed on the blocking pool", &[]))
            }))
        }));
    }
    until_waiting(&cache, 7).await;
    let releaser = Arc::clone(&gate);
    tokio::task::spawn_blocking(move || releaser.wait())
        .await
        .unwrap();
    for caller in callers {
        let value = timeout(LIMIT, caller).await.expect("no caller hangs");
        assert_eq!(*value.unwrap().unwrap(), "computed on the blocking pool");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn past_its_grace_an_expired_value_is_only_for_a_leader_whose_recomputation_failed() {
    let cache = cache();
    let policy = Policy::ttl(Duration::ZERO).stale_if_error(HOUR);
    cache.set("page".into(), "v1".into(), policy, &[]);
    assert_eq!(stored(&cache, "page"), None, "expired at once");

    // Nobody is served it while a recomputation may still succeed: callers wait.
    let leader = lead(&cache, "page", policy).await;
    let mut waiter = Polled::new(cache.get_or_lead::<_, StoreDown>("page", policy));
    assert!(waiter.poll().is_none(), "no grace: it waits");

    // The recomputation failed: the leader gets the old value, and may hand it on.
    let stale = leader.stale_if_error().expect("kept for stale-if-error");
    assert_eq!(*stale, "v1");
    assert_eq!(cache.stats().stale_if_error, 1);
    leader.fail(StoreDown);
    assert!(matches!(waiter.poll(), Some(Lookup::Failed(StoreDown))));

    // It stays for the next failure, until a recomputation succeeds.
    let leader = lead(&cache, "page", policy).await;
    assert!(leader.stale_if_error().is_some());
    leader.finish("v2".into(), &[]);
    let leader = lead(&cache, "page", policy).await;
    assert_eq!(
        leader.stale_if_error().as_deref().map(String::as_str),
        Some("v2")
    );
}

#[tokio::test]
async fn a_flushed_value_is_not_kept_for_stale_if_error_beyond_its_grace() {
    let cache = cache();
    let dep = DependencyKey::new("rsc:1");
    let policy = Policy::ttl(HOUR).stale_if_error(HOUR);
    bounded(cache.get_or_compute("page", policy, async || {
        Ok::<_, StoreDown>(computed(&cache, "v1", std::slice::from_ref(&dep)))
    }))
    .await
    .unwrap();
    cache.flush_dependency(&dep);
    let leader = lead(&cache, "page", policy).await;
    assert!(
        leader.stale_if_error().is_none(),
        "what it showed changed: the old page is wrong, not just old"
    );
    drop(leader);
    cache.sweep();
    assert_eq!(cache.stats().entries, 0, "and it is not kept in memory");

    // With grace after a flush, the flushed value serves within the grace period.
    store_then_flush(&cache, "graced", "v1", &dep).await;
    let leader = lead(&cache, "graced", with_grace()).await;
    assert_eq!(
        leader.stale_if_error().as_deref().map(String::as_str),
        Some("v1")
    );
}

/// The race behind an occasional second computation: of the waiters a vanished
/// leader wakes, one takes over, stores its value and goes before a slower one has
/// finished its own lookup; that one must take the stored value, not lead again.
/// Many rounds, since the window is a few instructions wide (this and
/// `a_panic_unwinds_through_the_leader...` caught it only now and then).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_woken_by_a_vanished_leader_compute_once_between_them() {
    for round in 0..100 {
        let cache = cache();
        let leader = lead(&cache, "k", HOUR.into()).await;
        let runs = Arc::new(AtomicUsize::new(0));
        let waiters: Vec<_> = (0..10)
            .map(|_| {
                let (cache, runs) = (cache.clone(), Arc::clone(&runs));
                tokio::spawn(async move {
                    cache
                        .get_or_compute("k", HOUR, async || {
                            runs.fetch_add(1, Ordering::SeqCst);
                            Ok::<_, StoreDown>(computed(&cache, "taken over", &[]))
                        })
                        .await
                })
            })
            .collect();
        until_waiting(&cache, 10).await;
        // Gone from another thread, as a panicking request's task would be.
        tokio::spawn(async move { drop(leader) }).await.unwrap();
        for waiter in waiters {
            let value = timeout(LIMIT, waiter).await.expect("no waiter hangs");
            assert_eq!(*value.unwrap().unwrap(), "taken over");
        }
        assert_eq!(
            runs.load(Ordering::SeqCst),
            1,
            "round {round}: computed once"
        );
    }
}
