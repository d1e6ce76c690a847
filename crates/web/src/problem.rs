//! The one error answer of every JSON endpoint: `application/problem+json`
//! (RFC 9457). A [`Problem`] carries its status, a stable machine-readable
//! `type` (`urn:bulwark:problem:<kind>`, one per [`ProblemKind`]), a message a
//! person can act on (`detail`) and, for a field that failed validation, the
//! field's name. Handlers return `Result<_, Problem>` and use `?`; a store error
//! becomes a problem in one place ([`From<StoreError>`]).
//!
//! HTML pages answer errors with the site's error page instead
//! ([`error_response`](crate::error_response)); this type is for clients that
//! read JSON.

use http::header::{CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Response, StatusCode};
use serde_json::json;

use bulwark_http::Body;
use bulwark_store::StoreError;

use crate::representation::Outcome;

/// What went wrong, as a client program tells problems apart. The names are
/// part of the API (`urn:bulwark:problem:<name>`): add kinds, never rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// The request is malformed (not JSON, not an object, an unknown field).
    BadRequest,
    /// A field's value is not acceptable; `field` names it.
    Invalid,
    /// Nobody said who they are (or their token is not valid).
    Unauthenticated,
    /// The caller is known and may not do this.
    Forbidden,
    NotFound,
    /// It was here and was deleted.
    Gone,
    MethodNotAllowed,
    /// Changed since the version the client based its change on, or a
    /// confirmation that does not match.
    Conflict,
    /// The request body is over the limit.
    TooLarge,
    /// An upload of a type the site does not take.
    UnsupportedType,
    /// Well-formed, and refused for what it would cost or what it would break.
    Unprocessable,
    /// Too many requests from one address or for one account: try later.
    TooManyRequests,
    /// The server is busy (a queue past its deadline, the database's pool):
    /// try again after `Retry-After`.
    Busy,
    /// The server's disk (or the site's quota) has no room.
    StorageFull,
    /// Something broke on the server; the log has the details.
    Internal,
}

impl ProblemKind {
    /// The stable name in the `type` URI.
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::BadRequest => "bad-request",
            ProblemKind::Invalid => "invalid",
            ProblemKind::Unauthenticated => "unauthenticated",
            ProblemKind::Forbidden => "forbidden",
            ProblemKind::NotFound => "not-found",
            ProblemKind::Gone => "gone",
            ProblemKind::MethodNotAllowed => "method-not-allowed",
            ProblemKind::Conflict => "conflict",
            ProblemKind::TooLarge => "too-large",
            ProblemKind::UnsupportedType => "unsupported-type",
            ProblemKind::Unprocessable => "unprocessable",
            ProblemKind::TooManyRequests => "too-many-requests",
            ProblemKind::Busy => "busy",
            ProblemKind::StorageFull => "storage-full",
            ProblemKind::Internal => "internal",
        }
    }

    /// The status a problem of this kind answers with.
    pub fn status(self) -> StatusCode {
        match self {
            ProblemKind::BadRequest | ProblemKind::Invalid => StatusCode::BAD_REQUEST,
            ProblemKind::Unauthenticated => StatusCode::UNAUTHORIZED,
            ProblemKind::Forbidden => StatusCode::FORBIDDEN,
            ProblemKind::NotFound => StatusCode::NOT_FOUND,
            ProblemKind::Gone => StatusCode::GONE,
            ProblemKind::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ProblemKind::Conflict => StatusCode::CONFLICT,
            ProblemKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ProblemKind::UnsupportedType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ProblemKind::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
            ProblemKind::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
            ProblemKind::Busy => StatusCode::SERVICE_UNAVAILABLE,
            ProblemKind::StorageFull => StatusCode::INSUFFICIENT_STORAGE,
            ProblemKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The kind an error status says, for code that has a status in hand
    /// (an upload's limits, push's refusals): the status stays as given.
    pub fn for_status(status: StatusCode) -> ProblemKind {
        match status {
            StatusCode::UNAUTHORIZED => ProblemKind::Unauthenticated,
            StatusCode::FORBIDDEN => ProblemKind::Forbidden,
            StatusCode::NOT_FOUND => ProblemKind::NotFound,
            StatusCode::GONE => ProblemKind::Gone,
            StatusCode::METHOD_NOT_ALLOWED => ProblemKind::MethodNotAllowed,
            StatusCode::CONFLICT => ProblemKind::Conflict,
            StatusCode::PAYLOAD_TOO_LARGE => ProblemKind::TooLarge,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ProblemKind::UnsupportedType,
            StatusCode::UNPROCESSABLE_ENTITY => ProblemKind::Unprocessable,
            StatusCode::TOO_MANY_REQUESTS => ProblemKind::TooManyRequests,
            StatusCode::SERVICE_UNAVAILABLE => ProblemKind::Busy,
            StatusCode::INSUFFICIENT_STORAGE => ProblemKind::StorageFull,
            s if s.is_server_error() => ProblemKind::Internal,
            _ => ProblemKind::BadRequest,
        }
    }

    fn title(self) -> &'static str {
        match self {
            ProblemKind::BadRequest => "The request is malformed",
            ProblemKind::Invalid => "A value is not acceptable",
            ProblemKind::Unauthenticated => "Log on or send a token",
            ProblemKind::Forbidden => "Not allowed",
            ProblemKind::NotFound => "Not found",
            ProblemKind::Gone => "Deleted",
            ProblemKind::MethodNotAllowed => "Method not allowed",
            ProblemKind::Conflict => "Conflict",
            ProblemKind::TooLarge => "Too large",
            ProblemKind::UnsupportedType => "Unsupported type",
            ProblemKind::Unprocessable => "Refused",
            ProblemKind::TooManyRequests => "Too many requests",
            ProblemKind::Busy => "Busy: try again",
            ProblemKind::StorageFull => "No room",
            ProblemKind::Internal => "Server error",
        }
    }
}

/// The `type` URI prefix of every problem.
pub const PROBLEM_TYPE_PREFIX: &str = "urn:bulwark:problem:";

/// An error answer: see the module doc.
#[derive(Debug, Clone)]
pub struct Problem {
    kind: ProblemKind,
    status: StatusCode,
    detail: String,
    field: Option<String>,
    retry_after: Option<u64>,
    /// Members a particular problem adds (a logon that needs the second factor
    /// says `"second_factor": true`).
    extra: serde_json::Map<String, serde_json::Value>,
}

impl Problem {
    pub fn new(kind: ProblemKind, detail: impl Into<String>) -> Problem {
        Problem {
            kind,
            status: kind.status(),
            detail: detail.into(),
            field: None,
            retry_after: None,
            extra: serde_json::Map::new(),
        }
    }

    /// A problem with the kind `status` says ([`ProblemKind::for_status`]), and
    /// that status; a 503 says to try again in a second.
    pub fn with_status_of(status: StatusCode, detail: impl Into<String>) -> Problem {
        let problem = Problem::new(ProblemKind::for_status(status), detail).with_status(status);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            problem.with_retry_after(1)
        } else {
            problem
        }
    }

    pub fn bad_request(detail: impl Into<String>) -> Problem {
        Problem::new(ProblemKind::BadRequest, detail)
    }

    /// A field's value is wrong: `field` is its name as the client sent it.
    pub fn invalid(field: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem::new(ProblemKind::Invalid, detail).with_field(field)
    }

    pub fn unauthenticated(detail: impl Into<String>) -> Problem {
        Problem::new(ProblemKind::Unauthenticated, detail)
    }

    pub fn forbidden(detail: impl Into<String>) -> Problem {
        Problem::new(ProblemKind::Forbidden, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Problem {
        Problem::new(ProblemKind::NotFound, detail)
    }

    pub fn conflict(detail: impl Into<String>) -> Problem {
        Problem::new(ProblemKind::Conflict, detail)
    }

    /// Busy: the client may try again after `seconds`.
    pub fn busy(detail: impl Into<String>, seconds: u64) -> Problem {
        Problem::new(ProblemKind::Busy, detail).with_retry_after(seconds)
    }

    /// Something broke: `what` is said to the client, `cause` only to the log.
    pub fn internal(what: &str, cause: &dyn std::fmt::Display) -> Problem {
        tracing::error!("{what}: {cause}");
        Problem::new(ProblemKind::Internal, format!("{what} failed"))
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Problem {
        self.field = Some(field.into());
        self
    }

    pub fn with_retry_after(mut self, seconds: u64) -> Problem {
        self.retry_after = Some(seconds.max(1));
        self
    }

    /// Another status than the kind's own (a kind that several statuses share).
    pub fn with_status(mut self, status: StatusCode) -> Problem {
        self.status = status;
        self
    }

    /// An extra member of the answer's object.
    pub fn with(mut self, name: &str, value: serde_json::Value) -> Problem {
        self.extra.insert(name.to_string(), value);
        self
    }

    pub fn kind(&self) -> ProblemKind {
        self.kind
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The answer's JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        let mut body = json!({
            "type": format!("{PROBLEM_TYPE_PREFIX}{}", self.kind.name()),
            "title": self.kind.title(),
            "status": self.status.as_u16(),
            "detail": self.detail,
        });
        if let Some(object) = body.as_object_mut() {
            if let Some(field) = &self.field {
                object.insert("field".into(), field.clone().into());
            }
            for (k, v) in &self.extra {
                object.insert(k.clone(), v.clone());
            }
        }
        body
    }

    /// The HTTP answer: `application/problem+json`, never stored.
    pub fn into_response(self) -> Response<Body> {
        let mut resp = Response::new(Body::from(self.to_json().to_string()));
        *resp.status_mut() = self.status;
        let headers = resp.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(seconds) = self.retry_after {
            headers.insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        resp
    }

    /// The JSON Schema of every problem answer, for the OpenAPI document.
    pub fn schema() -> serde_json::Value {
        json!({
            "type": "object",
            "description": "An error (RFC 9457 problem details).",
            "required": ["type", "title", "status", "detail"],
            "properties": {
                "type": {"type": "string", "description": "urn:bulwark:problem:<kind>: what went wrong, for programs"},
                "title": {"type": "string"},
                "status": {"type": "integer"},
                "detail": {"type": "string", "description": "what went wrong, for people"},
                "field": {"type": "string", "description": "the field whose value is not acceptable"},
            },
        })
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status, self.kind.name(), self.detail)
    }
}

impl From<Problem> for Outcome {
    fn from(problem: Problem) -> Outcome {
        Outcome::Response(problem.into_response())
    }
}

/// The one place that decides what a store error means to a client: the
/// request was wrong (4xx), the database is busy (503, try again) or broken
/// (500, and nothing about the database is said: that is logged).
impl From<StoreError> for Problem {
    fn from(e: StoreError) -> Problem {
        if e.is_temporary() {
            return Problem::busy("the database is busy: try again in a moment", 1);
        }
        let kind = match &e {
            StoreError::ResourceNotFound(_)
            | StoreError::EdgeNotFound
            | StoreError::RevisionNotFound(_)
            | StoreError::IdentityNotFound => ProblemKind::NotFound,
            StoreError::Conflict { .. } => ProblemKind::Conflict,
            StoreError::InvalidInput { field, .. } | StoreError::HtmlTooComplex { field, .. } => {
                let kind = if matches!(e, StoreError::HtmlTooComplex { .. }) {
                    // Well-formed, and refused for what cleaning it would cost.
                    ProblemKind::Unprocessable
                } else {
                    ProblemKind::Invalid
                };
                return Problem::new(kind, e.to_string()).with_field(field.clone());
            }
            StoreError::UnknownCategory(_)
            | StoreError::UnknownPredicate(_)
            | StoreError::PredicateNotAllowed { .. }
            | StoreError::Duplicate(_)
            | StoreError::InUse(_) => ProblemKind::BadRequest,
            StoreError::StorageFull { .. } => {
                tracing::error!("{e}");
                return Problem::new(
                    ProblemKind::StorageFull,
                    "the server's disk is full: the change was not saved, and nothing was lost; \
                     try again later",
                );
            }
            // A backup or restore refused for a reason of its own (a restore into a
            // PostgreSQL site that serves, a backup of other migrations): said as such.
            StoreError::Backup { source: None, .. } => ProblemKind::Conflict,
            _ => return Problem::internal("the database", &e),
        };
        Problem::new(kind, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_is_rfc_9457_json_with_its_status_and_field() {
        let p = Problem::invalid("category", "no such category");
        let resp = p.into_response();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert_eq!(resp.headers()[CONTENT_TYPE], "application/problem+json");
        let p = Problem::invalid("category", "no such category");
        assert_eq!(
            p.to_json(),
            json!({
                "type": "urn:bulwark:problem:invalid",
                "title": "A value is not acceptable",
                "status": 400,
                "detail": "no such category",
                "field": "category",
            })
        );
    }

    #[test]
    fn a_busy_database_is_a_503_with_retry_after_and_a_broken_one_says_nothing_of_it() {
        let busy = Problem::from(StoreError::Busy);
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.into_response().headers()[RETRY_AFTER], "1");
        let broken = Problem::from(StoreError::Backup {
            reason: "page 7 of table rsc".into(),
            source: Some("disk I/O error".into()),
        });
        assert_eq!(broken.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!broken.detail().contains("rsc"), "{}", broken.detail());
    }
}
