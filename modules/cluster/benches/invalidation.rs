//! Cross-node invalidation latency: how long after a write committed on node A
//! node B's change task has the change (and flushes its keys).
//!
//! Two stores on one fresh PostgreSQL schema, each with a cluster node (the
//! module's `Node`, without the web layer: what is measured is the outbox,
//! `pg_notify`, the listener and the hand-over to the store's change events).
//! A updates one resource at a time, at a steady pace; the clock stops when
//! B's change task receives the event naming that resource's key. Two clocks
//! start, both read on A's writing thread: when A's `COMMIT` came back (the
//! write acknowledged), and when A's update began (an upper bound that includes
//! A's own transaction). Results are printed as p50/p99/max.
//!
//! ```text
//! cargo bench -p bulwark-module-cluster --bench invalidation -- [writes] [pause_ms]
//! ```
//! Needs PostgreSQL at `BULWARK_TEST_PG_URL` (default postgres://postgres@127.0.0.1:5432/test).

use std::time::{Duration, Instant};

use bulwark_module_cluster::{ClusterSettings, Node};
use bulwark_store::{NewResource, Props, ResourceUpdate, Store, StoreConfig, dependency};

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let writes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let pause = Duration::from_millis(args.next().and_then(|a| a.parse().ok()).unwrap_or(2));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(writes, pause));
}

async fn run(writes: usize, pause: Duration) {
    let url = std::env::var("BULWARK_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let schema = format!("bench_invalidation_{}", std::process::id());
    let config = StoreConfig::postgres(&url, Some(&schema));
    let a = Store::open(config.clone())
        .await
        .expect("PostgreSQL for the bench");
    let b = Store::open(config).await.unwrap();
    for store in [&a, &b] {
        let s = store.clone();
        store
            .run(move |_| s.migrate_module("cluster", bulwark_module_cluster::migrations()))
            .await
            .unwrap();
    }
    let settings = |node: &str| ClusterSettings {
        enabled: true,
        node: node.to_owned(),
        heartbeat: Duration::from_millis(500),
        health_detail: false,
    };
    let _node_a = Node::start(&a, settings("a")).unwrap();
    let node_b = Node::start(&b, settings("b")).unwrap();
    let start = Instant::now();
    while !node_b.state().hearing(Duration::from_millis(500)) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "B never listened"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let ids = a
        .run(move |s| {
            s.create_resources(
                (0..writes)
                    .map(|i| NewResource::new("article", Props::new().with("title", i as i64)))
                    .collect(),
            )
        })
        .await
        .unwrap();
    let pivot = a.spawn_pivot_task(100, Duration::from_millis(200));
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut heard = b.subscribe();
    let histogram = || hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    let (mut after_commit, mut after_begin) = (histogram(), histogram());
    let began = Instant::now();
    for (i, &id) in ids.iter().enumerate() {
        let a2 = a.clone();
        let (begin, committed) = a2
            .run(move |s| {
                let version = s.resource(id)?.unwrap().version;
                let begin = Instant::now();
                s.update_resource(
                    ResourceUpdate::new(id, version)
                        .merge(Props::new().with("title", format!("{i}!"))),
                )?;
                // On the writing thread, the moment COMMIT came back.
                Ok((begin, Instant::now()))
            })
            .await
            .unwrap();
        let key = dependency::resource(id);
        loop {
            let event = tokio::time::timeout(Duration::from_secs(5), heard.recv())
                .await
                .expect("B heard within 5 s")
                .expect("B's change events");
            if event.keys.contains(&key) {
                break;
            }
        }
        let now = Instant::now();
        after_commit
            .record(now.saturating_duration_since(committed).as_micros().max(1) as u64)
            .unwrap();
        after_begin
            .record(now.saturating_duration_since(begin).as_micros().max(1) as u64)
            .unwrap();
        tokio::time::sleep(pause).await;
    }
    let took = began.elapsed();
    pivot.abort();
    for (what, h) in [
        ("after A's COMMIT returned", &after_commit),
        ("after A's UPDATE began", &after_begin),
    ] {
        println!(
            "{writes} writes on A, heard on B {what}: p50 {} us, p99 {} us, max {} us (mean {:.0} us)",
            h.value_at_quantile(0.5),
            h.value_at_quantile(0.99),
            h.max(),
            h.mean(),
        );
    }
    println!(
        "{:.0} writes/s, {}ms pause between writes",
        writes as f64 / took.as_secs_f64(),
        pause.as_millis()
    );
    drop(node_b);
    use sqlx::Connection;
    if let Ok(mut c) = sqlx::PgConnection::connect(&url).await {
        let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP SCHEMA \"{schema}\" CASCADE"
        )))
        .execute(&mut c)
        .await;
    }
}
