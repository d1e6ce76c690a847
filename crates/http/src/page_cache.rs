//! The page cache: whole pages for anonymous visitors, stored compressed, served
//! without any template work, and dropped exactly when data they showed changes.
//!
//! A page lives in the site's depcache next to the model values, under
//! `page:<language>:<path>?<query>`, with the dependency keys its render read. Those keys are
//! only known once the render is done, so the serials are the ones the models saw
//! *at read time* (recorded by the render scope); the page is stored only if none
//! of them moved while the page was rendering, otherwise this one response uses it
//! and the next request renders again.
//!
//! Concurrent requests for a page that is not cached join the one render in
//! progress (single flight), so a page whose cache was just invalidated under a
//! rush of visitors is rendered once, not once per visitor. The render runs in the
//! request that came first; the others wait for its result. If that render fails
//! or is not cacheable, the waiters try again themselves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, COOKIE};
use http::{HeaderValue, Method, StatusCode};
use tokio::sync::watch;

use bulwark_template::{CachedPage, ModelValue, RenderScope};

use crate::controller::{Content, EncodedBody, Outcome, Representation, RequestCtx};
use crate::encoding::{Effort, Encoding, compress};

/// Pages stay cached this long when nothing they show changes.
const PAGE_TTL: Duration = Duration::from_secs(3600);

/// The cookie that marks a logged-in visitor (sessions bypass the page cache).
pub const SESSION_COOKIE: &str = "bulwark_session";

/// How a render that others waited for ended.
#[derive(Clone)]
enum Landed {
    Page(Arc<CachedPage>),
    /// The render could not run or failed (a full queue, a busy or broken
    /// database): those waiting answer 503 at once instead of each trying again
    /// and waiting out the same deadline in turn.
    Unavailable,
    /// Not a page to share (a 404, a 410, a redirect): each renders for itself.
    RenderYourself,
}

type Flight = watch::Receiver<Option<Landed>>;

/// Renders in progress, by cache key, and the last good version of each page for
/// grace.
#[derive(Default)]
pub struct PageFlights {
    inflight: Mutex<HashMap<String, Flight>>,
    last: Mutex<LastPages>,
}

/// The previous version of pages, bounded in bytes (it starts over when full).
#[derive(Default)]
struct LastPages {
    pages: HashMap<String, Arc<CachedPage>>,
    bytes: usize,
}

const GRACE_BYTES: usize = 32 * 1024 * 1024;

fn page_size(key: &str, page: &CachedPage) -> usize {
    page.identity.len() + page.gzip.len() + page.brotli.len() + key.len()
}

impl LastPages {
    fn remove(&mut self, key: &str) {
        if let Some(old) = self.pages.remove(key) {
            self.bytes -= page_size(key, &old);
        }
    }

    fn insert(&mut self, key: &str, page: Arc<CachedPage>) {
        let size = page_size(key, &page);
        if self.bytes + size > GRACE_BYTES {
            self.pages.clear();
            self.bytes = 0;
        }
        if let Some(old) = self.pages.insert(key.to_string(), page) {
            self.bytes -= page_size(key, &old);
        }
        self.bytes += size;
    }
}

/// Removes the flight when the leader is done, whichever way (a panic included):
/// waiters then see the channel close and try again.
struct FlightGuard<'a> {
    flights: &'a PageFlights,
    key: &'a str,
}

impl Drop for FlightGuard<'_> {
    fn drop(&mut self) {
        self.flights
            .inflight
            .lock()
            .expect("page flights")
            .remove(self.key);
    }
}

/// Whether this request may be answered from (and fill) the page cache. Never in
/// development mode: an edited template must show on the next reload.
pub fn cacheable(req: &RequestCtx<'_>) -> bool {
    let parts = req.parts;
    !req.site.dev
        && (parts.method == Method::GET || parts.method == Method::HEAD)
        && !parts.headers.contains_key(AUTHORIZATION)
        && !parts
            .headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|c| c.split(';').any(|kv| kv.trim().starts_with(SESSION_COOKIE)))
}

fn cache_key(req: &RequestCtx<'_>) -> String {
    format!(
        "page:{}:{}?{}",
        req.language(),
        req.parts.uri.path(),
        req.parts.uri.query().unwrap_or("")
    )
}

fn found(page: &CachedPage) -> Outcome {
    Outcome::Found(Representation {
        status: StatusCode::OK,
        content_type: HeaderValue::from_str(&page.content_type)
            .unwrap_or(HeaderValue::from_static("text/html; charset=utf-8")),
        last_modified: None,
        cache_control: "no-cache",
        content: Content::Encoded(Arc::new(EncodedBody {
            identity: page.identity.clone(),
            gzip: page.gzip.clone(),
            brotli: page.brotli.clone(),
        })),
        per_language: true,
    })
}

/// Answers from the cache, from a render in progress, or by rendering (`render`
/// returns the outcome and the scope whose reads it made).
pub async fn serve(
    req: &RequestCtx<'_>,
    render: impl Future<Output = (Outcome, Option<Arc<RenderScope>>)>,
) -> Outcome {
    let key = cache_key(req);
    let cache = &req.site.models.cache;
    let flights = &req.site.page_flights;
    let mut render = Some(render);
    loop {
        if let Some(hit) = cache.get(key.as_str())
            && let ModelValue::Page(page) = &*hit
        {
            return found(page);
        }
        let joined = {
            let mut inflight = flights.inflight.lock().expect("page flights");
            match inflight.get(&key) {
                Some(flight) => Err(flight.clone()),
                None => {
                    let (tx, rx) = watch::channel(None);
                    inflight.insert(key.clone(), rx);
                    Ok(tx)
                }
            }
        };
        let leader = match joined {
            Err(mut flight) => {
                // Grace: someone is re-rendering this page; take the previous version now.
                if req.site.site.config.page_cache.grace {
                    let stale = flights
                        .last
                        .lock()
                        .expect("last pages")
                        .pages
                        .get(&key)
                        .cloned();
                    if let Some(stale) = stale {
                        return found(&stale);
                    }
                }
                let landed = flight
                    .wait_for(Option::is_some)
                    .await
                    .ok()
                    .and_then(|l| l.clone());
                match landed {
                    Some(Landed::Page(page)) => return found(&page),
                    Some(Landed::Unavailable) => {
                        return Outcome::Response(crate::bottleneck::busy_response());
                    }
                    // Done another way, or the leader went away: try again.
                    Some(Landed::RenderYourself) | None => continue,
                }
            }
            Ok(leader) => leader,
        };
        let _guard = FlightGuard { flights, key: &key };
        let (outcome, scope) = render.take().expect("rendered once").await;
        let Some(scope) = scope else {
            // The render queue was full.
            let _ = leader.send(Some(Landed::Unavailable));
            return outcome;
        };
        let (content_type, body) = match outcome {
            Outcome::Found(Representation {
                status: StatusCode::OK,
                content_type,
                content: Content::Dynamic(body),
                ..
            }) => (content_type, body),
            Outcome::Failed(_) => {
                // Grace keeps the previous version for the next visitors.
                let _ = leader.send(Some(Landed::Unavailable));
                return outcome;
            }
            other => {
                // Gone, hidden or moved: the previous version must not be served
                // as grace any more.
                flights.last.lock().expect("last pages").remove(&key);
                let _ = leader.send(Some(Landed::RenderYourself));
                return other;
            }
        };
        let page = Arc::new(encode_page(content_type, body).await);
        // Stored only if nothing the render read has changed since.
        req.site.models.store_if_unchanged(
            key.clone(),
            ModelValue::Page(page.clone()),
            PAGE_TTL,
            &scope.dependencies(),
        );
        flights
            .last
            .lock()
            .expect("last pages")
            .insert(&key, page.clone());
        let _ = leader.send(Some(Landed::Page(page.clone())));
        return found(&page);
    }
}

/// Compresses a page once for all its visitors, off the runtime for big pages.
async fn encode_page(content_type: HeaderValue, body: Bytes) -> CachedPage {
    let content_type = content_type
        .to_str()
        .unwrap_or("text/html; charset=utf-8")
        .to_string();
    let encode = move || CachedPage {
        gzip: compress(&body, Encoding::Gzip, Effort::Fast),
        brotli: compress(&body, Encoding::Brotli, Effort::Fast),
        identity: body,
        content_type,
    };
    tokio::task::spawn_blocking(encode)
        .await
        .expect("compressing does not panic")
}
