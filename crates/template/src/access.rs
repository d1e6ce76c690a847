//! Who may see what: the requester of a render and the policy that decides which
//! resources and properties they may see.
//!
//! The models ask the policy for every resource a template reaches, whichever way
//! it reaches it; nothing else in this crate decides access.

use bulwark_store::{Resource, ResourceId, Visibility};

/// Decides what a requester may see: denied resources behave as absent (whichever
/// way a template reaches them), denied properties as undefined. Decisions are
/// memoised per render, so a policy may do real work (group lookups) per call.
pub trait AccessPolicy: Send + Sync + std::fmt::Debug {
    fn may_see(&self, who: &Requester, r: &Resource) -> bool;
    fn may_read(&self, who: &Requester, r: &Resource, property: &str) -> bool;
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
    /// Anonymous visitors see published public resources inside their
    /// publication window; members also see members-only ones and their own
    /// drafts; administrators see everything.
    fn may_see(&self, who: &Requester, r: &Resource) -> bool {
        match who {
            Requester::Admin { .. } => true,
            Requester::Member { user } => {
                r.creator == Some(*user)
                    || (r.is_visible_at(chrono::Utc::now())
                        && !matches!(r.visibility, Visibility::Group(_)))
            }
            Requester::Anonymous => {
                r.is_visible_at(chrono::Utc::now()) && r.visibility == Visibility::Public
            }
        }
    }

    fn may_read(&self, who: &Requester, _r: &Resource, property: &str) -> bool {
        *who != Requester::Anonymous || !self.private_properties.iter().any(|p| p == property)
    }
}

/// Who is asking: decides which resources a render may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requester {
    Anonymous,
    Member { user: ResourceId },
    Admin { user: ResourceId },
}

impl Requester {
    /// The access profile that cached fragments are keyed by.
    /// Requesters with one profile see exactly the same resources, so they may
    /// share a fragment. A member also sees their own drafts: members never share.
    pub fn profile(&self) -> String {
        match self {
            Requester::Anonymous => "anon".to_string(),
            Requester::Member { user } => format!("member:{}", user.0),
            Requester::Admin { .. } => "admin".to_string(),
        }
    }
}
