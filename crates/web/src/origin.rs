//! Where a request comes from, by the headers browsers add: `Origin` (every
//! cross-origin request, and every `POST` a page makes) and `Sec-Fetch-Site`.
//!
//! A state-changing request a page on another site made is refused whatever
//! it carries (`dispatch.rs`): without this a form elsewhere could log a
//! visitor on as the attacker (login CSRF), where no session and so no CSRF
//! token exists yet. Programs send neither header and are not affected, nor
//! is a request with an `Authorization` header (a script's token is not
//! something another page can make a browser send). The push module asks the
//! same of a WebSocket handshake, which browsers let any page open.
//!
//! Same origin means the same host and port as the request was sent to
//! (`Host`, or the HTTP/2 authority), default ports counted: a page at
//! `http://localhost:9999` is not the site at `http://localhost:8000`.

use http::header::{HOST, ORIGIN};
use http::request::Parts;

/// What the browser says of where a request comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// No `Origin` and no cross-site `Sec-Fetch-Site`: a program, or a page
    /// of the site itself in a browser that says nothing.
    Unsaid,
    /// A page of the site itself.
    Own,
    /// A page elsewhere, `null` (a sandboxed or local page), or a header that
    /// cannot be read.
    Foreign,
}

/// Where `parts` comes from.
pub fn origin_of(parts: &Parts) -> Origin {
    let fetch_site = parts
        .headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok());
    if matches!(fetch_site, Some("cross-site" | "same-site")) {
        return Origin::Foreign;
    }
    let Some(origin) = parts.headers.get(ORIGIN) else {
        return Origin::Unsaid;
    };
    let Some((scheme, authority)) = origin.to_str().ok().and_then(|o| o.split_once("://")) else {
        return Origin::Foreign;
    };
    let asked = parts
        .uri
        .authority()
        .map(|a| a.as_str())
        .or_else(|| parts.headers.get(HOST)?.to_str().ok());
    match asked {
        Some(asked) if same_authority(scheme, authority, asked) => Origin::Own,
        _ => Origin::Foreign,
    }
}

/// Whether `authority` (of an origin with `scheme`) names the host and port
/// `asked` does; a missing port is the scheme's default.
fn same_authority(scheme: &str, authority: &str, asked: &str) -> bool {
    let default = match scheme.to_ascii_lowercase().as_str() {
        "https" | "wss" => "443",
        _ => "80",
    };
    let split = |a: &str| -> (String, String) {
        // An IPv6 literal keeps its colons inside brackets.
        match a.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') && !port.is_empty() => {
                (host.to_ascii_lowercase(), port.to_owned())
            }
            _ => (a.to_ascii_lowercase(), default.to_owned()),
        }
    };
    split(authority) == split(asked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut req = http::Request::post("/logon");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.body(()).unwrap().into_parts().0
    }

    #[test]
    fn an_origin_is_the_sites_own_only_with_the_same_host_and_port() {
        let host = ("host", "localhost:8000");
        for (origin, expected) in [
            ("http://localhost:8000", Origin::Own),
            ("http://LOCALHOST:8000", Origin::Own),
            ("http://localhost:9999", Origin::Foreign),
            ("http://localhost", Origin::Foreign),
            ("http://evil.example:8000", Origin::Foreign),
            ("null", Origin::Foreign),
        ] {
            assert_eq!(
                origin_of(&parts(&[host, ("origin", origin)])),
                expected,
                "{origin}"
            );
        }
        let plain = ("host", "example.org");
        assert_eq!(
            origin_of(&parts(&[plain, ("origin", "http://example.org")])),
            Origin::Own
        );
        assert_eq!(
            origin_of(&parts(&[
                ("host", "example.org:443"),
                ("origin", "https://example.org")
            ])),
            Origin::Own
        );
        assert_eq!(origin_of(&parts(&[plain])), Origin::Unsaid);
        assert_eq!(
            origin_of(&parts(&[plain, ("sec-fetch-site", "cross-site")])),
            Origin::Foreign
        );
        assert_eq!(
            origin_of(&parts(&[plain, ("sec-fetch-site", "same-origin")])),
            Origin::Unsaid
        );
    }
}
