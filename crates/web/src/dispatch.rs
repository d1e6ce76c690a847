//! From a request to a controller's answer: the host picks a site (aliases
//! redirect, unknown hosts go to the default site), the site's router picks a
//! dispatch rule, the rule's controller resolves the request, and `respond` makes
//! the HTTP decisions. Everything runs in the task that accepted the connection.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{ALLOW, AUTHORIZATION, CONNECTION, CONTENT_LENGTH, HOST, LOCATION, SET_COOKIE};
use http::{HeaderValue, Method, Request, Response, StatusCode, Version};
use hyper::body::Incoming;

use bulwark_http::{Body, BodyError, Peer, plain_response, read_body};

use crate::authenticate::{Authenticated, carries_csrf_token, is_safe};
use crate::controllers::Controller;
use crate::error_page::error_response;
use crate::events::{RequestDispatch, Rewrite};
use crate::options::SitesOptions;
use crate::origin::{Origin, origin_of};
use crate::problem::{Problem, ProblemKind};
use crate::request::RequestCtx;
use crate::respond::respond;
use crate::site::SiteRuntime;
use crate::table::{HostTarget, ServedSite, SiteTable};

pub(crate) async fn dispatch(
    table: Arc<SiteTable>,
    options: &SitesOptions,
    req: Request<Incoming>,
    peer: Peer,
) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let Some(host) = request_host(&parts) else {
        return plain_response(StatusCode::BAD_REQUEST, true);
    };
    let (served, alias) = match table.resolve(host.name()) {
        Some(HostTarget::Site(site)) => (site.clone(), false),
        Some(HostTarget::Alias(site)) => (site.clone(), true),
        None => match &table.default {
            Some(site) => (site.clone(), false),
            None => return plain_response(StatusCode::NOT_FOUND, false),
        },
    };
    drop(table);
    let to_https = !peer.secure
        && served
            .runtime
            .config()
            .tls
            .as_ref()
            .is_some_and(|t| t.redirect_http)
        && !parts.uri.path().starts_with("/.well-known/acme-challenge/");
    let (mut resp, secured) = if alias || to_https {
        // HTTPS on its standard port: the port a plain request came to is
        // not the TLS one.
        let host = if to_https {
            RequestHost { port: None, ..host }
        } else {
            host
        };
        let redirect =
            redirect_to_canonical(&served.runtime, &host, &parts, peer.secure || to_https);
        (redirect, false)
    } else {
        // The one place every answer of a site passes: counted by its rule.
        let started = served
            .runtime
            .measures_latency()
            .then(std::time::Instant::now);
        let mut how = Served::default();
        let resp = serve(&served, &host, parts, body, options, peer, &mut how).await;
        let counters = match how.rule {
            Some(index) => &served.rule_counters[index],
            None => served.runtime.counters().unmatched(),
        };
        counters.answered(resp.status(), started.map(|s| s.elapsed()));
        (resp, how.secured)
    };
    if !secured {
        served
            .runtime
            .security_headers()
            .add_to(resp.headers_mut(), peer.secure);
    }
    resp
}

/// What [`serve`] tells [`dispatch`] besides its answer.
#[derive(Default)]
struct Served {
    /// The index of the dispatch rule that matched.
    rule: Option<usize>,
    /// The answer carries the site's security headers already
    /// ([`Answer`](crate::respond::Answer)).
    secured: bool,
}

/// The site's answer to a request for it, and in `how`, the rule that matched
/// and whether the answer carries the security headers.
async fn serve(
    served: &ServedSite,
    host: &RequestHost,
    mut parts: http::request::Parts,
    body: Incoming,
    options: &SitesOptions,
    peer: Peer,
    how: &mut Served,
) -> Response<Body> {
    let max_body_bytes = options.max_body_bytes;
    let upgrade = parts.extensions.remove::<hyper::upgrade::OnUpgrade>();
    let site = &served.runtime;
    let declared_len = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    // An old address with a query that moved (`/?p=12`), before the path
    // finds the page it names without one.
    if let Some(moved) = crate::respond::moved_before_routing(site, &parts) {
        return moved;
    }
    // `/nl/about` on a site with language URLs: Dutch, routed as `/about`.
    let languages = site.languages();
    let (path, url_language) = match languages.split(parts.uri.path()) {
        Some((index, rest)) => (rest, Some(index)),
        None if languages.prefixed() && parts.uri.path() == "/" => {
            return to_visitors_language(site, &parts);
        }
        None => (parts.uri.path(), None),
    };
    let rewritten = rewrite(site, host, path);
    let path = rewritten.as_ref().map_or(path, |r| r.0.as_str());
    let Some(matched) = site.site().router.route(path) else {
        if let Some(moved) = crate::respond::moved_instead(site, &parts) {
            return moved;
        }
        if wants_json(&parts) || !matches!(parts.method, Method::GET | Method::HEAD) {
            return refuse(
                site,
                wants_json(&parts),
                Problem::not_found("nothing is served at this path"),
            );
        }
        // A browser's mistyped or outdated address: the site's 404 page, as
        // a page (its header and navigation, the visitor's language, logged
        // on or not), which needs who is asking.
        let auth = who_asks(site, &parts, peer).await;
        let set_cookie = auth.set_cookie.clone();
        let ctx = RequestCtx::new(&parts, &[], site, Bytes::new(), upgrade, peer)
            .in_language(url_language)
            .authenticated(auth);
        let answer = Box::pin(respond(&ctx, crate::Outcome::NotFound)).await;
        how.secured = answer.secured;
        let mut resp = answer.response;
        if let Some(cookie) = set_cookie {
            resp.headers_mut().append(SET_COOKIE, cookie);
        }
        return resp;
    };
    how.rule = Some(matched.index);
    let controller = served.controllers[matched.index].as_ref();
    // Whether an error is said in JSON is only worked out for an error.
    let json = |parts: &http::request::Parts| answers_json(controller, parts);
    let allowed = controller.allowed_methods();
    if !allowed.contains(&parts.method) {
        return method_not_allowed(site, json(&parts), allowed);
    }
    // Who is asking, and whether they may, before a byte of the body is read:
    // a refused write is refused whatever it sends.
    let auth = who_asks(site, &parts, peer).await;
    let set_cookie = auth.set_cookie.clone();
    let with_cookie = |mut resp: Response<Body>| {
        if let Some(cookie) = &set_cookie {
            resp.headers_mut().append(SET_COOKIE, cookie.clone());
        }
        resp
    };
    // A page on another site may not change anything here, whoever is
    // logged on (or about to be: login CSRF). See `origin.rs`.
    if !is_safe(&parts.method)
        && !parts.headers.contains_key(AUTHORIZATION)
        && origin_of(&parts, site) == Origin::Foreign
    {
        return with_cookie(refuse(
            site,
            json(&parts),
            Problem::forbidden("a page on another site may not send this here"),
        ));
    }
    if let Err(refused) = controller.admit(&parts, site, &auth.principal) {
        return with_cookie(refuse(site, json(&parts), refused));
    }
    // A controller that streams the body (uploads) keeps its own limits.
    let streams = controller.streams_body(&parts.method);
    if !streams && declared_len.is_some_and(|n| n > max_body_bytes) {
        return with_cookie(too_large(site, json(&parts), max_body_bytes));
    }
    let mut stream = None;
    let body = if streams {
        stream = Some(body);
        Bytes::new()
    } else if controller.reads_body() && parts.method != Method::GET && parts.method != Method::HEAD
    {
        // Boxed, as a rarer state than the rest: see `respond`'s file.
        match Box::pin(read_body(
            body,
            max_body_bytes as usize,
            options.body_timeout,
        ))
        .await
        {
            Ok(bytes) => bytes,
            Err(BodyError::TooLarge { .. }) => {
                return with_cookie(too_large(site, json(&parts), max_body_bytes));
            }
            Err(BodyError::TimedOut(_)) => {
                return plain_response(StatusCode::REQUEST_TIMEOUT, true);
            }
            Err(BodyError::Broken(_)) => return plain_response(StatusCode::BAD_REQUEST, true),
        }
    } else {
        Bytes::new()
    };
    // HTTP/2 header values are copies already (hpack decodes into new buffers).
    let body = if controller.waits_long() && parts.version < Version::HTTP_2 {
        detach_from_read_buffer(&mut parts, body)
    } else {
        body
    };
    if let Some(expected) = &auth.csrf_token
        && !is_safe(&parts.method)
        && !carries_csrf_token(&parts, &body, expected)
    {
        return with_cookie(csrf_refused(site, json(&parts)));
    }
    let ctx = RequestCtx::new(&parts, &matched.args, site, body, upgrade, peer)
        .in_language(url_language)
        .authenticated(auth)
        .with_body_stream(stream);
    let outcome = controller.resolve(&ctx).await;
    let answer = respond(&ctx, outcome).await;
    how.secured = answer.secured;
    with_cookie(answer.response)
}

/// Who is asking: the site's authenticator's answer, or an anonymous visitor
/// on a site without one.
async fn who_asks(site: &SiteRuntime, parts: &http::request::Parts, peer: Peer) -> Authenticated {
    match site
        .authenticator()
        .as_ref()
        .and_then(|a| a.authenticate(parts, peer))
    {
        Some(asking) => asking.await,
        None => Authenticated::anonymous(),
    }
}

/// `/` on a site with language URLs: `302` to the front page in the
/// visitor's language (by `Accept-Language`, else the site's first), the
/// query string kept. The only answer `Accept-Language` decides there.
fn to_visitors_language(site: &SiteRuntime, parts: &http::request::Parts) -> Response<Body> {
    let index = crate::pick_language(&site.config().languages, &parts.headers);
    let mut location = format!("{}/", site.languages().prefix(index));
    if let Some(query) = parts.uri.query().filter(|q| !q.is_empty()) {
        location.push('?');
        location.push_str(query);
    }
    let mut resp = plain_response(StatusCode::FOUND, false);
    let headers = resp.headers_mut();
    if let Ok(location) = HeaderValue::from_str(&location) {
        headers.insert(http::header::LOCATION, location);
    }
    headers.insert(
        http::header::VARY,
        HeaderValue::from_static("Accept-Language"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    resp
}

/// Asks the site's modules whether this path is to be routed as another
/// ([`RequestDispatch`]); costs nothing when no module listens.
fn rewrite(site: &SiteRuntime, host: &RequestHost, path: &str) -> Option<Rewrite> {
    if !site.notifier().has_observers::<RequestDispatch>() {
        return None;
    }
    site.notifier()
        .first(&RequestDispatch {
            host: host.name().to_string(),
            path: path.to_string(),
        })
        .filter(|r| r.0.starts_with('/'))
}

fn method_not_allowed(site: &SiteRuntime, json: bool, allowed: &[Method]) -> Response<Body> {
    let allow = allowed
        .iter()
        .map(Method::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    let problem = Problem::new(
        ProblemKind::MethodNotAllowed,
        format!("this path answers {allow}"),
    );
    let mut resp = refuse(site, json, problem);
    resp.headers_mut().insert(
        ALLOW,
        HeaderValue::from_str(&allow).expect("method names are ASCII"),
    );
    resp
}

/// hyper hands out header values, the URI and small bodies as slices of the
/// connection's read buffer, so while a request lives that buffer cannot be reused,
/// and hyper, which keeps reading while a request is in flight (to notice the peer
/// going away), reads into a second one. For a long-poll that waits 25 s that is
/// 8 KiB more for every waiting client. Copying the few bytes of the head lets the
/// first buffer be reused at once.
fn detach_from_read_buffer(parts: &mut http::request::Parts, body: Bytes) -> Bytes {
    let mut headers = http::HeaderMap::with_capacity(parts.headers.len());
    for (name, value) in &parts.headers {
        // `from_bytes` copies (the value was valid, so it still is; if not, the
        // original is kept rather than the request failed).
        let copy = match HeaderValue::from_bytes(value.as_bytes()) {
            Ok(mut copy) => {
                copy.set_sensitive(value.is_sensitive());
                copy
            }
            Err(_) => value.clone(),
        };
        headers.append(name.clone(), copy);
    }
    parts.headers = headers;
    if let Ok(uri) = http::Uri::from_maybe_shared(Bytes::from(parts.uri.to_string())) {
        parts.uri = uri;
    }
    if body.is_empty() {
        Bytes::new()
    } else {
        Bytes::copy_from_slice(&body)
    }
}

/// Whether an error is said as a problem (JSON) rather than the site's error
/// page: for endpoints, and for clients that send or ask for JSON.
fn answers_json(controller: &dyn Controller, parts: &http::request::Parts) -> bool {
    controller.answers_json() || wants_json(parts)
}

/// A client that sends or asks for JSON.
fn wants_json(parts: &http::request::Parts) -> bool {
    [http::header::ACCEPT, http::header::CONTENT_TYPE]
        .iter()
        .filter_map(|h| parts.headers.get(h)?.to_str().ok())
        .any(|v| v.contains("json"))
}

/// An error answer: `problem` for JSON clients, the site's error page with its
/// status for browsers.
fn refuse(site: &SiteRuntime, json: bool, problem: Problem) -> Response<Body> {
    if json {
        problem.into_response()
    } else {
        error_response(site, problem.status(), None)
    }
}

/// 403 for a state-changing request without the session's CSRF token: to a
/// browser, most likely a form kept open past its session, or sent from
/// another site.
fn csrf_refused(site: &SiteRuntime, json: bool) -> Response<Body> {
    if json {
        return Problem::forbidden(
            "a request with a session cookie needs its CSRF token (header X-CSRF-Token)",
        )
        .into_response();
    }
    crate::error_page::error_response_saying(
        site,
        StatusCode::FORBIDDEN,
        "This form has expired, or it was not sent from this site. Go back, reload the page, and send it again.",
    )
}

fn too_large(site: &SiteRuntime, json: bool, limit: u64) -> Response<Body> {
    let problem = Problem::new(
        ProblemKind::TooLarge,
        format!("the body is larger than this server takes ({limit} bytes)"),
    );
    let mut resp = refuse(site, json, problem);
    // The unread body is still on the wire: this connection cannot be reused.
    resp.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// The host a request names, `name[:port]`.
struct RequestHost {
    /// The name's bytes: the request's own header value when the name in it
    /// was lowercase already (the common case, and no copy: a clone of a
    /// header value shares its bytes), else a lowercased copy.
    bytes: HeaderValue,
    /// Where the name is in `bytes`: lowercase, without a trailing dot.
    name: std::ops::Range<usize>,
    port: Option<u16>,
}

impl RequestHost {
    /// From a `Host` header.
    fn from_header(value: &HeaderValue) -> Option<RequestHost> {
        // (Not `to_str`: `parse` checks the name byte by byte anyway.)
        let raw = value.as_bytes();
        if !raw.is_ascii() {
            return None;
        }
        let (name, port, upper) = Self::parse(raw)?;
        if upper {
            return Self::copied(&raw[name], port);
        }
        Some(RequestHost {
            bytes: value.clone(),
            name,
            port,
        })
    }

    /// From a URI authority (HTTP/2's `:authority`, an absolute-form request).
    fn from_authority(raw: &str) -> Option<RequestHost> {
        let (name, port, _) = Self::parse(raw.as_bytes())?;
        Self::copied(&raw.as_bytes()[name], port)
    }

    fn copied(name: &[u8], port: Option<u16>) -> Option<RequestHost> {
        let lower = name.to_ascii_lowercase();
        let len = lower.len();
        Some(RequestHost {
            bytes: HeaderValue::from_maybe_shared(Bytes::from(lower)).ok()?,
            name: 0..len,
            port,
        })
    }

    /// The lowercase host name, without a trailing dot.
    fn name(&self) -> &str {
        let name = &self.bytes.as_bytes()[self.name.clone()];
        // SAFETY: `parse` let through only ASCII letters, digits and `-._[]:`
        // in this range, and a lowercased copy of those is ASCII as well.
        // (Checking it again cost a request more than the rest of the lookup.)
        unsafe { std::str::from_utf8_unchecked(name) }
    }

    /// Where the name is in `name[:port]` (userinfo dropped, a trailing dot
    /// left out), the port, and whether the name has capitals; `None` when it
    /// is not a usable host name.
    fn parse(raw: &[u8]) -> Option<(std::ops::Range<usize>, Option<u16>, bool)> {
        let start = raw.iter().rposition(|b| *b == b'@').map_or(0, |at| at + 1);
        let host = &raw[start..];
        let (end, port) = if host.first() == Some(&b'[') {
            let end = host.iter().position(|b| *b == b']')? + 1;
            (end, host[end..].strip_prefix(b":"))
        } else {
            match host.iter().rposition(|b| *b == b':') {
                Some(colon) => (colon, Some(&host[colon + 1..])),
                None => (host.len(), None),
            }
        };
        let port = match port {
            Some(p) => Some(std::str::from_utf8(p).ok()?.parse::<u16>().ok()?),
            None => None,
        };
        let name = &host[..end];
        let mut upper = false;
        for b in name {
            match b {
                b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'[' | b']' | b':' => {}
                b'A'..=b'Z' => upper = true,
                _ => return None,
            }
        }
        let dots = name.iter().rev().take_while(|b| **b == b'.').count();
        Some((start..start + end - dots, port, upper))
    }

    /// Both name the same host (a port left out agrees with any).
    fn agrees_with(&self, other: &RequestHost) -> bool {
        self.name() == other.name()
            && (self.port.is_none() || other.port.is_none() || self.port == other.port)
    }
}

/// The host a request is for: the URI authority (HTTP/2's `:authority`,
/// absolute-form requests), else the `Host` header. HTTP/1.1 requires one; HTTP/1.0
/// may omit it (default site).
///
/// `None`, answered `400`, also when the request names its host ambiguously: more
/// than one `Host` header, or a `Host` that disagrees with the authority (RFC 9112
/// 3.2, RFC 9113 8.3.1). A proxy or cache in front may go by one and we by the
/// other, and the request would reach, or be cached for, a site it was not meant for.
fn request_host(parts: &http::request::Parts) -> Option<RequestHost> {
    let mut hosts = parts.headers.get_all(HOST).iter();
    let header = match (hosts.next(), hosts.next()) {
        (Some(_), Some(_)) => return None,
        (Some(host), None) => Some(RequestHost::from_header(host)?),
        (None, _) => None,
    };
    match (parts.uri.authority(), header) {
        (Some(authority), header) => {
            let host = RequestHost::from_authority(authority.as_str())?;
            match header {
                Some(header) if !header.agrees_with(&host) => None,
                _ => Some(host),
            }
        }
        (None, Some(header)) => Some(header),
        (None, None) if parts.version <= Version::HTTP_10 => RequestHost::from_authority(""),
        (None, None) => None,
    }
}

fn redirect_to_canonical(
    site: &SiteRuntime,
    host: &RequestHost,
    parts: &http::request::Parts,
    secure: bool,
) -> Response<Body> {
    let scheme = if secure { "https" } else { "http" };
    let port = host.port.map(|p| format!(":{p}")).unwrap_or_default();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let location = format!("{scheme}://{}{port}{path}", site.config().hostname);
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
    match HeaderValue::from_str(&location) {
        Ok(l) => {
            resp.headers_mut().insert(LOCATION, l);
            resp.headers_mut()
                .insert(CONTENT_LENGTH, HeaderValue::from(0));
            resp
        }
        Err(_) => plain_response(StatusCode::BAD_REQUEST, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_read_as_a_lowercase_name_and_a_port() {
        let host = |raw: &str| {
            RequestHost::from_header(&HeaderValue::from_str(raw).unwrap())
                .map(|h| (h.name().to_string(), h.port))
        };
        let named = |name: &str, port| Some((name.to_string(), port));
        assert_eq!(host("example.org"), named("example.org", None));
        assert_eq!(host("Example.ORG:8080"), named("example.org", Some(8080)));
        assert_eq!(host("example.org.:80"), named("example.org", Some(80)));
        assert_eq!(
            host("user:pw@Example.org:81"),
            named("example.org", Some(81))
        );
        assert_eq!(host("[::1]:8443"), named("[::1]", Some(8443)));
        assert_eq!(host("[::1]"), named("[::1]", None));
        assert_eq!(host("example.org:99999"), None, "a port out of range");
        assert_eq!(host("example.org:http"), None, "a port that is no number");
        assert_eq!(host("exa mple.org"), None, "a space");
        assert_eq!(host("example.org/x"), None, "a path");
        let authority = RequestHost::from_authority("Example.org.:443").unwrap();
        assert_eq!(
            (authority.name(), authority.port),
            ("example.org", Some(443))
        );
    }

    #[test]
    fn a_detached_request_keeps_every_header_the_uri_and_the_body() {
        let req = Request::post("/push/poll?client=abc&x=1")
            .header("cookie", "a=1")
            .header("cookie", "b=2")
            .header("authorization", "Bearer t")
            .body(())
            .unwrap();
        let (mut parts, ()) = req.into_parts();
        let mut secret = HeaderValue::from_static("Bearer t");
        secret.set_sensitive(true);
        parts.headers.insert("authorization", secret);
        let body = detach_from_read_buffer(&mut parts, Bytes::from_static(b"{\"op\":1}"));
        let cookies: Vec<_> = parts.headers.get_all("cookie").iter().collect();
        assert_eq!(cookies, ["a=1", "b=2"]);
        assert!(parts.headers["authorization"].is_sensitive());
        assert_eq!(parts.uri.query(), Some("client=abc&x=1"));
        assert_eq!(parts.method, Method::POST);
        assert_eq!(&body[..], b"{\"op\":1}");
    }
}
