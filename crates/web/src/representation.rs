//! What a controller answers with: a representation of the thing asked for (its
//! bytes in one of three shapes and what `respond` needs to send them), or
//! another outcome.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};

use bulwark_http::{Body, EncodedBody};

use bulwark_template::{CachedPage, RenderError};

/// A resource's bytes, in one of three shapes.
pub enum Content {
    /// Encoded once and kept (static files): identity, gzip and brotli variants.
    Encoded(Arc<EncodedBody>),
    /// Produced for this request; compressed on the way out when large enough.
    Dynamic(Bytes),
    /// Held in memory and sent as it is (images and other formats compressed
    /// already), with range support.
    Fixed(Bytes),
    /// Streamed from disk, with range support.
    File { path: PathBuf, len: u64 },
    /// A page from the page cache: its encoded bytes, and the headers
    /// prepared for its hits.
    Page(Arc<CachedPage>),
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
    /// A cached page served past its freshness because rendering it again failed
    /// (stale-if-error): the answer says so in `Cache-Status`.
    pub stale: bool,
    /// A validator (`ETag`): `If-None-Match` with it is answered 304.
    pub etag: Option<HeaderValue>,
    /// Sent as a download (`Content-Disposition: attachment`): for types a
    /// browser would run (HTML, SVG...) served from uploaded files.
    pub attachment: bool,
    /// For a shared cache in front: the page's dependency keys as surrogate
    /// keys (a page from the page cache, on a site that sends them).
    pub surrogate_keys: Option<HeaderValue>,
}

pub enum Outcome {
    Found(Representation),
    NotFound,
    /// The controller built the whole response itself (redirects, 413...).
    Response(Response<Body>),
    /// Something broke: a 500, with details in development mode.
    Failed(RenderError),
}
