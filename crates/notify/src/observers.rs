//! The builder: modules add their observers, then the set is frozen into a
//! [`Notifier`].

use crate::event::{Event, First, Fold, Map, Notify};
use crate::notifier::Notifier;
use crate::table::ObserverTable;

/// Observers being collected, before they are frozen with [`Observers::build`].
///
/// A lower priority runs first; equal priorities run in the order they were added.
/// The place each observer is added from is remembered and shown by the
/// [`Notifier`]'s `Debug` output and in the log of a panicking `notify` observer.
#[derive(Debug, Default)]
pub struct Observers {
    table: ObserverTable,
}

impl Observers {
    /// No observers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `observer` with every `E` given to [`Notifier::notify`].
    ///
    /// The observer runs in the thread that delivers the event, before
    /// `notify` returns: it must not block. Slow work (I/O, sending mail) is
    /// spawned by the observer, not done in it.
    #[track_caller]
    pub fn on_notify<E>(&mut self, priority: i32, observer: impl Fn(&E) + Send + Sync + 'static)
    where
        E: Event<Delivery = Notify>,
    {
        self.table.register::<E>(priority, Box::new(observer));
    }

    /// Asks `observer` for an answer to `E` in [`Notifier::first`]; `None` passes
    /// the question on to the next observer.
    #[track_caller]
    pub fn on_first<E, Answer>(
        &mut self,
        priority: i32,
        observer: impl Fn(&E) -> Option<Answer> + Send + Sync + 'static,
    ) where
        E: Event<Delivery = First<Answer>>,
        Answer: 'static,
    {
        self.table.register::<E>(priority, Box::new(observer));
    }

    /// Asks `observer` for its answer to `E` in [`Notifier::map`].
    #[track_caller]
    pub fn on_map<E, Answer>(
        &mut self,
        priority: i32,
        observer: impl Fn(&E) -> Answer + Send + Sync + 'static,
    ) where
        E: Event<Delivery = Map<Answer>>,
        Answer: 'static,
    {
        self.table.register::<E>(priority, Box::new(observer));
    }

    /// Passes the accumulator of `E` through `observer` in [`Notifier::fold`].
    #[track_caller]
    pub fn on_fold<E, Acc>(
        &mut self,
        priority: i32,
        observer: impl Fn(&E, Acc) -> Acc + Send + Sync + 'static,
    ) where
        E: Event<Delivery = Fold<Acc>>,
        Acc: 'static,
    {
        self.table.register::<E>(priority, Box::new(observer));
    }

    /// Freezes the observers: the [`Notifier`] cannot gain or lose any.
    pub fn build(self) -> Notifier {
        Notifier::from_table(self.table)
    }
}
