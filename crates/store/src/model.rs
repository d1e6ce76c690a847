//! The public data types of the store.

use bulwark_depcache::DependencyKey;
use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Result, StoreError};
pub use crate::ids::{ResourceId, Version};
use crate::sanitize::sanitize_props;

/// Who may see a resource. The ACL layer decides what this means for a request;
/// the store only keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Visibility {
    Public,
    Members,
    /// Only members of this content group.
    Group(ResourceId),
}

impl Visibility {
    pub(crate) fn columns(self) -> (&'static str, Option<i64>) {
        match self {
            Visibility::Public => ("public", None),
            Visibility::Members => ("members", None),
            Visibility::Group(g) => ("group", Some(g.0)),
        }
    }
    pub(crate) fn from_columns(kind: &str, group: Option<i64>) -> Self {
        match (kind, group) {
            ("members", _) => Visibility::Members,
            ("group", Some(g)) => Visibility::Group(ResourceId(g)),
            _ => Visibility::Public,
        }
    }
}

/// The properties of a resource: one JSON object. Build it from a
/// `serde_json::Value` or parse it from text; anything but an object is refused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Props(pub Map<String, Value>);

impl Props {
    pub fn new() -> Self {
        Props(Map::new())
    }
    /// Parse a JSON document; it must be an object.
    pub fn from_json(text: &str) -> Result<Self> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| StoreError::invalid("props", format!("invalid JSON: {e}")))?;
        Self::try_from(v)
    }
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.to_owned(), value.into());
        self
    }
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
    /// The text of `key`: a plain string, or of a translated value the
    /// first translation (see [`Props::text_in`] for a given language).
    pub fn str(&self, key: &str) -> Option<&str> {
        crate::translation::any_text(self.0.get(key)?)
    }
}

impl Props {
    /// The text of `key` in the first of `languages` that has one (see
    /// [`text_in`](crate::text_in)).
    pub fn text_in(&self, key: &str, languages: &[&str]) -> Option<&str> {
        crate::translation::text_in(self.get(key)?, languages)
    }

    /// The languages any property of the document is translated into.
    pub fn translated_languages(&self) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for value in self.0.values() {
            if let Some(map) = crate::translation::translations(value) {
                for lang in map.keys() {
                    if !found.contains(lang) {
                        found.push(lang.clone());
                    }
                }
            }
        }
        found.sort();
        found
    }

    /// Whether the resource is published in `language`: its `languages`
    /// property names it, or it has no such property.
    pub fn published_in(&self, language: &str) -> bool {
        match self
            .get(crate::translation::PUBLISHED_LANGUAGES)
            .and_then(Value::as_array)
        {
            Some(list) => list.iter().any(|l| l.as_str() == Some(language)),
            None => true,
        }
    }
}

impl TryFrom<Value> for Props {
    type Error = StoreError;
    fn try_from(v: Value) -> Result<Self> {
        match v {
            Value::Object(m) => Ok(Props(m)),
            _ => Err(StoreError::invalid("props", "must be a JSON object")),
        }
    }
}

/// A resource as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    pub id: ResourceId,
    pub name: Option<String>,
    pub category: ResourceId,
    /// The unique name of the category (`article`, `person`, ...).
    pub category_name: String,
    pub published: bool,
    pub publication_start: Option<DateTime<Utc>>,
    pub publication_end: Option<DateTime<Utc>>,
    pub visibility: Visibility,
    pub creator: Option<ResourceId>,
    pub modifier: Option<ResourceId>,
    pub created: DateTime<Utc>,
    pub modified: DateTime<Utc>,
    pub version: Version,
    /// Text and HTML values are already sanitised.
    pub props: Props,
}

impl Resource {
    pub fn title(&self) -> Option<&str> {
        self.props.str("title")
    }
    /// Published and inside the publication window at `now`.
    pub fn is_visible_at(&self, now: DateTime<Utc>) -> bool {
        self.published
            && self.publication_start.is_none_or(|s| s <= now)
            && self.publication_end.is_none_or(|e| e > now)
    }

    /// Where the resource stands at `now`, as an editor reads it: a draft,
    /// scheduled (published, its start still to come), published (what
    /// visitors see), or ended (published, its end passed).
    pub fn publication_state(&self, now: DateTime<Utc>) -> &'static str {
        if !self.published {
            "draft"
        } else if self.publication_start.is_some_and(|s| s > now) {
            "scheduled"
        } else if self.publication_end.is_some_and(|e| e <= now) {
            "ended"
        } else {
            "published"
        }
    }
}

/// What to create. `category` is a category's unique name.
#[derive(Debug, Clone)]
pub struct NewResource {
    pub name: Option<String>,
    pub category: String,
    pub published: bool,
    pub publication_start: Option<DateTime<Utc>>,
    pub publication_end: Option<DateTime<Utc>>,
    pub visibility: Visibility,
    pub creator: Option<ResourceId>,
    /// When it was written, if not now (an import keeps the original's date).
    pub created: Option<DateTime<Utc>>,
    pub props: Props,
}

impl NewResource {
    pub fn new(category: &str, props: Props) -> Self {
        NewResource {
            name: None,
            category: category.to_owned(),
            published: false,
            publication_start: None,
            publication_end: None,
            visibility: Visibility::Public,
            creator: None,
            created: None,
            props,
        }
    }
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }
    pub fn published(mut self, published: bool) -> Self {
        self.published = published;
        self
    }
    pub fn created_by(mut self, creator: ResourceId) -> Self {
        self.creator = Some(creator);
        self
    }
    /// Written at `when` (its `created` and `modified`), not now.
    pub fn created_at(mut self, when: DateTime<Utc>) -> Self {
        self.created = Some(when);
        self
    }
}

/// How an update changes the properties.
#[derive(Debug, Clone, Default)]
pub enum PropsChange {
    #[default]
    Keep,
    /// Replace the whole document.
    Replace(Props),
    /// Set the given keys; a JSON `null` removes the key.
    Merge(Props),
}

/// An update of an existing resource, based on `version`. Fields left `None`
/// keep their value.
#[derive(Debug, Clone)]
pub struct ResourceUpdate {
    pub id: ResourceId,
    pub version: Version,
    pub name: Option<Option<String>>,
    pub category: Option<String>,
    pub published: Option<bool>,
    pub publication_start: Option<Option<DateTime<Utc>>>,
    pub publication_end: Option<Option<DateTime<Utc>>>,
    pub visibility: Option<Visibility>,
    pub modifier: Option<ResourceId>,
    pub props: PropsChange,
}

impl ResourceUpdate {
    pub fn new(id: ResourceId, version: Version) -> Self {
        ResourceUpdate {
            id,
            version,
            name: None,
            category: None,
            published: None,
            publication_start: None,
            publication_end: None,
            visibility: None,
            modifier: None,
            props: PropsChange::Keep,
        }
    }
    pub fn merge(mut self, props: Props) -> Self {
        self.props = PropsChange::Merge(props);
        self
    }
    pub fn replace(mut self, props: Props) -> Self {
        self.props = PropsChange::Replace(props);
        self
    }
    pub fn published(mut self, published: bool) -> Self {
        self.published = Some(published);
        self
    }
    pub fn modified_by(mut self, modifier: ResourceId) -> Self {
        self.modifier = Some(modifier);
        self
    }
    /// Sanitise the properties this update writes, now: the slow part of an
    /// update (HTML is parsed), done before [`Store::update_sanitized`] takes
    /// the database's writer. [`Store::update_resource`] does both.
    ///
    /// [`Store::update_sanitized`]: crate::Store::update_sanitized
    /// [`Store::update_resource`]: crate::Store::update_resource
    pub fn sanitize(mut self) -> Result<SanitizedUpdate> {
        match &mut self.props {
            PropsChange::Keep => {}
            PropsChange::Replace(p) | PropsChange::Merge(p) => sanitize_props(p)?,
        }
        Ok(SanitizedUpdate(self))
    }
}

/// A [`ResourceUpdate`] whose properties are sanitised: the only kind the
/// store writes. Sanitise once and try the write again as often as needed
/// (a retry after a conflict only changes the version it is based on).
#[derive(Debug, Clone)]
pub struct SanitizedUpdate(ResourceUpdate);

impl SanitizedUpdate {
    /// The same change, based on `version`.
    pub fn based_on(mut self, version: Version) -> Self {
        self.0.version = version;
        self
    }
    pub fn id(&self) -> ResourceId {
        self.0.id
    }
    pub(crate) fn into_inner(self) -> ResourceUpdate {
        self.0
    }
}

/// A node of the category tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Category {
    pub id: ResourceId,
    pub name: String,
    pub parent: Option<ResourceId>,
    pub depth: i64,
    /// Nested-set interval: a category is below another when its interval is
    /// inside the other's.
    pub left: i64,
    pub right: i64,
}

impl Category {
    /// True when `self` is `other` or below it.
    pub fn is_a(&self, other: &Category) -> bool {
        self.left >= other.left && self.right <= other.right
    }
}

/// A predicate and the categories it may connect (empty = any).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Predicate {
    pub id: ResourceId,
    pub name: String,
    pub subject_categories: Vec<String>,
    pub object_categories: Vec<String>,
}

/// A directed, ordered connection: subject --predicate--> object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub id: i64,
    pub subject: ResourceId,
    pub predicate: String,
    pub object: ResourceId,
    pub seq: i64,
    pub creator: Option<ResourceId>,
    pub created: DateTime<Utc>,
}

/// What is left of a deleted resource (its tombstone), so that its old URL can
/// say "gone" rather than "never existed".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deletion {
    pub id: ResourceId,
    pub name: Option<String>,
    /// The unique name of the category it had.
    pub category: String,
    /// Published, public and inside its publication window when it was deleted.
    pub was_public: bool,
    pub deleted: DateTime<Utc>,
}

/// The state of a resource before one of its updates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Revision {
    pub id: i64,
    pub resource: ResourceId,
    /// The version the resource had (the one this revision preserves).
    pub version: Version,
    pub created: DateTime<Utc>,
    pub modifier: Option<ResourceId>,
    pub snapshot: Resource,
}

/// A way to log in or reach a user resource. Secrets never leave the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub id: i64,
    pub resource: ResourceId,
    pub kind: IdentityKind,
    pub key: String,
    pub created: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IdentityKind {
    /// Username with a password hash (a PHC string, made by the accounts module).
    Username,
    Email,
}

impl IdentityKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            IdentityKind::Username => "username_pw",
            IdentityKind::Email => "email",
        }
    }
    pub(crate) fn parse(s: &str) -> Self {
        match s {
            "email" => IdentityKind::Email,
            _ => IdentityKind::Username,
        }
    }

    /// Kinds the store keeps a secret for, written only through their own
    /// methods (never [`Store::add_identity`](crate::Store::add_identity)).
    pub(crate) fn has_secret(self) -> bool {
        !matches!(self, IdentityKind::Email)
    }
}

/// Emitted after a write committed: the dependency keys whose cached values
/// may now be stale, and what happened to which resources (for push messages
/// and observers). Never emitted for a write that rolled back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeEvent {
    /// Built by [`crate::dependency`]; sorted, each once.
    pub keys: Vec<DependencyKey>,
    /// Sorted by id, each resource once. Writes that change no resource
    /// (config, identities, the category tree, the pivot) leave it empty.
    pub resources: Vec<ResourceChange>,
    /// What changed is not known (a cluster node that lost its connection
    /// to the other nodes' changes): every cached value may be stale.
    pub everything: bool,
}

impl ChangeEvent {
    /// No key and no resource: what a commit hook sees of a write that
    /// only announced something ([`ChangeNote`](crate::ChangeNote)).
    pub fn nothing() -> ChangeEvent {
        ChangeEvent {
            keys: Vec::new(),
            resources: Vec::new(),
            everything: false,
        }
    }

    /// Whether it names nothing at all.
    pub fn is_nothing(&self) -> bool {
        self.keys.is_empty() && self.resources.is_empty() && !self.everything
    }

    /// "Anything may have changed": flush every cached value.
    pub fn everything() -> ChangeEvent {
        ChangeEvent {
            keys: Vec::new(),
            resources: Vec::new(),
            everything: true,
        }
    }
}

/// What a committed write did to one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceChange {
    pub id: ResourceId,
    pub kind: ChangeKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    Inserted,
    /// Its row changed, or its outgoing edges did: inserting, deleting or
    /// moving an edge updates its *subject* (a page about the subject lists
    /// them), and so does deleting the edge's object, which takes the edge
    /// along. The object is not updated: whoever lists its subjects depends
    /// on the `subjects:` key, which the change names.
    Updated,
    Deleted,
}

/// Which date a search filters or sorts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DateField {
    Created,
    Modified,
    PublicationStart,
    /// The `date_start` property (events), from the pivot.
    DateStart,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortKey {
    Id,
    Created,
    Modified,
    PublicationStart,
    DateStart,
    /// Case-insensitive title, from the pivot.
    Title,
}

impl SortKey {
    /// The orders a template or an API caller may name.
    pub const NAMES: &'static str = "created, modified, title, publication_start or id";

    /// `"created"`, `"-modified"` (descending), `"+title"`: the key and whether
    /// the order is descending; `None` for a name that is not one of [`NAMES`](Self::NAMES).
    pub fn parse(order: &str) -> Option<(SortKey, bool)> {
        let (descending, name) = match order.strip_prefix('-') {
            Some(name) => (true, name),
            None => (false, order.strip_prefix('+').unwrap_or(order)),
        };
        let key = match name {
            "created" => SortKey::Created,
            "modified" => SortKey::Modified,
            "title" => SortKey::Title,
            "publication_start" => SortKey::PublicationStart,
            "id" => SortKey::Id,
            _ => return None,
        };
        Some((key, descending))
    }
}

/// What a search may return to whoever is asking. The access policy computes it
/// (`AccessPolicy::search_filter` in `bulwark-acl`) from the same rules it sees
/// single resources by; the store only applies it to the stored publication,
/// visibility and creator columns, so pages of results stay full and the
/// policy stays the one place that decides who sees what.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum VisibilityFilter {
    /// No filter (administrators, background jobs).
    #[default]
    Everything,
    /// Resources published now (inside their publication window) that are
    /// public, members-only when `members` is set, or in one of `groups`; and,
    /// whatever their state, the resources `creator` created (their drafts)
    /// and those in one of the `editable` scopes (what the one asking may
    /// change, drafts included).
    Visible {
        members: bool,
        groups: Vec<ResourceId>,
        creator: Option<ResourceId>,
        editable: Vec<EditableScope>,
    },
}

/// Resources someone may change whatever their state: a content group and,
/// unless the list is empty, categories (each with everything below it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EditableScope {
    pub content_group: ScopeGroup,
    pub categories: Vec<String>,
}

/// The content group part of an [`EditableScope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeGroup {
    /// Every content group.
    Any,
    /// The default one: resources that are public or members-only.
    Default,
    /// Resources of one content group (visibility `group`).
    Group(ResourceId),
}

impl VisibilityFilter {
    /// Public resources published now: what anonymous visitors see.
    pub fn public() -> VisibilityFilter {
        VisibilityFilter::Visible {
            members: false,
            groups: Vec::new(),
            creator: None,
            editable: Vec::new(),
        }
    }
}

/// A search. Text, title and `date_start` come from the pivot, so they see a
/// change once the pivot task has indexed it; everything else is live.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SearchQuery {
    /// Category names; a resource matches when it is in one of them or below.
    pub categories: Vec<String>,
    /// Category names left out: a resource in one of them or below does not match
    /// (the admin's lists keep the site's own machinery, `meta`, behind a filter).
    pub exclude_categories: Vec<String>,
    /// Words that must all occur (prefix match), in title or any text property.
    pub text: Option<String>,
    /// The language `text` is in: matched against each resource's text in
    /// that language, stemmed its way (a resource without a translation
    /// into it, against all its text). `None`: all text, unstemmed.
    pub language: Option<String>,
    pub date_field: DateField,
    pub date_from: Option<DateTime<Utc>>,
    pub date_to: Option<DateTime<Utc>>,
    /// Has an edge `predicate` to `object`.
    pub has_object: Option<(String, ResourceId)>,
    /// Only published resources inside their publication window (at `now`).
    pub published_only: bool,
    /// Only drafts: unpublished, or outside their publication window (at `now`).
    pub unpublished_only: bool,
    /// Only scheduled ones: published, with a publication start still to come.
    pub scheduled_only: bool,
    /// Only what the one asking may see, as the access policy decides.
    pub visibility: VisibilityFilter,
    pub sort: SortKey,
    pub descending: bool,
    pub offset: u64,
    pub limit: u64,
    /// Also count all matches (a second query that visits every match; turn
    /// it off when no pager needs it, e.g. "the 10 newest articles").
    pub count_total: bool,
}

impl Default for SearchQuery {
    fn default() -> Self {
        SearchQuery {
            categories: Vec::new(),
            exclude_categories: Vec::new(),
            text: None,
            language: None,
            date_field: DateField::Created,
            date_from: None,
            date_to: None,
            has_object: None,
            published_only: false,
            unpublished_only: false,
            scheduled_only: false,
            visibility: VisibilityFilter::Everything,
            sort: SortKey::Id,
            descending: false,
            offset: 0,
            limit: 20,
            count_total: true,
        }
    }
}

/// One page of search results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    pub ids: Vec<ResourceId>,
    /// Matches in total, ignoring paging (`None` unless `count_total`).
    pub total: Option<u64>,
}

pub(crate) fn to_millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(crate) fn from_millis(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}
