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
//! `http://localhost:9999` is not the site at `http://localhost:8000`. Behind
//! a proxy that does not pass `Host` on, the site's own names on the default
//! port of their scheme (`https://example.org`) are its pages too: nobody but
//! the site serves pages there, where another port may be anyone's.

use http::header::{HOST, ORIGIN};
use http::request::Parts;

use crate::site::SiteRuntime;

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

/// Where a request to `site` comes from.
pub fn origin_of(parts: &Parts, site: &SiteRuntime) -> Origin {
    let config = site.config();
    let names =
        std::iter::once(config.hostname.as_str()).chain(config.aliases.iter().map(String::as_str));
    origin_among(parts, names)
}

/// Where `parts` comes from, for a site named `names` (its host name and
/// aliases).
fn origin_among<'a>(parts: &Parts, names: impl IntoIterator<Item = &'a str>) -> Origin {
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
    if asked.is_some_and(|asked| same_authority(scheme, authority, asked)) {
        return Origin::Own;
    }
    let default = default_port(scheme);
    let (host, port) = split_authority(authority, default);
    if port == default && names.into_iter().any(|n| n.eq_ignore_ascii_case(&host)) {
        Origin::Own
    } else {
        Origin::Foreign
    }
}

fn default_port(scheme: &str) -> &'static str {
    match scheme.to_ascii_lowercase().as_str() {
        "https" | "wss" => "443",
        _ => "80",
    }
}

/// Host (lower case) and port (`default` when none is written) of an
/// authority; an IPv6 literal keeps its colons inside brackets.
fn split_authority(authority: &str, default: &str) -> (String, String) {
    match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') && !port.is_empty() => {
            (host.to_ascii_lowercase(), port.to_owned())
        }
        _ => (authority.to_ascii_lowercase(), default.to_owned()),
    }
}

/// Whether `authority` (of an origin with `scheme`) names the host and port
/// `asked` does; a missing port is the scheme's default.
fn same_authority(scheme: &str, authority: &str, asked: &str) -> bool {
    let default = default_port(scheme);
    split_authority(authority, default) == split_authority(asked, default)
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

    const NAMES: [&str; 2] = ["example.org", "www.example.org"];

    #[test]
    fn an_origin_is_the_sites_own_only_with_the_same_host_and_port() {
        let host = ("host", "example.org:8000");
        for (origin, expected) in [
            ("http://example.org:8000", Origin::Own),
            ("http://EXAMPLE.org:8000", Origin::Own),
            // The site's names on their scheme's default port: its pages
            // (behind a proxy that does not pass Host on).
            ("https://example.org", Origin::Own),
            ("http://www.example.org", Origin::Own),
            // Another port of the same name may be anyone's.
            ("http://example.org:9999", Origin::Foreign),
            ("https://www.example.org:8443", Origin::Foreign),
            ("http://evil.example:8000", Origin::Foreign),
            ("https://example.org.evil.example", Origin::Foreign),
            ("null", Origin::Foreign),
        ] {
            assert_eq!(
                origin_among(&parts(&[host, ("origin", origin)]), NAMES),
                expected,
                "{origin}"
            );
        }
        let plain = ("host", "example.org");
        assert_eq!(
            origin_among(
                &parts(&[
                    ("host", "127.0.0.1:8000"),
                    ("origin", "http://127.0.0.1:8000")
                ]),
                []
            ),
            Origin::Own
        );
        assert_eq!(
            origin_among(
                &parts(&[
                    ("host", "example.org:443"),
                    ("origin", "https://example.org")
                ]),
                []
            ),
            Origin::Own
        );
        assert_eq!(origin_among(&parts(&[plain]), NAMES), Origin::Unsaid);
        assert_eq!(
            origin_among(&parts(&[plain, ("sec-fetch-site", "cross-site")]), NAMES),
            Origin::Foreign
        );
        assert_eq!(
            origin_among(&parts(&[plain, ("sec-fetch-site", "same-origin")]), NAMES),
            Origin::Unsaid
        );
    }
}
