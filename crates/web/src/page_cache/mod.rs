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

pub(crate) mod flights;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, COOKIE};
use http::{HeaderValue, Method, StatusCode};
use tokio::sync::watch;

use bulwark_http::{Effort, Encoding, compress};
use bulwark_template::{CachedPage, ModelValue, RenderScope};

use crate::bottleneck::busy_response;
use crate::representation::{Content, EncodedBody, Outcome, Representation};
use crate::request::RequestCtx;

use flights::{FlightGuard, Landed};

/// Pages stay cached this long when nothing they show changes.
const PAGE_TTL: Duration = Duration::from_secs(3600);

/// The cookie that marks a logged-in visitor (sessions bypass the page cache).
pub const SESSION_COOKIE: &str = "bulwark_session";

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
                        return Outcome::Response(busy_response());
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
