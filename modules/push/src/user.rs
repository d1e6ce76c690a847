//! A user's own topics, `user/{id}/...`: only the logged-on user `id` may
//! subscribe to them or receive their messages, whatever the `[push]` settings
//! or a `PushAccess` observer say (they may only refuse more). Administrators
//! are no exception: private means private.
//!
//! The server publishes there ([`publish_to_user`](crate::publish_to_user),
//! `POST /push/publish`); a browser only on its own user's topics, and only on
//! those `[push] browser_publish` lists (none by default).
//!
//! `user` and `user/{something that is not an id}/...` belong to nobody: no
//! browser may use them. A wildcard filter that spans users (`user/+/inbox`,
//! `user/#`, `#`) may be subscribed to, and delivers the subscriber's own
//! messages only: the hub asks [`may_read`](bulwark_push::PushAcl::may_read)
//! for every message.

use bulwark_acl::Principal;
use bulwark_notify::Notifier;
use bulwark_push::{Hub, Position, PushError, Topic, TopicFilter};
use bulwark_store::ResourceId;

use crate::events::PublishToUser;

/// The first segment of every user's topic.
const SEGMENT: &str = "user";

/// The topic `user/{user}/{subtopic}`; `subtopic` is one or more segments
/// without wildcards (`inbox`, `jobs/42`).
pub(crate) fn user_topic(user: ResourceId, subtopic: &str) -> Result<Topic, PushError> {
    let topic = Topic::parse(&format!("{SEGMENT}/{user}/{subtopic}"))?;
    match owner(topic.as_str()) {
        Owner::User(id) if id == user => Ok(topic),
        _ => Err(PushError::BadTopic(format!("{topic}: not a user's topic"))),
    }
}

/// Why [`publish_to_user`] published nothing.
#[derive(Debug, thiserror::Error)]
pub enum PublishToUserError {
    #[error("the site does not enable the push module")]
    PushNotEnabled,
    #[error(transparent)]
    Push(#[from] PushError),
}

/// Publishes `payload` on `user/{user}/{subtopic}` of the site whose observers
/// `notifier` holds (`req.site.notifier` in a controller,
/// `SiteSetup::notifier().current()` for code that outlives a load): only
/// `user`'s own clients receive it, on every device they are logged on with.
///
/// ```text
/// publish_to_user(&req.site.notifier, user, "jobs/42", &json!({"done": true}))?;
/// ```
pub fn publish_to_user(
    notifier: &Notifier,
    user: ResourceId,
    subtopic: &str,
    payload: &serde_json::Value,
) -> Result<Position, PublishToUserError> {
    let asked = PublishToUser {
        user,
        subtopic: subtopic.to_string(),
        payload: payload.to_string(),
    };
    match notifier.first(&asked) {
        Some(published) => Ok(published?),
        None => Err(PublishToUserError::PushNotEnabled),
    }
}

/// Publishes `payload_json` on `user/{user}/{subtopic}` of `hub`.
pub(crate) fn publish(
    hub: &Hub,
    user: ResourceId,
    subtopic: &str,
    payload_json: &str,
) -> Result<Position, PushError> {
    hub.publish(user_topic(user, subtopic)?.as_str(), payload_json)
}

/// Whose topics a topic or filter (its text) names.
#[derive(Debug, PartialEq, Eq)]
enum Owner {
    /// Not under `user/`.
    NotAUsers,
    /// `user/{id}` and below.
    User(ResourceId),
    /// Under `user/`, but with a wildcard where the id goes (`user/+/x`,
    /// `user/#`): each message is checked on its own.
    AnyUser,
    /// `user`, or `user/x/...` where `x` is not an id: nobody's.
    Nobody,
}

fn owner(raw: &str) -> Owner {
    let mut segments = raw.split('/');
    if segments.next() != Some(SEGMENT) {
        return Owner::NotAUsers;
    }
    match segments.next() {
        Some("+" | "#") => Owner::AnyUser,
        Some(id) => match id.parse::<i64>() {
            // One spelling per user: `user/007` is nobody's, not user 7's.
            Ok(n) if n > 0 && n.to_string() == id => Owner::User(ResourceId(n)),
            _ => Owner::Nobody,
        },
        None => Owner::Nobody,
    }
}

/// Whether `principal` may use `topic` as far as user topics go: any topic not
/// under `user/`, and under it only their own.
pub(crate) fn may_use(principal: &Principal, topic: &Topic) -> bool {
    match owner(topic.as_str()) {
        Owner::NotAUsers => true,
        Owner::User(id) => principal.user_id() == Some(id),
        Owner::AnyUser | Owner::Nobody => false,
    }
}

/// Whether `principal` may subscribe to `filter` as far as user topics go: a
/// filter naming one user's topics only for that user; one that spans users
/// (or does not reach them) for anyone, its messages checked one by one.
pub(crate) fn may_subscribe(principal: &Principal, filter: &TopicFilter) -> bool {
    match owner(filter.as_str()) {
        Owner::NotAUsers | Owner::AnyUser => true,
        Owner::User(id) => principal.user_id() == Some(id),
        Owner::Nobody => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADA: ResourceId = ResourceId(7);
    const BOB: ResourceId = ResourceId(8);

    fn topic(raw: &str) -> Topic {
        Topic::parse(raw).unwrap()
    }

    fn filter(raw: &str) -> TopicFilter {
        TopicFilter::parse(raw).unwrap()
    }

    #[test]
    fn a_users_topics_are_theirs_alone() {
        let ada = Principal::member(ADA);
        let admin = Principal::administrator(BOB);
        for t in ["user/7", "user/7/x", "user/7/jobs/42"] {
            assert!(may_use(&ada, &topic(t)), "{t}");
            assert!(!may_use(&Principal::member(BOB), &topic(t)), "{t}");
            assert!(!may_use(&admin, &topic(t)), "{t}");
            assert!(!may_use(&Principal::anonymous(), &topic(t)), "{t}");
        }
        for nobodys in ["user", "user/ada/x", "user/007/x", "user/0/x", "user/-7/x"] {
            assert!(!may_use(&ada, &topic(nobodys)), "{nobodys}");
            assert!(!may_use(&admin, &topic(nobodys)), "{nobodys}");
        }
        for other in ["users/7", "site/user/7", "rsc/7"] {
            assert!(may_use(&Principal::anonymous(), &topic(other)), "{other}");
        }
    }

    #[test]
    fn filters_naming_a_user_are_that_users_and_wider_ones_anyones() {
        let ada = Principal::member(ADA);
        let bob = Principal::member(BOB);
        for f in ["user/7/#", "user/7/+", "user/7/x"] {
            assert!(may_subscribe(&ada, &filter(f)), "{f}");
            assert!(!may_subscribe(&bob, &filter(f)), "{f}");
            assert!(!may_subscribe(&Principal::anonymous(), &filter(f)), "{f}");
        }
        // Checked per message instead.
        for f in ["user/#", "user/+/x", "#", "+/7/x"] {
            assert!(may_subscribe(&Principal::anonymous(), &filter(f)), "{f}");
        }
        assert!(!may_subscribe(&ada, &filter("user")));
        assert!(!may_subscribe(&ada, &filter("user/ada/#")));
    }

    #[test]
    fn a_user_topic_is_built_for_its_user_only() {
        assert_eq!(
            user_topic(ADA, "jobs/42").unwrap().as_str(),
            "user/7/jobs/42"
        );
        for bad in ["", "a//b", "+", "x/#", "/x"] {
            assert!(user_topic(ADA, bad).is_err(), "{bad:?}");
        }
    }
}
