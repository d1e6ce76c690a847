//! Who is asking: an anonymous visitor or a user.

use bulwark_store::ResourceId;

/// Who is asking. The accounts module will produce these from a session; until
/// then every request is [`Principal::Anonymous`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Principal {
    /// Nobody logged on.
    #[default]
    Anonymous,
    /// A logged-on user.
    User(User),
}

/// A logged-on user: the person resource they are, and what the rules need to
/// know about them. Fields are private so that what the rules need can grow
/// (content groups) without changing every place that builds one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct User {
    id: ResourceId,
    role: Role,
}

/// What a user may do beyond being logged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A member: sees members-only resources and their own drafts.
    Member,
    /// An administrator: sees everything.
    Administrator,
}

impl User {
    pub fn new(id: ResourceId, role: Role) -> User {
        User { id, role }
    }

    pub fn id(&self) -> ResourceId {
        self.id
    }

    pub fn role(&self) -> Role {
        self.role
    }
}

/// Principals with one cache profile see exactly the same resources and
/// properties, so they may share a cached fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheProfile {
    Anonymous,
    Administrators,
    /// A member also sees their own drafts: members never share.
    Member(ResourceId),
}

impl Principal {
    pub fn anonymous() -> Principal {
        Principal::Anonymous
    }

    pub fn member(id: ResourceId) -> Principal {
        Principal::User(User::new(id, Role::Member))
    }

    pub fn administrator(id: ResourceId) -> Principal {
        Principal::User(User::new(id, Role::Administrator))
    }

    pub fn is_anonymous(&self) -> bool {
        matches!(self, Principal::Anonymous)
    }

    pub fn is_administrator(&self) -> bool {
        self.user().is_some_and(|u| u.role == Role::Administrator)
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
            Principal::User(User {
                role: Role::Administrator,
                ..
            }) => CacheProfile::Administrators,
            Principal::User(User { id, .. }) => CacheProfile::Member(*id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn administrators_share_a_profile_and_members_never_do() {
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
