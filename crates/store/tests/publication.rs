//! Scheduled publication: the moments publication windows open and close, the
//! change each one makes, and the task that announces it when it comes, on
//! both backends.

use crate::common;

use std::time::Duration;

use bulwark_store::*;
use chrono::Utc;

on_both_backends!(
    the_next_boundary_is_the_nearest_window_end_still_to_come,
    a_window_that_opens_makes_the_change_an_update_would,
);

fn scheduled(s: &Store, title: &str, start: chrono::Duration, end: chrono::Duration) -> ResourceId {
    let now = Utc::now();
    let mut r = NewResource::new("article", Props::new().with("title", title));
    r.published = true;
    r.publication_start = Some(now + start);
    r.publication_end = Some(now + end);
    s.create_resource(r).unwrap()
}

fn the_next_boundary_is_the_nearest_window_end_still_to_come(s: &Store) {
    let now = Utc::now();
    assert_eq!(s.next_publication_boundary(now).unwrap(), None);
    let id = scheduled(
        s,
        "later",
        chrono::Duration::hours(1),
        chrono::Duration::hours(2),
    );
    let r = s.resource(id).unwrap().unwrap();
    let (start, end) = (r.publication_start.unwrap(), r.publication_end.unwrap());
    assert_eq!(s.next_publication_boundary(now).unwrap(), Some(start));
    assert_eq!(s.next_publication_boundary(start).unwrap(), Some(end));
    assert_eq!(s.next_publication_boundary(end).unwrap(), None);
    // A window that closes sooner comes first.
    let soon = scheduled(
        s,
        "soon",
        chrono::Duration::hours(-1),
        chrono::Duration::minutes(30),
    );
    let soon_end = s.resource(soon).unwrap().unwrap().publication_end.unwrap();
    assert_eq!(s.next_publication_boundary(now).unwrap(), Some(soon_end));
}

fn a_window_that_opens_makes_the_change_an_update_would(s: &Store) {
    let now = Utc::now();
    let id = scheduled(
        s,
        "later",
        chrono::Duration::hours(1),
        chrono::Duration::hours(2),
    );
    let start = s.resource(id).unwrap().unwrap().publication_start.unwrap();
    assert_eq!(
        s.publication_changes(now, start - chrono::Duration::milliseconds(1))
            .unwrap(),
        None
    );
    let event = s
        .publication_changes(now, start)
        .unwrap()
        .expect("a change");
    assert_eq!(
        event.resources,
        vec![ResourceChange {
            id,
            kind: ChangeKind::Updated
        }]
    );
    for key in [
        dependency::resource(id),
        dependency::category("article"),
        dependency::search(),
    ] {
        assert!(event.keys.contains(&key), "{key:?} in {:?}", event.keys);
    }
    // The moment is announced once: the next interval starts after it.
    assert_eq!(
        s.publication_changes(start, start + chrono::Duration::minutes(1))
            .unwrap(),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_publication_task_announces_a_window_when_it_opens() {
    let db = common::sqlite().await;
    let store = db.store.clone();
    let task = store.spawn_publication_task();
    let mut events = store.subscribe();
    let opens = Utc::now() + chrono::Duration::milliseconds(400);
    let mut r = NewResource::new("article", Props::new().with("title", "soon"));
    r.publication_start = Some(opens);
    let id = store.run(move |s| s.create_resource(r)).await.unwrap();
    let key = dependency::resource(id);
    // The creation's own event first, then the window's.
    let mut announced = None;
    while announced.is_none() {
        let event = tokio::time::timeout(Duration::from_secs(3), events.recv())
            .await
            .expect("the window's change within 3 s")
            .unwrap();
        if event.keys.contains(&key) && Utc::now() >= opens {
            announced = Some(Utc::now());
        }
    }
    let late = announced.unwrap() - opens;
    assert!(
        late < chrono::Duration::milliseconds(300),
        "announced {late} after the window opened"
    );
    task.abort();
}
