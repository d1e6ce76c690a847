//! The background pivot task indexes what writes queue, on both backends.

use crate::common;

use std::time::Duration;

use bulwark_store::*;
use bulwark_testkit::eventually;

async fn background_pivot_task_indexes_new_writes(db: common::TestDb) {
    let store = db.store.clone();
    let mut events = store.subscribe();
    let task = store.spawn_pivot_task(100, Duration::from_secs(5));
    let id = store
        .run(|s| {
            s.create_resource(NewResource::new(
                "article",
                Props::new().with("title", "Background indexing works"),
            ))
        })
        .await
        .unwrap();
    let what = format!("the pivot task indexed {id}");
    eventually(&what, Duration::from_secs(10), || async {
        let found = store
            .run(|s| {
                s.search(&SearchQuery {
                    text: Some("background index".into()),
                    ..Default::default()
                })
            })
            .await
            .unwrap();
        (found.ids == vec![id]).then_some(())
    })
    .await;
    // The pivot commit announced itself to caches.
    let mut saw_search = false;
    while let Ok(ev) = events.try_recv() {
        saw_search |= ev.keys.contains(&dependency::search());
    }
    assert!(saw_search);
    assert_eq!(store.run(|s| s.pivot_pending()).await.unwrap(), 0);
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_background_pivot_task_indexes_new_writes() {
    background_pivot_task_indexes_new_writes(common::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_background_pivot_task_indexes_new_writes() {
    background_pivot_task_indexes_new_writes(common::postgres("pivot_task").await).await;
}

/// The synchronous API is meant for blocking threads, but a call made by
/// mistake on a runtime worker must neither panic nor stall the runtime.
async fn sync_call_on_a_runtime_worker_still_works(db: common::TestDb) {
    let id = db
        .store
        .create_resource(NewResource::new(
            "article",
            Props::new().with("title", "direct"),
        ))
        .unwrap();
    let r = db.store.resource(id).unwrap().unwrap();
    assert_eq!(r.title(), Some("direct"));
    // Other tasks keep running meanwhile (a task waiting for a timer).
    let ticker = tokio::spawn(async { tokio::time::sleep(Duration::from_millis(5)).await });
    for _ in 0..20 {
        db.store.search(&SearchQuery::default()).unwrap();
    }
    ticker.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sync_call_on_a_runtime_worker_still_works() {
    sync_call_on_a_runtime_worker_still_works(common::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sync_call_on_a_runtime_worker_still_works() {
    sync_call_on_a_runtime_worker_still_works(common::postgres("sync_on_worker").await).await;
}
