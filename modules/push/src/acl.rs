//! Who may do what with a site's topics: the `[push]` policy.

use bulwark_acl::Principal;
use bulwark_push::{PushAcl, Topic, TopicFilter};

use crate::settings::PushSettings;

pub struct SitePushAcl {
    browser_publish: Vec<TopicFilter>,
    deny: Vec<TopicFilter>,
}

impl SitePushAcl {
    /// The policy of checked settings (see [`PushSettings::parse`]).
    pub fn new(settings: &PushSettings) -> SitePushAcl {
        let parse = |filters: &[String]| {
            filters
                .iter()
                .filter_map(|f| TopicFilter::parse(f).ok())
                .collect()
        };
        SitePushAcl {
            browser_publish: parse(&settings.browser_publish),
            deny: parse(&settings.deny),
        }
    }

    fn denied(&self, topic: &Topic) -> bool {
        self.deny.iter().any(|f| f.matches(topic))
    }
}

impl PushAcl for SitePushAcl {
    fn may_subscribe(&self, _: &Principal, filter: &TopicFilter) -> bool {
        // Wildcards are checked per message by `may_read`.
        filter.as_topic().is_none_or(|t| !self.denied(&t))
    }

    fn may_read(&self, _: &Principal, topic: &Topic) -> bool {
        !self.denied(topic)
    }

    fn may_publish(&self, _: &Principal, topic: &Topic) -> bool {
        !self.denied(topic) && self.browser_publish.iter().any(|f| f.matches(topic))
    }
}
