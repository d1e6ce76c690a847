//! The security headers a site sends with every response: its pages (cached or
//! not), static files, errors, redirects and the API alike, because they are added
//! in one place, on the way out of [`dispatch`](crate::dispatch). What they say
//! comes from the site's `[headers]` (defaults in `bulwark-site`); the values are
//! built once, when the site loads, so a response only clones a few of them.
//!
//! A response that already carries one of these headers keeps its own: a
//! controller that needs another policy for its answer sets it.

use bulwark_site::SecurityHeaderSettings;
use http::{HeaderMap, HeaderName, HeaderValue};

pub struct SecurityHeaders {
    always: Vec<(HeaderName, HeaderValue)>,
    /// `Strict-Transport-Security` is only meaningful, and only honoured, over TLS.
    tls_only: Vec<(HeaderName, HeaderValue)>,
}

impl SecurityHeaders {
    pub fn new(settings: &SecurityHeaderSettings) -> SecurityHeaders {
        let mut headers = SecurityHeaders {
            always: Vec::new(),
            tls_only: Vec::new(),
        };
        for header in settings.enabled() {
            let name = HeaderName::from_static(header.name);
            let value = HeaderValue::from_str(header.value)
                .expect("bulwark-site checked that it is a header value");
            if header.tls_only {
                headers.tls_only.push((name, value));
            } else {
                headers.always.push((name, value));
            }
        }
        headers
    }

    /// Adds the headers a response does not set itself; `secure`: the connection
    /// is TLS.
    pub fn add_to(&self, response: &mut HeaderMap, secure: bool) {
        let tls_only = if secure { &self.tls_only[..] } else { &[] };
        for (name, value) in self.always.iter().chain(tls_only) {
            if !response.contains_key(name) {
                response.insert(name.clone(), value.clone());
            }
        }
    }
}
