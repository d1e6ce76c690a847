//! The page cache: whole pages for anonymous visitors, stored compressed, served
//! without any template work, and dropped exactly when data they showed changes.
//!
//! A page lives in the site's depcache next to the model values, under
//! [`ModelKey::page`] (language, path and query string), with the dependency keys its render read. Those keys are
//! only known once the render is done, so the serials are the ones the models saw
//! *at read time* (recorded by the render scope); the page is stored only if none
//! of them moved while the page was rendering, otherwise this one response uses it
//! and the next request renders again.
//!
//! Concurrent requests for a page that is not cached join the one render in
//! progress (depcache's single flight), so a page whose cache was just invalidated
//! under a rush of visitors is rendered once, not once per visitor. The render runs
//! in the request that came first; the others wait for its result, or, with grace
//! (`[page_cache] grace`, on by default), get the previous version at once
//! (except a request that says `Cache-Control: no-cache`, such as a live
//! element fetching the page again because its data changed). If
//! that render fails, the waiters answer 503; if it is no page to share (404, 410,
//! a redirect), they render for themselves.
//!
//! Stale-if-error (Varnish's saint mode): a page that expired is kept for
//! `[page_cache] stale_if_error` more (a day by default). When rendering it again
//! fails because the database is busy or unreachable, or the render queue is full,
//! the render's leader and everyone who waited for it get that page, marked
//! `Cache-Status: Bulwark; hit; detail=stale-if-error`, instead of a 503. A page
//! whose data changed is never served this way (it is known to be wrong, not just
//! old); only within the ordinary grace period after the change.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, COOKIE};
use http::{HeaderValue, Method, StatusCode};

use bulwark_depcache::{Lookup, Policy};
use bulwark_http::{Effort, EncodedBody};
use bulwark_template::{CachedPage, ModelKey, ModelValue, RenderErrorKind, RenderScope};

use crate::bottleneck::busy_response;
use crate::counters::Counters;
use crate::representation::{Content, Outcome, Representation};
use crate::request::RequestCtx;

/// How long past its time to live a page may still be served while it is
/// rendered again (a flushed page: until its time to live plus this).
const PAGE_GRACE: Duration = Duration::from_secs(60);

/// The cookie that marks a logged-in visitor (sessions bypass the page cache);
/// over TLS it carries the `__Host-` prefix.
pub const SESSION_COOKIE: &str = "bulwark_session";

/// Whether this request may be answered from (and fill) the page cache. Never in
/// development mode: an edited template must show on the next reload.
pub fn cacheable(req: &RequestCtx<'_>) -> bool {
    let parts = req.parts;
    !req.site.dev()
        && req.principal().is_anonymous()
        // A manager viewing the site as anonymous visitors gets a page that
        // says so (a session cookie keeps them out too).
        && req.auth().viewing_as.is_none()
        && (parts.method == Method::GET || parts.method == Method::HEAD)
        && !parts.headers.contains_key(AUTHORIZATION)
        && !parts
            .headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|c| {
                c.split(';').any(|kv| {
                    kv.trim()
                        .trim_start_matches("__Host-")
                        .starts_with(SESSION_COOKIE)
                })
            })
}

fn cache_key(req: &RequestCtx<'_>) -> ModelKey {
    ModelKey::page(
        req.language(),
        req.parts.uri.path(),
        req.parts.uri.query().unwrap_or(""),
    )
}

/// The dependency key every cached copy of the page at `path` shares: its
/// address without the language prefix (`/nl/about` and `/about` are one
/// page in two languages), with its query string.
pub(crate) fn address_key(
    languages: &crate::language::SiteLanguages,
    path: &str,
    query: &str,
) -> bulwark_store::DependencyKey {
    let bare = languages.split(path).map_or(path, |(_, rest)| rest);
    bulwark_store::dependency::address(bare, query)
}

fn found(page: &Arc<CachedPage>) -> Outcome {
    found_as(page, false)
}

fn found_as(page: &Arc<CachedPage>, stale: bool) -> Outcome {
    Outcome::Found(Representation {
        status: StatusCode::OK,
        content_type: page.content_type.clone(),
        last_modified: Some(page.made),
        cache_control: "no-cache",
        content: Content::Page(page.clone()),
        per_language: true,
        stale,
        etag: Some(page.etag.clone()),
        attachment: false,
        surrogate_keys: page.surrogate_keys.clone(),
    })
}

/// Why a render that others waited for gave them no page.
#[derive(Clone, Debug)]
enum NoPage {
    /// The render could not run or failed (a full queue, a busy or broken
    /// database): those waiting answer 503 at once instead of each trying again
    /// and waiting out the same deadline in turn. The previous version stays for
    /// grace.
    Unavailable,
    /// Not a page to share (a 404, a 410, a redirect): each renders for itself,
    /// and the previous version is no longer served as grace.
    NotShared,
    /// The render failed as for `Unavailable`, and the page it would have replaced
    /// is still kept for stale-if-error: serve that.
    Stale(Arc<CachedPage>),
}

/// A page controller's answer: from the page cache ([`serve`]) when
/// `cached`, else `render`'s own. Boxed by which it is: a page rendered per
/// request does not carry the cache's larger state (about 1.5 KB, copied
/// into the box with every request).
pub fn serve_or_render<'a>(
    req: &'a RequestCtx<'a>,
    cached: bool,
    render: impl Future<Output = (Outcome, Option<Arc<RenderScope>>)> + Send + 'a,
) -> futures_util::future::BoxFuture<'a, Outcome> {
    if cached {
        Box::pin(serve(req, render))
    } else {
        Box::pin(async move { render.await.0 })
    }
}

/// Answers from the cache, from a render in progress, or by rendering (`render`
/// returns the outcome and the scope whose reads it made).
///
/// The single flight and grace are depcache's (`get_or_lead`): the render runs
/// inline in the request that came first, because it borrows that request.
pub async fn serve(
    req: &RequestCtx<'_>,
    render: impl Future<Output = (Outcome, Option<Arc<RenderScope>>)>,
) -> Outcome {
    let key = cache_key(req);
    let cache = &req.site.models().cache;
    let settings = &req.site.config().page_cache;
    let mut policy = Policy::ttl(settings.ttl).stale_if_error(settings.stale_if_error);
    if settings.grace {
        policy = policy.with_grace(PAGE_GRACE);
        if takes_flushed_pages(req) {
            policy = policy.serve_stale_after_flush();
        }
    }
    let counters = &req.site.counters();
    let leader = match cache.get_or_lead::<ModelKey, NoPage>(&key, policy).await {
        Lookup::Value(hit) => {
            Counters::count(&counters.page_hits);
            return match &*hit {
                ModelValue::Page(page) => found(page),
                _ => render.await.0,
            };
        }
        Lookup::Failed(NoPage::Unavailable) => return Outcome::Response(busy_response()),
        Lookup::Failed(NoPage::Stale(page)) => return found_as(&page, true),
        Lookup::Failed(NoPage::NotShared) => return render.await.0,
        Lookup::Lead(leader) => {
            Counters::count(&counters.page_misses);
            leader
        }
    };
    // Read before the render, as the models' serials are: a purge of the
    // address while it renders keeps this copy out of the cache.
    let address = address_key(
        req.site.languages(),
        req.parts.uri.path(),
        req.parts.uri.query().unwrap_or(""),
    );
    let address_serial = cache.serial(&address);
    match render.await {
        // The render queue was full.
        (outcome, None) => unavailable(leader, outcome),
        (
            Outcome::Found(Representation {
                status: StatusCode::OK,
                content_type,
                content: Content::Dynamic(body),
                ..
            }),
            Some(scope),
        ) => {
            let mut deps = scope.dependencies();
            deps.push((address, address_serial));
            let surrogate_keys = req.site.surrogate().map(|s| {
                s.header_value(req.site.site().name().as_str(), deps.iter().map(|(k, _)| k))
            });
            let page = Arc::new(encode_page(content_type, body, surrogate_keys).await);
            // Stored only if nothing the render read has changed since.
            leader.finish(ModelValue::Page(page.clone()), &deps);
            found(&page)
        }
        // The database was busy or away.
        (Outcome::Failed(error), _)
            if matches!(
                error.kind,
                RenderErrorKind::StoreBusy | RenderErrorKind::StoreFailed
            ) =>
        {
            unavailable(leader, Outcome::Failed(error))
        }
        // A broken template: not something an old page should paper over.
        (outcome @ Outcome::Failed(_), _) => {
            leader.fail(NoPage::Unavailable);
            outcome
        }
        // Gone, hidden or moved.
        (other, _) => {
            leader.fail_and_discard_stale(NoPage::NotShared);
            other
        }
    }
}

/// Whether the request takes the previous version of a page whose data just
/// changed, while it is rendered again. Not when it says `Cache-Control:
/// no-cache`: a reload, and a live element fetching its page because that
/// data changed (`fetch` with `cache: "no-store"` sends it), which must not
/// get the version it is replacing when another visitor's request leads the
/// render. The request still gets a fresh cached page, and joins the render
/// in progress otherwise: it never costs a render of its own.
fn takes_flushed_pages(req: &RequestCtx<'_>) -> bool {
    !req.parts
        .headers
        .get_all(http::header::CACHE_CONTROL)
        .iter()
        .any(|v| {
            v.to_str().is_ok_and(|v| {
                v.split(',')
                    .any(|d| d.trim().eq_ignore_ascii_case("no-cache"))
            })
        })
}

type PageLeader = bulwark_depcache::Leader<ModelKey, ModelValue, NoPage>;

/// The render could not be done for want of capacity or data: the stale page, if
/// one is kept, for this visitor and those who waited; else `outcome` here and a 503
/// for them.
fn unavailable(leader: PageLeader, outcome: Outcome) -> Outcome {
    let stale = leader.stale_if_error();
    match stale.as_deref() {
        Some(ModelValue::Page(page)) => {
            leader.fail(NoPage::Stale(page.clone()));
            found_as(page, true)
        }
        _ => {
            leader.fail(NoPage::Unavailable);
            outcome
        }
    }
}

/// Compresses a page once for all its visitors, off the runtime for big pages.
async fn encode_page(
    content_type: HeaderValue,
    body: Bytes,
    surrogate_keys: Option<HeaderValue>,
) -> CachedPage {
    let made = std::time::SystemTime::now();
    let encode = move || CachedPage {
        etag: page_etag(&body),
        made,
        body: Arc::new(EncodedBody::new(body, Effort::Fast)),
        content_type,
        surrogate_keys,
        head: Default::default(),
    };
    tokio::task::spawn_blocking(encode)
        .await
        .expect("compressing does not panic")
}

/// A page's validator from its bytes: SipHash with the standard library's
/// fixed keys, so every node gives the same bytes the same tag. Not a
/// defence against anyone: it tells a browser whether its copy is current.
fn page_etag(body: &[u8]) -> HeaderValue {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(body);
    HeaderValue::from_str(&format!("\"p{:016x}\"", hasher.finish())).expect("hex is a header value")
}
