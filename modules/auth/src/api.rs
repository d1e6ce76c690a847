//! The auth module's JSON endpoints (`/api/auth/...`): logon and logoff, the
//! caller's sessions and API tokens, password resets and the site's accounts.
//! Each is the JSON form of what the pages do (`logon.rs`, `reset_pages.rs`,
//! `users.rs`), declared here with its access and OpenAPI description.

use std::sync::{Arc, LazyLock};

use serde_json::{Value, json};

use bulwark_web::{Access, Api, Controller, Endpoint, Outcome, Problem, RequestCtx};

use crate::logon::{Action, AuthController, AuthSite};
use crate::reset_pages::{ResetController, SiteReset, Step};

/// The endpoints and the schemas their descriptions use.
pub(crate) fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        Api::new()
            .endpoint(
                Endpoint::new("api_auth_logon", "/api/auth/logon").post(
                    Access::Anyone,
                    || doc(
                        "logon",
                        "Log on",
                        "Starts a session: the answer sets the session cookie and gives the CSRF \
                         token that changes need. A second factor, when the account has one, goes \
                         in `code`; without it the answer is 401 with `second_factor: true`.",
                        Some(json!({
                            "type": "object",
                            "required": ["username", "password"],
                            "properties": {
                                "username": {"type": "string"},
                                "password": {"type": "string"},
                                "remember": {"type": "boolean"},
                                "code": {"type": ["string", "null"]},
                                "next": {"type": ["string", "null"]},
                            },
                        })),
                        ("200", "Logged on", json!({"$ref": "#/components/schemas/Logon"})),
                    ),
                    |req, _| Box::pin(auth_action(req, Action::Logon)),
                ),
            )
            .endpoint(
                Endpoint::new("api_auth_logoff", "/api/auth/logoff").post(
                    Access::Anyone,
                    || doc(
                        "logoff",
                        "Log off",
                        "Ends the caller's session (if any) and clears its cookie.",
                        None,
                        ("200", "Logged off", json!({"type": "object"})),
                    ),
                    |req, _| Box::pin(auth_action(req, Action::Logoff)),
                ),
            )
            .endpoint(
                Endpoint::new("api_auth_sessions", "/api/auth/sessions")
                    .get(
                        Access::Known,
                        || doc(
                            "listSessions",
                            "List your sessions",
                            "The caller's sessions, the current one marked.",
                            None,
                            ("200", "The sessions", sessions_schema()),
                        ),
                        |req, _| Box::pin(auth_action(req, Action::Sessions)),
                    )
                    .post(
                        Access::Known,
                        || doc(
                            "endSessions",
                            "End a session",
                            "`{\"end\": \"<id>\"}` ends one of the caller's sessions; \
                             `{\"end\": \"others\"}` every other one.",
                            Some(json!({
                                "type": "object",
                                "properties": {"end": {"type": ["string", "null"]}},
                                "additionalProperties": false,
                            })),
                            ("200", "The sessions left", sessions_schema()),
                        ),
                        |req, _| Box::pin(auth_action(req, Action::Sessions)),
                    ),
            )
            .endpoint(
                Endpoint::new("api_auth_me", "/api/auth/me").get(
                    Access::Anyone,
                    || doc(
                        "me",
                        "Who am I",
                        "The caller's user id and groups (null and empty when anonymous), and \
                         the session's CSRF token.",
                        None,
                        ("200", "The caller", json!({"$ref": "#/components/schemas/Me"})),
                    ),
                    |req, _| Box::pin(auth_action(req, Action::Me)),
                ),
            )
            .endpoint(
                Endpoint::new("api_auth_tokens", "/api/auth/tokens")
                    .get(
                        Access::Known,
                        || doc(
                            "listTokens",
                            "List your API tokens",
                            "The caller's API tokens (never the secrets). Needs a session.",
                            None,
                            ("200", "The tokens", json!({
                                "type": "object",
                                "required": ["tokens"],
                                "properties": {"tokens": {"type": "array", "items": {"$ref": "#/components/schemas/ApiToken"}}},
                            })),
                        ),
                        |req, _| Box::pin(auth_action(req, Action::Tokens)),
                    )
                    .post(
                        Access::Known,
                        || doc(
                            "makeToken",
                            "Make an API token",
                            "A new token for scripts, acting as the caller; its secret is in this \
                             answer only. Needs a session: a token cannot make tokens.",
                            Some(json!({
                                "type": "object",
                                "required": ["label"],
                                "properties": {"label": {"type": "string"}},
                            })),
                            ("201", "The token, with its secret", json!({"$ref": "#/components/schemas/ApiToken"})),
                        ),
                        |req, _| Box::pin(auth_action(req, Action::Tokens)),
                    ),
            )
            .endpoint(
                Endpoint::new("api_auth_token", "/api/auth/tokens/{id}").delete(
                    Access::Known,
                    || with_id(doc(
                        "revokeToken",
                        "Revoke an API token",
                        "Revokes one of the caller's tokens at once. Needs a session.",
                        None,
                        ("204", "Revoked", Value::Null),
                    )),
                    |req, _| Box::pin(auth_action(req, Action::Tokens)),
                ),
            )
            .endpoint(
                Endpoint::new("api_auth_reset", "/api/auth/reset").post(
                    Access::Anyone,
                    || doc(
                        "requestReset",
                        "Ask for a password reset",
                        "Mails a reset link to the account with this username or e-mail \
                         address, if there is one; the answer is the same either way.",
                        Some(json!({
                            "type": "object",
                            "properties": {
                                "username": {"type": ["string", "null"]},
                                "email": {"type": ["string", "null"]},
                            },
                        })),
                        ("202", "Accepted", json!({"type": "object"})),
                    ),
                    |req, _| Box::pin(reset_step(req, Step::Request)),
                ),
            )
            .endpoint(
                Endpoint::new("api_auth_reset_confirm", "/api/auth/reset/confirm").post(
                    Access::Anyone,
                    || doc(
                        "confirmReset",
                        "Set a new password with a reset token",
                        "The token from the mailed link and the new password.",
                        Some(json!({
                            "type": "object",
                            "required": ["token", "password"],
                            "properties": {"token": {"type": "string"}, "password": {"type": "string"}},
                        })),
                        ("200", "Changed", json!({"type": "object"})),
                    ),
                    |req, _| Box::pin(reset_step(req, Step::Confirm)),
                ),
            )
            .endpoint(
                Endpoint::new("api_form_ticket", "/api/form-ticket").get(
                    Access::Anyone,
                    || {
                        let mut d = doc(
                            "formTicket",
                            "A ticket for a visitor's post",
                            "A page's script asks for one when a visitor starts filling a \
                             comment or a form (`for`: `form:<id>` or `comments:<page id>`), and \
                             sends it back as the `_ticket` field: good for one post to that form \
                             or page within an hour; a post made sooner after its ticket than a \
                             person can type is taken for a bot's. Never cached.",
                            None,
                            ("200", "A ticket", json!({"type": "object", "required": ["ticket"],
                                "properties": {"ticket": {"type": "string"}}})),
                        );
                        d["parameters"] = json!([
                            {"name": "for", "in": "query", "required": true, "schema":
                                {"type": "string", "pattern": "^[A-Za-z0-9:_-]{1,64}$"}},
                        ]);
                        d
                    },
                    |req, caller| Box::pin(crate::visitor_posts::form_ticket(req, caller)),
                ),
            )
            .endpoint(
                Endpoint::new("api_auth_users", "/api/auth/users")
                    .get(
                        Access::Group(bulwark_acl::MANAGERS),
                        || doc(
                            "listUsers",
                            "List the accounts",
                            "Every user with the groups they were put in.",
                            None,
                            ("200", "The users", json!({"type": "object"})),
                        ),
                        |req, _| Box::pin(auth_action(req, Action::Users)),
                    )
                    .post(
                        Access::Group(bulwark_acl::MANAGERS),
                        || doc(
                            "makeUser",
                            "Make an account",
                            "A new user in one group; only someone in that group may give it.",
                            Some(json!({
                                "type": "object",
                                "required": ["username", "password", "group"],
                                "properties": {
                                    "username": {"type": "string"},
                                    "password": {"type": "string"},
                                    "group": {"type": "string"},
                                    "email": {"type": ["string", "null"]},
                                },
                            })),
                            ("201", "The new user", json!({"type": "object"})),
                        ),
                        |req, _| Box::pin(auth_action(req, Action::Users)),
                    ),
            )
            .schema(
                "Logon",
                || json!({
                    "type": "object",
                    "required": ["user", "csrf_token"],
                    "properties": {"user": {"type": "integer"}, "csrf_token": {"type": "string"}},
                }),
            )
            .schema(
                "Me",
                || json!({
                    "type": "object",
                    "required": ["user", "groups"],
                    "properties": {
                        "user": {"type": ["integer", "null"]},
                        "groups": {"type": "array", "items": {"type": "string"}},
                        "csrf_token": {"type": ["string", "null"]},
                    },
                }),
            )
            .schema(
                "ApiToken",
                || json!({
                    "type": "object",
                    "required": ["id", "label", "created"],
                    "properties": {
                        "id": {"type": "integer"},
                        "label": {"type": "string"},
                        "created": {"type": "string"},
                        "last_used": {"type": ["string", "null"]},
                        "token": {"type": "string", "description": "the secret, only when made"},
                    },
                }),
            )
    });
    &API
}

/// An operation's description: its id, summary and text, its JSON body's
/// schema (if it takes one) and its successful answer (`Null`: no body).
fn doc(
    id: &str,
    summary: &str,
    description: &str,
    body: Option<Value>,
    (status, what, schema): (&str, &str, Value),
) -> Value {
    let answer = if schema.is_null() {
        json!({"description": what})
    } else {
        json!({"description": what, "content": {"application/json": {"schema": schema}}})
    };
    let mut doc = json!({
        "operationId": id,
        "summary": summary,
        "description": description,
        "tags": ["accounts"],
        "responses": {status: answer},
    });
    if let Some(schema) = body {
        doc["requestBody"] =
            json!({"required": true, "content": {"application/json": {"schema": schema}}});
    }
    doc
}

fn with_id(mut doc: Value) -> Value {
    doc["parameters"] = json!([{
        "name": "id", "in": "path", "required": true, "schema": {"type": "integer"},
    }]);
    doc
}

fn sessions_schema() -> Value {
    json!({
        "type": "object",
        "required": ["sessions"],
        "properties": {"sessions": {"type": "array", "items": {"type": "object"}}},
    })
}

fn missing_module() -> Problem {
    Problem::internal("the auth module", &"it is not set up on this site")
}

async fn auth_action(req: &RequestCtx<'_>, action: Action) -> Result<Outcome, Problem> {
    let site = req
        .site
        .state::<Arc<AuthSite>>()
        .ok_or_else(missing_module)?;
    Ok(AuthController::json(site.clone(), action)
        .resolve(req)
        .await)
}

async fn reset_step(req: &RequestCtx<'_>, step: Step) -> Result<Outcome, Problem> {
    let reset = req
        .site
        .state::<Arc<SiteReset>>()
        .ok_or_else(missing_module)?;
    Ok(ResetController::json(reset.clone(), step)
        .resolve(req)
        .await)
}
