//! The synchronous API: get, set, flushes, generations, budget, sweeper, stats.

use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::Duration;

use bulwark_depcache::{Cached, Config, Depcache, DependencyKey, FlushEvent, Policy};

const HOUR: Duration = Duration::from_secs(3600);

fn cache() -> Depcache<String, String> {
    Depcache::new(Config {
        sweep_interval: None,
        ..Config::default()
    })
}

fn deps(names: &[&str]) -> Vec<DependencyKey> {
    names.iter().copied().map(DependencyKey::new).collect()
}

fn get(cache: &Depcache<String, String>, key: &str) -> Option<String> {
    cache.get(key).map(|value| (*value).clone())
}

#[test]
fn get_returns_the_value_set_until_its_ttl_passes() {
    let cache = cache();
    assert_eq!(get(&cache, "a"), None);
    cache.set("a".into(), "one".into(), HOUR, &[]);
    cache.set("b".into(), "two".into(), Duration::from_millis(30), &[]);
    assert_eq!(get(&cache, "a").as_deref(), Some("one"));
    assert_eq!(get(&cache, "b").as_deref(), Some("two"));
    // A timer: b's ttl passes.
    sleep(Duration::from_millis(60));
    assert_eq!(get(&cache, "a").as_deref(), Some("one"));
    assert_eq!(get(&cache, "b"), None);
}

#[test]
fn reads_share_the_stored_value_without_copying_it() {
    let cache = cache();
    cache.set("a".into(), "one".into(), HOUR, &[]);
    let first = cache.get("a").unwrap();
    let second = cache.get("a").unwrap();
    assert!(Cached::ptr_eq(&first, &second));
}

#[test]
fn flush_dependency_invalidates_exactly_its_dependants() {
    let cache = cache();
    cache.set(
        "a".into(),
        "A".into(),
        HOUR,
        &deps(&["rsc:1", "cat:article"]),
    );
    cache.set(
        "b".into(),
        "B".into(),
        HOUR,
        &deps(&["rsc:2", "cat:article"]),
    );
    cache.set("c".into(), "C".into(), HOUR, &deps(&["rsc:3"]));

    cache.flush_dependency(&"rsc:1".into());
    assert_eq!(get(&cache, "a"), None);
    assert_eq!(get(&cache, "b").as_deref(), Some("B"));

    cache.flush_dependency(&"cat:article".into());
    assert_eq!(get(&cache, "b"), None);
    assert_eq!(get(&cache, "c").as_deref(), Some("C"));

    cache.set("a".into(), "A2".into(), HOUR, &deps(&["rsc:1"]));
    assert_eq!(
        get(&cache, "a").as_deref(),
        Some("A2"),
        "a new value after the flush is served"
    );
}

#[test]
fn a_serial_moves_on_every_flush_of_its_key_and_on_no_other() {
    let cache = cache();
    let rsc_1 = DependencyKey::new("rsc:1");
    let unread = cache.serial(&rsc_1);
    cache.set("a".into(), "A".into(), HOUR, std::slice::from_ref(&rsc_1));
    assert_eq!(cache.serial(&rsc_1), unread, "storing is not flushing");
    cache.flush_dependency(&rsc_1);
    let once = cache.serial(&rsc_1);
    assert!(once > unread);
    cache.flush_dependency(&rsc_1);
    let twice = cache.serial(&rsc_1);
    assert!(twice > once);
    cache.flush_dependency(&"nobody:depends".into());
    cache.flush_dependency(&"rsc:2".into());
    assert_eq!(cache.serial(&rsc_1), twice);
}

#[test]
fn set_captured_with_serials_taken_before_a_flush_is_never_served() {
    let cache = cache();
    let rsc_1 = deps(&["rsc:1"]);
    let captured = cache.capture(&rsc_1);
    // ... the caller reads resource 1 here, then somebody saves it ...
    cache.flush_dependency(&rsc_1[0]);
    cache.set_captured("a".into(), "old".into(), HOUR, captured);
    assert_eq!(get(&cache, "a"), None);
}

#[test]
fn flush_removes_one_key() {
    let cache = cache();
    cache.set("a".into(), "A".into(), HOUR, &[]);
    cache.set("b".into(), "B".into(), HOUR, &[]);
    cache.flush("a");
    assert_eq!(get(&cache, "a"), None);
    assert_eq!(get(&cache, "b").as_deref(), Some("B"));
}

#[test]
fn flush_all_removes_everything() {
    let cache = cache();
    cache.set("a".into(), "A".into(), HOUR, &[]);
    cache.set("b".into(), "B".into(), HOUR, &deps(&["rsc:1"]));
    cache.flush_all();
    assert_eq!(get(&cache, "a"), None);
    assert_eq!(get(&cache, "b"), None);
    cache.set("a".into(), "A2".into(), HOUR, &[]);
    assert_eq!(get(&cache, "a").as_deref(), Some("A2"));
}

#[test]
fn bump_generation_retires_every_key_and_the_sweep_reclaims_them() {
    let cache = cache();
    for i in 0..100 {
        cache.set(format!("k{i}"), "v".into(), HOUR, &[]);
    }
    let before = cache.generation();
    let captured = cache.capture(&[]);
    let after = cache.bump_generation();
    assert!(after > before);
    assert_eq!(get(&cache, "k1"), None);
    // A value captured in the old generation lands there, unreachable.
    cache.set_captured("k1".into(), "old".into(), HOUR, captured);
    assert_eq!(get(&cache, "k1"), None);
    cache.set("k2".into(), "new".into(), HOUR, &[]);
    assert_eq!(get(&cache, "k2").as_deref(), Some("new"));
    cache.sweep();
    assert_eq!(cache.stats().entries, 1);
}

#[test]
fn the_byte_budget_holds_after_eviction() {
    let budget = 64 * 1024;
    let cache: Depcache<u32, String> = Depcache::new(Config {
        budget_bytes: budget,
        sweep_interval: None,
    });
    let value = "x".repeat(1000);
    for i in 0..1000 {
        cache.set(i, value.clone(), HOUR, &[]);
        // Read some back so the frequency sketch sees a working set.
        let _ = cache.get(&(i / 2));
    }
    cache.sweep();
    let stats = cache.stats();
    assert!(stats.bytes_used <= budget, "{stats:?}");
    assert!(stats.evictions > 0, "{stats:?}");
    assert!(stats.entries < 1000);
}

#[test]
fn the_sweeper_drops_invalidated_entries_in_the_background() {
    let cache: Depcache<u32, String> = Depcache::new(Config {
        sweep_interval: Some(Duration::from_millis(20)),
        ..Config::default()
    });
    for i in 0..50 {
        cache.set(i, "v".into(), HOUR, &[DependencyKey::new("cat:article")]);
    }
    cache.set(1000, "kept".into(), HOUR, &[]);
    cache.flush_dependency(&"cat:article".into());
    bulwark_testkit::eventually_blocking("the sweeper ran", Duration::from_secs(5), || {
        (cache.stats().entries == 1).then_some(())
    });
    assert_eq!(
        cache.get(&1000).as_deref().map(String::as_str),
        Some("kept")
    );
}

#[test]
fn stats_count_hits_and_misses() {
    let cache = cache();
    cache.set("a".into(), "A".into(), HOUR, &[]);
    for _ in 0..5 {
        cache.get("a");
    }
    cache.get("missing");
    cache.sweep();
    let stats = cache.stats();
    assert_eq!(stats.hits, 5);
    assert_eq!(stats.misses, 1);
    assert_eq!(stats.entries, 1);
    assert!(stats.bytes_used >= 1);
}

#[test]
fn flush_observers_hear_every_kind_of_flush() {
    let cache = cache();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&heard);
    cache.observe_flushes(move |event| {
        let line = match event {
            FlushEvent::Key(key) => format!("key {key}"),
            FlushEvent::Dependency(dep) => format!("dep {dep}"),
            FlushEvent::All => "all".to_string(),
            FlushEvent::Generation(generation) => format!("generation {}", generation.get()),
            _ => "other".to_string(),
        };
        log.lock().unwrap().push(line);
    });
    cache.flush("a");
    cache.flush_dependency(&"rsc:1".into());
    cache.flush_all();
    cache.bump_generation();
    assert_eq!(
        *heard.lock().unwrap(),
        ["key a", "dep rsc:1", "all", "generation 2"]
    );
}

#[test]
fn an_invalidated_entry_without_a_stale_window_is_dropped_by_the_read() {
    let cache = cache();
    cache.set("a".into(), "A".into(), HOUR, &deps(&["rsc:1"]));
    cache.set(
        "b".into(),
        "B".into(),
        Policy::ttl(HOUR).with_grace(HOUR),
        &deps(&["rsc:1"]),
    );
    cache.flush_dependency(&"rsc:1".into());
    assert_eq!(get(&cache, "a"), None);
    assert_eq!(get(&cache, "b"), None);
    cache.sweep();
    assert_eq!(
        cache.stats().entries,
        1,
        "b stays for callers that opt into grace"
    );
}
