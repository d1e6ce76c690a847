//! Access rules: user group x content group x category -> actions.
//!
//! A rule only ever allows; what no rule allows is refused. A rule for a group
//! applies to everyone who counts as a member of it, so a rule for `members`
//! also covers editors, managers and administrators (see
//! [`DEFAULT_USER_GROUPS`](crate::DEFAULT_USER_GROUPS)). Administrators may do
//! everything whatever the rules say, so no rule set can lock a site's owner
//! out.

use std::fmt;
use std::str::FromStr;

/// What someone wants to do with a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// See it (and its edges) in pages, the API, search and push.
    View,
    /// Create a resource of the category in the content group.
    Insert,
    /// Change it (which also lets one see it unpublished).
    Update,
    Delete,
    /// Add, remove and reorder its outgoing edges (the object must be visible).
    Link,
}

impl Action {
    pub const ALL: [Action; 5] = [
        Action::View,
        Action::Insert,
        Action::Update,
        Action::Delete,
        Action::Link,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::View => "view",
            Action::Insert => "insert",
            Action::Update => "update",
            Action::Delete => "delete",
            Action::Link => "link",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown action {0:?}; the actions are view, insert, update, delete and link")]
pub struct UnknownAction(pub String);

impl FromStr for Action {
    type Err = UnknownAction;

    fn from_str(s: &str) -> Result<Action, UnknownAction> {
        Action::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| UnknownAction(s.to_string()))
    }
}

/// The group of people who write their own articles (an imported blog's
/// authors): beside `editors`, under `members`.
pub const AUTHORS: &str = "authors";

/// The content group of every resource that is not in a named one.
pub const DEFAULT_CONTENT_GROUP: &str = "default";

/// One rule: people of `group` may do `actions` to resources of one of
/// `categories` (or below one; empty: every category) in `content_group`
/// (`None`: every content group); with `own`, only to resources they made
/// (their creator: an author's posts), and to new ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub group: String,
    pub actions: Vec<Action>,
    pub content_group: Option<String>,
    pub categories: Vec<String>,
    pub own: bool,
}

impl Rule {
    pub fn new(group: &str, actions: &[Action]) -> Rule {
        Rule {
            group: group.to_string(),
            actions: actions.to_vec(),
            content_group: None,
            categories: Vec::new(),
            own: false,
        }
    }

    /// Only to what they made (and to new resources).
    pub fn own_only(mut self) -> Rule {
        self.own = true;
        self
    }

    pub fn in_content_group(mut self, content_group: &str) -> Rule {
        self.content_group = Some(content_group.to_string());
        self
    }

    pub fn for_categories(mut self, categories: &[&str]) -> Rule {
        self.categories = categories.iter().map(|c| c.to_string()).collect();
        self
    }
}

/// The rules of a site that defines none: anonymous visitors and members view
/// the default content group; authors also write articles and media there,
/// and change, delete and link what they made; editors create, change,
/// delete and link all content there (not people, user groups or the data
/// model); managers may do everything everywhere. Administrators need no rule.
pub fn default_rules() -> Vec<Rule> {
    use Action::*;
    vec![
        Rule::new("anonymous", &[View]).in_content_group(DEFAULT_CONTENT_GROUP),
        Rule::new("members", &[View]).in_content_group(DEFAULT_CONTENT_GROUP),
        Rule::new(AUTHORS, &[View, Insert, Update, Delete, Link])
            .in_content_group(DEFAULT_CONTENT_GROUP)
            .for_categories(&["article", "media"])
            .own_only(),
        Rule::new("editors", &[View, Insert, Update, Delete, Link])
            .in_content_group(DEFAULT_CONTENT_GROUP)
            .for_categories(&[
                "text",
                "media",
                "collection",
                "event",
                "location",
                "keyword",
                "other",
            ]),
        Rule::new("managers", &Action::ALL),
    ]
}
