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
//! Access control ([`AccessPolicy`](bulwark_acl::AccessPolicy)) applies to every resource a template reaches,
//! whichever way it reaches it (directly, through an edge, through a search): a
//! resource the principal may not see behaves as absent, a property they may not
//! read as undefined.
//!
//! Renders are synchronous (minijinja's lookups are). Reads that miss the caches go
//! to the store on the calling thread, through [`off_the_runtime`](crate::off_the_runtime).
//!
//! One file per part of `m`: [`scope`] (what a render read, and the fetch path
//! every lookup takes), `rsc` (resources and their edges), `category`, `search`,
//! `config` and `req`.

mod acl;
mod category;
mod config;
mod key;
mod req;
mod rsc;
mod scope;
mod search;

pub use key::{ModelKey, SearchKey};
pub use rsc::{RscObject, slug_in, slug_of};
pub use scope::{PageUrls, RenderLanguage, RenderScope, StoreFailure};

use std::sync::Arc;
use std::time::Duration;

use bulwark_depcache::{Depcache, DependencyKey, Policy, Serial, Weigh};
use bulwark_encoding::EncodedBody;
use bulwark_store::{Category, Deletion, Resource, ResourceId, Store};
use minijinja::Value;
use minijinja::value::{Enumerator, Kwargs, Object};

/// A site's data: its store and the dependency cache in front of it.
pub struct SiteModels {
    pub store: Store,
    /// Model values and whole cached pages: one dependency space, so a page is
    /// checked against the very serials its reads saw.
    pub cache: Depcache<ModelKey, ModelValue>,
    /// Template renders, counted (tests and stats: a cached page renders nothing).
    pub renders: std::sync::atomic::AtomicU64,
    /// Fragment cache (`{% call cache() %}`) reads answered from the cache.
    pub fragment_hits: std::sync::atomic::AtomicU64,
    /// Fragment cache reads that rendered the block.
    pub fragment_misses: std::sync::atomic::AtomicU64,
    /// Models modules add to `m` ([`SiteModels::add_model`]): `m.menu`.
    module_models: std::sync::RwLock<std::collections::BTreeMap<String, Value>>,
}

impl SiteModels {
    pub fn new(store: Store) -> Arc<SiteModels> {
        Arc::new(SiteModels {
            store,
            cache: Depcache::default(),
            renders: std::sync::atomic::AtomicU64::new(0),
            fragment_hits: std::sync::atomic::AtomicU64::new(0),
            fragment_misses: std::sync::atomic::AtomicU64::new(0),
            module_models: Default::default(),
        })
    }

    /// Adds `m.<name>` for this site's templates (a module, at setup): a
    /// value, usually a function that reads through `m` itself, so the access
    /// rules and the dependency capture apply (the menu module's `m.menu`).
    /// The core's own models keep their names.
    pub fn add_model(&self, name: &str, value: Value) {
        self.module_models
            .write()
            .expect("module models")
            .insert(name.to_owned(), value);
    }

    /// A model a module added, if any.
    fn module_model(&self, name: &str) -> Option<Value> {
        self.module_models
            .read()
            .expect("module models")
            .get(name)
            .cloned()
    }

    /// Stores a value computed from `deps` (with the serials they had when they
    /// were read) if none of them changed since: otherwise it stays out of the
    /// cache, so a change committed during the computation is never served as
    /// fresh. Pages and fragments are stored this way.
    pub fn store_if_unchanged(
        &self,
        key: ModelKey,
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
    /// A module's value ([`RenderScope::module_value`]), with what it weighs.
    Module {
        value: Value,
        bytes: usize,
    },
    /// A cached template fragment and the dependency keys its render read.
    Fragment {
        html: Arc<str>,
        deps: Arc<[DependencyKey]>,
    },
}

/// A whole rendered page as the page cache keeps it: compressed once, served to
/// every anonymous visitor until a dependency of its render is flushed.
#[derive(Debug)]
pub struct CachedPage {
    /// Made once, when the page is stored, as its validator is.
    pub content_type: http::HeaderValue,
    /// A strong validator of the page's bytes (`"p…"`): the same bytes give
    /// the same tag on every node and after every re-render, so a revisit is
    /// answered `304` for as long as the page reads the same.
    pub etag: http::HeaderValue,
    /// When it was rendered: its `Last-Modified` (a change it depends on
    /// renders it again, later), for a client that revalidates by date.
    pub made: std::time::SystemTime,
    pub body: Arc<EncodedBody>,
    /// The dependency keys it was rendered from, as surrogate keys for a
    /// shared cache in front (only on a site that sends them).
    pub surrogate_keys: Option<http::HeaderValue>,
    /// The headers every plain hit on the page sends but its length and
    /// encoding, made once by the server (on the first hit) for the site's
    /// settings as they are loaded then, and made again after a reload.
    pub head: arc_swap::ArcSwapOption<PreparedHead>,
}

/// A cached page's headers, made for one load of its site: whole for each
/// encoding (`Content-Encoding` and `Content-Length` set), so that a hit
/// copies one and adds nothing (a copy of a map that is added to grows).
/// Each is made on the first hit that takes its encoding: a page is mostly
/// asked for in one or two (brotli by browsers, as it is by crawlers).
#[derive(Debug)]
pub struct PreparedHead {
    /// The load they were made for (its identity, not its contents: held,
    /// so no later load can take its address).
    pub made_for: Arc<()>,
    by_encoding: [std::sync::OnceLock<http::HeaderMap>; 3],
}

/// What a page's prepared headers take, counted in its weight when it is
/// stored (before they are made): about 1.5 KB a map of a dozen headers,
/// for the one or two encodings it is usually asked in.
const PREPARED_HEAD_BYTES: usize = 2048;

impl PreparedHead {
    pub fn new(made_for: Arc<()>) -> PreparedHead {
        PreparedHead {
            made_for,
            by_encoding: Default::default(),
        }
    }

    /// The headers of the page sent in `encoding`, made by `make` the first time.
    pub fn get_or_make(
        &self,
        encoding: bulwark_encoding::Encoding,
        make: impl FnOnce() -> http::HeaderMap,
    ) -> &http::HeaderMap {
        let slot = match encoding {
            bulwark_encoding::Encoding::Identity => 0,
            bulwark_encoding::Encoding::Gzip => 1,
            bulwark_encoding::Encoding::Brotli => 2,
        };
        self.by_encoding[slot].get_or_init(make)
    }
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
                html.len() + deps.iter().map(|d| d.as_str().len() + 16).sum::<usize>()
            }
            ModelValue::Page(p) => {
                p.content_type.len() + p.etag.len() + p.body.len() + PREPARED_HEAD_BYTES
            }
            ModelValue::Module { bytes, .. } => *bytes,
            _ => 0,
        }
    }
}

/// The `m` global of a render.
#[derive(Debug)]
pub struct ModelRoot(pub Arc<RenderScope>);

impl Object for ModelRoot {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let scope = self.0.clone();
        match key.as_str()? {
            "rsc" => Some(Value::from_object(rsc::RscCollection(scope))),
            "acl" => Some(Value::from_object(acl::AclView(scope))),
            "config" => Some(Value::from_object(config::ConfigCollection(scope))),
            "category" => Some(Value::from_object(category::CategoryCollection(scope))),
            "search" => Some(Value::from_function(move |kwargs: Kwargs| {
                search::search(&scope, kwargs)
            })),
            "req" => {
                let anonymous = scope.principal.is_anonymous();
                let request = scope.request.get().cloned().unwrap_or(Value::from(()));
                Some(Value::from_object(req::RequestView { request, anonymous }))
            }
            // Only for a name that is none of the above: the core's are not slowed.
            other => self.0.models.module_model(other),
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&["rsc", "acl", "config", "category", "search", "req"])
    }
}
