//! The few answers the protocol layer gives itself (a request that panicked, a
//! request without a usable host) and the shape every HTML answer shares.

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};

use crate::body::Body;

/// An HTML answer that browsers must not store.
pub fn html_response(status: StatusCode, html: String) -> Response<Body> {
    let len = html.len();
    let mut resp = Response::new(Body::from(Bytes::from(html)));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(CONTENT_LENGTH, HeaderValue::from(len));
    resp
}

/// A page that says only the status, for when nothing better can be rendered.
pub fn plain_error_page(status: StatusCode) -> String {
    let reason = status.canonical_reason().unwrap_or("");
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{0} {1}</title></head>\
         <body><h1>{0} {1}</h1></body></html>",
        status.as_u16(),
        reason
    )
}

/// [`plain_error_page`] as a response; `close` ends the connection after it
/// (the request could not be understood, so what follows on the wire cannot be).
pub fn plain_response(status: StatusCode, close: bool) -> Response<Body> {
    let mut resp = html_response(status, plain_error_page(status));
    if close {
        resp.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}
