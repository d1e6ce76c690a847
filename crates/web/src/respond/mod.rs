//! The one flow every answer goes through. As in Webmachine, a controller only
//! answers questions (does the thing exist, when was it modified, what are its
//! bytes) and this module makes the HTTP decisions (404, 304, HEAD, ranges,
//! content encoding) in one place. Unlike Webmachine, a controller answers them
//! all at once (`Controller::resolve`), so no callback is ever called twice and no
//! state has to be threaded between callbacks.

mod conditional;
mod range;

use std::sync::Arc;

use bytes::Bytes;
use http::header::{
    ACCEPT_RANGES, CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_ENCODING, CONTENT_LENGTH,
    CONTENT_RANGE, CONTENT_TYPE, ETAG, LAST_MODIFIED, RANGE, VARY,
};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode};
use tokio::io::AsyncReadExt;

use bulwark_http::{Body, Effort, EncodedBody, Encoding, compress, negotiate};
use bulwark_template::{CachedPage, PreparedHead, RenderErrorKind};

use crate::error_page::{error_response, error_response_for};
use crate::representation::{Content, Outcome, Representation};
use crate::request::RequestCtx;

use crate::events::{Moved, PathNotFound, QueryPathAsked};
pub use conditional::not_modified;
use range::{open_at, parse_range};

/// Bodies smaller than this are sent as they are: compressing them costs more than
/// it saves.
const COMPRESS_MIN: usize = 1024;

/// Headers an answer usually carries of its own (type, length, caching,
/// `Vary`); validators and encodings are rarer.
const RESPONSE_HEADERS: usize = 4;

/// What a `GET` or `HEAD` that found nothing answers instead of the 404, when
/// a module says ([`PathNotFound`]): a redirect or `410 Gone`. `None` without
/// observers, for other methods, or when no module has an answer.
pub(crate) fn moved_instead(
    site: &crate::site::SiteRuntime,
    parts: &http::request::Parts,
) -> Option<Response<Body>> {
    if !matches!(parts.method, http::Method::GET | http::Method::HEAD)
        || !site.notifier().has_observers::<PathNotFound>()
    {
        return None;
    }
    let moved = site.notifier().first(&PathNotFound {
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
    })?;
    moved_response(site, moved)
}

/// What a `GET` or `HEAD` with a query string answers before it is routed,
/// when a module says this path with this query moved ([`QueryPathAsked`]).
/// `None` without a query, without observers, for other methods, or when no
/// module has an answer: the request is routed as usual.
pub(crate) fn moved_before_routing(
    site: &crate::site::SiteRuntime,
    parts: &http::request::Parts,
) -> Option<Response<Body>> {
    let query = parts.uri.query().filter(|q| !q.is_empty())?;
    if !matches!(parts.method, http::Method::GET | http::Method::HEAD)
        || !site.notifier().has_observers::<QueryPathAsked>()
    {
        return None;
    }
    let moved = site.notifier().first(&QueryPathAsked {
        path: parts.uri.path().to_owned(),
        query: query.to_owned(),
    })?;
    moved_response(site, moved)
}

/// The answer a module's [`Moved`] says: a redirect, or `410 Gone`.
fn moved_response(site: &crate::site::SiteRuntime, moved: Moved) -> Option<Response<Body>> {
    if moved.status == StatusCode::GONE {
        return Some(error_response(site, StatusCode::GONE, None));
    }
    let location = HeaderValue::from_str(moved.location.as_deref()?).ok()?;
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = moved.status;
    resp.headers_mut().insert(http::header::LOCATION, location);
    // A permanent move may be kept a little (a rule taken back is obeyed
    // within five minutes); a temporary one is asked again every time.
    let keep = match moved.status {
        StatusCode::MOVED_PERMANENTLY | StatusCode::PERMANENT_REDIRECT => "public, max-age=300",
        _ => "no-cache",
    };
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static(keep));
    Some(resp)
}

/// The site's `404.tpl` for a `GET` or `HEAD` that found nothing, rendered
/// as any page is (with `m`, `request`, `q`: the starter's has its header,
/// navigation and language), plus `status`, `reason` and `language`. Never
/// kept in the page cache, and through the render bottleneck like any page
/// (a flood of 404s waits its turn or gets 503, as pages do). When that
/// render fails, or for other methods: the plain error page.
async fn not_found_page(req: &RequestCtx<'_>) -> Result<Representation, Answer> {
    let plain = || Answer::unsecured(error_response_for(req, StatusCode::NOT_FOUND, None));
    if !matches!(req.parts.method, Method::GET | Method::HEAD) {
        return Err(plain());
    }
    let vars = std::collections::BTreeMap::from([
        ("status".to_owned(), minijinja::Value::from(404)),
        ("reason".to_owned(), minijinja::Value::from("Not Found")),
        (
            "language".to_owned(),
            minijinja::Value::from(req.language()),
        ),
    ]);
    match crate::render::render_page(req, "404.tpl", StatusCode::NOT_FOUND, vars).await {
        Outcome::Found(page) => Ok(page),
        Outcome::Response(busy) => Err(Answer::unsecured(busy)),
        Outcome::Failed(err) => {
            tracing::error!(site = %req.site.site().name(), path = %req.parts.uri.path(), "404.tpl: {err}");
            Err(plain())
        }
        Outcome::NotFound => Err(plain()),
    }
}

/// An answer, and whether it carries the site's security headers already:
/// those `respond` makes from a representation do (no controller set any of
/// them, so each is appended, not looked for first); `dispatch` adds them to
/// every other.
pub struct Answer {
    pub response: Response<Body>,
    pub secured: bool,
}

impl Answer {
    fn unsecured(response: Response<Body>) -> Answer {
        Answer {
            response,
            secured: false,
        }
    }
}

/// Turns a controller's outcome into the response.
pub async fn respond(req: &RequestCtx<'_>, outcome: Outcome) -> Answer {
    let mut repr = match outcome {
        Outcome::Found(repr) => repr,
        Outcome::NotFound => {
            if let Some(moved) = moved_instead(req.site, req.parts) {
                return Answer::unsecured(moved);
            }
            req.site.counters().not_found(req.parts.uri.path());
            match not_found_page(req).await {
                Ok(page) => page,
                Err(answer) => return answer,
            }
        }
        Outcome::Response(resp) => return Answer::unsecured(compressed(req, resp)),
        Outcome::Failed(err) if err.kind == RenderErrorKind::StoreBusy => {
            tracing::warn!(site = %req.site.site().name(), path = %req.parts.uri.path(), "{err}");
            req.site.renders().note_database_busy();
            return Answer::unsecured(crate::bottleneck::busy_response());
        }
        Outcome::Failed(err) => {
            tracing::error!(site = %req.site.site().name(), path = %req.parts.uri.path(), "{err}");
            return Answer::unsecured(error_response_for(
                req,
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(&err),
            ));
        }
    };
    if let Some(encoded) = encoded_body(&repr.content)
        && !req.parts.headers.contains_key(RANGE)
        && !(repr.status == StatusCode::OK
            && not_modified(req.parts, repr.etag.as_ref(), repr.last_modified))
    {
        return whole_encoded(req, &repr, encoded);
    }
    if let Content::Page(page) = &repr.content {
        // A range or a revisit: as any encoded body.
        repr.content = Content::Encoded(page.body.clone());
    }
    let head = req.parts.method == Method::HEAD;
    let mut resp = Response::builder().status(repr.status);
    let headers = resp.headers_mut().expect("builder is valid");
    // Room for this answer's headers and the site's security headers at
    // once: grown from empty, the map was reallocated and rehashed on the
    // way out (about 1,300 instructions of a small JSON answer).
    headers.reserve(RESPONSE_HEADERS + req.site.security_headers().count());
    describe(req, &repr, headers);
    if repr.status == StatusCode::OK
        && not_modified(req.parts, repr.etag.as_ref(), repr.last_modified)
    {
        let mut resp = resp
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty())
            .expect("valid");
        if matches!(repr.content, Content::Encoded(_)) {
            resp.headers_mut()
                .insert(VARY, HeaderValue::from_static("Accept-Encoding"));
        }
        return secured(req, &repr.content_type, resp);
    }
    let per_language = in_language(req, &repr, headers);
    let vary = |headers: &mut http::HeaderMap| {
        headers.insert(VARY, vary_value(per_language));
    };
    if per_language {
        vary(headers);
    }
    let range_capable = !matches!(repr.content, Content::Dynamic(_));
    let (body, len) = match repr.content {
        Content::Encoded(encoded) => {
            // Only a range comes here (a whole body was answered above): a
            // part of the file, of its bytes as they are.
            vary(headers);
            match ranged(req, &mut resp, encoded.identity.len() as u64) {
                Ok((start, count)) => {
                    let part = encoded
                        .identity
                        .slice(start as usize..(start + count) as usize);
                    (Body::from(part), count)
                }
                Err(refused) => return Answer::unsecured(*refused),
            }
        }
        Content::Fixed(bytes) => match ranged(req, &mut resp, bytes.len() as u64) {
            Ok((start, count)) => {
                let part = bytes.slice(start as usize..(start + count) as usize);
                (Body::from(part), count)
            }
            Err(refused) => return Answer::unsecured(*refused),
        },
        Content::Dynamic(bytes) => {
            let mut bytes = bytes;
            if bytes.len() >= COMPRESS_MIN {
                vary(headers);
                if let Some((name, encoded)) = in_preferred_encoding(req, &bytes) {
                    headers.insert(CONTENT_ENCODING, HeaderValue::from_static(name));
                    bytes = encoded;
                }
            }
            let len = bytes.len() as u64;
            (Body::from(bytes), len)
        }
        Content::Page(_) => unreachable!("a page is answered as its encoded body above"),
        Content::File { path, len } => {
            let (start, count) = match ranged(req, &mut resp, len) {
                Ok(range) => range,
                Err(refused) => return Answer::unsecured(*refused),
            };
            if head {
                (Body::empty(), count)
            } else {
                // Boxed: opening a file is a large state to hold, and every
                // answer's future would carry its room (and be copied with it).
                match Box::pin(open_at(&path, start)).await {
                    Ok(file) => (Body::stream(file.take(count), count), count),
                    Err(e) => {
                        tracing::warn!("{}: {e}", path.display());
                        return Answer::unsecured(error_response_for(
                            req,
                            StatusCode::NOT_FOUND,
                            None,
                        ));
                    }
                }
            }
        }
    };
    let headers = resp.headers_mut().expect("builder is valid");
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    if range_capable {
        headers.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    }
    let body = if head { Body::empty() } else { body };
    secured(
        req,
        &repr.content_type,
        resp.body(body).expect("headers are valid"),
    )
}

/// `resp`, an answer of type `content_type`, with the site's security
/// headers, which it had none of.
fn secured(req: &RequestCtx<'_>, content_type: &HeaderValue, mut resp: Response<Body>) -> Answer {
    req.site
        .security_headers()
        .add_new(resp.headers_mut(), Some(content_type), req.peer().secure);
    Answer {
        response: resp,
        secured: true,
    }
}

/// The headers that say what a representation is (its type, validators,
/// caching), the first of every answer made of one.
fn describe(req: &RequestCtx<'_>, repr: &Representation, headers: &mut http::HeaderMap) {
    headers.insert(CONTENT_TYPE, repr.content_type.clone());
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(repr.cache_control));
    if repr.stale {
        // RFC 9211: a hit on a cache entry past its freshness.
        headers.insert(
            HeaderName::from_static("cache-status"),
            HeaderValue::from_static("Bulwark; hit; detail=stale-if-error"),
        );
    }
    if let Some(etag) = &repr.etag {
        headers.insert(ETAG, etag.clone());
    }
    if let (Some(keys), Some(surrogate)) = (&repr.surrogate_keys, req.site.surrogate()) {
        headers.insert(surrogate.header.clone(), keys.clone());
        headers.insert(
            HeaderName::from_static("surrogate-control"),
            surrogate.control.clone(),
        );
    }
    if repr.attachment {
        headers.insert(CONTENT_DISPOSITION, HeaderValue::from_static("attachment"));
    }
    if let Some(modified) = repr.last_modified {
        headers.insert(
            LAST_MODIFIED,
            HeaderValue::from_str(&httpdate::fmt_http_date(modified)).expect("dates are ASCII"),
        );
    }
}

/// `Content-Language` for an answer in the visitor's language on a site with
/// several; whether it is one (and so varies by `Accept-Language`).
fn in_language(req: &RequestCtx<'_>, repr: &Representation, headers: &mut http::HeaderMap) -> bool {
    let per_language = repr.per_language && req.site.config().languages.len() > 1;
    if per_language && let Ok(lang) = HeaderValue::from_str(req.language()) {
        headers.insert(http::header::CONTENT_LANGUAGE, lang);
    }
    per_language
}

fn vary_value(per_language: bool) -> HeaderValue {
    HeaderValue::from_static(if per_language {
        "Accept-Encoding, Accept-Language"
    } else {
        "Accept-Encoding"
    })
}

/// The body of an encoded representation (a static file, a cached page).
fn encoded_body(content: &Content) -> Option<&EncodedBody> {
    match content {
        Content::Encoded(encoded) => Some(encoded),
        Content::Page(page) => Some(&page.body),
        _ => None,
    }
}

/// The whole of an encoded body (no range, not a revisit) in the encoding
/// the request takes. A page from the page cache copies the headers prepared
/// for its hits (building each header again cost a cached page a tenth of its
/// instructions); a stale one, whose answer says so, and a static file have
/// the same made here.
fn whole_encoded(req: &RequestCtx<'_>, repr: &Representation, encoded: &EncodedBody) -> Answer {
    let encoding = negotiate(&req.parts.headers);
    let mut headers = match &repr.content {
        Content::Page(page) if !repr.stale => prepared_head(req, page, repr, encoding),
        _ => whole_head(req, encoded, repr, encoding),
    };
    if req.peer().secure {
        req.site.security_headers().add_tls_only(&mut headers);
    }
    let body = if req.parts.method == Method::HEAD {
        Body::empty()
    } else {
        Body::from(encoded.get(encoding).clone())
    };
    let mut resp = Response::new(body);
    *resp.status_mut() = repr.status;
    *resp.headers_mut() = headers;
    Answer {
        response: resp,
        secured: true,
    }
}

/// A copy of the page's prepared headers for its body in `encoding`, made
/// now if they were made for another load of the site (or never).
fn prepared_head(
    req: &RequestCtx<'_>,
    page: &CachedPage,
    repr: &Representation,
    encoding: Encoding,
) -> HeaderMap {
    let made_for = req.site.identity();
    let loaded = page.head.load();
    let made;
    let prepared = match &*loaded {
        Some(prepared) if Arc::ptr_eq(&prepared.made_for, made_for) => prepared,
        _ => {
            made = Arc::new(PreparedHead::new(made_for.clone()));
            page.head.store(Some(made.clone()));
            &made
        }
    };
    prepared
        .get_or_make(encoding, || whole_head(req, &page.body, repr, encoding))
        .clone()
}

/// The headers of the whole of an encoded body in `encoding` (all but the
/// TLS-only ones): what a cached page's prepared headers hold.
fn whole_head(
    req: &RequestCtx<'_>,
    encoded: &EncodedBody,
    repr: &Representation,
    encoding: Encoding,
) -> HeaderMap {
    let security = req.site.security_headers();
    let mut headers = HeaderMap::with_capacity(RESPONSE_HEADERS + 4 + security.count());
    describe(req, repr, &mut headers);
    let per_language = in_language(req, repr, &mut headers);
    headers.insert(VARY, vary_value(per_language));
    if let Some(name) = encoding.header_value() {
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static(name));
    }
    let len = encoded.get(encoding).len();
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    headers.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    security.add_new(&mut headers, Some(&repr.content_type), false);
    headers
}

/// An answer a controller built whole (the JSON API, the admin's and the
/// modules' own answers), compressed as a rendered page is: when it is text or
/// JSON, large enough, not encoded already, and the client takes an encoding.
fn compressed(req: &RequestCtx<'_>, mut resp: Response<Body>) -> Response<Body> {
    let Body::Full(Some(bytes)) = resp.body() else {
        return resp;
    };
    let headers = resp.headers();
    if bytes.len() < COMPRESS_MIN
        || resp.status() == StatusCode::PARTIAL_CONTENT
        || headers.contains_key(CONTENT_ENCODING)
        || !headers.get(CONTENT_TYPE).is_some_and(compressible)
    {
        return resp;
    }
    let encoded = in_preferred_encoding(req, bytes);
    let headers = resp.headers_mut();
    headers.append(VARY, HeaderValue::from_static("Accept-Encoding"));
    if let Some((name, body)) = encoded {
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static(name));
        if headers.contains_key(CONTENT_LENGTH) {
            headers.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
        }
        *resp.body_mut() = Body::from(body);
    }
    resp
}

/// A body made for this request in the encoding the client prefers, with the
/// encoding's name; `None` when it takes none.
fn in_preferred_encoding(req: &RequestCtx<'_>, bytes: &[u8]) -> Option<(&'static str, Bytes)> {
    let encoding = negotiate(&req.parts.headers);
    let name = encoding.header_value()?;
    Some((name, compress(bytes, encoding, Effort::Fast)))
}

/// Whether a body of this type is worth compressing: text, JSON, XML and
/// scripts (not images, archives or anything compressed already).
fn compressible(content_type: &HeaderValue) -> bool {
    let essence = content_type
        .to_str()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json" | "application/xml" | "application/javascript"
        )
}

/// The part of a body of `len` bytes the request asks for (`Range`), as
/// `(start, count)`, with the response made partial; the whole body when it
/// asks for none; `Err`: the 416 to send.
fn ranged(
    req: &RequestCtx<'_>,
    resp: &mut http::response::Builder,
    len: u64,
) -> Result<(u64, u64), Box<Response<Body>>> {
    let Some(header) = req.parts.headers.get(RANGE).and_then(|r| r.to_str().ok()) else {
        return Ok((0, len));
    };
    let Some((start, end)) = parse_range(header, len) else {
        let mut refused = error_response_for(req, StatusCode::RANGE_NOT_SATISFIABLE, None);
        refused.headers_mut().insert(
            CONTENT_RANGE,
            HeaderValue::from_str(&format!("bytes */{len}")).expect("ASCII"),
        );
        return Err(Box::new(refused));
    };
    let builder = std::mem::take(resp).status(StatusCode::PARTIAL_CONTENT);
    *resp = builder;
    resp.headers_mut().expect("valid").insert(
        CONTENT_RANGE,
        HeaderValue::from_str(&format!("bytes {start}-{end}/{len}")).expect("ASCII"),
    );
    Ok((start, end - start + 1))
}
