//! What an event is, and the four ways one can be delivered.
//!
//! The delivery is an associated type of [`Event`] rather than one trait per kind, so
//! that an event type has exactly one kind: coherence forbids a second
//! `impl Event for X`, and the delivery methods of [`Notifier`](crate::Notifier)
//! each accept only events of their own kind.

use std::marker::PhantomData;

/// A typed notification: a record one module hands to the observers of others.
///
/// Its [`Delivery`] says how it is delivered and what an observer answers, so the
/// declaration is the catalogue entry:
///
/// ```
/// use bulwark_notify::{Event, First};
///
/// /// Asked before dispatch: an observer may answer with a new path for the request.
/// pub struct Rewrite {
///     pub path: String,
/// }
///
/// impl Event for Rewrite {
///     type Delivery = First<String>;
/// }
/// ```
///
/// An event is identified by its type, hence `'static`: it owns its data (or holds
/// an `Arc` to it) instead of borrowing it. It need not be `Send` or `Sync`: it is
/// delivered in the caller's thread and observers only borrow it.
///
/// Delivering an event the wrong way does not compile:
///
/// ```compile_fail,E0271
/// # use bulwark_notify::{Event, First, Notifier};
/// # pub struct Rewrite;
/// # impl Event for Rewrite { type Delivery = First<String>; }
/// let notifier = Notifier::default();
/// notifier.notify(&Rewrite); // Rewrite is delivered with `first`
/// ```
pub trait Event: 'static {
    /// [`Notify`], [`First`], [`Map`] or [`Fold`].
    type Delivery: Delivery;
}

/// How an event is delivered: one of [`Notify`], [`First`], [`Map`] and [`Fold`].
///
/// Sealed: the four kinds are the whole set.
pub trait Delivery: sealed::Sealed + 'static {
    /// The signature of an observer of an event `E` delivered this way.
    #[doc(hidden)]
    type Observer<E: 'static>: ?Sized + Send + Sync + 'static;
}

/// Delivered with [`Notifier::notify`](crate::Notifier::notify): every observer is
/// called, nothing is answered.
pub enum Notify {}

/// Delivered with [`Notifier::first`](crate::Notifier::first): observers are asked in
/// priority order until one answers `Some(Answer)`.
pub struct First<Answer>(PhantomData<fn() -> Answer>);

/// Delivered with [`Notifier::map`](crate::Notifier::map): every observer answers,
/// and the caller gets the answers in priority order.
pub struct Map<Answer>(PhantomData<fn() -> Answer>);

/// Delivered with [`Notifier::fold`](crate::Notifier::fold): each observer in turn
/// takes the accumulator and returns it, changed or not.
pub struct Fold<Acc>(PhantomData<fn() -> Acc>);

impl Delivery for Notify {
    type Observer<E: 'static> = dyn Fn(&E) + Send + Sync;
}

impl<Answer: 'static> Delivery for First<Answer> {
    type Observer<E: 'static> = dyn Fn(&E) -> Option<Answer> + Send + Sync;
}

impl<Answer: 'static> Delivery for Map<Answer> {
    type Observer<E: 'static> = dyn Fn(&E) -> Answer + Send + Sync;
}

impl<Acc: 'static> Delivery for Fold<Acc> {
    type Observer<E: 'static> = dyn Fn(&E, Acc) -> Acc + Send + Sync;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Notify {}
    impl<Answer> Sealed for super::First<Answer> {}
    impl<Answer> Sealed for super::Map<Answer> {}
    impl<Acc> Sealed for super::Fold<Acc> {}
}
