//! `/api/rsc/{id}`: a resource as JSON (`GET`, as the request's principal may see it), and
//! changing its properties (`PATCH` with a JSON object to merge, by a logged-on
//! user the site's rules let update it (with the session's CSRF token) or with
//! `Authorization: Bearer <[api] token>`; optionally `If-Match: <version>` for
//! optimistic updates).

use futures_util::future::BoxFuture;
use http::header::IF_MATCH;
use http::{Method, StatusCode};
use serde_json::json;

use bulwark_acl::{Action, Principal};
use bulwark_store::{
    Props, PropsChange, Resource, ResourceId, ResourceUpdate, StoreError, Version,
};

use crate::bearer::{BearerCheck, check_bearer};
use crate::controllers::Controller;
use crate::error_page::{json_response, store_error_json};
use crate::representation::Outcome;
use crate::request::RequestCtx;
use crate::site::SiteRuntime;

pub struct ApiController;

/// How often a write without `If-Match` is tried again after losing a race with
/// another write (each try re-reads the current version, so it only loses when a
/// write committed in between).
const MAX_ATTEMPTS: u32 = 100;

fn reply(status: StatusCode, value: serde_json::Value) -> Outcome {
    Outcome::Response(json_response(status, &value))
}

fn error(status: StatusCode, message: impl std::fmt::Display) -> Outcome {
    reply(status, json!({"error": message.to_string()}))
}

fn store_failure(e: StoreError) -> Outcome {
    Outcome::Response(store_error_json(&e))
}

/// The API token decides: without one configured, nothing may change.
fn authorize(req: &RequestCtx<'_>) -> Result<(), Box<Outcome>> {
    match check_bearer(req.parts, req.site.site.config.api.token.as_deref()) {
        BearerCheck::Allowed => Ok(()),
        BearerCheck::NotConfigured => Err(Box::new(error(
            StatusCode::FORBIDDEN,
            "the API is read-only: set [api] token",
        ))),
        BearerCheck::Refused => Err(Box::new(error(
            StatusCode::UNAUTHORIZED,
            "a valid bearer token is required",
        ))),
    }
}

/// `GET /api/stats` (with the token): renders, caches and refusals of this site.
fn stats(req: &RequestCtx<'_>) -> Outcome {
    if let Err(refused) = authorize(req) {
        return *refused;
    }
    let site = req.site;
    let cache = site.models.cache.stats();
    reply(
        StatusCode::OK,
        json!({
            "renders": site.models.renders.load(std::sync::atomic::Ordering::Relaxed),
            "refused_busy": site.renders.refused(),
            "refused_database_busy": site.renders.database_busy(),
            "refused_lib_builds": site.lib_builds.refused(),
            "template_compiles": site.templates.compiles(),
            "cache": {
                "hits": cache.hits, "misses": cache.misses, "coalesced_waits": cache.coalesced_waits,
                "entries": cache.entries, "bytes_used": cache.bytes_used, "evictions": cache.evictions,
            },
        }),
    )
}

/// A resource as the API shows it to `who`: the properties the site's policy
/// lets them read (`None`: the token holder, who may change everything and so
/// sees everything).
fn resource_json(site: &SiteRuntime, who: Option<&Principal>, r: &Resource) -> serde_json::Value {
    let props: serde_json::Map<String, serde_json::Value> = r
        .props
        .0
        .iter()
        .filter(|(k, _)| who.is_none_or(|who| site.policy.may_read(who, r, k)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    json!({
        "id": r.id.0,
        "name": r.name,
        "category": r.category_name,
        "published": r.published,
        "version": r.version.0,
        "created": r.created.to_rfc3339(),
        "modified": r.modified.to_rfc3339(),
        "props": props,
    })
}

impl Controller for ApiController {
    fn allowed_methods(&self) -> &'static [Method] {
        &[Method::GET, Method::HEAD, Method::PATCH]
    }

    fn reads_body(&self) -> bool {
        true
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if !req.args.iter().any(|(k, _)| k == "id") {
                return stats(req);
            }
            let Some(id) = req
                .args
                .iter()
                .find(|(k, _)| k == "id")
                .and_then(|(_, v)| v.parse::<i64>().ok())
                .map(ResourceId)
            else {
                return error(StatusCode::NOT_FOUND, "no such resource");
            };
            let store = req.site.models.store.clone();
            if req.parts.method != Method::PATCH {
                return match store.run(move |s| s.resource(id)).await {
                    Ok(Some(r)) if req.site.policy.may_see(req.principal(), &r) => reply(
                        StatusCode::OK,
                        resource_json(req.site, Some(req.principal()), &r),
                    ),
                    Ok(Some(_)) => error(StatusCode::NOT_FOUND, "no such resource"),
                    Ok(None) => match store.run(move |s| s.deletion(&id.to_string())).await {
                        Ok(Some(gone)) if gone.was_public => {
                            error(StatusCode::GONE, "this resource was deleted")
                        }
                        Ok(_) => error(StatusCode::NOT_FOUND, "no such resource"),
                        Err(e) => store_failure(e),
                    },
                    Err(e) => store_failure(e),
                };
            }
            // A user may change what the site's rules let them update; the
            // site's API token may change everything.
            let by_user = if req.principal().is_anonymous() {
                if let Err(refused) = authorize(req) {
                    return *refused;
                }
                false
            } else {
                match store.run(move |s| s.resource(id)).await {
                    Ok(Some(r)) if req.site.policy.may(req.principal(), Action::Update, &r) => true,
                    Ok(Some(r)) if req.site.policy.may_see(req.principal(), &r) => {
                        return error(StatusCode::FORBIDDEN, "you may not change this resource");
                    }
                    Ok(_) => return error(StatusCode::NOT_FOUND, "no such resource"),
                    Err(e) => return store_failure(e),
                }
            };
            let props = match serde_json::from_slice::<serde_json::Value>(&req.body) {
                Ok(serde_json::Value::Object(map)) => Props(map),
                Ok(_) => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        "the body must be a JSON object of properties",
                    );
                }
                Err(e) => return error(StatusCode::BAD_REQUEST, format!("bad JSON: {e}")),
            };
            let if_match = req
                .parts
                .headers
                .get(IF_MATCH)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim_matches('"').parse::<i64>());
            let if_match = match if_match {
                Some(Ok(v)) => Some(Version(v)),
                Some(Err(_)) => {
                    return store_failure(StoreError::InvalidInput {
                        field: "If-Match".into(),
                        reason: "must be a version number".into(),
                    });
                }
                None => None,
            };
            let result = store
                .run(move |s| {
                    // Sanitised once, here, before any write begins: it is the slow
                    // part, and neither the writer nor a retry should wait for it.
                    let mut update = ResourceUpdate::new(id, if_match.unwrap_or(Version(0)));
                    update.props = PropsChange::Merge(props);
                    let update = update.sanitize()?;
                    // With If-Match, a change made meanwhile is a real conflict (409).
                    // Without, the write applies to whatever version is current: a
                    // write that lost a race with another is simply tried again.
                    let mut attempts = 0;
                    loop {
                        let current = s
                            .resource(id)?
                            .ok_or_else(|| StoreError::ResourceNotFound(id.to_string()))?;
                        let update = update.clone().based_on(if_match.unwrap_or(current.version));
                        match s.update_sanitized(update) {
                            Err(StoreError::Conflict { .. })
                                if if_match.is_none() && attempts < MAX_ATTEMPTS =>
                            {
                                attempts += 1;
                            }
                            done => return done,
                        }
                    }
                })
                .await;
            match result {
                Ok(r) if by_user => reply(
                    StatusCode::OK,
                    resource_json(req.site, Some(req.principal()), &r),
                ),
                Ok(r) => reply(StatusCode::OK, resource_json(req.site, None, &r)),
                Err(e) => store_failure(e),
            }
        })
    }
}
