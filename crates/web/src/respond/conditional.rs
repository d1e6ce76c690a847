//! Conditional requests: `If-None-Match` (with the representation's `ETag`),
//! else `If-Modified-Since` (RFC 9110 §13.2.2: the first decides when both
//! are sent).

use std::time::SystemTime;

use http::HeaderValue;
use http::header::{IF_MODIFIED_SINCE, IF_NONE_MATCH};
use http::request::Parts;

/// Whether the client's copy is current: the answer is 304. For answers made
/// outside [`respond`](super::respond) too (the JSON API's reads).
pub fn not_modified(
    parts: &Parts,
    etag: Option<&HeaderValue>,
    modified: Option<SystemTime>,
) -> bool {
    if let Some(asked) = parts.headers.get(IF_NONE_MATCH) {
        let Some(etag) = etag.and_then(|e| e.to_str().ok()) else {
            return false;
        };
        return asked
            .to_str()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || weak_eq(tag, etag));
    }
    modified.is_some_and(|m| not_modified_since(parts, m))
}

/// Weak comparison: `W/"x"` and `"x"` are the same.
fn weak_eq(a: &str, b: &str) -> bool {
    a.trim_start_matches("W/") == b.trim_start_matches("W/")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut req = http::Request::builder().uri("/");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.body(()).unwrap().into_parts().0
    }

    #[test]
    fn an_etag_decides_before_the_date() {
        let etag = HeaderValue::from_static("\"5f-14\"");
        let now = Some(SystemTime::now());
        let later = httpdate::fmt_http_date(SystemTime::now() + std::time::Duration::from_secs(60));
        assert!(not_modified(
            &parts(&[("if-none-match", "\"5f-14\"")]),
            Some(&etag),
            now
        ));
        assert!(not_modified(
            &parts(&[("if-none-match", "\"a\", W/\"5f-14\"")]),
            Some(&etag),
            now
        ));
        assert!(not_modified(
            &parts(&[("if-none-match", "*")]),
            Some(&etag),
            now
        ));
        // A tag that does not match wins over a date that would.
        let stale_tag = parts(&[("if-none-match", "\"old\""), ("if-modified-since", &later)]);
        assert!(!not_modified(&stale_tag, Some(&etag), now));
        assert!(not_modified(
            &parts(&[("if-modified-since", &later)]),
            Some(&etag),
            now
        ));
        assert!(!not_modified(&parts(&[]), Some(&etag), now));
    }
}
