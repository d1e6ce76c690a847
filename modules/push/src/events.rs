//! The notifications the push module owns (see docs/notifications.md).

use bulwark_acl::Principal;
use bulwark_notify::{Event, First};
use std::sync::Arc;

use bulwark_push::{Audience, Hub, Position, PushError};
use bulwark_store::ResourceId;

/// **first**: may `principal` subscribe to, or publish on, `topic`? Asked when a
/// client subscribes to a topic without wildcards and when it publishes (never
/// per delivered message: a wildcard subscription's messages are checked against
/// `[push] deny` and the owner of a `user/{id}/...` topic, and an `rsc/{id}`
/// message against the site's access policy for that resource). An observer
/// answers `true` (allowed) or `false` (refused); with no answer, the site's
/// `[push]` settings decide. Neither is asked when the module refuses first:
/// browsers never publish on `rsc/` topics, and only user `id` may use
/// `user/{id}/...`.
#[derive(Debug, Clone)]
pub struct PushAccess {
    pub principal: Principal,
    pub action: PushAction,
    pub topic: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushAction {
    Subscribe,
    Publish,
}

impl Event for PushAccess {
    type Delivery = First<bool>;
}

/// **first**: publish `payload` (JSON text) on `user/{user}/{subtopic}`, which
/// only that user's clients receive. Sent by
/// [`publish_to_user`](crate::publish_to_user); the push module answers where
/// the message went in the topic, or why it was not published (a bad subtopic,
/// a payload that is not JSON or too large). No answer: the site does not
/// enable `push`.
#[derive(Debug, Clone)]
pub struct PublishToUser {
    pub user: ResourceId,
    pub subtopic: String,
    pub payload: String,
}

impl Event for PublishToUser {
    type Delivery = First<Result<Position, PushError>>;
}

/// **first**: publish `payload` (JSON text) on `topic` from the server, to the
/// clients the topic rules let read it and, when `audience` is given, only
/// those it admits (now and when the message is recovered later). The push
/// module answers where the message went, or why not (a bad topic, a payload
/// not JSON or too large). No answer: the site does not enable `push`. The
/// admin publishes its live figures this way, for editors only.
#[derive(Debug, Clone)]
pub struct Publish {
    pub topic: String,
    pub payload: String,
    pub audience: Option<Arc<dyn Audience>>,
}

impl Event for Publish {
    type Delivery = First<Result<Position, PushError>>;
}

/// **first**: the site's push hub, for modules that extend push (the cluster
/// module relays publications between nodes through it). The push module
/// answers; no answer: the site does not enable `push`. Ask after the site
/// loaded ([`SiteLoaded`](bulwark_web::events::SiteLoaded)): a configuration
/// change of `[push]` makes a new hub.
#[derive(Debug, Clone)]
pub struct PushHub;

impl Event for PushHub {
    type Delivery = First<Arc<Hub>>;
}
