//! Who is asking: an anonymous visitor or a user with their user groups.

use std::sync::Arc;

use bulwark_store::ResourceId;

/// The default user groups, root first: each group's parent is the one before
/// it, and a group's people count as people of every group above it, so an
/// editor is also a member and an administrator is everything. `anonymous` is
/// the group of every visitor.
pub const DEFAULT_USER_GROUPS: [&str; 5] = [ANONYMOUS, MEMBERS, EDITORS, MANAGERS, ADMINISTRATORS];

/// Every visitor, logged on or not.
pub const ANONYMOUS: &str = "anonymous";
/// The group whose people see members-only resources.
pub const MEMBERS: &str = "members";
/// The group whose people write the site's content.
pub const EDITORS: &str = "editors";
/// The group whose people may change the access rules (and everything else).
pub const MANAGERS: &str = "managers";
/// The group that may do everything, whatever the rules say.
pub const ADMINISTRATORS: &str = "administrators";

/// Who is asking. The accounts module makes a [`Principal::User`] from a
/// session or an API token; every other request is [`Principal::Anonymous`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Principal {
    /// Nobody logged on.
    #[default]
    Anonymous,
    /// A logged-on user.
    User(User),
}

/// A logged-on user: the person resource they are and the user groups they
/// count as members of (their own groups and every group above those), which
/// is all the rules need. Fields are private so that what the rules need can
/// grow without changing every place that builds one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct User {
    id: ResourceId,
    groups: Arc<[String]>,
}

impl User {
    /// `groups` are the user's effective groups: the ones they were put in and
    /// every ancestor of those (`anonymous` is added when missing).
    pub fn new(id: ResourceId, groups: impl IntoIterator<Item = String>) -> User {
        let mut groups: Vec<String> = groups.into_iter().collect();
        if !groups.iter().any(|g| g == ANONYMOUS) {
            groups.push(ANONYMOUS.to_string());
        }
        groups.sort();
        groups.dedup();
        User {
            id,
            groups: groups.into(),
        }
    }

    pub fn id(&self) -> ResourceId {
        self.id
    }

    /// The user's effective groups, sorted.
    pub fn groups(&self) -> &[String] {
        &self.groups
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups
            .binary_search_by(|g| g.as_str().cmp(group))
            .is_ok()
    }
}

/// Principals with one cache profile see exactly the same resources and
/// properties, so they may share a cached fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheProfile {
    Anonymous,
    Administrators,
    /// A user sees their own drafts: users other than administrators never
    /// share.
    User(ResourceId),
}

impl Principal {
    pub fn anonymous() -> Principal {
        Principal::Anonymous
    }

    /// A user in the given groups of the default hierarchy: `member` is in
    /// `members` (and `anonymous`), `in_default_group(id, "editors")` in
    /// `editors`, `members` and `anonymous`.
    pub fn in_default_group(id: ResourceId, group: &str) -> Principal {
        let upto = DEFAULT_USER_GROUPS
            .iter()
            .position(|g| *g == group)
            .unwrap_or(0);
        Principal::User(User::new(
            id,
            DEFAULT_USER_GROUPS[..=upto].iter().map(|g| g.to_string()),
        ))
    }

    /// A user in `members`.
    pub fn member(id: ResourceId) -> Principal {
        Principal::in_default_group(id, MEMBERS)
    }

    /// A user in `administrators` (and every group of the default chain).
    pub fn administrator(id: ResourceId) -> Principal {
        Principal::in_default_group(id, ADMINISTRATORS)
    }

    pub fn is_anonymous(&self) -> bool {
        matches!(self, Principal::Anonymous)
    }

    pub fn is_administrator(&self) -> bool {
        self.in_group(ADMINISTRATORS)
    }

    /// Whether the principal counts as a member of `group`; everybody is in
    /// `anonymous`.
    pub fn in_group(&self, group: &str) -> bool {
        match self {
            Principal::Anonymous => group == ANONYMOUS,
            Principal::User(user) => user.in_group(group),
        }
    }

    /// The logged-on user, if any.
    pub fn user(&self) -> Option<&User> {
        match self {
            Principal::Anonymous => None,
            Principal::User(user) => Some(user),
        }
    }

    /// The person resource of the logged-on user, if any.
    pub fn user_id(&self) -> Option<ResourceId> {
        self.user().map(User::id)
    }

    /// Which principals may share cached fragments with this one.
    pub fn cache_profile(&self) -> CacheProfile {
        match self {
            Principal::Anonymous => CacheProfile::Anonymous,
            Principal::User(user) if user.in_group(ADMINISTRATORS) => CacheProfile::Administrators,
            Principal::User(user) => CacheProfile::User(user.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn administrators_share_a_profile_and_other_users_never_do() {
        let (ada, bob) = (ResourceId(1), ResourceId(2));
        assert_eq!(
            Principal::administrator(ada).cache_profile(),
            Principal::administrator(bob).cache_profile()
        );
        assert_ne!(
            Principal::member(ada).cache_profile(),
            Principal::member(bob).cache_profile()
        );
        assert_ne!(
            Principal::member(ada).cache_profile(),
            Principal::administrator(ada).cache_profile()
        );
        assert_eq!(
            Principal::anonymous().cache_profile(),
            CacheProfile::Anonymous
        );
    }

    #[test]
    fn a_default_group_brings_the_groups_above_it() {
        let editor = Principal::in_default_group(ResourceId(3), "editors");
        assert!(editor.in_group("editors"));
        assert!(editor.in_group(MEMBERS));
        assert!(editor.in_group(ANONYMOUS));
        assert!(!editor.in_group("managers"));
        assert!(!editor.is_administrator());
        assert!(Principal::administrator(ResourceId(3)).in_group("managers"));
        assert!(Principal::anonymous().in_group(ANONYMOUS));
        assert!(!Principal::anonymous().in_group(MEMBERS));
    }

    #[test]
    fn only_users_have_an_id() {
        assert_eq!(Principal::anonymous().user_id(), None);
        assert!(Principal::anonymous().is_anonymous());
        assert_eq!(
            Principal::member(ResourceId(7)).user_id(),
            Some(ResourceId(7))
        );
        assert!(!Principal::member(ResourceId(7)).is_administrator());
        assert!(Principal::administrator(ResourceId(7)).is_administrator());
    }
}
