//! `/api/webhooks`, for administrators (and the site token):
//!
//! - `GET /api/webhooks`: the endpoints, each with its secret and how many
//!   messages wait and failed;
//! - `POST /api/webhooks`: `{"url", "events", "categories", "description"}`,
//!   a new endpoint with a new secret;
//! - `PATCH /api/webhooks/{id}`: `{"active": false}`; `DELETE` removes it;
//! - `GET /api/webhooks/{id}/deliveries?limit=50&before=ID`: its messages,
//!   newest first, each with its last attempt;
//! - `POST /api/webhooks/deliveries/{id}/retry`: send that message again.

use std::sync::{Arc, LazyLock};

use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use bulwark_store::StoreError;
use bulwark_web::{
    Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, empty_response, id_arg,
    json_response,
};

use crate::endpoints::{self, EVENTS, EndpointError, Endpoints, NewEndpoint};

fn administrators(caller: Caller<'_>) -> Result<(), Problem> {
    match caller {
        Caller::SiteToken => Ok(()),
        caller if caller.in_group(bulwark_acl::ADMINISTRATORS) => Ok(()),
        caller => Err(caller.refused("manage webhooks")),
    }
}

/// Reads the endpoints again on this node now (the others hear of it).
async fn reload(req: &RequestCtx<'_>) -> Result<(), Problem> {
    let kept = req.site.state::<Arc<Endpoints>>().cloned().ok_or_else(|| {
        Problem::internal("the webhooks module", &"it is not set up on this site")
    })?;
    let fresh = req.site.models().store.run(endpoints::load).await?;
    kept.replace(fresh);
    Ok(())
}

async fn list(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    administrators(caller)?;
    let (all, counts) = req
        .site
        .models()
        .store
        .run(|s| {
            let all = endpoints::load(s)?;
            let counts = s.module_read(|sql| {
                sql.query(
                    "SELECT endpoint_id, state, COUNT(*) FROM webhook_delivery GROUP BY endpoint_id, state",
                    &[],
                )
            })?;
            Ok::<_, StoreError>((all, counts))
        })
        .await?;
    let listed: Vec<Value> = all
        .iter()
        .map(|e| {
            let count = |state: &str| {
                counts
                    .iter()
                    .find(|r| r.int(0) == e.id && r.text(1) == state)
                    .map_or(0, |r| r.int(2))
            };
            json!({
                "id": e.id, "url": e.url, "secret": e.secret, "events": e.events,
                "categories": e.categories, "description": e.description, "active": e.active,
                "created": e.created.to_rfc3339(),
                "waiting": count("pending"), "failed": count("failed"), "delivered": count("delivered"),
            })
        })
        .collect();
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "webhooks": listed, "events": EVENTS }),
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Asked {
    url: String,
    #[serde(default)]
    events: Vec<String>,
    #[serde(default)]
    categories: Vec<String>,
    #[serde(default)]
    description: String,
}

async fn add(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    administrators(caller)?;
    let asked: Asked = serde_json::from_slice(&req.body).map_err(|e| {
        Problem::bad_request(format!(
            "expected {{\"url\", \"events\": [..], \"categories\": [..]}}: {e}"
        ))
    })?;
    let new = NewEndpoint {
        url: asked.url,
        events: asked.events,
        categories: asked.categories,
        description: asked.description,
    };
    let made = req
        .site
        .models()
        .store
        .run(move |s| Ok(endpoints::add(s, &new)))
        .await?
        .map_err(|e| match e {
            e @ EndpointError::Url(_) => Problem::invalid("url", e.to_string()),
            e @ EndpointError::Event(_) => Problem::invalid("events", e.to_string()),
            EndpointError::Store(e) => e.into(),
        })?;
    reload(req).await?;
    Ok(Outcome::Response(json_response(
        StatusCode::CREATED,
        &json!({"id": made.id, "url": made.url, "secret": made.secret, "events": made.events,
                "categories": made.categories, "active": made.active}),
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    active: bool,
}

async fn change(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    administrators(caller)?;
    let id = id_arg(req, "id").ok_or_else(|| Problem::not_found("no such webhook"))?;
    let asked: Change = serde_json::from_slice(&req.body)
        .map_err(|e| Problem::bad_request(format!("expected {{\"active\": true|false}}: {e}")))?;
    let found = req
        .site
        .models()
        .store
        .run(move |s| endpoints::set_active(s, id, asked.active))
        .await?;
    if !found {
        return Err(Problem::not_found("no such webhook"));
    }
    reload(req).await?;
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({"id": id, "active": asked.active}),
    )))
}

async fn remove(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    administrators(caller)?;
    let id = id_arg(req, "id").ok_or_else(|| Problem::not_found("no such webhook"))?;
    let found = req
        .site
        .models()
        .store
        .run(move |s| endpoints::remove(s, id))
        .await?;
    if !found {
        return Err(Problem::not_found("no such webhook"));
    }
    reload(req).await?;
    Ok(Outcome::Response(empty_response(StatusCode::NO_CONTENT)))
}

fn number(
    req: &RequestCtx<'_>,
    name: &str,
    default: i64,
    range: std::ops::RangeInclusive<i64>,
) -> Result<i64, Problem> {
    let given = bulwark_web::parse_form(req.parts.uri.query().unwrap_or("").as_bytes())
        .into_iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v);
    match given {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                Problem::invalid(
                    name,
                    format!(
                        "{name} is a whole number from {} to {}",
                        range.start(),
                        range.end()
                    ),
                )
            }),
    }
}

async fn deliveries(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    administrators(caller)?;
    let id = id_arg(req, "id").ok_or_else(|| Problem::not_found("no such webhook"))?;
    let limit = number(req, "limit", 50, 1..=500)?;
    let before = number(req, "before", i64::MAX, 1..=i64::MAX)?;
    let rows = req
        .site
        .models()
        .store
        .run(move |s| {
            s.module_read(|sql| {
                sql.query(
                    "SELECT id, message_id, event, state, attempts, last_status, last_error, \
                     last_response, last_attempt, last_millis, created, payload FROM webhook_delivery \
                     WHERE endpoint_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
                    &[id.into(), before.into(), limit.into()],
                )
            })
        })
        .await?;
    let time = |millis: Option<i64>| {
        millis
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|t| t.to_rfc3339())
    };
    let listed: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "id": r.int(0), "message_id": r.text(1), "event": r.text(2), "state": r.text(3),
                "attempts": r.int(4), "last_status": r.opt_int(5), "last_error": r.opt_text(6),
                "last_response": r.opt_text(7), "last_attempt": time(r.opt_int(8)),
                "last_millis": r.opt_int(9), "created": time(Some(r.int(10))),
                "payload": serde_json::from_str::<Value>(&r.text(11)).unwrap_or(Value::Null),
            })
        })
        .collect();
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "deliveries": listed }),
    )))
}

async fn retry(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    administrators(caller)?;
    let id = id_arg(req, "id").ok_or_else(|| Problem::not_found("no such message"))?;
    let now = chrono::Utc::now().timestamp_millis();
    let found = req
        .site
        .models()
        .store
        .run(move |s| {
            s.module_write(|sql| {
                sql.execute(
                    "UPDATE webhook_delivery SET state = 'pending', next_attempt = $1 WHERE id = $2",
                    &[now.into(), id.into()],
                )
            })
        })
        .await?;
    if found == 0 {
        return Err(Problem::not_found("no such message"));
    }
    Ok(Outcome::Response(json_response(
        StatusCode::ACCEPTED,
        &json!({"id": id, "state": "pending"}),
    )))
}

fn doc(id: &str, summary: &str, description: &str, body: Option<Value>, ok: (&str, &str)) -> Value {
    let mut doc = json!({
        "operationId": id,
        "summary": summary,
        "description": description,
        "tags": ["webhooks"],
        "responses": {ok.0: {"description": ok.1, "content": {"application/json": {"schema": {"type": "object"}}}}},
    });
    if let Some(schema) = body {
        doc["requestBody"] =
            json!({"required": true, "content": {"application/json": {"schema": schema}}});
    }
    if id != "listWebhooks" && id != "addWebhook" {
        doc["parameters"] =
            json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}]);
    }
    doc
}

pub(crate) fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        Api::new()
            .endpoint(
                Endpoint::new("webhooks", "/api/webhooks")
                    .get(
                        Access::Known,
                        || doc("listWebhooks", "List the webhooks",
                            "Every endpoint with its secret, the events and categories it wants, and \
                             how many of its messages wait, failed and were delivered. Administrators.",
                            None, ("200", "The webhooks")),
                        |req, caller| Box::pin(list(req, caller)),
                    )
                    .post(
                        Access::Known,
                        || doc("addWebhook", "Add a webhook",
                            &format!("`url` (http or https) is sent a signed POST (Standard Webhooks) for \
                             each of `events` (empty: all of {}) about a resource in one of `categories` \
                             (or below; empty: all). The answer holds the new secret. Administrators.",
                             EVENTS.join(", ")),
                            Some(json!({"type": "object", "required": ["url"], "additionalProperties": false,
                                "properties": {
                                    "url": {"type": "string"},
                                    "events": {"type": "array", "items": {"type": "string", "enum": EVENTS}},
                                    "categories": {"type": "array", "items": {"type": "string"}},
                                    "description": {"type": "string"},
                                }})),
                            ("201", "Added")),
                        |req, caller| Box::pin(add(req, caller)),
                    ),
            )
            .endpoint(
                Endpoint::new("webhook", "/api/webhooks/{id}")
                    .patch(
                        Access::Known,
                        || doc("changeWebhook", "Turn a webhook on or off",
                            "Off: nothing more is queued for it; what waits stays. Administrators.",
                            Some(json!({"type": "object", "required": ["active"], "additionalProperties": false,
                                "properties": {"active": {"type": "boolean"}}})),
                            ("200", "Changed")),
                        |req, caller| Box::pin(change(req, caller)),
                    )
                    .delete(
                        Access::Known,
                        || {
                            let mut d = doc("removeWebhook", "Remove a webhook",
                                "With its messages. Administrators.", None, ("204", "Removed"));
                            d["responses"] = json!({"204": {"description": "Removed"}});
                            d
                        },
                        |req, caller| Box::pin(remove(req, caller)),
                    ),
            )
            .endpoint(
                Endpoint::new("webhook_deliveries", "/api/webhooks/{id}/deliveries").get(
                    Access::Known,
                    || {
                        let mut d = doc("listWebhookDeliveries", "A webhook's messages",
                            "Newest first, each with its state (pending, delivered, failed), attempts \
                             and last answer; `limit` and `before` page through them. Administrators.",
                            None, ("200", "The messages"));
                        if let Some(p) = d["parameters"].as_array_mut() {
                            p.push(json!({"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 500}}));
                            p.push(json!({"name": "before", "in": "query", "schema": {"type": "integer", "minimum": 1}}));
                        }
                        d
                    },
                    |req, caller| Box::pin(deliveries(req, caller)),
                ),
            )
            .endpoint(
                Endpoint::new("webhook_retry", "/api/webhooks/deliveries/{id}/retry").post(
                    Access::Known,
                    || doc("retryWebhookDelivery", "Send a message again",
                        "It is sent again, with the same id, as soon as its endpoint's queue \
                         reaches it. Administrators.", None, ("202", "Queued")),
                    |req, caller| Box::pin(retry(req, caller)),
                ),
            )
    });
    &API
}
