//! Conditional requests: `If-Modified-Since`.

use std::time::SystemTime;

use http::header::IF_MODIFIED_SINCE;
use http::request::Parts;

pub(super) fn not_modified_since(parts: &Parts, modified: SystemTime) -> bool {
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
