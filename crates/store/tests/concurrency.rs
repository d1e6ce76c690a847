//! Concurrent writers: no lost update, conflicts reported, no deadlock; and
//! the pool deadline surfacing as `Busy`.

use crate::common;

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use bulwark_store::*;
use bulwark_testkit::{eventually, eventually_blocking};

on_both_backends!(
    fifty_writers_on_different_resources_lose_no_update,
    ten_writers_on_one_resource_get_conflicts_and_lose_no_update,
    ten_writers_racing_on_one_version_exactly_one_wins,
    writers_referencing_each_others_resources_do_not_deadlock,
);

/// Join all threads, failing (instead of hanging) if they deadlock.
fn join_within<T: Send + 'static>(
    handles: Vec<std::thread::JoinHandle<T>>,
    limit: Duration,
) -> Vec<T> {
    let (tx, rx) = mpsc::channel();
    let n = handles.len();
    std::thread::spawn(move || {
        for h in handles {
            let _ = tx.send(h.join());
        }
    });
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        match rx.recv_timeout(limit) {
            Ok(Ok(v)) => out.push(v),
            Ok(Err(p)) => std::panic::resume_unwind(p),
            Err(_) => panic!("writers did not finish within {limit:?}: deadlock?"),
        }
    }
    out
}

fn counter(r: &Resource) -> i64 {
    r.props.get("counter").and_then(|v| v.as_i64()).unwrap_or(0)
}

fn fifty_writers_on_different_resources_lose_no_update(s: &Store) {
    const WRITERS: usize = 50;
    const UPDATES: i64 = 10;
    let ids = s
        .create_resources(
            (0..WRITERS)
                .map(|i| {
                    NewResource::new(
                        "article",
                        Props::new()
                            .with("title", format!("r{i}"))
                            .with("counter", 0),
                    )
                })
                .collect(),
        )
        .unwrap();
    let handles = ids
        .iter()
        .map(|&id| {
            let s = s.clone();
            std::thread::spawn(move || {
                for _ in 0..UPDATES {
                    let r = s.resource(id).unwrap().unwrap();
                    s.update_resource(
                        ResourceUpdate::new(id, r.version)
                            .merge(Props::new().with("counter", counter(&r) + 1)),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    join_within(handles, Duration::from_secs(120));
    for id in ids {
        let r = s.resource(id).unwrap().unwrap();
        assert_eq!(counter(&r), UPDATES);
        assert_eq!(r.version, Version(UPDATES + 1));
        assert_eq!(s.revisions(id).unwrap().len() as i64, UPDATES);
    }
    assert!(s.check_consistency().unwrap().is_empty());
}

fn ten_writers_on_one_resource_get_conflicts_and_lose_no_update(s: &Store) {
    const WRITERS: usize = 10;
    const INCREMENTS: i64 = 15;
    let id = s
        .create_resource(NewResource::new("article", Props::new().with("counter", 0)))
        .unwrap();
    let handles = (0..WRITERS)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut conflicts = 0u64;
                let mut done = 0;
                while done < INCREMENTS {
                    let r = s.resource(id).unwrap().unwrap();
                    match s.update_resource(
                        ResourceUpdate::new(id, r.version)
                            .merge(Props::new().with("counter", counter(&r) + 1)),
                    ) {
                        Ok(_) => done += 1,
                        Err(StoreError::Conflict { .. }) => conflicts += 1,
                        Err(e) => panic!("unexpected error: {e}"),
                    }
                }
                conflicts
            })
        })
        .collect();
    let conflicts: u64 = join_within(handles, Duration::from_secs(120))
        .into_iter()
        .sum();
    let r = s.resource(id).unwrap().unwrap();
    let total = WRITERS as i64 * INCREMENTS;
    assert_eq!(counter(&r), total, "lost update ({conflicts} conflicts)");
    assert_eq!(r.version, Version(total + 1));
    assert_eq!(s.revisions(id).unwrap().len() as i64, total);
    eprintln!(
        "{} backend: {conflicts} conflicts reported",
        s.backend_name()
    );
}

fn ten_writers_racing_on_one_version_exactly_one_wins(s: &Store) {
    const WRITERS: usize = 10;
    const ROUNDS: usize = 5;
    let id = s
        .create_resource(NewResource::new("article", Props::new().with("counter", 0)))
        .unwrap();
    let barrier = Arc::new(Barrier::new(WRITERS));
    let handles = (0..WRITERS)
        .map(|w| {
            let s = s.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut wins = Vec::new();
                for round in 0..ROUNDS {
                    // Everyone reads the same version...
                    let r = s.resource(id).unwrap().unwrap();
                    barrier.wait();
                    // ...then everyone tries to write on top of it.
                    let res = s.update_resource(
                        ResourceUpdate::new(id, r.version)
                            // A change in every round (one that changes
                            // nothing would write nothing, whatever the version).
                            .merge(Props::new().with("winner", format!("{round}/{w}"))),
                    );
                    match res {
                        Ok(_) => wins.push(true),
                        Err(StoreError::Conflict {
                            expected, actual, ..
                        }) => {
                            assert_eq!(expected, r.version);
                            assert_eq!(actual, Version(r.version.0 + 1));
                            wins.push(false);
                        }
                        Err(e) => panic!("unexpected error: {e}"),
                    }
                    barrier.wait();
                }
                wins
            })
        })
        .collect();
    let results = join_within(handles, Duration::from_secs(120));
    for round in 0..ROUNDS {
        let winners = results.iter().filter(|w| w[round]).count();
        assert_eq!(winners, 1, "round {round}: {winners} writers won");
    }
    assert_eq!(
        s.resource(id).unwrap().unwrap().version,
        Version(ROUNDS as i64 + 1)
    );
}

/// One long write holds the only writer (SQLite) or the only pooled
/// connection (PostgreSQL); others give up at the deadline with `Busy`.
async fn pool_deadline_gives_busy(db: common::TestDb) {
    use std::sync::atomic::{AtomicBool, Ordering};
    const BATCH: usize = 3_000;
    let s = db.store.clone();
    let holder_done = Arc::new(AtomicBool::new(false));
    let holder = std::thread::spawn({
        let s = s.clone();
        let done = holder_done.clone();
        move || {
            let batch = (0..BATCH)
                .map(|i| {
                    NewResource::new("article", Props::new().with("title", format!("bulk {i}")))
                })
                .collect();
            let n = s.create_resources(batch).unwrap().len();
            done.store(true, Ordering::SeqCst);
            n
        }
    });
    let waiter = std::thread::spawn(move || {
        eventually_blocking(
            "the long write holds the writer",
            Duration::from_secs(10),
            || {
                let pool = s.connections();
                let held = pool.idle < pool.open as usize;
                (held || holder_done.load(Ordering::SeqCst)).then_some(())
            },
        );
        let (mut busy, mut ok) = (0, 0);
        while busy < 3 && !holder_done.load(Ordering::SeqCst) {
            match s.create_resource(NewResource::new("article", Props::new())) {
                Err(StoreError::Busy) => busy += 1,
                Ok(_) => ok += 1,
                Err(e) => panic!("unexpected error: {e}"),
            }
        }
        (busy, ok)
    });
    let (busy, ok) = tokio::task::spawn_blocking(move || waiter.join().unwrap())
        .await
        .unwrap();
    assert_eq!(
        tokio::task::spawn_blocking(move || holder.join().unwrap())
            .await
            .unwrap(),
        BATCH
    );
    assert!(busy > 0, "no Busy error ({ok} writes got through)");
    // Once the load is gone, writes work again.
    db.store
        .run(|s| s.create_resource(NewResource::new("article", Props::new())))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_writer_deadline_gives_busy() {
    let (mut config, dir) = common::sqlite_config();
    config.pool.acquire_timeout = Duration::from_millis(20);
    let store = Store::open(config.clone()).await.unwrap();
    let db = common::TestDb::new(store, config, Some(dir), None);
    pool_deadline_gives_busy(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_pool_deadline_gives_busy() {
    let (mut config, schema) = common::pg_config("pool_deadline");
    config.pool.min_connections = 1;
    config.pool.max_connections = 1;
    config.pool.acquire_timeout = Duration::from_millis(20);
    let db = common::postgres_with(config, schema).await;
    pool_deadline_gives_busy(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_pool_keeps_one_connection_and_closes_idle_ones() {
    let (mut config, schema) = common::pg_config("pool_idle");
    config.pool.min_connections = 1;
    config.pool.max_connections = 4;
    config.pool.idle_timeout = Duration::from_millis(500);
    let db = common::postgres_with(config, schema).await;
    let s = db.store.clone();
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                for _ in 0..20 {
                    s.search(&SearchQuery::default()).unwrap();
                }
            })
        })
        .collect();
    tokio::task::spawn_blocking(move || handles.into_iter().for_each(|h| h.join().unwrap()))
        .await
        .unwrap();
    let busy = db.store.connections();
    assert!(busy.open > 1 && busy.open <= 4, "{busy:?}");
    // Idle connections above the minimum close after the idle timeout.
    eventually(
        "the idle connections closed",
        Duration::from_secs(10),
        || async { (db.store.connections().open == 1).then_some(()) },
    )
    .await;
}

/// Two users each update their own resource naming the other as modifier,
/// while edges are inserted both ways between them: every transaction
/// touches both rows, in opposite orders.
fn writers_referencing_each_others_resources_do_not_deadlock(s: &Store) {
    let a = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    let b = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    let handles = [(a, b), (b, a), (a, b), (b, a)]
        .into_iter()
        .enumerate()
        .map(|(i, (me, other))| {
            let s = s.clone();
            std::thread::spawn(move || {
                for n in 0..40 {
                    if i < 2 {
                        loop {
                            let r = s.resource(me).unwrap().unwrap();
                            match s.update_resource(
                                ResourceUpdate::new(me, r.version)
                                    .merge(Props::new().with("n", n))
                                    // A changed modifier makes the foreign
                                    // key lock the other resource's row.
                                    .modified_by(if n % 2 == 0 { other } else { me }),
                            ) {
                                Ok(_) => break,
                                Err(StoreError::Conflict { .. }) => continue,
                                Err(e) => panic!("update: {e}"),
                            }
                        }
                    } else {
                        s.insert_edge(me, "relation", other, Some(other)).unwrap();
                        s.delete_edge(me, "relation", other).unwrap();
                    }
                }
            })
        })
        .collect();
    join_within(handles, Duration::from_secs(60));
    assert_eq!(s.resource(a).unwrap().unwrap().version, Version(41));
    assert_eq!(s.resource(b).unwrap().unwrap().version, Version(41));
}
