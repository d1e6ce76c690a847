//! One render's view of the models: who asks, which dependency keys it read (with
//! the serials they had before the read), the open fragment blocks, and the one
//! fetch path every lookup takes (memo, depcache, store).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bulwark_acl::{AccessPolicy, Principal, SitePolicy};
use bulwark_depcache::{DependencyKey, Policy, RequestMemo, Serial};
use bulwark_store::{Resource, ResourceId, Store, StoreError, dependency};
use minijinja::{Error, ErrorKind, Value};

use super::{ModelKey, ModelValue, SiteModels};
use crate::blocking::off_the_runtime;
use crate::error::{RenderError, RenderErrorKind};

/// The render's own maps hash with foldhash (see the request memo's notes in
/// `bulwark_depcache`): they live for one render.
type RenderMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// How long model values stay cached when nothing flushes them.
const MODEL_TTL: Duration = Duration::from_secs(3600);

/// Builds a resource's page URL from its id and slug (the site's dispatch rules).
pub type PageUrls = Arc<dyn Fn(ResourceId, &str) -> Option<String> + Send + Sync>;

/// One render's view of the models: who asks, what was read, with which serials.
pub struct RenderScope {
    pub(super) models: Arc<SiteModels>,
    pub(super) principal: Principal,
    pub(super) policy: Arc<dyn AccessPolicy>,
    /// The policy's answers for this render, by resource id and version.
    pub(super) visible: Mutex<RenderMap<(ResourceId, i64), bool>>,
    pub(super) deps: Mutex<RenderMap<DependencyKey, Serial>>,
    /// Whether `deps` is kept: only a page that may be stored (the page
    /// cache) needs what it read; fragments collect theirs in `frames` anyway.
    pub(super) page_deps: std::sync::atomic::AtomicBool,
    /// Open fragment-cache blocks: each also collects the keys read inside it.
    pub(super) frames: Mutex<Vec<RenderMap<DependencyKey, Serial>>>,
    /// What this render already fetched: the depcache's request memo, which
    /// starts over past [`MEMO_LIMIT`] keys.
    pub(super) memo: RequestMemo<ModelKey, ModelValue>,
    pub(super) page_rule: Option<PageUrls>,
    /// What `m.req` shows: set by the controller that renders.
    pub(super) request: std::sync::OnceLock<Value>,
    /// The languages texts are read in, the wanted one first, then the
    /// fallbacks; and the URL prefix of the wanted one (`/nl`), if the site
    /// puts languages in its URLs. Unset: texts in any language.
    pub(super) language: Option<RenderLanguage>,
    /// The first store read that failed. Lookups in templates cannot return
    /// errors (a missing value is `undefined`), so the failure is kept here and
    /// the render as a whole fails: a page must never show "absent" because the
    /// database was away, let alone be cached that way.
    pub(super) failure: Mutex<Option<StoreFailure>>,
}

/// The languages a render reads texts in.
#[derive(Debug, Clone)]
pub struct RenderLanguage {
    /// The wanted language first, then the ones to fall back on.
    pub order: Arc<[String]>,
    /// What the render's links start with (`/nl`), or `""`.
    pub prefix: Arc<str>,
    /// What resources' page URLs start with: the language's prefix on a site
    /// with language URLs, even on a page asked for without one (a resource's
    /// page is in one language), else `""`.
    pub page_prefix: Arc<str>,
}

/// Why a render's store read failed.
#[derive(Debug, Clone)]
pub struct StoreFailure {
    /// [`RenderErrorKind::StoreBusy`] (a 503, not a 500) or
    /// [`RenderErrorKind::StoreFailed`].
    pub kind: RenderErrorKind,
    pub message: String,
}

impl From<StoreFailure> for RenderError {
    fn from(failure: StoreFailure) -> RenderError {
        let mut err = RenderError::other(failure.message);
        err.kind = failure.kind;
        err
    }
}

/// Past this many keys the request memo starts over (a huge listing must not hold
/// every resource it touched for the rest of the request).
const MEMO_LIMIT: usize = 10_000;

impl RenderScope {
    /// A render with the default access policy.
    pub fn new(models: Arc<SiteModels>, principal: Principal) -> Arc<RenderScope> {
        RenderScope::build(
            models,
            principal,
            Arc::new(SitePolicy::default()),
            None,
            None,
        )
    }

    /// A render for a site: its access policy, how to build a resource's
    /// page URL, and the languages texts are read in (`None`: any).
    pub fn for_site(
        models: Arc<SiteModels>,
        principal: Principal,
        policy: Arc<dyn AccessPolicy>,
        page_url: PageUrls,
        language: Option<RenderLanguage>,
    ) -> Arc<RenderScope> {
        RenderScope::build(models, principal, policy, Some(page_url), language)
    }

    fn build(
        models: Arc<SiteModels>,
        principal: Principal,
        policy: Arc<dyn AccessPolicy>,
        page_rule: Option<PageUrls>,
        language: Option<RenderLanguage>,
    ) -> Arc<RenderScope> {
        Arc::new(RenderScope {
            models,
            principal,
            policy,
            visible: Mutex::new(RenderMap::default()),
            deps: Mutex::new(RenderMap::default()),
            page_deps: std::sync::atomic::AtomicBool::new(true),
            frames: Mutex::new(Vec::new()),
            memo: RequestMemo::with_limit(MEMO_LIMIT),
            page_rule,
            request: std::sync::OnceLock::new(),
            language,
            failure: Mutex::new(None),
        })
    }

    /// The policy's decision for this principal, asked once per resource version
    /// per render.
    pub(super) fn may_see(&self, r: &Resource) -> bool {
        let key = (r.id, r.version.0);
        if let Some(seen) = self.visible.lock().expect("visible").get(&key) {
            return *seen;
        }
        let seen = self.policy.may_see(&self.principal, r);
        self.visible.lock().expect("visible").insert(key, seen);
        seen
    }

    /// The first store read that failed during this render, if any.
    pub fn failure(&self) -> Option<StoreFailure> {
        self.failure.lock().expect("failure").clone()
    }

    /// The request as templates see it in `m.req` (`path`, `query`, `method`, ...);
    /// `is_anonymous` is added from the principal.
    pub fn set_request(&self, request: Value) {
        let _ = self.request.set(request);
    }

    /// The languages texts are read in, wanted first; empty: any.
    pub fn language_order(&self) -> &[String] {
        self.language.as_ref().map_or(&[], |l| &l.order)
    }

    /// What this render's links start with (`/nl`), or `""`.
    pub fn url_prefix(&self) -> &str {
        self.language.as_ref().map_or("", |l| &l.prefix)
    }

    /// What resources' page URLs start with (see [`RenderLanguage`]).
    pub fn page_prefix(&self) -> &str {
        self.language.as_ref().map_or("", |l| &l.page_prefix)
    }

    /// The request's language (`m.req.language`), if the controller set one.
    pub fn language(&self) -> Option<String> {
        let lang = self.request.get()?.get_attr("language").ok()?;
        lang.as_str().map(str::to_string)
    }

    /// Who is asking.
    pub fn principal(&self) -> &Principal {
        &self.principal
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
            .map(|(k, s)| (k.clone(), *s))
            .collect()
    }

    /// Records a dependency (first read wins: that serial is the one that matters),
    /// for the render and for every open fragment.
    pub fn depend(&self, key: &DependencyKey) {
        if self.records() {
            self.record(key);
        }
    }

    /// [`depend`](Self::depend) on the key `key` makes, made only if this
    /// render keeps what it reads (a page rendered per request, outside its
    /// fragments, does not).
    pub fn depend_with(&self, key: impl FnOnce() -> DependencyKey) {
        if self.records() {
            self.record(&key());
        }
    }

    /// Whether a read now is kept: by the page, or by an open fragment.
    fn records(&self) -> bool {
        self.page_deps.load(std::sync::atomic::Ordering::Relaxed)
            || !self.frames.lock().expect("frames").is_empty()
    }

    fn record(&self, key: &DependencyKey) {
        let serial = {
            let mut deps = self.deps.lock().expect("deps");
            match deps.get(key) {
                Some(serial) => *serial,
                None => {
                    let serial = self.models.cache.serial(key);
                    deps.insert(key.clone(), serial);
                    serial
                }
            }
        };
        for frame in self.frames.lock().expect("frames").iter_mut() {
            frame.entry(key.clone()).or_insert(serial);
        }
    }

    /// This render's page is not stored (no page cache for it): what it
    /// reads outside a fragment is not kept, so
    /// [`dependencies`](Self::dependencies) names only what was read before
    /// and what its fragments read.
    /// (On a page rendered per request, keeping every read's key and serial
    /// cost a tenth of a small template's render.)
    pub fn forget_page_dependencies(&self) {
        self.page_deps
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// Starts collecting the dependencies of a fragment.
    pub fn begin_fragment(&self) {
        self.frames
            .lock()
            .expect("frames")
            .push(RenderMap::default());
    }

    /// The dependencies read since the matching [`begin_fragment`](Self::begin_fragment).
    pub fn end_fragment(&self) -> Vec<(DependencyKey, Serial)> {
        self.frames
            .lock()
            .expect("frames")
            .pop()
            .unwrap_or_default()
            .into_iter()
            .collect()
    }

    /// The render `state` belongs to, for a module's template functions: the
    /// same scope `m` reads through (its principal, its dependency capture).
    /// `None` outside a render with models.
    pub fn of(state: &minijinja::State) -> Option<Arc<RenderScope>> {
        state
            .lookup("m")
            .and_then(|m| m.downcast_object::<super::ModelRoot>())
            .map(|root| root.0.clone())
    }

    /// A value a module reads from its own tables, the way `m` reads the
    /// store's: from this render's memo, the site's depcache, or `load` (which
    /// answers the value and about how many bytes it holds), and recorded as
    /// depending on `deps`, which the module's writes flush
    /// ([`ModuleSql::flush`](bulwark_store::ModuleSql::flush)). A page that
    /// shows it is then cached until one of them is flushed, like any other.
    pub fn module_value(
        &self,
        module: &'static str,
        key: String,
        deps: &[DependencyKey],
        load: impl FnOnce(&Store) -> Result<(Value, usize), StoreError>,
    ) -> Result<Value, Error> {
        let value = self.fetch(
            ModelKey::Module { module, key },
            || deps.to_vec(),
            |s| load(s).map(|(value, bytes)| ModelValue::Module { value, bytes }),
        )?;
        Ok(match value {
            ModelValue::Module { value, .. } => value,
            _ => Value::UNDEFINED,
        })
    }

    /// A model value: memo, then depcache, then `load` against the store;
    /// the render and the cached value depend on `deps`. The keys are made
    /// only when something keeps them: a page rendered per request that finds
    /// the value in its memo or the depcache makes none (formatting them was a
    /// few allocations a read).
    pub(super) fn fetch(
        &self,
        key: ModelKey,
        deps: impl Fn() -> Vec<DependencyKey>,
        load: impl FnOnce(&Store) -> Result<ModelValue, StoreError>,
    ) -> Result<ModelValue, Error> {
        // Recorded keys are kept for a miss, not made twice.
        let recorded = self.records().then(|| {
            let keys = deps();
            for d in &keys {
                self.record(d);
            }
            keys
        });
        self.fetch_value(key, load, || recorded.unwrap_or_else(deps))
    }

    /// [`fetch`](Self::fetch), the render depending on `reads` and a value
    /// the depcache keeps on `deps` (a resource: the page on its text in the
    /// page's languages, the cached copy on its text in all).
    pub(super) fn fetch_recording(
        &self,
        key: ModelKey,
        reads: impl FnOnce() -> Vec<DependencyKey>,
        deps: impl FnOnce() -> Vec<DependencyKey>,
        load: impl FnOnce(&Store) -> Result<ModelValue, StoreError>,
    ) -> Result<ModelValue, Error> {
        if self.records() {
            for d in &reads() {
                self.record(d);
            }
        }
        self.fetch_value(key, load, deps)
    }

    /// The value from the memo, the depcache, or `load` (then kept in the
    /// depcache on `deps`, made only then).
    fn fetch_value(
        &self,
        key: ModelKey,
        load: impl FnOnce(&Store) -> Result<ModelValue, StoreError>,
        deps: impl FnOnce() -> Vec<DependencyKey>,
    ) -> Result<ModelValue, Error> {
        if let Some(v) = self.memo.get(&key) {
            return Ok(v);
        }
        let value = match self.models.cache.get(&key) {
            Some(hit) => (*hit).clone(),
            None => {
                let captured = self.models.cache.capture(&deps());
                let store = &self.models.store;
                let value = off_the_runtime(|| load(store)).map_err(|e| {
                    // The database being away or busy spoils the whole render; a
                    // question the store refuses (a malformed config key) is just
                    // an absent value.
                    if let Some(kind) = RenderErrorKind::of_store_error(&e) {
                        self.failure
                            .lock()
                            .expect("failure")
                            .get_or_insert_with(|| StoreFailure {
                                kind,
                                message: format!("reading the store failed: {e}"),
                            });
                    }
                    Error::new(ErrorKind::InvalidOperation, "reading the store failed")
                        .with_source(e)
                })?;
                self.models.cache.set_captured(
                    key.clone(),
                    value.clone(),
                    Policy::ttl(MODEL_TTL),
                    captured,
                );
                value
            }
        };
        self.memo.insert(key, value.clone());
        Ok(value)
    }

    pub(super) fn resource(&self, id: ResourceId) -> Result<Option<Arc<Resource>>, Error> {
        // The render depends on the resource's text in the languages it reads
        // (a change to another language's text leaves it be); the cached
        // resource on its text in any.
        let reads = || {
            let order = self.language_order();
            let mut reads = Vec::with_capacity(1 + order.len().max(1));
            reads.push(dependency::resource(id));
            if order.is_empty() {
                reads.push(dependency::resource_texts(id));
            }
            reads.extend(order.iter().map(|l| dependency::resource_text(id, l)));
            reads
        };
        let cached = || vec![dependency::resource(id), dependency::resource_texts(id)];
        let load = |s: &Store| Ok(ModelValue::Resource(s.resource(id)?.map(Arc::new)));
        let value = self.fetch_recording(ModelKey::Resource(id), reads, cached, load)?;
        Ok(match value {
            ModelValue::Resource(r) => r.filter(|r| self.may_see(r)),
            _ => None,
        })
    }

    pub(super) fn resource_id_by_name(&self, name: &str) -> Result<Option<ResourceId>, Error> {
        let deps = || vec![dependency::resource_name(name)];
        let value = self.fetch(ModelKey::IdOf(name.to_string()), deps, |s| {
            Ok(ModelValue::Ids(s.resource_id(name)?.into_iter().collect()))
        })?;
        Ok(match value {
            ModelValue::Ids(ids) => ids.first().copied(),
            _ => None,
        })
    }
}

impl std::fmt::Debug for RenderScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderScope")
            .field("principal", &self.principal)
            .finish()
    }
}
