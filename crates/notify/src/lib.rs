//! Bulwark's notifications: typed events that modules send each other, delivered to
//! observers in priority order, as in Zotonic (`zotonic_notifications.hrl`).
//!
//! # What it is for
//!
//! A module should not call another module directly: the core does not know which
//! modules a site has enabled. Instead it delivers an event (`ResourceSaved`,
//! `Rewrite`, `AdminMenu`), and whichever modules observe it take part. An event is
//! a plain type; its declaration says how it is delivered and what an observer
//! answers, so grepping for its name finds the declaration, every observer and every
//! place that sends it.
//!
//! # How it works
//!
//! - **An event's delivery is part of its type.** `impl Event for X { type Delivery
//!   = ...; }` picks exactly one of four kinds, and each delivery method of
//!   [`Notifier`] accepts only events of its kind, so an event cannot be delivered
//!   the wrong way:
//!   - [`Notify`]: every observer is called; nothing is answered.
//!   - [`First<Answer>`](First): observers are asked until one answers
//!     `Some(answer)`; that answer wins and later observers are not asked.
//!   - [`Map<Answer>`](Map): every observer answers; the caller gets all answers.
//!   - [`Fold<Acc>`](Fold): the caller's accumulator passes through every observer
//!     in turn (an admin menu to which each module adds its items).
//! - **Priorities.** Every observer has one: lower runs first, and equal priorities
//!   run in the order the observers were added.
//! - **Build, then freeze.** Modules add observers to an [`Observers`] builder, which
//!   [`Observers::build`] freezes into a [`Notifier`]. The notifier is immutable, so
//!   a delivery takes no lock: it looks up the event's observers by `TypeId` (one
//!   hash lookup, no allocation when there are none) and calls them in the caller's
//!   thread. [`Notifier::has_observers`] lets a hot path skip building an event
//!   nobody observes.
//! - **Observers run synchronously and must not block.** Even `notify`, fire and
//!   forget for the caller, calls every observer before it returns; an observer with
//!   slow work (I/O, mail, reindexing) hands it to a task or a queue.
//! - **Panics.** A `notify` observer that panics is logged and skipped; the others
//!   still run and the caller carries on. In `first`, `map` and `fold` the panic
//!   reaches the caller, who asked for an answer that can no longer be right.
//!
//! # What it does not do
//!
//! No observers added or removed after [`Observers::build`]: when the set changes
//! (a module enabled on a site), build a new notifier and swap it in. No background
//! delivery, queues or timeouts: Zotonic's asynchronous `notify` becomes an
//! observer's own choice to spawn. No delivery to other nodes. No events that borrow
//! (an event is identified by its `'static` type: it owns its data or holds an
//! `Arc`). No delivery by name: an event is a type, never a string.
//!
//! # Example
//!
//! ```
//! use std::sync::mpsc;
//! use bulwark_notify::{Event, First, Fold, Map, Notify, Observers};
//!
//! /// Sent after a resource was saved.
//! struct ResourceSaved {
//!     id: u64,
//! }
//! impl Event for ResourceSaved {
//!     type Delivery = Notify;
//! }
//!
//! /// Asked before dispatch: the first observer to answer gives the request a new path.
//! struct Rewrite {
//!     path: String,
//! }
//! impl Event for Rewrite {
//!     type Delivery = First<String>;
//! }
//!
//! /// Asked for the parts of a page's `<title>`, most specific first.
//! struct PageTitle {
//!     id: u64,
//! }
//! impl Event for PageTitle {
//!     type Delivery = Map<String>;
//! }
//!
//! /// The admin menu: each module adds its items.
//! struct AdminMenu;
//! impl Event for AdminMenu {
//!     type Delivery = Fold<Vec<MenuItem>>;
//! }
//!
//! #[derive(Debug, PartialEq)]
//! struct MenuItem {
//!     label: &'static str,
//! }
//!
//! let mut observers = Observers::new();
//!
//! // Reindexing is slow: the observer only queues it.
//! let (reindex, reindex_queue) = mpsc::channel();
//! observers.on_notify(500, move |saved: &ResourceSaved| {
//!     let _ = reindex.send(saved.id);
//! });
//!
//! observers.on_first(100, |rewrite: &Rewrite| {
//!     (rewrite.path == "/old-about").then(|| "/about".to_string())
//! });
//! observers.on_first(500, |rewrite: &Rewrite| {
//!     rewrite.path.strip_suffix(".html").map(str::to_string)
//! });
//!
//! observers.on_map(900, |_: &PageTitle| "Example site".to_string());
//! observers.on_map(500, |page: &PageTitle| format!("Page {}", page.id));
//!
//! observers.on_fold(500, |_: &AdminMenu, mut menu: Vec<MenuItem>| {
//!     menu.push(MenuItem { label: "Media" });
//!     menu
//! });
//! observers.on_fold(100, |_: &AdminMenu, mut menu: Vec<MenuItem>| {
//!     menu.push(MenuItem { label: "Pages" });
//!     menu
//! });
//!
//! let notifier = observers.build();
//!
//! notifier.notify(&ResourceSaved { id: 42 });
//! assert_eq!(reindex_queue.try_recv(), Ok(42));
//!
//! let rewrite = |path: &str| notifier.first(&Rewrite { path: path.to_string() });
//! assert_eq!(rewrite("/old-about").as_deref(), Some("/about"));
//! assert_eq!(rewrite("/news.html").as_deref(), Some("/news"));
//! assert_eq!(rewrite("/news"), None);
//!
//! assert_eq!(notifier.map(&PageTitle { id: 42 }), ["Page 42", "Example site"]);
//!
//! assert_eq!(
//!     notifier.fold(&AdminMenu, Vec::new()),
//!     [MenuItem { label: "Pages" }, MenuItem { label: "Media" }],
//! );
//! ```

mod event;
mod notifier;
mod observers;
mod table;

pub use event::{Delivery, Event, First, Fold, Map, Notify};
pub use notifier::Notifier;
pub use observers::Observers;
