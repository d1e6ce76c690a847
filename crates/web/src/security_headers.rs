//! The security headers a site sends with every response: its pages (cached or
//! not), static files, errors, redirects and the API alike, because they are added
//! in one place, on the way out of [`dispatch`](crate::dispatch). What they say
//! comes from the site's `[headers]` (defaults in `bulwark-site`); the values are
//! built once, when the site loads, with `'static` bytes, so adding them to a
//! response copies a few pointers (a value built from a `String` is reference
//! counted: two atomic operations per header per response, which showed in the
//! profile of a small JSON answer).
//!
//! A response that already carries one of these headers keeps its own: a
//! controller that needs another policy for its answer sets it.
//!
//! `X-Content-Type-Options` (and HSTS over TLS) goes on every answer; the
//! policies that only mean something for a document a browser renders
//! (`Content-Security-Policy`, `X-Frame-Options`, `Referrer-Policy`) go on
//! documents: HTML, XHTML, SVG and other XML, scripts (a worker runs under
//! the policy its script came with) and answers without a body type
//! (redirects). A JSON answer, a stylesheet or a picture is not a document:
//! with `nosniff` it is never read as one, and the 300 bytes of a policy on
//! every API answer cost the server and every client that parses them (the
//! headers of a 27-byte JSON answer had grown from 110 to 450 bytes).

use bulwark_site::SecurityHeaderSettings;
use http::header::{CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use http::{HeaderMap, HeaderName, HeaderValue};

pub struct SecurityHeaders {
    always: Vec<(HeaderName, HeaderValue)>,
    /// Only on documents (see the module's notes).
    documents: Vec<(HeaderName, HeaderValue)>,
    /// `Strict-Transport-Security` is only meaningful, and only honoured, over TLS.
    tls_only: Vec<(HeaderName, HeaderValue)>,
}

impl SecurityHeaders {
    pub fn new(settings: &SecurityHeaderSettings) -> SecurityHeaders {
        let mut headers = SecurityHeaders {
            always: Vec::new(),
            documents: Vec::new(),
            tls_only: Vec::new(),
        };
        for header in settings.enabled() {
            let name = HeaderName::from_static(header.name);
            let value = HeaderValue::from_maybe_shared(bytes::Bytes::from_static(
                interned(header.value).as_bytes(),
            ))
            .expect("bulwark-site checked that it is a header value");
            if header.tls_only {
                headers.tls_only.push((name, value));
            } else if name == X_CONTENT_TYPE_OPTIONS {
                headers.always.push((name, value));
            } else {
                headers.documents.push((name, value));
            }
        }
        headers
    }

    /// The most headers [`add_to`](Self::add_to) adds (to a document over TLS).
    pub fn count(&self) -> usize {
        self.always.len() + self.documents.len() + self.tls_only.len()
    }

    /// Adds the headers a response does not set itself; `secure`: the connection
    /// is TLS.
    pub fn add_to(&self, response: &mut HeaderMap, secure: bool) {
        let document = is_document(response.get(CONTENT_TYPE));
        for (name, value) in self.for_answer(document, secure) {
            if let http::header::Entry::Vacant(entry) = response.entry(name) {
                entry.insert(value.clone());
            }
        }
    }

    /// Adds the headers to an answer of type `content_type` that carries none
    /// of them yet (one `respond` made): each is appended, not looked for first.
    pub fn add_new(
        &self,
        response: &mut HeaderMap,
        content_type: Option<&HeaderValue>,
        secure: bool,
    ) {
        for (name, value) in self.for_answer(is_document(content_type), secure) {
            response.append(name.clone(), value.clone());
        }
    }

    /// The headers only TLS answers carry, to an answer given the others with
    /// `secure` false (a cached page's prepared headers).
    pub fn add_tls_only(&self, response: &mut HeaderMap) {
        for (name, value) in &self.tls_only {
            response.append(name.clone(), value.clone());
        }
    }

    fn for_answer(
        &self,
        document: bool,
        secure: bool,
    ) -> impl Iterator<Item = &(HeaderName, HeaderValue)> {
        let tls_only = if secure { &self.tls_only[..] } else { &[] };
        let documents = if document { &self.documents[..] } else { &[] };
        self.always.iter().chain(documents).chain(tls_only)
    }
}

/// Whether an answer is a document a browser may render (by its type; an
/// answer without one, a redirect or an empty answer, counts as one).
fn is_document(content_type: Option<&HeaderValue>) -> bool {
    let Some(kind) = content_type else {
        return true;
    };
    let kind = kind.as_bytes();
    let essence = kind
        .split(|b| *b == b';')
        .next()
        .unwrap_or(kind)
        .trim_ascii();
    let ends_with = |suffix: &[u8]| {
        essence.len() >= suffix.len()
            && essence[essence.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    essence.eq_ignore_ascii_case(b"text/html")
        || ends_with(b"/xml")
        || ends_with(b"+xml")
        || ends_with(b"javascript")
}

/// `value` with a `'static` lifetime: each distinct value is leaked once for
/// the life of the process and found again on later loads, so reloading sites
/// does not leak more. Checked as a header value by `bulwark-site`.
fn interned(value: &str) -> &'static str {
    static SEEN: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = seen.get(value) {
        return known;
    }
    let leaked: &'static str = Box::leak(value.to_owned().into_boxed_str());
    seen.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(kind: &str) -> HeaderValue {
        HeaderValue::from_str(kind).unwrap()
    }

    #[test]
    fn documents_are_told_by_their_type() {
        for kind in [
            "text/html; charset=utf-8",
            "TEXT/HTML",
            "application/xhtml+xml",
            "image/svg+xml",
            "application/xml",
            "text/xml",
            "text/javascript",
            "application/javascript; charset=utf-8",
        ] {
            assert!(is_document(Some(&typed(kind))), "{kind}");
        }
        assert!(is_document(None), "no type: a redirect");
        for kind in [
            "application/json",
            "application/problem+json",
            "text/css",
            "image/png",
            "text/plain",
            "application/octet-stream",
        ] {
            assert!(!is_document(Some(&typed(kind))), "{kind}");
        }
    }
}
