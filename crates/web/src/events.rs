//! The core notifications: what the core tells modules, and what it asks them.
//!
//! Each event is a type whose delivery kind is part of its type (it implements
//! `bulwark_notify::Event` with a `Notify`, `First`, `Map` or `Fold` delivery), so an event
//! cannot be delivered the wrong way. Modules observe them through
//! [`SiteSetup::observers`](crate::SiteSetup::observers). An event a module owns
//! is declared in that module (the push module's `PushAccess`). The catalogue,
//! with who sends each event and what an observer answers, is
//! `docs/notifications.md`.

use std::time::Duration;

use bulwark_acl::Principal;
use bulwark_depcache::DependencyKey;
use bulwark_notify::{Event, First, Fold, Notify};
use bulwark_store::{ChangeKind, ResourceId};

/// **notify**: a resource was inserted, updated or deleted, and the write has
/// committed; the dependency keys it named were already flushed (see
/// [`CacheFlushed`]). Sent once per resource a write touched, in commit order,
/// from the site's change task (not from the request that wrote). The push
/// module publishes `rsc/{id}` from it.
#[derive(Debug, Clone)]
pub struct ResourceChanged {
    pub id: ResourceId,
    pub kind: ChangeKind,
}
impl Event for ResourceChanged {
    type Delivery = Notify;
}

/// **notify**: dependency keys were flushed after a committed write; every cached
/// value (model values, fragments, pages) computed from them is gone. `all` is
/// set instead when the whole cache was flushed: the change task fell behind, or
/// a cluster node could not be sure it heard of every other node's change.
#[derive(Debug, Clone)]
pub struct CacheFlushed {
    pub keys: Vec<DependencyKey>,
    pub all: bool,
}
impl Event for CacheFlushed {
    type Delivery = Notify;
}

/// **notify**: the site finished loading (at start and after every configuration
/// reload): the observers registered in this load are the ones
/// [`SiteNotifier::current`](crate::SiteNotifier::current) gives from now on, so
/// a module can ask another module's observers (the cluster module asks the push
/// module for the site's hub). Sent once per load, before the site takes requests.
#[derive(Debug, Clone)]
pub struct SiteLoaded;
impl Event for SiteLoaded {
    type Delivery = Notify;
}

/// **first**: a request is about to be routed. An observer may answer with a
/// [`Rewrite`]: the request is then routed as if it asked for that path (the
/// URL the visitor sees does not change). Asked only when some module observes
/// it; without observers the request path costs nothing.
#[derive(Debug, Clone)]
pub struct RequestDispatch {
    pub host: String,
    /// The path as it was asked for (percent-encoded).
    pub path: String,
}
/// The path to route instead (percent-encoded, starting with `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite(pub String);
impl Event for RequestDispatch {
    type Delivery = First<Rewrite>;
}

/// **first**: a `GET` or `HEAD` found nothing: no dispatch rule matched its
/// path, or its controller found nothing there (a missing resource, a
/// template's `not_found()`). An observer may answer with a [`Moved`] instead
/// of the 404 (the redirects module). Asked only on the way to a 404, and only
/// when some module observes it: requests that find something never ask.
#[derive(Debug, Clone)]
pub struct PathNotFound {
    /// The path as it was asked for (percent-encoded).
    pub path: String,
    /// The query string, if any (without `?`).
    pub query: Option<String>,
}
/// What a path that was not found answers instead: `301`, `302`, `307`,
/// `308` to `location`, or `410 Gone` (no location).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    pub status: http::StatusCode,
    pub location: Option<String>,
}
impl Event for PathNotFound {
    type Delivery = First<Moved>;
}

/// **first**: a `GET` or `HEAD` with a query string, before it is routed:
/// an observer may say that this very path and query moved (the redirects
/// module's rules with a query, such as an old blog's `/?p=12`, which would
/// otherwise find the front page and show it). Asked only when some module
/// observes it, and only for a request with a query string.
#[derive(Debug, Clone)]
pub struct QueryPathAsked {
    /// The path as it was asked for (percent-encoded).
    pub path: String,
    /// The query string (without `?`), not empty.
    pub query: String,
}
impl Event for QueryPathAsked {
    type Delivery = First<Moved>;
}

/// **notify**: a template was rendered for a request (a page cache hit renders
/// nothing and sends nothing).
#[derive(Debug, Clone)]
pub struct PageRendered {
    pub path: String,
    pub template: String,
    pub took: Duration,
    /// The render succeeded (a failed render is logged as well).
    pub ok: bool,
}
impl Event for PageRendered {
    type Delivery = Notify;
}

/// **notify**: someone logged on (a new session). Sent by the accounts module
/// (`auth`); declared here so that any module can observe it.
#[derive(Debug, Clone)]
pub struct Logon {
    pub user: ResourceId,
}
impl Event for Logon {
    type Delivery = Notify;
}

/// **notify**: someone logged off. Sent by the accounts module (`auth`).
#[derive(Debug, Clone)]
pub struct Logoff {
    pub user: ResourceId,
}
impl Event for Logoff {
    type Delivery = Notify;
}

/// **fold**: the admin's menu. Each observer adds (or removes, or reorders)
/// items of the accumulator; the admin module starts with its own items and
/// shows the result on every admin page.
#[derive(Debug, Clone)]
pub struct AdminMenu;
/// One entry of the admin menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuItem {
    pub label: String,
    pub url: String,
    /// Items with the same parent form a submenu (`None`: top level).
    pub parent: Option<String>,
    /// A screen a module brings: the template the admin shows at `url`
    /// (under `/admin/`, for the people who may open the admin), with the
    /// admin's menu and layout. `None`: `url` is served by a rule of its own.
    pub screen: Option<String>,
}
impl Event for AdminMenu {
    type Delivery = Fold<Vec<MenuItem>>;
}

impl MenuItem {
    /// A top-level screen a module brings: `template` shown at `url`.
    pub fn screen(label: &str, url: &str, template: &str) -> MenuItem {
        MenuItem {
            label: label.to_owned(),
            url: url.to_owned(),
            parent: None,
            screen: Some(template.to_owned()),
        }
    }

    /// A top-level link to a page a rule of the module's own serves.
    pub fn link(label: &str, url: &str) -> MenuItem {
        MenuItem {
            label: label.to_owned(),
            url: url.to_owned(),
            parent: None,
            screen: None,
        }
    }
}

/// **first**: someone is about to add or remove an edge through the JSON API;
/// the access rules already let them change the subject's edges and see the
/// object. An observer may refuse with an [`EdgeRefused`] that says why (a 403):
/// the accounts module lets only people of a user group put others in it, so a
/// manager cannot make anyone an administrator.
#[derive(Debug, Clone)]
pub struct EdgeChange {
    pub principal: Principal,
    pub subject: ResourceId,
    pub predicate: String,
    pub object: ResourceId,
    /// The object's unique name, if it has one.
    pub object_name: Option<String>,
    /// Added (true) or removed (false).
    pub added: bool,
}
/// Why an [`EdgeChange`] may not happen, for the person who asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeRefused(pub String);
impl Event for EdgeChange {
    type Delivery = First<EdgeRefused>;
}

/// **fold**, once a second per site while a module listens to [`SiteFigures`]:
/// the site's live figures, which the core starts with its own (requests,
/// renders, page cache, refusals per bottleneck, database connections) and
/// each module completes with its own (the push module: `push_clients` in
/// `more`; a bottleneck of its own in `refused`).
#[derive(Debug, Clone, Copy)]
pub struct GatherFigures;
impl Event for GatherFigures {
    type Delivery = Fold<crate::figures::Figures>;
}

/// **fold**, each time `/metrics` is read (the `metrics` module, off the
/// runtime's workers: an observer may read the database): the site's samples
/// for a monitoring system. The core starts with its own
/// ([`core_metrics`](crate::core_metrics)); each module appends its
/// own (push: clients, deliveries, encodings; media: resizes; webhooks:
/// messages by state).
#[derive(Debug, Clone, Copy)]
pub struct GatherMetrics;
impl Event for GatherMetrics {
    type Delivery = Fold<Vec<crate::metric::Metric>>;
}

/// **notify**: the site's figures of the last second, gathered: this node's
/// once a second, and, with the cluster module, each other node's as they
/// arrive (`node` names whose they are). The admin module publishes them to
/// its dashboard over push.
#[derive(Debug, Clone)]
pub struct SiteFigures(pub std::sync::Arc<crate::figures::Figures>);
impl Event for SiteFigures {
    type Delivery = Notify;
}
