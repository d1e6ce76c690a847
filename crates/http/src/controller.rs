//! Controllers and the one flow every request goes through.
//!
//! As in Webmachine, a controller only answers questions (which methods, does the
//! thing exist, when was it modified, what are its bytes) and [`respond`] makes the
//! HTTP decisions (405, 404, 304, HEAD, ranges, content encoding) in one place. Unlike
//! Webmachine, a controller answers them all at once in [`Controller::resolve`], so no
//! callback is ever called twice and no state has to be threaded between callbacks.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::header::{
    ACCEPT_RANGES, ALLOW, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE,
    CONTENT_TYPE, IF_MODIFIED_SINCE, LAST_MODIFIED, RANGE, VARY,
};
use http::{HeaderValue, Method, Response, StatusCode, request::Parts};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use crate::body::Body;
use crate::encoding::{Effort, Encoding, compress, negotiate};
use crate::error_page::error_response;
use crate::runtime::SiteRuntime;

/// What a controller knows about the request.
pub struct RequestCtx<'a> {
    pub parts: &'a Parts,
    /// Path arguments from the dispatch rule, percent-decoded.
    pub args: &'a [(String, String)],
    pub site: &'a SiteRuntime,
    /// The request body, already read within the size limit (POST/PUT only).
    pub body: Bytes,
    /// The connection, for a controller that switches protocols (WebSocket).
    pub upgrade: std::sync::Mutex<Option<hyper::upgrade::OnUpgrade>>,
    /// [`language`](Self::language) (its index in the site's languages), worked
    /// out on first use: the page cache key, the render and `Content-Language`
    /// all ask.
    pub language: std::sync::OnceLock<usize>,
}

pub const GET_HEAD: &[Method] = &[Method::GET, Method::HEAD];

impl RequestCtx<'_> {
    /// The site language this visitor gets: the first of their `Accept-Language`
    /// preferences that the site has (`nl-BE` matches `nl`), else the site's first.
    pub fn language(&self) -> &str {
        let languages = &self.site.site.config.languages;
        let index = *self.language.get_or_init(|| self.pick_language());
        languages.get(index).map_or("en", String::as_str)
    }

    fn pick_language(&self) -> usize {
        let languages = &self.site.site.config.languages;
        if languages.len() > 1
            && let Some(header) = self
                .parts
                .headers
                .get(http::header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
        {
            // Best first; `q=0` means "not this one".
            for (wanted, quality) in accept_language::parse_with_quality(header) {
                if quality <= 0.0 {
                    continue;
                }
                let wanted = wanted.to_ascii_lowercase();
                let primary = wanted.split('-').next().unwrap_or("");
                if let Some(index) = languages
                    .iter()
                    .position(|l| *l == wanted)
                    .or_else(|| languages.iter().position(|l| l == primary))
                {
                    return index;
                }
            }
        }
        0
    }
}

/// A resource's bytes, in one of three shapes.
pub enum Content {
    /// Encoded once and kept (static files): identity, gzip and brotli variants.
    Encoded(Arc<EncodedBody>),
    /// Produced for this request; compressed on the way out when large enough.
    Dynamic(Bytes),
    /// Streamed from disk, with range support.
    File { path: PathBuf, len: u64 },
}

pub struct EncodedBody {
    pub identity: Bytes,
    pub gzip: Bytes,
    pub brotli: Bytes,
}

impl EncodedBody {
    pub fn new(identity: Bytes) -> EncodedBody {
        EncodedBody {
            gzip: compress(&identity, Encoding::Gzip, Effort::Best),
            brotli: compress(&identity, Encoding::Brotli, Effort::Best),
            identity,
        }
    }

    pub fn weight(&self) -> u32 {
        (self.identity.len() + self.gzip.len() + self.brotli.len()).min(u32::MAX as usize) as u32
    }
}

pub struct Representation {
    pub status: StatusCode,
    pub content_type: HeaderValue,
    pub last_modified: Option<SystemTime>,
    pub cache_control: &'static str,
    pub content: Content,
    /// Rendered in the visitor's language: on a site with several, the answer
    /// says so (`Content-Language`) and caches keep one copy per language.
    pub per_language: bool,
}

pub enum Outcome {
    Found(Representation),
    NotFound,
    /// The controller built the whole response itself (redirects, 413...).
    Response(Response<Body>),
    /// Something broke: a 500, with details in development mode.
    Failed(bulwark_template::RenderError),
}

pub trait Controller: Send + Sync {
    /// Methods this controller answers; others get `405` with an `Allow` header.
    fn allowed_methods(&self) -> &'static [Method] {
        GET_HEAD
    }

    /// Whether the request body should be read (within the limit) before `resolve`.
    fn reads_body(&self) -> bool {
        false
    }

    /// Whether answering may wait a long time (a long-poll). Such a request gets
    /// its own copy of its head, so that it does not keep the connection's read
    /// buffer alive while it waits (see `server::detach_from_read_buffer`).
    fn waits_long(&self) -> bool {
        false
    }

    /// Finds the resource and everything `respond` needs to answer. Called once.
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome>;
}

/// Bodies smaller than this are sent as they are: compressing them costs more than
/// it saves.
const COMPRESS_MIN: usize = 1024;

pub async fn respond(controller: &dyn Controller, req: &RequestCtx<'_>) -> Response<Body> {
    let method = &req.parts.method;
    if !controller.allowed_methods().contains(method) {
        let allow = controller
            .allowed_methods()
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        let mut resp = error_response(req.site, StatusCode::METHOD_NOT_ALLOWED, None);
        resp.headers_mut().insert(
            ALLOW,
            HeaderValue::from_str(&allow).expect("method names are ASCII"),
        );
        return resp;
    }
    let repr = match controller.resolve(req).await {
        Outcome::Found(repr) => repr,
        Outcome::NotFound => return error_response(req.site, StatusCode::NOT_FOUND, None),
        Outcome::Response(resp) => return resp,
        Outcome::Failed(err) if err.busy => {
            tracing::warn!(site = %req.site.site.name(), path = %req.parts.uri.path(), "{err}");
            req.site.renders.note_database_busy();
            return crate::bottleneck::busy_response();
        }
        Outcome::Failed(err) => {
            tracing::error!(site = %req.site.site.name(), path = %req.parts.uri.path(), "{err}");
            return error_response(req.site, StatusCode::INTERNAL_SERVER_ERROR, Some(&err));
        }
    };
    let head = *method == Method::HEAD;
    let mut resp = Response::builder().status(repr.status);
    let headers = resp.headers_mut().expect("builder is valid");
    headers.insert(CONTENT_TYPE, repr.content_type);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(repr.cache_control));
    if let Some(modified) = repr.last_modified {
        headers.insert(
            LAST_MODIFIED,
            HeaderValue::from_str(&httpdate::fmt_http_date(modified)).expect("dates are ASCII"),
        );
        if repr.status == StatusCode::OK && not_modified_since(req.parts, modified) {
            let mut resp = resp
                .status(StatusCode::NOT_MODIFIED)
                .body(Body::empty())
                .expect("valid");
            if matches!(repr.content, Content::Encoded(_)) {
                resp.headers_mut()
                    .insert(VARY, HeaderValue::from_static("Accept-Encoding"));
            }
            return resp;
        }
    }
    let per_language = repr.per_language && req.site.site.config.languages.len() > 1;
    if per_language && let Ok(lang) = HeaderValue::from_str(req.language()) {
        headers.insert(http::header::CONTENT_LANGUAGE, lang);
    }
    let vary = |headers: &mut http::HeaderMap| {
        headers.insert(
            VARY,
            HeaderValue::from_static(if per_language {
                "Accept-Encoding, Accept-Language"
            } else {
                "Accept-Encoding"
            }),
        );
    };
    if per_language {
        vary(headers);
    }
    let (body, len) = match repr.content {
        Content::Encoded(encoded) => {
            vary(headers);
            let encoding = negotiate(&req.parts.headers);
            let bytes = match encoding {
                Encoding::Identity => encoded.identity.clone(),
                Encoding::Gzip => encoded.gzip.clone(),
                Encoding::Brotli => encoded.brotli.clone(),
            };
            if let Some(name) = encoding.header_value() {
                headers.insert(CONTENT_ENCODING, HeaderValue::from_static(name));
            }
            let len = bytes.len() as u64;
            (Body::from(bytes), len)
        }
        Content::Dynamic(bytes) => {
            let mut bytes = bytes;
            if bytes.len() >= COMPRESS_MIN {
                vary(headers);
                let encoding = negotiate(&req.parts.headers);
                if let Some(name) = encoding.header_value() {
                    headers.insert(CONTENT_ENCODING, HeaderValue::from_static(name));
                    bytes = compress(&bytes, encoding, Effort::Fast);
                }
            }
            let len = bytes.len() as u64;
            (Body::from(bytes), len)
        }
        Content::File { path, len } => {
            headers.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
            let range = match req.parts.headers.get(RANGE).and_then(|r| r.to_str().ok()) {
                None => None,
                Some(r) => match parse_range(r, len) {
                    Some(range) => Some(range),
                    None => {
                        let mut resp =
                            error_response(req.site, StatusCode::RANGE_NOT_SATISFIABLE, None);
                        resp.headers_mut().insert(
                            CONTENT_RANGE,
                            HeaderValue::from_str(&format!("bytes */{len}")).expect("ASCII"),
                        );
                        return resp;
                    }
                },
            };
            let (start, count) = match range {
                Some((start, end)) => {
                    resp = resp.status(StatusCode::PARTIAL_CONTENT);
                    resp.headers_mut().expect("valid").insert(
                        CONTENT_RANGE,
                        HeaderValue::from_str(&format!("bytes {start}-{end}/{len}"))
                            .expect("ASCII"),
                    );
                    (start, end - start + 1)
                }
                None => (0, len),
            };
            if head {
                (Body::empty(), count)
            } else {
                match open_at(&path, start).await {
                    Ok(file) => (Body::stream(file.take(count), count), count),
                    Err(e) => {
                        tracing::warn!("{}: {e}", path.display());
                        return error_response(req.site, StatusCode::NOT_FOUND, None);
                    }
                }
            }
        }
    };
    let headers = resp.headers_mut().expect("builder is valid");
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    let body = if head { Body::empty() } else { body };
    resp.body(body).expect("headers are valid")
}

async fn open_at(path: &std::path::Path, start: u64) -> std::io::Result<tokio::fs::File> {
    let mut file = tokio::fs::File::open(path).await?;
    if start > 0 {
        file.seek(std::io::SeekFrom::Start(start)).await?;
    }
    Ok(file)
}

fn not_modified_since(parts: &Parts, modified: SystemTime) -> bool {
    let Some(since) = parts
        .headers
        .get(IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v).ok())
    else {
        return false;
    };
    // HTTP dates have whole seconds.
    let secs = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    };
    secs(modified) <= secs(since)
}

/// One `bytes=` range, as inclusive `(start, end)` within `len`. Multiple ranges are
/// answered with the first (a permitted simplification: no multipart bodies).
fn parse_range(header: &str, len: u64) -> Option<(u64, u64)> {
    let spec = header
        .trim()
        .strip_prefix("bytes=")?
        .split(',')
        .next()?
        .trim();
    let (start, end) = spec.split_once('-')?;
    let (start, end) = match (start.trim(), end.trim()) {
        ("", suffix) => {
            let n: u64 = suffix.parse().ok()?;
            if n == 0 {
                return None;
            }
            (len.saturating_sub(n), len.checked_sub(1)?)
        }
        (s, "") => (s.parse().ok()?, len.checked_sub(1)?),
        (s, e) => (
            s.parse().ok()?,
            e.parse::<u64>().ok()?.min(len.checked_sub(1)?),
        ),
    };
    (start <= end && start < len).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::parse_range;

    #[test]
    fn ranges_are_parsed_and_clamped() {
        assert_eq!(parse_range("bytes=0-9", 100), Some((0, 9)));
        assert_eq!(parse_range("bytes=90-", 100), Some((90, 99)));
        assert_eq!(parse_range("bytes=-10", 100), Some((90, 99)));
        assert_eq!(parse_range("bytes=50-500", 100), Some((50, 99)));
        assert_eq!(parse_range("bytes=100-", 100), None);
        assert_eq!(parse_range("bytes=9-1", 100), None);
        assert_eq!(parse_range("items=0-1", 100), None);
        assert_eq!(parse_range("bytes=0-0", 0), None);
    }
}
