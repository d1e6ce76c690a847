//! `/api/comments`:
//!
//! - `GET /api/comments?rsc=N`: resource N's approved comments (anyone who
//!   may see it), without addresses. Editors may leave `rsc` out and ask for
//!   `status` (`pending`, `approved`, `spam`, `deleted`), `before` (an id,
//!   for the next page) and `limit`: every field, each comment's resource
//!   title and page, and how many comments each status has;
//! - `POST /api/comments`: a comment, `{"rsc", "parent", "name", "email",
//!   "url", "body", "_ticket"}` (a ticket from `/api/form-ticket`): `201`
//!   with it when it is shown at once, `202` when it waits for a moderator;
//! - `PATCH /api/comments`: `{"ids": [..], "status": ".."}`, for editors:
//!   moderation, several at once.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use bulwark_acl::{AccessPolicy, EDITORS};
use bulwark_module_auth::visitor_posts::{HONEYPOT_FIELD, TICKET_FIELD};
use bulwark_store::{ResourceId, StoreError};
use bulwark_web::{Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, json_response};

use crate::SiteComments;
use crate::posting::{self, Posted, Refused, Typed};
use crate::table::{self, Comment, CommentId, Filter, Status};

/// Comments a page of the moderators' list has at most.
const MAX_LIMIT: usize = 200;

fn comments_of(req: &RequestCtx<'_>) -> Result<Arc<SiteComments>, Problem> {
    req.site
        .state::<Arc<SiteComments>>()
        .cloned()
        .ok_or_else(|| Problem::internal("the comments module", &"it is not set up on this site"))
}

fn moderates(caller: Caller<'_>) -> bool {
    matches!(caller, Caller::SiteToken) || caller.in_group(EDITORS)
}

fn public(c: &Comment) -> Value {
    json!({
        "id": c.id, "rsc": c.rsc.0, "parent": c.parent, "name": c.name, "url": c.url,
        "body": c.body, "created": c.created.to_rfc3339(),
    })
}

fn whole(c: &Comment, titles: &HashMap<ResourceId, (String, Option<String>)>) -> Value {
    let (title, page) = titles.get(&c.rsc).cloned().unwrap_or_default();
    json!({
        "id": c.id, "rsc": c.rsc.0, "parent": c.parent, "user": c.user.map(|u| u.0),
        "name": c.name, "email": c.email, "url": c.url, "body": c.body,
        "status": c.status, "address": c.address,
        "created": c.created.to_rfc3339(), "changed": c.changed.to_rfc3339(),
        "rsc_title": title, "rsc_page": page,
    })
}

/// A query parameter as given (the last one of that name), decoded. Given
/// but empty is a mistake, not the default.
fn param(req: &RequestCtx<'_>, name: &str) -> Option<String> {
    bulwark_web::parse_form(req.parts.uri.query().unwrap_or("").as_bytes())
        .into_iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

fn number<T: std::str::FromStr>(req: &RequestCtx<'_>, name: &str) -> Result<Option<T>, Problem> {
    param(req, name)
        .map(|v| {
            v.trim()
                .parse()
                .map_err(|_| Problem::invalid(name, format!("{name} must be a number")))
        })
        .transpose()
}

async fn list(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let rsc = number::<i64>(req, "rsc")?.map(ResourceId);
    let status = match param(req, "status") {
        Some(s) => Some(Status::parse(&s).ok_or_else(|| {
            Problem::invalid("status", "status is pending, approved, spam or deleted")
        })?),
        None => None,
    };
    let before = number::<i64>(req, "before")?.map(CommentId);
    let limit = match number::<usize>(req, "limit")? {
        None => 50,
        Some(n @ 1..=MAX_LIMIT) => n,
        Some(_) => {
            return Err(Problem::invalid(
                "limit",
                format!("limit is between 1 and {MAX_LIMIT}"),
            ));
        }
    };
    let store = req.site.models().store.clone();
    if !moderates(caller) {
        let Some(rsc) = rsc else {
            return Err(caller.refused("list every comment (give rsc=ID for a page's)"));
        };
        let principal = caller.principal().cloned().unwrap_or_default();
        let resource = store.run(move |s| s.resource(rsc)).await?;
        if !resource.is_some_and(|r| req.site.policy().may_see(&principal, &r)) {
            return Err(Problem::not_found("no such page"));
        }
        let approved = store.run(move |s| table::approved_of(s, rsc)).await?;
        let comments: Vec<Value> = approved.iter().map(public).collect();
        return Ok(Outcome::Response(json_response(
            StatusCode::OK,
            &json!({ "comments": comments }),
        )));
    }
    let filter = Filter {
        status,
        rsc,
        before,
        limit,
    };
    let site = req.site;
    let (found, counts, resources) = store
        .run(move |s| {
            let found = table::list(s, &filter)?;
            let counts = table::counts(s)?;
            let mut resources = HashMap::new();
            for c in &found {
                if let std::collections::hash_map::Entry::Vacant(e) = resources.entry(c.rsc) {
                    e.insert(s.resource(c.rsc)?);
                }
            }
            Ok::<_, StoreError>((found, counts, resources))
        })
        .await?;
    let titles: HashMap<ResourceId, (String, Option<String>)> = resources
        .into_iter()
        .map(|(id, r)| {
            let title = r
                .as_ref()
                .and_then(|r| r.title().map(bulwark_store::html_to_plain))
                .unwrap_or_else(|| format!("page {id}"));
            (id, (title, r.as_ref().and_then(|r| site.page_url(r))))
        })
        .collect();
    let comments: Vec<Value> = found.iter().map(|c| whole(c, &titles)).collect();
    let counts: serde_json::Map<String, Value> = counts
        .into_iter()
        .map(|(s, n)| (s.as_str().to_owned(), json!(n)))
        .collect();
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "comments": comments, "counts": counts }),
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Asked {
    rsc: i64,
    #[serde(default)]
    parent: Option<i64>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    url: Option<String>,
    body: String,
    #[serde(default, rename = "extra_info")]
    extra: Option<String>,
    #[serde(default, rename = "_ticket")]
    ticket: Option<String>,
}

async fn add(req: &RequestCtx<'_>, _caller: Caller<'_>) -> Result<Outcome, Problem> {
    let asked: Asked = serde_json::from_slice(&req.body).map_err(|e| {
        Problem::bad_request(format!(
            "expected {{\"rsc\", \"body\", \"name\", \"email\", \"{TICKET_FIELD}\", ...}}: {e}"
        ))
    })?;
    let typed = Typed {
        rsc: asked.rsc.to_string(),
        parent: asked.parent.map(|p| p.to_string()).unwrap_or_default(),
        name: asked.name.unwrap_or_default(),
        email: asked.email.unwrap_or_default(),
        url: asked.url.unwrap_or_default(),
        body: asked.body,
        extra: asked.extra.unwrap_or_default(),
        ticket: asked.ticket.unwrap_or_default(),
    };
    let comments = comments_of(req)?;
    match posting::post(req, &comments, &typed).await {
        Ok(Posted::Stored(c)) if c.status == Status::Approved => {
            Ok(Outcome::Response(json_response(
                StatusCode::CREATED,
                &json!({"status": "approved", "comment": public(&c)}),
            )))
        }
        Ok(posted @ (Posted::Stored(_) | Posted::Dropped)) => Ok(Outcome::Response(json_response(
            StatusCode::ACCEPTED,
            &json!({"status": posted.told_status()}),
        ))),
        Ok(Posted::Confirm { .. }) => Err(Problem::invalid(
            TICKET_FIELD,
            "ask GET /api/form-ticket when the writer starts, and send its ticket",
        )),
        Err(Refused::Invalid(field, why)) => Err(Problem::invalid(field, why)),
        Err(e @ Refused::Closed) => Err(Problem::not_found(e.to_string())),
        Err(Refused::TooMany(wait)) => Err(Problem::new(
            bulwark_web::ProblemKind::TooManyRequests,
            Refused::TooMany(wait).to_string(),
        )
        .with_retry_after(wait.as_secs().max(1))),
        Err(Refused::Store(e)) => Err(e.into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Moderate {
    ids: Vec<i64>,
    status: String,
}

async fn moderate(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    if !moderates(caller) {
        return Err(caller.refused("moderate comments"));
    }
    let asked: Moderate = serde_json::from_slice(&req.body).map_err(|e| {
        Problem::bad_request(format!(
            "expected {{\"ids\": [..], \"status\": \"approved\"}}: {e}"
        ))
    })?;
    let status = Status::parse(&asked.status).ok_or_else(|| {
        Problem::invalid("status", "status is pending, approved, spam or deleted")
    })?;
    if asked.ids.is_empty() || asked.ids.len() > 1000 {
        return Err(Problem::invalid(
            "ids",
            "give between 1 and 1000 comment ids",
        ));
    }
    let ids: Vec<CommentId> = asked.ids.into_iter().map(CommentId).collect();
    let moved = req
        .site
        .models()
        .store
        .run(move |s| table::set_status(s, &ids, status))
        .await?;
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "changed": moved.len() }),
    )))
}

fn comment_schema() -> Value {
    json!({
        "type": "object",
        "required": ["id", "rsc", "name", "body", "created"],
        "properties": {
            "id": {"type": "integer"}, "rsc": {"type": "integer"},
            "parent": {"type": ["integer", "null"]}, "name": {"type": "string"},
            "url": {"type": ["string", "null"]}, "body": {"type": "string"},
            "created": {"type": "string"},
            "status": {"type": "string", "enum": ["pending", "approved", "spam", "deleted"]},
            "email": {"type": "string"}, "address": {"type": ["string", "null"]},
        },
    })
}

fn doc(
    id: &str,
    summary: &str,
    description: &str,
    body: Option<Value>,
    ok: (&str, &str, Value),
) -> Value {
    let mut doc = json!({
        "operationId": id,
        "summary": summary,
        "description": description,
        "tags": ["comments"],
        "responses": {ok.0: {"description": ok.1, "content": {"application/json": {"schema": ok.2}}}},
    });
    if let Some(schema) = body {
        doc["requestBody"] =
            json!({"required": true, "content": {"application/json": {"schema": schema}}});
    }
    doc
}

pub(crate) fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        Api::new().endpoint(
            Endpoint::new("comments", "/api/comments")
                .get(
                    Access::Anyone,
                    || {
                        let mut d = doc("listComments", "List comments",
                            "With `rsc`: that page's approved comments, oldest first, for anyone \
                             who may see the page. Editors may leave it out and filter by \
                             `status`; they get every field, newest first, with `counts` per status.",
                            None,
                            ("200", "The comments", json!({"type": "object", "required": ["comments"],
                                "properties": {"comments": {"type": "array", "items": comment_schema()},
                                               "counts": {"type": "object"}}})));
                        d["parameters"] = json!([
                            {"name": "rsc", "in": "query", "schema": {"type": "integer"}},
                            {"name": "status", "in": "query", "schema": {"type": "string",
                                "enum": ["pending", "approved", "spam", "deleted"]}},
                            {"name": "before", "in": "query", "schema": {"type": "integer"}},
                            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}},
                        ]);
                        d
                    },
                    |req, caller| Box::pin(list(req, caller)),
                )
                .post(
                    Access::Anyone,
                    || doc("addComment", "Comment on a page",
                        &format!("`rsc` (a page whose category takes comments), `body`, and for a \
                         visitor without an account `name` and `email` (never shown), optionally \
                         `url` and `parent` (the comment answered). `{TICKET_FIELD}` is a ticket \
                         from GET /api/form-ticket, asked for when the writer starts; \
                         `{HONEYPOT_FIELD}` must stay empty. 201 when the comment is shown at \
                         once, 202 when it waits for a moderator; 429 past the posts a minute \
                         an address may make."),
                        Some(json!({"type": "object", "required": ["rsc", "body"], "additionalProperties": false,
                            "properties": {
                                "rsc": {"type": "integer"}, "parent": {"type": ["integer", "null"]},
                                "name": {"type": ["string", "null"]}, "email": {"type": ["string", "null"]},
                                "url": {"type": ["string", "null"]}, "body": {"type": "string"},
                                HONEYPOT_FIELD: {"type": ["string", "null"]},
                                TICKET_FIELD: {"type": ["string", "null"]},
                            }})),
                        ("201", "Shown at once", json!({"type": "object", "required": ["status"],
                            "properties": {"status": {"type": "string"}, "comment": comment_schema()}}))),
                    |req, caller| Box::pin(add(req, caller)),
                )
                .patch(
                    Access::Known,
                    || doc("moderateComments", "Moderate comments",
                        "Gives every comment of `ids` the `status` (pending, approved, spam, \
                         deleted). A page whose approved comments changed is rendered again and \
                         its open copies hear of it. Editors and above.",
                        Some(json!({"type": "object", "required": ["ids", "status"], "additionalProperties": false,
                            "properties": {"ids": {"type": "array", "items": {"type": "integer"}},
                                           "status": {"type": "string", "enum": ["pending", "approved", "spam", "deleted"]}}})),
                        ("200", "Moderated", json!({"type": "object", "required": ["changed"],
                            "properties": {"changed": {"type": "integer"}}}))),
                    |req, caller| Box::pin(moderate(req, caller)),
                ),
        )
    });
    &API
}
