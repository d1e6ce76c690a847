//! The `m` object: templates pull their data from the models, and every read is
//! recorded as a dependency of the render.
//!
//! `m.rsc[42].title`, `m.rsc["about"].body`, `m.rsc[42].o.author` (objects by
//! predicate), `m.rsc[42].s.author` (subjects), `m.rsc[42].is_a("article")`,
//! `m.search(cat="article", text="...", sort="-created", page=1, pagelen=10)`,
//! `m.config.key`.
//!
//! A lookup goes: the request memo (what this render already fetched), then the
//! site's depcache, then the store. Each step records the dependency keys the data
//! came from, together with the serial each key had *before* the data was read: a
//! page cached from this render is then checked against exactly those serials, so
//! a change committed while the page was rendering is never served as fresh.
//!
//! Access control ([`AccessPolicy`]) applies to every resource a template reaches,
//! whichever way it reaches it (directly, through an edge, through a search): a
//! resource the requester may not see behaves as absent, a property they may not
//! read as undefined.
//!
//! Renders are synchronous (minijinja's lookups are). Reads that miss the caches go
//! to the store on the calling thread; on a multi-threaded runtime the thread is
//! first handed over with `block_in_place`, so the runtime keeps serving others.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bulwark_depcache::{Depcache, DependencyKey, Policy, Serial, Weigh};
use bulwark_store::{
    Category, Deletion, Resource, ResourceId, SearchQuery, SortKey, Store, StoreError, Visibility,
};
use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr};
use minijinja::{Error, ErrorKind, State, Value};

/// How long model values stay cached when nothing flushes them.
const MODEL_TTL: Duration = Duration::from_secs(3600);

/// A site's data: its store and the dependency cache in front of it.
pub struct SiteModels {
    pub store: Store,
    /// Model values and whole cached pages: one dependency space, so a page is
    /// checked against the very serials its reads saw.
    pub cache: Depcache<String, ModelValue>,
    /// Template renders, counted (tests and stats: a cached page renders nothing).
    pub renders: std::sync::atomic::AtomicU64,
}

impl SiteModels {
    pub fn new(store: Store) -> Arc<SiteModels> {
        Arc::new(SiteModels {
            store,
            cache: Depcache::default(),
            renders: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Stores a value computed from `deps` (with the serials they had when they
    /// were read) if none of them changed since: otherwise it stays out of the
    /// cache, so a change committed during the computation is never served as
    /// fresh. Pages and fragments are stored this way.
    pub fn store_if_unchanged(
        &self,
        key: String,
        value: ModelValue,
        ttl: Duration,
        deps: &[(DependencyKey, Serial)],
    ) {
        let keys: Vec<DependencyKey> = deps.iter().map(|(k, _)| k.clone()).collect();
        let captured = self.cache.capture(&keys);
        if deps
            .iter()
            .all(|(k, serial)| self.cache.serial(k) == *serial)
        {
            self.cache
                .set_captured(key, value, Policy::ttl(ttl), captured);
        }
    }
}

/// What the model layer caches.
#[derive(Clone)]
pub enum ModelValue {
    Resource(Option<Arc<Resource>>),
    Ids(Arc<[ResourceId]>),
    Search(Arc<[ResourceId]>, Option<u64>),
    Flag(bool),
    Text(Option<Arc<str>>),
    /// The tombstone of a deleted resource, if there is one.
    Deletion(Option<Arc<Deletion>>),
    /// The whole category tree, in tree order.
    Categories(Arc<[Category]>),
    /// A rendered page, in every encoding.
    Page(Arc<CachedPage>),
    /// A cached template fragment and the dependency keys its render read.
    Fragment {
        html: Arc<str>,
        deps: Arc<[String]>,
    },
}

/// A whole rendered page as the page cache keeps it: compressed once, served to
/// every anonymous visitor until a dependency of its render is flushed.
#[derive(Debug)]
pub struct CachedPage {
    pub content_type: String,
    pub identity: bytes::Bytes,
    pub gzip: bytes::Bytes,
    pub brotli: bytes::Bytes,
}

impl Weigh for ModelValue {
    fn weigh(&self) -> usize {
        64 + match self {
            ModelValue::Resource(Some(r)) => {
                256 + serde_json::to_string(&r.props.0).map_or(0, |s| s.len())
            }
            ModelValue::Ids(ids) | ModelValue::Search(ids, _) => ids.len() * 8,
            ModelValue::Text(Some(t)) => t.len(),
            ModelValue::Categories(all) => all.iter().map(|c| 64 + c.name.len()).sum(),
            ModelValue::Deletion(Some(d)) => {
                64 + d.category.len() + d.name.as_ref().map_or(0, String::len)
            }
            ModelValue::Fragment { html, deps } => {
                html.len() + deps.iter().map(|d| d.len() + 16).sum::<usize>()
            }
            ModelValue::Page(p) => {
                p.content_type.len() + p.identity.len() + p.gzip.len() + p.brotli.len()
            }
            _ => 0,
        }
    }
}

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

/// Builds a resource's page URL from its id and slug (the site's dispatch rules).
pub type PageUrls = Arc<dyn Fn(ResourceId, &str) -> Option<String> + Send + Sync>;

/// One render's view of the models: who asks, what was read, with which serials.
pub struct RenderScope {
    models: Arc<SiteModels>,
    requester: Requester,
    policy: Arc<dyn AccessPolicy>,
    /// The policy's answers for this render, by resource id and version.
    visible: Mutex<HashMap<(ResourceId, i64), bool>>,
    deps: Mutex<HashMap<String, Serial>>,
    /// Open fragment-cache blocks: each also collects the keys read inside it.
    frames: Mutex<Vec<HashMap<String, Serial>>>,
    memo: Mutex<HashMap<String, ModelValue>>,
    page_rule: Option<PageUrls>,
    /// What `m.req` shows: set by the controller that renders.
    request: std::sync::OnceLock<Value>,
    /// The first store read that failed. Lookups in templates cannot return
    /// errors (a missing value is `undefined`), so the failure is kept here and
    /// the render as a whole fails: a page must never show "absent" because the
    /// database was away, let alone be cached that way.
    failure: Mutex<Option<StoreFailure>>,
}

/// Why a render's store read failed.
#[derive(Debug, Clone)]
pub struct StoreFailure {
    /// The pool's deadline passed ([`StoreError::Busy`]): a 503, not a 500.
    pub busy: bool,
    pub message: String,
}

/// Past this many keys the request memo starts over (a huge listing must not hold
/// every resource it touched for the rest of the request).
const MEMO_LIMIT: usize = 10_000;

impl RenderScope {
    /// A render with the default access policy.
    pub fn new(models: Arc<SiteModels>, requester: Requester) -> Arc<RenderScope> {
        RenderScope::build(models, requester, Arc::new(DefaultPolicy::default()), None)
    }

    /// A render for a site: its access policy and how to build a resource's page URL.
    pub fn for_site(
        models: Arc<SiteModels>,
        requester: Requester,
        policy: Arc<dyn AccessPolicy>,
        page_url: PageUrls,
    ) -> Arc<RenderScope> {
        RenderScope::build(models, requester, policy, Some(page_url))
    }

    fn build(
        models: Arc<SiteModels>,
        requester: Requester,
        policy: Arc<dyn AccessPolicy>,
        page_rule: Option<PageUrls>,
    ) -> Arc<RenderScope> {
        Arc::new(RenderScope {
            models,
            requester,
            policy,
            visible: Mutex::new(HashMap::new()),
            deps: Mutex::new(HashMap::new()),
            frames: Mutex::new(Vec::new()),
            memo: Mutex::new(HashMap::new()),
            page_rule,
            request: std::sync::OnceLock::new(),
            failure: Mutex::new(None),
        })
    }

    /// The policy's decision for this requester, asked once per resource version
    /// per render.
    fn may_see(&self, r: &Resource) -> bool {
        let key = (r.id, r.version.0);
        if let Some(seen) = self.visible.lock().expect("visible").get(&key) {
            return *seen;
        }
        let seen = self.policy.may_see(&self.requester, r);
        self.visible.lock().expect("visible").insert(key, seen);
        seen
    }

    /// The first store read that failed during this render, if any.
    pub fn failure(&self) -> Option<StoreFailure> {
        self.failure.lock().expect("failure").clone()
    }

    /// The request as templates see it in `m.req` (`path`, `query`, `method`, ...);
    /// `is_anonymous` is added from the requester.
    pub fn set_request(&self, request: Value) {
        let _ = self.request.set(request);
    }

    /// The request's language (`m.req.language`), if the controller set one.
    pub fn language(&self) -> Option<String> {
        let lang = self.request.get()?.get_attr("language").ok()?;
        lang.as_str().map(str::to_string)
    }

    pub fn requester(&self) -> &Requester {
        &self.requester
    }

    pub fn models(&self) -> &Arc<SiteModels> {
        &self.models
    }

    /// The dependency keys this render read, each with the serial it had before
    /// the read.
    pub fn dependencies(&self) -> Vec<(DependencyKey, Serial)> {
        self.deps
            .lock()
            .expect("deps")
            .iter()
            .map(|(k, s)| (DependencyKey::new(k), *s))
            .collect()
    }

    /// Records a dependency (first read wins: that serial is the one that matters),
    /// for the render and for every open fragment.
    pub fn depend(&self, key: &str) {
        let serial = {
            let mut deps = self.deps.lock().expect("deps");
            *deps
                .entry(key.to_string())
                .or_insert_with(|| self.models.cache.serial(&DependencyKey::new(key)))
        };
        for frame in self.frames.lock().expect("frames").iter_mut() {
            frame.entry(key.to_string()).or_insert(serial);
        }
    }

    /// Starts collecting the dependencies of a fragment.
    pub fn begin_fragment(&self) {
        self.frames.lock().expect("frames").push(HashMap::new());
    }

    /// The dependencies read since the matching [`begin_fragment`](Self::begin_fragment).
    pub fn end_fragment(&self) -> Vec<(DependencyKey, Serial)> {
        self.frames
            .lock()
            .expect("frames")
            .pop()
            .unwrap_or_default()
            .into_iter()
            .map(|(k, s)| (DependencyKey::new(k), s))
            .collect()
    }

    /// A model value: memo, then depcache, then `load` against the store.
    fn fetch(
        &self,
        key: &str,
        deps: &[String],
        load: impl FnOnce(&Store) -> Result<ModelValue, StoreError>,
    ) -> Result<ModelValue, Error> {
        for d in deps {
            self.depend(d);
        }
        if let Some(v) = self.memo.lock().expect("memo").get(key) {
            return Ok(v.clone());
        }
        let value = match self.models.cache.get(key) {
            Some(hit) => (*hit).clone(),
            None => {
                let dep_keys: Vec<DependencyKey> = deps.iter().map(DependencyKey::new).collect();
                let captured = self.models.cache.capture(&dep_keys);
                let store = &self.models.store;
                let value = off_the_runtime(|| load(store)).map_err(|e| {
                    // The database being away or busy spoils the whole render; a
                    // question the store refuses (a malformed config key) is just
                    // an absent value.
                    if matches!(
                        e,
                        StoreError::Busy | StoreError::Unavailable { .. } | StoreError::Database(_)
                    ) {
                        self.failure
                            .lock()
                            .expect("failure")
                            .get_or_insert_with(|| StoreFailure {
                                busy: matches!(e, StoreError::Busy),
                                message: format!("reading the store failed: {e}"),
                            });
                    }
                    Error::new(ErrorKind::InvalidOperation, "reading the store failed")
                        .with_source(e)
                })?;
                self.models.cache.set_captured(
                    key.to_string(),
                    value.clone(),
                    Policy::ttl(MODEL_TTL),
                    captured,
                );
                value
            }
        };
        let mut memo = self.memo.lock().expect("memo");
        if memo.len() >= MEMO_LIMIT {
            memo.clear();
        }
        memo.insert(key.to_string(), value.clone());
        Ok(value)
    }

    fn resource(&self, id: ResourceId) -> Result<Option<Arc<Resource>>, Error> {
        let value = self.fetch(&format!("rsc:{id}"), &[format!("rsc:{id}")], |s| {
            Ok(ModelValue::Resource(s.resource(id)?.map(Arc::new)))
        })?;
        Ok(match value {
            ModelValue::Resource(r) => r.filter(|r| self.may_see(r)),
            _ => None,
        })
    }

    fn resource_id_by_name(&self, name: &str) -> Result<Option<ResourceId>, Error> {
        let key = format!("name:{name}");
        let value = self.fetch(&format!("id-of:{name}"), &[key], |s| {
            Ok(ModelValue::Ids(s.resource_id(name)?.into_iter().collect()))
        })?;
        Ok(match value {
            ModelValue::Ids(ids) => ids.first().copied(),
            _ => None,
        })
    }

    fn rsc_value(self: &Arc<Self>, id: ResourceId) -> Result<Value, Error> {
        Ok(match self.resource(id)? {
            Some(r) => Value::from_object(RscObject {
                rsc: r,
                scope: self.clone(),
            }),
            None => Value::UNDEFINED,
        })
    }

    fn visible_list(self: &Arc<Self>, ids: &[ResourceId]) -> Result<Value, Error> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let v = self.rsc_value(*id)?;
            if !v.is_undefined() {
                out.push(v);
            }
        }
        Ok(Value::from(out))
    }
}

/// Runs blocking work (store reads, renders) without stalling a runtime worker:
/// `block_in_place` on a multi-threaded runtime, inline elsewhere.
pub fn off_the_runtime<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// The `m` global of a render.
#[derive(Debug)]
pub struct ModelRoot(pub Arc<RenderScope>);

impl std::fmt::Debug for RenderScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderScope")
            .field("requester", &self.requester)
            .finish()
    }
}

impl Object for ModelRoot {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let scope = self.0.clone();
        match key.as_str()? {
            "rsc" => Some(Value::from_object(RscCollection(scope))),
            "config" => Some(Value::from_object(ConfigCollection(scope))),
            "category" => Some(Value::from_object(CategoryCollection(scope))),
            "search" => Some(Value::from_function(move |kwargs: Kwargs| {
                search(&scope, kwargs)
            })),
            "req" => {
                let anonymous = scope.requester == Requester::Anonymous;
                let request = scope.request.get().cloned().unwrap_or(Value::from(()));
                Some(Value::from_object(RequestView { request, anonymous }))
            }
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&["rsc", "config", "category", "search", "req"])
    }
}

/// `m.req`: the request's fields, plus `is_anonymous`.
#[derive(Debug)]
struct RequestView {
    request: Value,
    anonymous: bool,
}

impl Object for RequestView {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "is_anonymous" => Some(Value::from(self.anonymous)),
            _ => self
                .request
                .get_item(key)
                .ok()
                .filter(|v| !v.is_undefined()),
        }
    }
}

#[derive(Debug)]
struct RscCollection(Arc<RenderScope>);

impl Object for RscCollection {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        // Path arguments are strings: `m.rsc[id]` works with "42" as with 42.
        match key.as_i64() {
            Some(n) => self.0.rsc_value(ResourceId(n)).ok(),
            None => self.0.rsc(key.as_str()?).ok().flatten(),
        }
    }
}

/// `m.category`: the category tree. `m.category.article` (or `["article"]`) is
/// one category; iterating gives every category in tree order.
#[derive(Debug)]
struct CategoryCollection(Arc<RenderScope>);

impl Object for CategoryCollection {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let all = self.0.categories().ok()?;
        let index = all
            .iter()
            .position(|c| Some(c.name.as_str()) == key.as_str())?;
        Some(CategoryObject::value(&all, index, &self.0))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let all = self.0.categories().unwrap_or_else(|_| Arc::from([]));
        Enumerator::Values(
            (0..all.len())
                .map(|i| CategoryObject::value(&all, i, &self.0))
                .collect(),
        )
    }
}

/// One category: `name`, `id`, `depth`, `parent`, `children`, `path` (from the
/// root down), `title` and `rsc` (the category is a resource too), `is_a(name)`.
#[derive(Debug)]
struct CategoryObject {
    all: Arc<[Category]>,
    index: usize,
    scope: Arc<RenderScope>,
}

impl CategoryObject {
    fn value(all: &Arc<[Category]>, index: usize, scope: &Arc<RenderScope>) -> Value {
        Value::from_object(CategoryObject {
            all: all.clone(),
            index,
            scope: scope.clone(),
        })
    }

    fn at(&self, index: usize) -> Value {
        CategoryObject::value(&self.all, index, &self.scope)
    }
}

/// `all[index]` and its ancestors (as indexes into `all`), most specific first.
fn lineage(all: &[Category], index: usize) -> Vec<usize> {
    let mut chain = vec![index];
    while let Some(parent) = all[*chain.last().expect("not empty")]
        .parent
        .and_then(|p| all.iter().position(|c| c.id == p))
    {
        chain.push(parent);
    }
    chain
}

impl Object for CategoryObject {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let c = &self.all[self.index];
        Some(match key.as_str()? {
            "name" => Value::from(c.name.as_str()),
            "id" => Value::from(c.id.0),
            "depth" => Value::from(c.depth),
            "parent" => c
                .parent
                .and_then(|p| self.all.iter().position(|x| x.id == p))
                .map(|i| self.at(i))
                .unwrap_or(Value::UNDEFINED),
            "children" => Value::from(
                (0..self.all.len())
                    .filter(|i| self.all[*i].parent == Some(c.id))
                    .map(|i| self.at(i))
                    .collect::<Vec<_>>(),
            ),
            "path" => {
                let mut path: Vec<Value> = lineage(&self.all, self.index)
                    .into_iter()
                    .map(|i| self.at(i))
                    .collect();
                path.reverse();
                Value::from(path)
            }
            "rsc" => self.scope.rsc_value(c.id).ok()?,
            "title" => self
                .scope
                .rsc_value(c.id)
                .ok()?
                .get_attr("title")
                .ok()
                .filter(|t| !t.is_undefined() && !t.is_none())
                .unwrap_or_else(|| Value::from(c.name.as_str())),
            _ => return None,
        })
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&[
            "name", "id", "depth", "parent", "children", "path", "title", "rsc",
        ])
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "is_a" => {
                let (other,): (&str,) = minijinja::value::from_args(args)?;
                let me = &self.all[self.index];
                Ok(Value::from(
                    self.all.iter().any(|o| o.name == other && me.is_a(o)),
                ))
            }
            _ => Err(Error::new(
                ErrorKind::UnknownMethod,
                format!("categories have no method {method}"),
            )),
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
    where
        Self: Sized + 'static,
    {
        f.write_str(&self.all[self.index].name)
    }
}

#[derive(Debug)]
struct ConfigCollection(Arc<RenderScope>);

impl Object for ConfigCollection {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        let value = self
            .0
            .fetch(&format!("config:{key}"), &[format!("config:{key}")], |s| {
                Ok(ModelValue::Text(s.config_value(key)?.map(Arc::from)))
            })
            .ok()?;
        match value {
            ModelValue::Text(Some(t)) => Some(Value::from(&*t)),
            _ => None,
        }
    }
}

/// A resource as templates see it.
#[derive(Debug)]
pub struct RscObject {
    rsc: Arc<Resource>,
    scope: Arc<RenderScope>,
}

impl RscObject {
    fn slug(&self) -> String {
        let title = self.rsc.title().unwrap_or("");
        let mut slug = String::new();
        for c in title.chars() {
            if c.is_alphanumeric() {
                slug.extend(c.to_lowercase());
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
        }
        slug.trim_end_matches('-').chars().take(60).collect()
    }
}

impl Object for RscObject {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let r = &self.rsc;
        let time = |t: chrono::DateTime<chrono::Utc>| Value::from(t.to_rfc3339());
        Some(match key.as_str()? {
            "id" => Value::from(r.id.0),
            "name" => r
                .name
                .as_deref()
                .map(Value::from)
                .unwrap_or(Value::from(())),
            "category" => Value::from(r.category_name.as_str()),
            "published" => Value::from(r.published),
            "created" => time(r.created),
            "modified" => time(r.modified),
            "publication_start" => r.publication_start.map(time).unwrap_or(Value::from(())),
            "version" => Value::from(r.version.0),
            "slug" => Value::from(self.slug()),
            "page_url" => {
                let slug = self.slug();
                let url = self
                    .scope
                    .page_rule
                    .as_ref()
                    .and_then(|f| f(r.id, &slug))
                    .unwrap_or_else(|| format!("/page/{}/{slug}", r.id));
                Value::from_safe_string(url)
            }
            "o" => Value::from_object(EdgeAccessor {
                id: r.id,
                outgoing: true,
                scope: self.scope.clone(),
            }),
            "s" => Value::from_object(EdgeAccessor {
                id: r.id,
                outgoing: false,
                scope: self.scope.clone(),
            }),
            prop if self.scope.policy.may_read(&self.scope.requester, r, prop) => {
                prop_value(r.props.get(prop)?)
            }
            _ => return None,
        })
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let mut keys: Vec<Value> = [
            "id",
            "name",
            "category",
            "published",
            "created",
            "modified",
            "page_url",
        ]
        .iter()
        .map(|k| Value::from(*k))
        .collect();
        let scope = &self.scope;
        keys.extend(
            self.rsc
                .props
                .0
                .keys()
                .filter(|k| scope.policy.may_read(&scope.requester, &self.rsc, k))
                .map(|k| Value::from(k.as_str())),
        );
        Enumerator::Values(keys)
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "is_a" => {
                let category: String = args
                    .first()
                    .and_then(|v| v.as_str())
                    .ok_or_else(|| Error::new(ErrorKind::MissingArgument, "is_a(category)"))?
                    .to_string();
                let id = self.rsc.id;
                let key = format!("is_a:{id}:{category}");
                let v = self.scope.fetch(
                    &key,
                    &[format!("rsc:{id}"), "category_tree".into()],
                    |s| Ok(ModelValue::Flag(s.is_a(id, &category)?)),
                )?;
                Ok(Value::from(matches!(v, ModelValue::Flag(true))))
            }
            _ => Err(Error::new(
                ErrorKind::UnknownMethod,
                format!("resources have no method {method}"),
            )),
        }
    }
}

/// Stored text is sanitised on write, so strings go out as they are.
fn prop_value(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::String(s) => Value::from_safe_string(s.clone()),
        other => Value::from(minijinja::value::Serde(other)),
    }
}

#[derive(Debug)]
struct EdgeAccessor {
    id: ResourceId,
    outgoing: bool,
    scope: Arc<RenderScope>,
}

impl Object for EdgeAccessor {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let predicate = key.as_str()?.to_string();
        let id = self.id;
        let (key, dep) = if self.outgoing {
            (
                format!("o:{id}:{predicate}"),
                format!("edges:{id}:{predicate}"),
            )
        } else {
            (
                format!("s:{id}:{predicate}"),
                format!("subjects:{id}:{predicate}"),
            )
        };
        let outgoing = self.outgoing;
        let ids = self
            .scope
            .fetch(&key, &[dep], |s| {
                let ids = if outgoing {
                    s.objects(id, &predicate)
                } else {
                    s.subjects(id, &predicate)
                };
                match ids {
                    Ok(ids) => Ok(ModelValue::Ids(ids.into())),
                    // An unknown predicate has no edges.
                    Err(StoreError::UnknownPredicate(_)) => Ok(ModelValue::Ids(Arc::from([]))),
                    Err(e) => Err(e),
                }
            })
            .ok()?;
        match ids {
            ModelValue::Ids(ids) => self.scope.visible_list(&ids).ok(),
            _ => None,
        }
    }
}

/// `m.search(cat="article", text="...", sort="-created", page=1, pagelen=10)`:
/// visible resources, plus paging when asked for (`m.search(..., total=true)`).
fn search(scope: &Arc<RenderScope>, kwargs: Kwargs) -> Result<Value, Error> {
    let mut q = SearchQuery {
        published_only: scope.requester == Requester::Anonymous,
        descending: true,
        ..SearchQuery::default()
    };
    let mut deps = Vec::new();
    if let Some(cat) = kwargs.get::<Option<String>>("cat")? {
        // Depend on the category and everything below it: a new article changes a
        // search over `text`.
        let below = scope.fetch(
            &format!("below:{cat}"),
            &["category_tree".to_string()],
            |s| {
                Ok(ModelValue::Text(Some(
                    s.category_and_below(&cat)?
                        .iter()
                        .map(|c| c.name.clone())
                        .collect::<Vec<_>>()
                        .join("\n")
                        .into(),
                )))
            },
        )?;
        if let ModelValue::Text(Some(names)) = below {
            deps.extend(names.lines().map(|n| format!("cat:{n}")));
        }
        q.categories = vec![cat];
    } else {
        deps.push("search".to_string());
    }
    q.text = kwargs
        .get::<Option<String>>("text")?
        .filter(|t| !t.trim().is_empty());
    if q.text.is_some() {
        deps.push("search".to_string());
    }
    let sort = kwargs
        .get::<Option<String>>("sort")?
        .unwrap_or_else(|| "-created".into());
    let (descending, field) = match sort.strip_prefix('-') {
        Some(f) => (true, f),
        None => (false, sort.trim_start_matches('+')),
    };
    q.descending = descending;
    q.sort = match field {
        "created" => SortKey::Created,
        "modified" => SortKey::Modified,
        "title" => SortKey::Title,
        "publication_start" => SortKey::PublicationStart,
        other => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("cannot sort by {other:?}"),
            ));
        }
    };
    let pagelen: u64 = kwargs
        .get::<Option<u64>>("pagelen")?
        .unwrap_or(20)
        .clamp(1, 500);
    let page: u64 = kwargs.get::<Option<u64>>("page")?.unwrap_or(1).max(1);
    q.limit = pagelen;
    q.offset = (page - 1) * pagelen;
    q.count_total = kwargs.get::<Option<bool>>("total")?.unwrap_or(false);
    kwargs.assert_all_used()?;
    let key = format!("search:{q:?}");
    let found = scope.fetch(&key, &deps, |s| {
        let page = s.search(&q)?;
        Ok(ModelValue::Search(page.ids.into(), page.total))
    })?;
    let ModelValue::Search(ids, total) = found else {
        return Ok(Value::from(Vec::<Value>::new()));
    };
    let items = scope.visible_list(&ids)?;
    Ok(match total {
        None => items,
        Some(total) => minijinja::context! {
            items => items,
            total => total,
            page => page,
            pages => total.div_ceil(pagelen),
        },
    })
}

impl RenderScope {
    /// A resource by id (digits) or unique name, as templates see it; `None` when
    /// it does not exist or this requester may not see it.
    pub fn rsc(self: &Arc<Self>, key: &str) -> Result<Option<Value>, Error> {
        let id = match key.parse::<i64>() {
            Ok(n) => Some(ResourceId(n)),
            Err(_) => self.resource_id_by_name(key)?,
        };
        let Some(id) = id else { return Ok(None) };
        let v = self.rsc_value(id)?;
        Ok((!v.is_undefined()).then_some(v))
    }

    /// Whether `key` (an id or a unique name) names a deleted resource that this
    /// requester could see before it went: its page says 410 Gone rather than
    /// 404. Cached like every other read, and flushed when the id or name is
    /// used again.
    pub fn is_gone(&self, key: &str) -> Result<bool, Error> {
        let dep = match key.parse::<i64>() {
            Ok(n) => format!("rsc:{n}"),
            Err(_) => format!("name:{key}"),
        };
        let value = self.fetch(&format!("gone:{key}"), &[dep], |s| {
            Ok(ModelValue::Deletion(s.deletion(key)?.map(Arc::new)))
        })?;
        Ok(match value {
            ModelValue::Deletion(Some(d)) => {
                d.was_public || matches!(self.requester, Requester::Admin { .. })
            }
            _ => false,
        })
    }

    /// The whole category tree, in tree order (cached until the tree changes).
    pub fn categories(&self) -> Result<Arc<[Category]>, Error> {
        let value = self.fetch("categories", &["category_tree".to_string()], |s| {
            Ok(ModelValue::Categories(s.categories()?.into()))
        })?;
        Ok(match value {
            ModelValue::Categories(all) => all,
            _ => Arc::from([]),
        })
    }

    /// A category and its ancestors, most specific first.
    pub fn category_chain(self: &Arc<Self>, category: &str) -> Result<Vec<String>, Error> {
        let all = self.categories()?;
        Ok(match all.iter().position(|c| c.name == category) {
            Some(index) => lineage(&all, index)
                .into_iter()
                .map(|i| all[i].name.clone())
                .collect(),
            None => Vec::new(),
        })
    }
}
