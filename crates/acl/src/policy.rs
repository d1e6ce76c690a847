//! What a principal may do: the [`AccessPolicy`] every surface asks, and
//! [`SitePolicy`], the policy of a site made from its rules.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use bulwark_store::{
    EditableScope, Resource, ResourceId, ScopeGroup, SearchQuery, Store, StoreError, Visibility,
    VisibilityFilter,
};

use crate::principal::{MEMBERS, Principal};
use crate::rules::{Action, DEFAULT_CONTENT_GROUP, Rule, default_rules};

/// Decides what a principal may do: denied resources behave as absent (whichever
/// way a template, the API, search or push reaches them), denied properties as
/// undefined, denied writes are refused. A render memoises `may_see` per resource
/// version, so a policy may do real work per call.
///
/// Principals with one [`cache_profile`](Principal::cache_profile) share cached
/// fragments, so a policy must not tell them apart.
pub trait AccessPolicy: Send + Sync + std::fmt::Debug {
    /// May `who` do `action` to the existing resource `r`? `View` is
    /// [`may_see`](Self::may_see).
    fn may(&self, who: &Principal, action: Action, r: &Resource) -> bool;

    /// May `who` create a resource of `category` in `visibility`'s content group?
    fn may_insert(&self, who: &Principal, category: &str, visibility: Visibility) -> bool;

    fn may_see(&self, who: &Principal, r: &Resource) -> bool {
        self.may(who, Action::View, r)
    }

    fn may_read(&self, who: &Principal, r: &Resource, property: &str) -> bool;

    /// What a search may return to `who`. Every resource the filter lets through
    /// must be one [`may_see`](Self::may_see) allows (the surfaces still ask it
    /// for each result); it should let through all of them, or pages of results
    /// come out short.
    fn search_filter(&self, who: &Principal) -> VisibilityFilter;
}

/// A module's say over changes to resources that carry rights, which rules over
/// categories and content groups cannot judge: a person with an account is worth
/// what their groups are, a user group what it gives. The accounts module guards
/// persons and user groups so that nobody changes one above their own rights.
///
/// Asked for every action but `View` on a resource of one of
/// [`categories`](Self::categories) (or below them), before the rules, and for
/// administrators too: a guard may refuse what nobody may do (delete the last
/// administrator).
pub trait ResourceGuard: Send + Sync + std::fmt::Debug {
    /// The categories whose resources (with those of the categories below) this
    /// guard judges.
    fn categories(&self) -> &[&'static str];

    /// Whether `who` may `action` `r`, as far as the rights `r` carries go.
    fn allows(&self, who: &Principal, action: Action, r: &Resource) -> bool;
}

/// A site's policy: its [`Rule`]s (or [`default_rules`]), and which groups may
/// read which properties.
///
/// - `view` a resource: a rule allows it, the resource is published and inside
///   its publication window, and, when it is members-only, the one asking is in
///   `members`. Who may `update` it also sees it unpublished, and everybody sees
///   the resources they created.
/// - `insert`, `update`, `delete`, `link`: a rule allows it.
/// - a property of `properties` is read only by people of its group.
/// - administrators may do everything.
///
/// Rules name content groups and categories; the ids resources carry are
/// matched through [`SiteLookups`], read from the store with
/// [`refresh`](Self::refresh) (when the site loads).
#[derive(Debug)]
pub struct SitePolicy {
    /// The rules in force: the stored ones (see [`stored`](crate::stored)),
    /// else `configured`.
    rules: ArcSwap<Vec<Rule>>,
    /// The rules of `site.toml`, or the default rules.
    configured: Arc<Vec<Rule>>,
    /// property -> the group whose people may read it
    properties: Vec<(String, String)>,
    lookups: ArcSwap<SiteLookups>,
    /// What modules added with [`SitePolicy::add_guard`] while the site loads.
    guards: ArcSwap<Vec<Arc<dyn ResourceGuard>>>,
}

/// The names rules use for what resources carry as ids.
#[derive(Debug, Default, Clone)]
pub struct SiteLookups {
    /// content group id -> its unique name
    pub content_groups: HashMap<ResourceId, String>,
    /// category name -> its parent's name
    pub category_parents: HashMap<String, String>,
}

impl SiteLookups {
    /// Reads the content groups and the category tree (blocks: call it on a
    /// thread that may).
    pub fn load(store: &Store) -> Result<SiteLookups, StoreError> {
        let categories = store.categories()?;
        let names: HashMap<ResourceId, &str> =
            categories.iter().map(|c| (c.id, c.name.as_str())).collect();
        let category_parents = categories
            .iter()
            .filter_map(|c| Some((c.name.clone(), names.get(&c.parent?)?.to_string())))
            .collect();
        let groups = store.search(&SearchQuery {
            categories: vec!["content_group".to_string()],
            visibility: VisibilityFilter::Everything,
            limit: 1000,
            ..SearchQuery::default()
        })?;
        let mut content_groups = HashMap::new();
        for id in groups.ids {
            if let Some(r) = store.resource(id)?
                && let Some(name) = r.name
            {
                content_groups.insert(id, name);
            }
        }
        Ok(SiteLookups {
            content_groups,
            category_parents,
        })
    }
}

impl Default for SitePolicy {
    fn default() -> Self {
        SitePolicy::new(
            default_rules(),
            ["email", "phone"]
                .into_iter()
                .map(|p| (p.to_string(), MEMBERS.to_string()))
                .collect(),
        )
    }
}

impl SitePolicy {
    pub fn new(rules: Vec<Rule>, properties: Vec<(String, String)>) -> SitePolicy {
        let configured = Arc::new(rules);
        SitePolicy {
            rules: ArcSwap::new(configured.clone()),
            configured,
            properties,
            lookups: ArcSwap::from_pointee(SiteLookups::default()),
            guards: ArcSwap::from_pointee(Vec::new()),
        }
    }

    /// Adds a guard every change of the resources it judges must pass.
    pub fn add_guard(&self, guard: Arc<dyn ResourceGuard>) {
        self.guards.rcu(|guards| {
            let mut guards = Vec::clone(guards);
            guards.push(guard.clone());
            guards
        });
    }

    /// Whether every guard that judges `r` lets `who` do `action` to it.
    fn guards_allow(&self, who: &Principal, action: Action, r: &Resource) -> bool {
        let guards = self.guards.load();
        if guards.is_empty() {
            return true;
        }
        let lookups = self.lookups.load();
        guards.iter().all(|guard| {
            let judged = guard.categories();
            !category_and_above(&r.category_name, &lookups).any(|c| judged.contains(&c))
                || guard.allows(who, action, r)
        })
    }

    /// The rules in force now.
    pub fn rules(&self) -> Arc<Vec<Rule>> {
        self.rules.load_full()
    }

    /// The rules of `site.toml` (or the defaults), in force when none are stored.
    pub fn configured_rules(&self) -> &[Rule] {
        &self.configured
    }

    /// Whether the rules in force are stored ones (not the configured ones).
    pub fn has_stored_rules(&self) -> bool {
        !Arc::ptr_eq(&self.rules.load(), &self.configured)
    }

    /// Puts `rules` in force (`None`: the configured ones again).
    pub fn set_rules(&self, rules: Option<Vec<Rule>>) {
        self.rules
            .store(rules.map_or_else(|| self.configured.clone(), Arc::new));
    }

    /// Takes new content group and category names (after the site loads, or
    /// when they change).
    pub fn refresh(&self, lookups: SiteLookups) {
        self.lookups.store(Arc::new(lookups));
    }

    fn content_group_name(visibility: Visibility, lookups: &SiteLookups) -> Option<&str> {
        match visibility {
            Visibility::Group(id) => lookups.content_groups.get(&id).map(String::as_str),
            Visibility::Public | Visibility::Members => Some(DEFAULT_CONTENT_GROUP),
        }
    }

    /// Whether a rule gives `who` `action` on resources of `category` in the
    /// content group named `content_group` (`None`: a group the rules cannot
    /// name, matched only by rules for every content group).
    /// Whether a rule lets `who` do `action` to a resource of `category` in
    /// `content_group`; `mine`: the resource is theirs (they made it, or it
    /// is a new one), which rules with `own` need.
    fn allowed(
        &self,
        who: &Principal,
        action: Action,
        category: &str,
        content_group: Option<&str>,
        mine: bool,
        lookups: &SiteLookups,
    ) -> bool {
        if who.is_administrator() {
            return true;
        }
        self.rules.load().iter().any(|rule| {
            rule.actions.contains(&action)
                && (mine || !rule.own)
                && who.in_group(&rule.group)
                && rule
                    .content_group
                    .as_deref()
                    .is_none_or(|cg| Some(cg) == content_group)
                && (rule.categories.is_empty()
                    || category_and_above(category, lookups)
                        .any(|c| rule.categories.iter().any(|r| r == c)))
        })
    }

    fn allowed_on(&self, who: &Principal, action: Action, r: &Resource) -> bool {
        let lookups = self.lookups.load();
        let cg = Self::content_group_name(r.visibility, &lookups);
        let mine = who.user_id().is_some_and(|id| r.creator == Some(id));
        self.allowed(who, action, &r.category_name, cg, mine, &lookups)
    }
}

/// `category`, its parent, its parent's parent...
fn category_and_above<'a>(
    category: &'a str,
    lookups: &'a SiteLookups,
) -> impl Iterator<Item = &'a str> + 'a {
    // The tree is small; the bound guards against a cycle in bad data.
    std::iter::successors(Some(category), |c| {
        lookups.category_parents.get(*c).map(String::as_str)
    })
    .take(64)
}

impl AccessPolicy for SitePolicy {
    fn may(&self, who: &Principal, action: Action, r: &Resource) -> bool {
        if action != Action::View && !self.guards_allow(who, action, r) {
            return false;
        }
        if who.is_administrator() {
            return true;
        }
        if action != Action::View {
            return self.allowed_on(who, action, r);
        }
        if who.user_id().is_some_and(|id| r.creator == Some(id)) {
            return true;
        }
        let visible_now = r.is_visible_at(chrono::Utc::now())
            && (r.visibility != Visibility::Members || who.in_group(MEMBERS));
        (visible_now && self.allowed_on(who, Action::View, r))
            || self.allowed_on(who, Action::Update, r)
    }

    fn may_insert(&self, who: &Principal, category: &str, visibility: Visibility) -> bool {
        let lookups = self.lookups.load();
        let cg = Self::content_group_name(visibility, &lookups);
        self.allowed(who, Action::Insert, category, cg, true, &lookups)
    }

    fn may_read(&self, who: &Principal, _r: &Resource, property: &str) -> bool {
        who.is_administrator()
            || self
                .properties
                .iter()
                .filter(|(p, _)| p == property)
                .all(|(_, group)| who.in_group(group))
    }

    fn search_filter(&self, who: &Principal) -> VisibilityFilter {
        if who.is_administrator()
            || self.rules.load().iter().any(|rule| {
                rule.actions.contains(&Action::Update)
                    && !rule.own
                    && rule.content_group.is_none()
                    && rule.categories.is_empty()
                    && who.in_group(&rule.group)
            })
        {
            return VisibilityFilter::Everything;
        }
        let lookups = self.lookups.load();
        let viewable = |cg: Option<&str>| {
            self.rules.load().iter().any(|rule| {
                rule.actions.contains(&Action::View)
                    && !rule.own
                    && who.in_group(&rule.group)
                    && rule.content_group.as_deref().is_none_or(|g| Some(g) == cg)
            })
        };
        let mut groups: Vec<ResourceId> = lookups
            .content_groups
            .iter()
            .filter(|(_, name)| viewable(Some(name)))
            .map(|(id, _)| *id)
            .collect();
        groups.sort();
        // What they may change they see in any state (drafts included), as
        // `may` says for a single resource.
        let mut editable: Vec<EditableScope> = self
            .rules
            .load()
            .iter()
            // What they made they see anyway (`creator`): a rule for their
            // own widens nothing.
            .filter(|rule| {
                rule.actions.contains(&Action::Update) && !rule.own && who.in_group(&rule.group)
            })
            .filter_map(|rule| {
                let content_group = match rule.content_group.as_deref() {
                    None => ScopeGroup::Any,
                    Some(DEFAULT_CONTENT_GROUP) => ScopeGroup::Default,
                    Some(name) => ScopeGroup::Group(
                        *lookups.content_groups.iter().find(|(_, n)| *n == name)?.0,
                    ),
                };
                Some(EditableScope {
                    content_group,
                    categories: rule.categories.clone(),
                })
            })
            .collect();
        editable.dedup();
        VisibilityFilter::Visible {
            members: who.in_group(MEMBERS),
            groups,
            creator: who.user_id(),
            editable,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, Utc};

    use bulwark_store::{Props, ResourceId, Version};

    use super::*;

    const ADA: ResourceId = ResourceId(10);
    const BOB: ResourceId = ResourceId(11);
    const STAFF: ResourceId = ResourceId(50);

    fn resource(published: bool, visibility: Visibility) -> Resource {
        let now = Utc::now();
        Resource {
            id: ResourceId(100),
            name: None,
            category: ResourceId(12),
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

    fn policy() -> SitePolicy {
        let policy = SitePolicy::default();
        let mut lookups = SiteLookups::default();
        lookups.content_groups.insert(STAFF, "staff".into());
        lookups
            .category_parents
            .insert("article".into(), "text".into());
        policy.refresh(lookups);
        policy
    }

    fn seen_by(r: &Resource) -> [bool; 5] {
        let policy = policy();
        [
            Principal::anonymous(),
            Principal::member(ADA),
            Principal::member(BOB),
            Principal::in_default_group(BOB, "editors"),
            Principal::administrator(BOB),
        ]
        .map(|who| policy.may_see(&who, r))
    }

    #[test]
    fn anonymous_visitors_see_only_public_resources_published_now() {
        // [anonymous, Ada (the creator), Bob, an editor, an administrator]
        let public = resource(true, Visibility::Public);
        assert_eq!(seen_by(&public), [true; 5]);
        let mut future = public.clone();
        future.publication_start = Some(Utc::now() + Duration::days(1));
        assert_eq!(seen_by(&future), [false, true, false, true, true]);
        let mut expired = public.clone();
        expired.publication_end = Some(Utc::now() - Duration::days(1));
        assert_eq!(seen_by(&expired), [false, true, false, true, true]);
    }

    #[test]
    fn members_see_members_only_resources_and_their_own_drafts() {
        let members = resource(true, Visibility::Members);
        assert_eq!(seen_by(&members), [false, true, true, true, true]);
        let draft = resource(false, Visibility::Public);
        assert_eq!(seen_by(&draft), [false, true, false, true, true]);
        // No default rule names the content group `staff`: only managers and
        // administrators (and the creator) see it.
        let group = resource(true, Visibility::Group(STAFF));
        assert_eq!(seen_by(&group), [false, true, false, false, true]);
    }

    #[test]
    fn editors_edit_content_below_the_categories_of_their_rule() {
        let policy = policy();
        let editor = Principal::in_default_group(BOB, "editors");
        let article = resource(true, Visibility::Public);
        for action in [Action::Update, Action::Delete, Action::Link] {
            assert!(policy.may(&editor, action, &article), "{action}");
            assert!(!policy.may(&Principal::member(BOB), action, &article));
        }
        assert!(policy.may_insert(&editor, "article", Visibility::Public));
        assert!(!policy.may_insert(&editor, "person", Visibility::Public));
        assert!(!policy.may_insert(&editor, "article", Visibility::Group(STAFF)));
        let manager = Principal::in_default_group(BOB, "managers");
        assert!(policy.may_insert(&manager, "person", Visibility::Group(STAFF)));
        assert!(!policy.may_insert(&Principal::anonymous(), "article", Visibility::Public));
    }

    #[test]
    fn a_rule_for_a_content_group_opens_it_to_that_group() {
        let policy = SitePolicy::new(
            vec![
                Rule::new("anonymous", &[Action::View]).in_content_group("default"),
                Rule::new("members", &[Action::View]).in_content_group("staff"),
            ],
            vec![],
        );
        let mut lookups = SiteLookups::default();
        lookups.content_groups.insert(STAFF, "staff".into());
        policy.refresh(lookups);
        let staff_page = resource(true, Visibility::Group(STAFF));
        assert!(!policy.may_see(&Principal::anonymous(), &staff_page));
        assert!(policy.may_see(&Principal::member(BOB), &staff_page));
        assert_eq!(
            policy.search_filter(&Principal::member(BOB)),
            VisibilityFilter::Visible {
                members: true,
                groups: vec![STAFF],
                creator: Some(BOB),
                editable: vec![],
            }
        );
    }

    #[test]
    fn editors_search_everything_they_may_change_drafts_included() {
        let policy = policy();
        let VisibilityFilter::Visible { editable, .. } =
            policy.search_filter(&Principal::in_default_group(BOB, "editors"))
        else {
            panic!("editors are filtered");
        };
        assert_eq!(editable.len(), 1, "{editable:?}");
        assert_eq!(editable[0].content_group, ScopeGroup::Default);
        assert!(editable[0].categories.iter().any(|c| c == "text"));
        let VisibilityFilter::Visible { editable, .. } =
            policy.search_filter(&Principal::member(BOB))
        else {
            panic!("members are filtered");
        };
        assert!(editable.is_empty());
    }

    #[test]
    fn private_properties_are_read_only_by_their_group() {
        let r = resource(true, Visibility::Public);
        let policy = SitePolicy::new(
            default_rules(),
            vec![
                ("email".into(), "members".into()),
                ("salary".into(), "managers".into()),
            ],
        );
        assert!(!policy.may_read(&Principal::anonymous(), &r, "email"));
        assert!(policy.may_read(&Principal::anonymous(), &r, "title"));
        assert!(policy.may_read(&Principal::member(BOB), &r, "email"));
        assert!(!policy.may_read(&Principal::member(BOB), &r, "salary"));
        let manager = Principal::in_default_group(BOB, "managers");
        assert!(policy.may_read(&manager, &r, "salary"));
        assert!(policy.may_read(&Principal::administrator(BOB), &r, "salary"));
    }

    #[test]
    fn the_search_filter_follows_the_principal() {
        let policy = policy();
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
                editable: vec![],
            }
        );
        for who in ["managers", "administrators"] {
            assert_eq!(
                policy.search_filter(&Principal::in_default_group(ADA, who)),
                VisibilityFilter::Everything
            );
        }
    }

    #[test]
    fn an_author_writes_articles_and_changes_only_their_own() {
        let policy = policy();
        let author = |id| {
            Principal::User(crate::principal::User::new(
                id,
                ["anonymous", "members", crate::AUTHORS].map(String::from),
            ))
        };
        let (ada, bob) = (author(ADA), author(BOB));
        let adas = resource(false, Visibility::Public);
        for action in [Action::Update, Action::Delete, Action::Link] {
            assert!(policy.may(&ada, action, &adas), "{action} her own");
            assert!(!policy.may(&bob, action, &adas), "{action} another's");
        }
        assert!(policy.may(&ada, Action::View, &adas), "her own draft");
        assert!(
            !policy.may(&bob, Action::View, &adas),
            "not another's draft"
        );
        assert!(policy.may_insert(&bob, "article", Visibility::Public));
        assert!(policy.may_insert(&bob, "media", Visibility::Public));
        assert!(
            !policy.may_insert(&bob, "text", Visibility::Public),
            "not a page"
        );
        assert!(!policy.may_insert(&bob, "person", Visibility::Public));
        // Their own widens no search: they find what they made, as anyone.
        match policy.search_filter(&bob) {
            VisibilityFilter::Visible {
                creator, editable, ..
            } => {
                assert_eq!(creator, Some(BOB));
                assert!(editable.is_empty(), "{editable:?}");
            }
            other => panic!("{other:?}"),
        }
    }
}
