//! `GET /healthz` and `GET /readyz`, for a load balancer or a container
//! orchestrator, on every site (the cluster module's `/cluster/health` says
//! more, about the other nodes):
//!
//! - `/healthz`, **live**: the process answers requests. Nothing else is
//!   asked, so a database that is down never gets a healthy process
//!   restarted.
//! - `/readyz`, **ready**: the site's database answers a primary-key read
//!   within [`READY_WITHIN`] (the site was migrated before it was served at
//!   all); else `503` with `Retry-After`, so a balancer sends the visitors
//!   elsewhere until it answers again.
//!
//! Both answer a stranger a status word and nothing more: no error text, no
//! versions, no names.

use std::time::Duration;

use http::header::RETRY_AFTER;
use http::{HeaderValue, StatusCode};
use serde_json::json;

use bulwark_store::ResourceId;
use bulwark_web::{Access, Endpoint, Outcome, Problem, RequestCtx, json_response};

/// How long `/readyz` waits for the database before it says it is not ready.
pub const READY_WITHIN: Duration = Duration::from_secs(2);

fn live() -> Outcome {
    Outcome::Response(json_response(StatusCode::OK, &json!({"status": "live"})))
}

async fn ready(req: &RequestCtx<'_>) -> Outcome {
    let store = req.site.models().store.clone();
    let read = store.run(|s| s.resource(ResourceId(1)).map(drop));
    let answered = matches!(tokio::time::timeout(READY_WITHIN, read).await, Ok(Ok(())));
    if answered {
        return Outcome::Response(json_response(StatusCode::OK, &json!({"status": "ready"})));
    }
    let mut resp = json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &json!({"status": "unavailable"}),
    );
    resp.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("5"));
    Outcome::Response(resp)
}

fn doc(operation: &str, summary: &str, description: &str, fails: bool) -> serde_json::Value {
    let status = |word: &str| {
        json!({"content": {"application/json": {"schema": {
            "type": "object", "required": ["status"],
            "properties": {"status": {"type": "string", "enum": [word]}}}}}})
    };
    let mut responses = json!({"200": status(if fails { "ready" } else { "live" })});
    responses["200"]["description"] = json!("Yes");
    if fails {
        responses["503"] = status("unavailable");
        responses["503"]["description"] = json!("Not now: try again after Retry-After");
    }
    json!({
        "operationId": operation,
        "summary": summary,
        "description": description,
        "tags": ["meta"],
        "responses": responses,
    })
}

pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("healthz", "/healthz").get(
            Access::Anyone,
            || {
                doc(
                    "healthz",
                    "Whether the process is alive",
                    "For a liveness probe: 200 while the server answers requests; it asks nothing \
                     else (a database that is down does not make the process unhealthy).",
                    false,
                )
            },
            |_, _| Box::pin(async { Ok::<_, Problem>(live()) }),
        ),
        Endpoint::new("readyz", "/readyz").get(
            Access::Anyone,
            || {
                doc(
                    "readyz",
                    "Whether the site can serve",
                    "For a readiness probe: 200 while the site's database answers a read within \
                     two seconds, else 503 with Retry-After. No details: the status word only.",
                    true,
                )
            },
            |req, _| Box::pin(async move { Ok::<_, Problem>(ready(req).await) }),
        ),
    ]
}
