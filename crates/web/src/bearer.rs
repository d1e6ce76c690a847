//! Bearer tokens for the server-side endpoints (`[api] token`, `push.publish_token`).

use http::header::AUTHORIZATION;
use http::request::Parts;

pub enum BearerCheck {
    Allowed,
    /// The site configures no token: the endpoint is closed.
    NotConfigured,
    /// Missing or wrong token.
    Refused,
}

pub fn check_bearer(parts: &Parts, expected: Option<&str>) -> BearerCheck {
    let given = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match (expected, given) {
        (None, _) => BearerCheck::NotConfigured,
        (Some(e), Some(g)) if constant_time_eq(e.as_bytes(), g.as_bytes()) => BearerCheck::Allowed,
        _ => BearerCheck::Refused,
    }
}

/// Compares without an early exit, so timing does not reveal how much matched.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    subtle::ConstantTimeEq::ct_eq(a, b).into()
}
