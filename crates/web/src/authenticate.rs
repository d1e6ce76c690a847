//! Who is asking, found out from the request: the hook a module (the accounts
//! module, `auth`) plugs in with [`SiteSetup::set_authenticator`](crate::SiteSetup::set_authenticator),
//! and the CSRF check every state-changing request with a session passes.
//!
//! The core knows nothing of sessions, cookies or tokens: an
//! [`Authenticator`] reads the request head and answers with an
//! [`Authenticated`]. Without one (a site without `auth`) every request is
//! anonymous and costs nothing.

use std::sync::Arc;

use bulwark_acl::Principal;
use bulwark_http::Peer;
use futures_util::future::BoxFuture;
use http::request::Parts;
use http::{HeaderValue, Method};

/// What an [`Authenticator`] found.
#[derive(Debug, Clone, Default)]
pub struct Authenticated {
    pub principal: Principal,
    /// Set when the principal comes from a cookie: a state-changing request
    /// must then carry this token (form field `_csrf` or header
    /// `X-CSRF-Token`), or it is refused with 403.
    pub csrf_token: Option<Arc<str>>,
    /// The session the principal comes from (its stored hash), for the
    /// module's own controllers (log off, list sessions).
    pub session: Option<Arc<str>>,
    /// A `Set-Cookie` value for the answer: a cookie that named no live
    /// session is dropped this way.
    pub set_cookie: Option<HeaderValue>,
    /// The group a manager is viewing the site as ("view the site as"):
    /// `principal` is then someone of that group, not the manager. Templates
    /// see it as `request.viewing_as`, to say so on the page.
    pub viewing_as: Option<Arc<str>>,
}

impl Authenticated {
    pub fn anonymous() -> Authenticated {
        Authenticated::default()
    }
}

/// Finds out who is asking. `None` when nothing in the request names anyone
/// (no session cookie, no token): the request is anonymous without a wait.
pub trait Authenticator: Send + Sync + 'static {
    fn authenticate<'a>(
        &'a self,
        parts: &'a Parts,
        peer: Peer,
    ) -> Option<BoxFuture<'a, Authenticated>>;

    /// Who `earlier` (what [`authenticate`](Self::authenticate) found for a
    /// request some time ago) stands for now: `None` once its session has
    /// ended. Long-lived connections (push streams) ask now and then, so that
    /// a logoff, an expired session or a change of groups reaches them too.
    /// It records no activity: an open connection does not keep a session
    /// alive. The default: nothing ever ends.
    fn recheck<'a>(&'a self, earlier: &'a Authenticated) -> BoxFuture<'a, Option<Principal>> {
        Box::pin(async move { Some(earlier.principal.clone()) })
    }
}

/// The form field and the header that carry the CSRF token.
pub const CSRF_FIELD: &str = "_csrf";
pub const CSRF_HEADER: &str = "x-csrf-token";

/// Methods that change nothing need no token.
pub(crate) fn is_safe(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE
    )
}

/// Whether the request carries `expected`, in the header or (for a form) in
/// the `_csrf` field. Compared without an early exit.
pub(crate) fn carries_csrf_token(parts: &Parts, body: &[u8], expected: &str) -> bool {
    if let Some(given) = parts.headers.get(CSRF_HEADER) {
        return crate::bearer::constant_time_eq(given.as_bytes(), expected.as_bytes());
    }
    let is_form = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    is_form
        && crate::form::parse_form(body)
            .iter()
            .filter(|(k, _)| k == CSRF_FIELD)
            .any(|(_, v)| crate::bearer::constant_time_eq(v.as_bytes(), expected.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut req = http::Request::post("/x");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.body(()).unwrap().into_parts().0
    }

    #[test]
    fn the_token_comes_in_the_header_or_a_form_field() {
        let form = [("content-type", "application/x-www-form-urlencoded")];
        assert!(carries_csrf_token(
            &parts(&[("x-csrf-token", "abc")]),
            b"",
            "abc"
        ));
        assert!(!carries_csrf_token(
            &parts(&[("x-csrf-token", "abd")]),
            b"",
            "abc"
        ));
        assert!(carries_csrf_token(&parts(&form), b"a=1&_csrf=abc", "abc"));
        assert!(!carries_csrf_token(&parts(&form), b"a=1&_csrf=ab", "abc"));
        assert!(!carries_csrf_token(&parts(&form), b"a=1", "abc"));
        // Not a form: the field is not looked for.
        assert!(!carries_csrf_token(&parts(&[]), b"_csrf=abc", "abc"));
        // A wrong header is not rescued by a right field.
        let both = [("x-csrf-token", "no"), form[0]];
        assert!(!carries_csrf_token(&parts(&both), b"_csrf=abc", "abc"));
    }
}
