//! The JSON API (`docs/api.md`): resources, edges, search and revisions, read
//! and written by whoever is asking, through the site's access rules, the same
//! decision templates and push apply. `/api/openapi.json` describes every
//! endpoint of every module the site enables.
//!
//! Who is asking: the request's principal (a session, whose writes carry the
//! CSRF token, or a user's API token; the `auth` module finds out), or the
//! holder of the site's `[api] token`, who may do everything. Each file here
//! declares its endpoints (`endpoints()`) beside their handlers; [`api`]
//! gathers them.

mod cache;
mod categories;
mod edges;
mod health;
mod input;
mod modules;
mod resources;
mod revisions;
mod rules;
mod schemas;
mod search;
mod settings;

use std::sync::LazyLock;

use http::header::{CACHE_CONTROL, CONTENT_TYPE, IF_MATCH};
use http::{HeaderValue, StatusCode};
use serde_json::json;

use bulwark_store::{Resource, Version, Visibility};
use bulwark_web::{
    Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, SiteRuntime, empty_response,
    json_response,
};
pub(super) use bulwark_web::{id_arg, resource_for, visible_resource};

/// The core module's endpoints and schemas.
pub fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        let all = [
            resources::endpoints(),
            edges::endpoints(),
            revisions::endpoints(),
            search::endpoints(),
            rules::endpoints(),
            categories::endpoints(),
            settings::endpoints(),
            cache::endpoints(),
            modules::endpoints(),
            health::endpoints(),
            endpoints(),
        ];
        let api = all.into_iter().flatten().fold(Api::new(), Api::endpoint);
        schemas::add_schemas(api)
    });
    &API
}

/// A resource as the API shows it to `caller`: the properties the site's
/// policy lets them read.
pub(super) fn resource_json(
    caller: Caller<'_>,
    site: &SiteRuntime,
    r: &Resource,
) -> serde_json::Value {
    let props: serde_json::Map<String, serde_json::Value> = r
        .props
        .0
        .iter()
        .filter(|(k, _)| caller.may_read(site, r, k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let (visibility, content_group) = match r.visibility {
        Visibility::Public => ("public", None),
        Visibility::Members => ("members", None),
        Visibility::Group(g) => ("group", Some(g.0)),
    };
    json!({
        "id": r.id.0,
        "name": r.name,
        "category": r.category_name,
        "published": r.published,
        "publication_start": r.publication_start.map(|t| t.to_rfc3339()),
        "publication_end": r.publication_end.map(|t| t.to_rfc3339()),
        "visibility": visibility,
        "content_group": content_group,
        "creator": r.creator.map(|u| u.0),
        "modifier": r.modifier.map(|u| u.0),
        "version": r.version.0,
        "created": r.created.to_rfc3339(),
        "modified": r.modified.to_rfc3339(),
        "props": props
    })
}

pub(super) fn reply(status: StatusCode, value: serde_json::Value) -> Result<Outcome, Problem> {
    Ok(Outcome::Response(json_response(status, &value)))
}

pub(super) fn no_content() -> Result<Outcome, Problem> {
    Ok(Outcome::Response(empty_response(StatusCode::NO_CONTENT)))
}

pub(super) fn not_found() -> Problem {
    Problem::not_found("no such resource")
}

/// `If-Match: <version>` (quoted or not), if given.
pub(super) fn if_match(req: &RequestCtx<'_>) -> Result<Option<Version>, Problem> {
    let Some(value) = req.parts.headers.get(IF_MATCH) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .map(|v| v.trim().trim_start_matches("W/").trim_matches('"'))
        .and_then(|v| v.parse::<i64>().ok())
        .map(|v| Some(Version(v)))
        .ok_or_else(|| {
            Problem::invalid("If-Match", "If-Match must be the resource's version number")
        })
}

/// `GET /api/stats` (with the site's token): renders, caches and refusals.
fn stats(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let site = req.site;
    let cache = site.models().cache.stats();
    reply(
        StatusCode::OK,
        json!({
            "renders": site.models().renders.load(std::sync::atomic::Ordering::Relaxed),
            "refused_busy": site.renders().refused(),
            "refused_database_busy": site.renders().database_busy(),
            "refused_lib_builds": site.lib_builds().refused(),
            "template_compiles": site.templates().compiles(),
            "cache": {
                "hits": cache.hits, "misses": cache.misses, "coalesced_waits": cache.coalesced_waits,
                "entries": cache.entries, "bytes_used": cache.bytes_used, "evictions": cache.evictions
            }
        }),
    )
}

/// `GET /api/openapi.json`: the site's document, made when it loaded.
fn openapi(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let mut resp = http::Response::new(bulwark_http::Body::from(req.site.openapi().clone()));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(Outcome::Response(resp))
}

/// This file's endpoints, with their OpenAPI descriptions.
fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_openapi", "/api/openapi.json").get(
            Access::Anyone,
            || {
                json!({
                    "operationId": "openapi",
                    "summary": "This document",
                    "tags": [
                        "meta"
                    ],
                    "responses": {
                        "200": {
                            "description": "The OpenAPI document",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object"
                                    }
                                }
                            }
                        }
                    }
                })
            },
            |req, _| Box::pin(async move { openapi(req) }),
        ),
        Endpoint::new("api_stats", "/api/stats").get(
            Access::SiteToken,
            || {
                json!({
                    "operationId": "stats",
                    "summary": "Render and cache figures of the site",
                    "tags": [
                        "meta"
                    ],
                    "description": "Needs the site's API token (`[api] token` in site.toml).",
                    "security": [
                        {
                            "siteToken": []
                        }
                    ],
                    "responses": {
                        "200": {
                            "description": "Figures",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object"
                                    }
                                }
                            }
                        }
                    }
                })
            },
            |req, _| Box::pin(async move { stats(req) }),
        ),
    ]
}
