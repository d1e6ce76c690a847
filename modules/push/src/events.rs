//! The notification the push module owns (see docs/notifications.md).

use bulwark_acl::Principal;
use bulwark_notify::{Event, First};

/// **first**: may `principal` subscribe to, or publish on, `topic`? Asked when a
/// client subscribes to a topic without wildcards and when it publishes (never
/// per delivered message: a wildcard subscription's messages are checked against
/// `[push] deny`, and an `rsc/{id}` message against the site's access policy for
/// that resource). An observer answers `true` (allowed) or `false` (refused);
/// with no answer, the site's `[push]` settings decide. Browsers never publish on
/// `rsc/` topics, whatever an observer says.
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
