//! The dependency keys of the data model: the one place that knows how they
//! are spelled.
//!
//! A cached value depends on the keys of what it read; a committed write names
//! the keys of what it changed in its [`ChangeEvent`](crate::ChangeEvent), and
//! the depcache flushes them. Both sides build keys here, with these
//! functions, so the spelling (`rsc:42`, `edges:42:author`) is nobody else's
//! business: never build one with `format!` and never parse one back (what a
//! write did to which resource is in [`ChangeEvent::resources`](crate::ChangeEvent::resources)).
//!
//! The key type is the depcache's [`DependencyKey`], so a key goes from a
//! change event to [`Depcache::flush_dependency`](bulwark_depcache::Depcache::flush_dependency)
//! as it is.

use std::sync::LazyLock;

use bulwark_depcache::DependencyKey;

use crate::model::ResourceId;

/// A page's address without its language prefix (`/about`, or
/// `/articles?page=2` with its query): every cached copy of that page, in each
/// language and encoding, depends on it, so flushing it (`bulwark purge
/// --url`) reaches them all, on every cache that hears of flushes (another
/// node's, the cache in front through its surrogate key).
pub fn address(path: &str, query: &str) -> DependencyKey {
    if query.is_empty() {
        DependencyKey::from(format!("url:{path}"))
    } else {
        DependencyKey::from(format!("url:{path}?{query}"))
    }
}

/// The resource with this id: created, updated or deleted.
pub fn resource(id: ResourceId) -> DependencyKey {
    DependencyKey::from(format!("rsc:{id}"))
}

/// The resource's text in `language`: a change that touched only that
/// language's translations names this instead of [`resource`], so a page in
/// another language stays cached. A render in a language depends on it
/// together with [`resource`].
pub fn resource_text(id: ResourceId, language: &str) -> DependencyKey {
    DependencyKey::from(format!("rsc:{id}@{language}"))
}

/// The resource's text in any language: what a cached copy of the whole
/// resource depends on, besides [`resource`].
pub fn resource_texts(id: ResourceId) -> DependencyKey {
    DependencyKey::from(format!("rsc:{id}@"))
}

/// The resource with this unique name (which may move to another resource).
pub fn resource_name(name: &str) -> DependencyKey {
    DependencyKey::from(format!("name:{name}"))
}

/// A resource in this category *or below it* changed, so `cat:text` goes
/// with every change of an `article`.
pub fn category(name: &str) -> DependencyKey {
    DependencyKey::from(format!("cat:{name}"))
}

/// The objects of `subject` by `predicate`, in order.
pub fn edges(subject: ResourceId, predicate: &str) -> DependencyKey {
    DependencyKey::from(format!("edges:{subject}:{predicate}"))
}

/// The subjects pointing at `object` by `predicate`.
pub fn subjects(object: ResourceId, predicate: &str) -> DependencyKey {
    DependencyKey::from(format!("subjects:{object}:{predicate}"))
}

/// Any search result may have changed (also after each pivot batch).
pub fn search() -> DependencyKey {
    static KEY: LazyLock<DependencyKey> = LazyLock::new(|| DependencyKey::new("search"));
    KEY.clone()
}

/// The shape of the category tree.
pub fn category_tree() -> DependencyKey {
    static KEY: LazyLock<DependencyKey> = LazyLock::new(|| DependencyKey::new("category_tree"));
    KEY.clone()
}

/// The predicates and the categories they connect.
pub fn predicates() -> DependencyKey {
    static KEY: LazyLock<DependencyKey> = LazyLock::new(|| DependencyKey::new("predicates"));
    KEY.clone()
}

/// One config setting.
pub fn config(key: &str) -> DependencyKey {
    DependencyKey::from(format!("config:{key}"))
}

/// The identities (username, e-mail addresses) of a resource.
pub fn identity(resource: ResourceId) -> DependencyKey {
    DependencyKey::from(format!("identity:{resource}"))
}

/// The revisions of a resource.
pub fn revisions(resource: ResourceId) -> DependencyKey {
    DependencyKey::from(format!("revisions:{resource}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_spelled_as_the_docs_say() {
        let id = ResourceId(42);
        let spelled: Vec<String> = [
            resource(id),
            resource_name("about_us"),
            category("article"),
            edges(id, "author"),
            subjects(ResourceId(7), "author"),
            search(),
            category_tree(),
            predicates(),
            config("site.title"),
            identity(id),
            revisions(id),
        ]
        .iter()
        .map(|k| k.to_string())
        .collect();
        assert_eq!(
            spelled,
            [
                "rsc:42",
                "name:about_us",
                "cat:article",
                "edges:42:author",
                "subjects:7:author",
                "search",
                "category_tree",
                "predicates",
                "config:site.title",
                "identity:42",
                "revisions:42",
            ]
        );
    }
}
