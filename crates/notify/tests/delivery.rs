//! How events reach their observers, through the public API only.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use bulwark_notify::{Event, First, Fold, Map, Notifier, Notify, Observers};

struct Saved;
impl Event for Saved {
    type Delivery = Notify;
}

/// Same shape as `Saved`, different event.
struct Deleted;
impl Event for Deleted {
    type Delivery = Notify;
}

struct Ask;
impl Event for Ask {
    type Delivery = First<&'static str>;
}

struct Poll;
impl Event for Poll {
    type Delivery = Map<&'static str>;
}

struct Collect;
impl Event for Collect {
    type Delivery = Fold<Vec<&'static str>>;
}

/// The names of the observers that ran, in the order they ran.
#[derive(Clone, Default)]
struct RunLog(Arc<Mutex<Vec<&'static str>>>);

impl RunLog {
    fn record(&self, name: &'static str) {
        self.0.lock().unwrap().push(name);
    }

    fn names(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().clone()
    }
}

/// Adds, in this order: "b" at 20, "a" at 10, "c" at 20, "z" at -5. Priority order
/// is therefore z, a, b, c: lower first, then registration order for the tie.
fn add_in_mixed_order(mut add: impl FnMut(i32, &'static str)) {
    add(20, "b");
    add(10, "a");
    add(20, "c");
    add(-5, "z");
}

const PRIORITY_ORDER: [&str; 4] = ["z", "a", "b", "c"];

#[test]
fn notify_calls_every_observer_in_priority_order_and_ties_in_registration_order() {
    let log = RunLog::default();
    let mut observers = Observers::new();
    add_in_mixed_order(|priority, name| {
        let log = log.clone();
        observers.on_notify(priority, move |_: &Saved| log.record(name));
    });
    let notifier = observers.build();

    notifier.notify(&Saved);

    assert_eq!(log.names(), PRIORITY_ORDER);
}

#[test]
fn first_asks_in_priority_order_and_ties_in_registration_order() {
    let log = RunLog::default();
    let mut observers = Observers::new();
    add_in_mixed_order(|priority, name| {
        let log = log.clone();
        observers.on_first(priority, move |_: &Ask| {
            log.record(name);
            None
        });
    });
    let notifier = observers.build();

    assert_eq!(notifier.first(&Ask), None);
    assert_eq!(log.names(), PRIORITY_ORDER);
}

#[test]
fn first_returns_the_first_answer_and_asks_no_later_observer() {
    let asked = Arc::new(AtomicUsize::new(0));
    let count_asked = |answer: Option<&'static str>| {
        let asked = Arc::clone(&asked);
        move |_: &Ask| {
            asked.fetch_add(1, Ordering::SeqCst);
            answer
        }
    };
    let mut observers = Observers::new();
    observers.on_first(30, count_asked(Some("third")));
    observers.on_first(10, count_asked(None));
    observers.on_first(20, count_asked(Some("second")));
    observers.on_first(20, count_asked(Some("second, added later")));
    let notifier = observers.build();

    assert_eq!(notifier.first(&Ask), Some("second"));
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

#[test]
fn map_returns_every_answer_in_priority_order_and_ties_in_registration_order() {
    let mut observers = Observers::new();
    add_in_mixed_order(|priority, name| observers.on_map(priority, move |_: &Poll| name));
    let notifier = observers.build();

    assert_eq!(notifier.map(&Poll), PRIORITY_ORDER);
}

#[test]
fn fold_threads_the_accumulator_through_the_observers_in_priority_order() {
    let mut observers = Observers::new();
    add_in_mixed_order(|priority, name| {
        observers.on_fold(priority, move |_: &Collect, mut acc: Vec<&'static str>| {
            acc.push(name);
            acc
        });
    });
    let notifier = observers.build();

    assert_eq!(
        notifier.fold(&Collect, vec!["initial"]),
        ["initial", "z", "a", "b", "c"]
    );
}

#[test]
fn an_observer_sees_the_event_it_is_given() {
    struct Renamed {
        to: String,
    }
    impl Event for Renamed {
        type Delivery = Fold<String>;
    }
    let mut observers = Observers::new();
    observers.on_fold(0, |renamed: &Renamed, acc: String| acc + &renamed.to);
    let notifier = observers.build();

    let to = "new name".to_string();
    assert_eq!(
        notifier.fold(&Renamed { to }, "renamed to ".into()),
        "renamed to new name"
    );
}

#[test]
fn an_event_does_not_reach_the_observers_of_another_event_type() {
    let log = RunLog::default();
    let mut observers = Observers::new();
    let saved_log = log.clone();
    observers.on_notify(0, move |_: &Saved| saved_log.record("saved"));
    observers.on_map(0, |_: &Poll| "poll");
    let notifier = observers.build();

    notifier.notify(&Deleted);
    assert!(log.names().is_empty());
    assert_eq!(notifier.observer_count::<Deleted>(), 0);
    assert!(!notifier.has_observers::<Deleted>());
    assert_eq!(notifier.first(&Ask), None);
    assert_eq!(notifier.fold(&Collect, vec!["untouched"]), ["untouched"]);

    notifier.notify(&Saved);
    assert_eq!(log.names(), ["saved"]);
    assert_eq!(notifier.map(&Poll), ["poll"]);
}

#[test]
fn without_observers_delivery_does_nothing_and_answers_nothing() {
    for notifier in [Notifier::default(), Observers::new().build()] {
        notifier.notify(&Saved);
        assert_eq!(notifier.first(&Ask), None);
        assert!(notifier.map(&Poll).is_empty());
        assert_eq!(notifier.fold(&Collect, vec!["input"]), ["input"]);
        assert!(!notifier.has_observers::<Saved>());
        assert_eq!(notifier.observer_count::<Collect>(), 0);
    }
}

#[test]
fn observer_count_counts_the_observers_of_that_event_only() {
    let mut observers = Observers::new();
    observers.on_notify(0, |_: &Saved| {});
    observers.on_notify(0, |_: &Saved| {});
    observers.on_map(0, |_: &Poll| "poll");
    let notifier = observers.build();

    assert_eq!(notifier.observer_count::<Saved>(), 2);
    assert_eq!(notifier.observer_count::<Poll>(), 1);
    assert!(notifier.has_observers::<Poll>());
    assert!(!notifier.has_observers::<Ask>());
}

#[test]
fn a_panicking_notify_observer_does_not_stop_the_later_ones_or_the_caller() {
    let log = RunLog::default();
    let mut observers = Observers::new();
    let before = log.clone();
    observers.on_notify(10, move |_: &Saved| before.record("before"));
    observers.on_notify(20, |_: &Saved| panic!("a broken module"));
    let after = log.clone();
    observers.on_notify(30, move |_: &Saved| after.record("after"));
    let notifier = observers.build();

    notifier.notify(&Saved);
    notifier.notify(&Saved);

    assert_eq!(log.names(), ["before", "after", "before", "after"]);
}

#[test]
fn a_panicking_observer_of_first_map_or_fold_panics_in_the_caller() {
    let mut observers = Observers::new();
    observers.on_first(0, |_: &Ask| -> Option<&'static str> { panic!("first") });
    observers.on_map(0, |_: &Poll| -> &'static str { panic!("map") });
    observers.on_fold(
        0,
        |_: &Collect, _: Vec<&'static str>| -> Vec<&'static str> { panic!("fold") },
    );
    let notifier = observers.build();

    assert_eq!(panic_message(|| notifier.first(&Ask)), "first");
    assert_eq!(panic_message(|| notifier.map(&Poll)), "map");
    assert_eq!(
        panic_message(|| notifier.fold(&Collect, Vec::new())),
        "fold"
    );
}

/// The message `deliver` panicked with; fails the test if it returned.
fn panic_message<T>(deliver: impl FnOnce() -> T) -> &'static str {
    match panic::catch_unwind(AssertUnwindSafe(deliver)) {
        Ok(_) => panic!("the delivery returned instead of panicking"),
        Err(payload) => *payload.downcast::<&'static str>().unwrap(),
    }
}

#[test]
fn one_notifier_shared_in_an_arc_delivers_from_several_threads_at_once() {
    const THREADS: usize = 4;
    const DELIVERIES: usize = 1_000;
    let notified = Arc::new(AtomicUsize::new(0));
    let mut observers = Observers::new();
    let count = Arc::clone(&notified);
    observers.on_notify(0, move |_: &Saved| {
        count.fetch_add(1, Ordering::Relaxed);
    });
    observers.on_map(1, |_: &Poll| "second");
    observers.on_map(0, |_: &Poll| "first");
    let notifier = Arc::new(observers.build());

    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let notifier = Arc::clone(&notifier);
            thread::spawn(move || {
                for _ in 0..DELIVERIES {
                    notifier.notify(&Saved);
                    assert_eq!(notifier.map(&Poll), ["first", "second"]);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }

    assert_eq!(notified.load(Ordering::Relaxed), THREADS * DELIVERIES);
}

#[test]
fn debug_names_each_observed_event_with_its_observers_priorities_and_places() {
    let mut observers = Observers::new();
    observers.on_map(7, |_: &Poll| "poll");
    let notifier = observers.build();

    let debug = format!("{notifier:?}");
    assert!(debug.contains("delivery::Poll"), "{debug}");
    assert!(debug.contains(&format!("7 at {}:", file!())), "{debug}");
    assert!(!debug.contains("Saved"), "{debug}");
}
