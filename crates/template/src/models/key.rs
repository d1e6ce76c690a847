//! What the model layer caches values under: one typed key per kind of value, so
//! no key is spelt with `format!` and none is ever parsed back.
//!
//! Model values, fragments and whole pages share the site's depcache (one
//! dependency space, so a page is checked against the very serials its reads saw),
//! and therefore this key type. The dependency keys those values are *invalidated
//! by* are a different thing: they come from [`bulwark_store::dependency`].

use bulwark_acl::CacheProfile;
use bulwark_store::{ResourceId, SearchQuery};

/// A key of the site's model cache.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModelKey {
    /// A resource by id.
    Resource(ResourceId),
    /// The id a unique name points at.
    IdOf(String),
    /// The objects of a resource by predicate, in order.
    Objects(ResourceId, String),
    /// The subjects pointing at a resource by predicate.
    Subjects(ResourceId, String),
    /// Whether a resource is in a category or below it.
    IsA(ResourceId, String),
    /// The whole category tree.
    Categories,
    /// A category and every category below it.
    Below(String),
    /// One config setting.
    Config(String),
    /// The tombstone of a deleted resource, by id or unique name.
    Gone(String),
    /// A search, by its query.
    Search(SearchKey),
    /// A whole page, per language.
    Page {
        language: String,
        path: String,
        query: String,
    },
    /// A value a module reads from its own tables (the comments module's
    /// comments of a resource), named by the module and its own key.
    Module { module: &'static str, key: String },
    /// A `cache()` block of a template.
    Fragment {
        /// Who may share it: principals with this profile ...
        profile: CacheProfile,
        /// ... or only this user (`vary="user"`).
        user: Option<ResourceId>,
        language: String,
        template: String,
        /// The block's `key`, or its position in the template.
        block: String,
    },
}

impl ModelKey {
    /// The key a page is cached under: per language, path and query string.
    pub fn page(language: &str, path: &str, query: &str) -> ModelKey {
        ModelKey::Page {
            language: language.to_string(),
            path: path.to_string(),
            query: query.to_string(),
        }
    }
}

/// A search query as a cache key: two equal queries ask the same question.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SearchKey(Box<SearchQuery>);

impl From<&SearchQuery> for SearchKey {
    fn from(q: &SearchQuery) -> SearchKey {
        SearchKey(Box::new(q.clone()))
    }
}
