//! Who may do what with a site's topics: a user's own topics (`user/{id}/...`,
//! see `user.rs`) and resources' topics (`rsc/...`, see `rsc.rs`) first, which
//! nothing can open wider; `[push] administrators_only`, which nothing opens
//! to anyone else; then the site's modules (the [`PushAccess`] notification);
//! then the rest of the `[push]` policy.

use bulwark_acl::Principal;
use bulwark_push::{PushAcl, Topic, TopicFilter};
use bulwark_web::SiteNotifier;

use crate::events::{PushAccess, PushAction};
use crate::rsc;
use crate::settings::PushSettings;
use crate::user;

pub struct SitePushAcl {
    browser_publish: Vec<TopicFilter>,
    deny: Vec<TopicFilter>,
    administrators_only: Vec<TopicFilter>,
    notifier: SiteNotifier,
}

impl SitePushAcl {
    /// The policy of checked settings (see [`PushSettings::parse`]).
    pub fn new(settings: &PushSettings, notifier: SiteNotifier) -> SitePushAcl {
        let parse = |filters: &[String]| {
            filters
                .iter()
                .filter_map(|f| TopicFilter::parse(f).ok())
                .collect()
        };
        SitePushAcl {
            browser_publish: parse(&settings.browser_publish),
            deny: parse(&settings.deny),
            administrators_only: parse(&settings.administrators_only),
            notifier,
        }
    }

    /// What an observer of [`PushAccess`] says, if one does.
    fn observed(&self, principal: &Principal, action: PushAction, topic: &str) -> Option<bool> {
        let notifier = self.notifier.current();
        if !notifier.has_observers::<PushAccess>() {
            return None;
        }
        notifier.first(&PushAccess {
            principal: principal.clone(),
            action,
            topic: topic.to_string(),
        })
    }

    fn denied(&self, topic: &Topic) -> bool {
        self.deny.iter().any(|f| f.matches(topic))
    }

    /// Whether `topic` is closed to `principal` by `[push] administrators_only`.
    fn kept_from(&self, principal: &Principal, topic: &Topic) -> bool {
        !principal.is_administrator() && self.administrators_only.iter().any(|f| f.matches(topic))
    }
}

impl PushAcl for SitePushAcl {
    fn may_subscribe(&self, principal: &Principal, filter: &TopicFilter) -> bool {
        if !user::may_subscribe(principal, filter) {
            return false;
        }
        // Wildcards are checked per message by `may_read`.
        let Some(topic) = filter.as_topic() else {
            return true;
        };
        if self.kept_from(principal, &topic) {
            return false;
        }
        self.observed(principal, PushAction::Subscribe, topic.as_str())
            .unwrap_or_else(|| !self.denied(&topic))
    }

    fn may_read(&self, principal: &Principal, topic: &Topic) -> bool {
        user::may_use(principal, topic) && !self.denied(topic) && !self.kept_from(principal, topic)
    }

    fn may_publish(&self, principal: &Principal, topic: &Topic) -> bool {
        // `rsc/` messages are the server's: they carry who may see the resource
        // (see `rsc.rs`), which a browser's message could not.
        if rsc::is_resource_topic(topic) || !user::may_use(principal, topic) {
            return false;
        }
        self.observed(principal, PushAction::Publish, topic.as_str())
            .unwrap_or_else(|| {
                !self.denied(topic) && self.browser_publish.iter().any(|f| f.matches(topic))
            })
    }
}
