//! What a principal may see: the [`AccessPolicy`] every surface asks, and the
//! [`DefaultPolicy`] of a site that sets nothing but its private properties.

use bulwark_store::{Resource, Visibility, VisibilityFilter};

use crate::principal::{Principal, Role, User};

/// Decides what a principal may see: denied resources behave as absent (whichever
/// way a template, the API or the sitemap reaches them), denied properties as
/// undefined. A render memoises decisions per resource version, so a policy may do
/// real work (group lookups) per call.
///
/// Principals with one [`cache_profile`](Principal::cache_profile) share cached
/// fragments, so a policy must not tell them apart.
pub trait AccessPolicy: Send + Sync + std::fmt::Debug {
    fn may_see(&self, who: &Principal, r: &Resource) -> bool;

    fn may_read(&self, who: &Principal, r: &Resource, property: &str) -> bool;

    /// What a search may return to `who`. Every resource the filter lets through
    /// must be one [`may_see`](Self::may_see) allows (the surfaces still ask it
    /// for each result); it should let through all of them, or pages of results
    /// come out short.
    fn search_filter(&self, who: &Principal) -> VisibilityFilter;
}

/// The first policy: anonymous visitors see published public resources inside
/// their publication window, and none of the `private_properties` (`email` and
/// `phone` unless the site says otherwise); members also see members-only
/// resources and their own drafts; administrators see everything.
#[derive(Debug, Clone)]
pub struct DefaultPolicy {
    pub private_properties: Vec<String>,
}

impl Default for DefaultPolicy {
    fn default() -> Self {
        DefaultPolicy {
            private_properties: vec!["email".to_string(), "phone".to_string()],
        }
    }
}

impl AccessPolicy for DefaultPolicy {
    fn may_see(&self, who: &Principal, r: &Resource) -> bool {
        let published = || r.is_visible_at(chrono::Utc::now());
        match who {
            Principal::Anonymous => published() && r.visibility == Visibility::Public,
            Principal::User(user) => match user.role() {
                Role::Administrator => true,
                Role::Member => {
                    r.creator == Some(user.id())
                        || (published() && !matches!(r.visibility, Visibility::Group(_)))
                }
            },
        }
    }

    fn may_read(&self, who: &Principal, _r: &Resource, property: &str) -> bool {
        !who.is_anonymous() || !self.private_properties.iter().any(|p| p == property)
    }

    fn search_filter(&self, who: &Principal) -> VisibilityFilter {
        match who {
            Principal::Anonymous => VisibilityFilter::public(),
            Principal::User(user) => match user.role() {
                Role::Administrator => VisibilityFilter::Everything,
                Role::Member => member_filter(user),
            },
        }
    }
}

/// Members see members-only resources and their own drafts; no content groups
/// until users have them.
fn member_filter(user: &User) -> VisibilityFilter {
    VisibilityFilter::Visible {
        members: true,
        groups: Vec::new(),
        creator: Some(user.id()),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, Utc};

    use bulwark_store::{Props, ResourceId, Version};

    use super::*;

    const ADA: ResourceId = ResourceId(10);
    const BOB: ResourceId = ResourceId(11);

    fn resource(published: bool, visibility: Visibility) -> Resource {
        let now = Utc::now();
        Resource {
            id: ResourceId(100),
            name: None,
            category: ResourceId(1),
            category_name: "article".into(),
            published,
            publication_start: None,
            publication_end: None,
            visibility,
            creator: Some(ADA),
            modifier: None,
            created: now,
            modified: now,
            version: Version(1),
            props: Props::new()
                .with("title", "Hello")
                .with("email", "ada@example.org"),
        }
    }

    fn seen_by(r: &Resource) -> [bool; 4] {
        let policy = DefaultPolicy::default();
        [
            Principal::anonymous(),
            Principal::member(ADA),
            Principal::member(BOB),
            Principal::administrator(BOB),
        ]
        .map(|who| policy.may_see(&who, r))
    }

    #[test]
    fn anonymous_visitors_see_only_public_resources_published_now() {
        // [anonymous, Ada (the creator), Bob, an administrator]
        let public = resource(true, Visibility::Public);
        assert_eq!(seen_by(&public), [true, true, true, true]);
        let mut future = public.clone();
        future.publication_start = Some(Utc::now() + Duration::days(1));
        assert_eq!(seen_by(&future), [false, true, false, true]);
        let mut expired = public.clone();
        expired.publication_end = Some(Utc::now() - Duration::days(1));
        assert_eq!(seen_by(&expired), [false, true, false, true]);
    }

    #[test]
    fn members_also_see_members_only_resources_and_their_own_drafts() {
        let members = resource(true, Visibility::Members);
        assert_eq!(seen_by(&members), [false, true, true, true]);
        let draft = resource(false, Visibility::Public);
        assert_eq!(seen_by(&draft), [false, true, false, true]);
        let group = resource(true, Visibility::Group(ResourceId(50)));
        assert_eq!(seen_by(&group), [false, true, false, true]);
    }

    #[test]
    fn private_properties_are_hidden_from_anonymous_visitors_only() {
        let r = resource(true, Visibility::Public);
        let policy = DefaultPolicy::default();
        assert!(!policy.may_read(&Principal::anonymous(), &r, "email"));
        assert!(!policy.may_read(&Principal::anonymous(), &r, "phone"));
        assert!(policy.may_read(&Principal::anonymous(), &r, "title"));
        assert!(policy.may_read(&Principal::member(BOB), &r, "email"));
        assert!(policy.may_read(&Principal::administrator(BOB), &r, "email"));
        let open = DefaultPolicy {
            private_properties: vec![],
        };
        assert!(open.may_read(&Principal::anonymous(), &r, "email"));
    }

    #[test]
    fn the_search_filter_follows_the_principal() {
        let policy = DefaultPolicy::default();
        assert_eq!(
            policy.search_filter(&Principal::anonymous()),
            VisibilityFilter::public()
        );
        assert_eq!(
            policy.search_filter(&Principal::member(ADA)),
            VisibilityFilter::Visible {
                members: true,
                groups: vec![],
                creator: Some(ADA),
            }
        );
        assert_eq!(
            policy.search_filter(&Principal::administrator(ADA)),
            VisibilityFilter::Everything
        );
    }
}
