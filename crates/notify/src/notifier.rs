//! Delivering events to the frozen observers.

use std::any::{Any, type_name};
use std::panic::{self, AssertUnwindSafe};

use crate::event::{Event, First, Fold, Map, Notify};
use crate::table::ObserverTable;

/// Frozen observers, delivering events to them.
///
/// Immutable, `Send` and `Sync`: share one in an `Arc`, and build a new one (and
/// swap it in) when the set of observers changes. A delivery takes no lock; for an
/// event nobody observes it is one hash lookup and allocates nothing. The default
/// `Notifier` has no observers.
///
/// `Debug` lists every observed event type with its observers' priorities and the
/// places they were added from.
#[derive(Debug, Default)]
pub struct Notifier {
    table: ObserverTable,
}

impl Notifier {
    pub(crate) fn from_table(table: ObserverTable) -> Self {
        Self { table }
    }

    /// Calls every observer of `E`, in priority order.
    ///
    /// An observer that panics is logged (`tracing::error!`) and skipped: the
    /// observers after it still run and `notify` returns normally, because the
    /// caller, which expects no answer, should not fail for a module it does not
    /// know about. This needs the `unwind` panic strategy; with `abort` the
    /// process ends as for any panic.
    pub fn notify<E>(&self, event: &E)
    where
        E: Event<Delivery = Notify>,
    {
        for observer in self.table.observers::<E>() {
            // The observer only saw `&E`; if it left the event half-changed
            // through interior mutability, later observers see that, as they
            // would see any other change an earlier observer made.
            if let Err(panic) = panic::catch_unwind(AssertUnwindSafe(|| (observer.call)(event))) {
                tracing::error!(
                    event = type_name::<E>(),
                    priority = observer.priority,
                    registered_at = %observer.registered_at,
                    panic = panic_message(&*panic),
                    "a notify observer panicked; the observers after it still ran",
                );
            }
        }
    }

    /// The first answer to `E`, asking the observers in priority order; observers
    /// after the one that answered are not asked. `None` when none answers.
    ///
    /// A panicking observer's panic reaches the caller, as with
    /// [`map`](Self::map) and [`fold`](Self::fold): the caller asked for an answer,
    /// and carrying on without that observer would hand it a wrong one.
    pub fn first<E, Answer>(&self, event: &E) -> Option<Answer>
    where
        E: Event<Delivery = First<Answer>>,
        Answer: 'static,
    {
        self.table
            .observers::<E>()
            .iter()
            .find_map(|observer| (observer.call)(event))
    }

    /// Every observer's answer to `E`, in priority order.
    pub fn map<E, Answer>(&self, event: &E) -> Vec<Answer>
    where
        E: Event<Delivery = Map<Answer>>,
        Answer: 'static,
    {
        self.table
            .observers::<E>()
            .iter()
            .map(|observer| (observer.call)(event))
            .collect()
    }

    /// `acc` passed through every observer of `E` in priority order; `acc` itself
    /// when `E` has none.
    pub fn fold<E, Acc>(&self, event: &E, acc: Acc) -> Acc
    where
        E: Event<Delivery = Fold<Acc>>,
        Acc: 'static,
    {
        self.table
            .observers::<E>()
            .iter()
            .fold(acc, |acc, observer| (observer.call)(event, acc))
    }

    /// Whether `E` has any observer: a caller on a hot path can skip building an
    /// event nobody listens to.
    pub fn has_observers<E: Event>(&self) -> bool {
        !self.table.observers::<E>().is_empty()
    }

    /// How many observers `E` has.
    pub fn observer_count<E: Event>(&self) -> usize {
        self.table.observers::<E>().len()
    }
}

/// The message of a panic payload: `panic!` makes a `&str` or a `String`.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(message) = payload.downcast_ref::<&str>() {
        message
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message
    } else {
        "(not a string)"
    }
}
