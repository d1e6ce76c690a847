//! The JSON API (`docs/api.md`): resources, edges, search and revisions, read
//! and written by whoever is asking, through the site's access rules, the same
//! decision templates and push apply. `/api/openapi.json` describes all of it.
//!
//! Who is asking: the request's principal (a session, whose writes carry the
//! CSRF token, or a user's API token; the `auth` module finds out), or the
//! holder of the site's `[api] token`, who may do everything. One dispatch rule
//! per endpoint ([`ApiEndpoint`]); the files here are those endpoints.
//!
//! Helpers return `Result<T, Outcome>`: the error is the answer itself, made
//! once per request and returned straight away, so boxing it (what clippy's
//! `result_large_err` asks for) would only add an allocation.
#![allow(clippy::result_large_err)]

mod backups;
mod cache;
mod categories;
mod edges;
mod input;
mod modules;
mod resources;
mod revisions;
mod rules;
mod search;
mod settings;

use futures_util::future::BoxFuture;
use http::header::{AUTHORIZATION, IF_MATCH};
use http::{Method, StatusCode};
use serde_json::json;

use bulwark_acl::{Action, Principal};
use bulwark_site::ApiEndpoint;
use bulwark_store::{Resource, ResourceId, StoreError, Version, Visibility};

use crate::bearer::{BearerCheck, check_bearer};
use crate::controllers::Controller;
use crate::error_page::{json_response, store_error_json};
use crate::representation::Outcome;
use crate::request::RequestCtx;
use crate::site::SiteRuntime;

/// The OpenAPI 3 document, kept by hand beside the code it describes; the
/// test suite checks the server against it (schemathesis) and it against the
/// dispatch rules (`tests/api.rs`).
const OPENAPI: &str = include_str!("openapi.json");

pub struct ApiController {
    pub endpoint: ApiEndpoint,
}

/// Who a request is made by, as the API decides what they may do.
#[derive(Clone, Copy)]
pub(super) enum Caller<'a> {
    /// The holder of the site's `[api] token`: everything.
    SiteToken,
    /// Whoever the session or API token says (anonymous without either).
    Principal(&'a Principal),
}

impl Caller<'_> {
    pub(super) fn may(self, site: &SiteRuntime, action: Action, r: &Resource) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => site.policy.may(who, action, r),
        }
    }

    pub(super) fn may_see(self, site: &SiteRuntime, r: &Resource) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => site.policy.may_see(who, r),
        }
    }

    pub(super) fn may_insert(
        self,
        site: &SiteRuntime,
        category: &str,
        visibility: Visibility,
    ) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => site.policy.may_insert(who, category, visibility),
        }
    }

    /// Whether the caller counts as one of `group`'s people (the site's
    /// token counts as everyone).
    pub(super) fn in_group(self, group: &str) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => who.in_group(group),
        }
    }

    /// The user resource to record as creator or modifier.
    pub(super) fn user(self) -> Option<ResourceId> {
        match self {
            Caller::SiteToken => None,
            Caller::Principal(who) => who.user_id(),
        }
    }

    /// The answer to a refused action: 401 to someone who has not said who
    /// they are, 403 to someone the rules do not let.
    pub(super) fn refused(self, what: &str) -> Outcome {
        match self {
            Caller::Principal(who) if who.is_anonymous() => error(
                StatusCode::UNAUTHORIZED,
                format!("log on or send an API token to {what}"),
            ),
            _ => error(StatusCode::FORBIDDEN, format!("you may not {what}")),
        }
    }

    /// A resource as the API shows it to this caller: the properties the
    /// site's policy lets them read.
    pub(super) fn resource_json(self, site: &SiteRuntime, r: &Resource) -> serde_json::Value {
        let props: serde_json::Map<String, serde_json::Value> = r
            .props
            .0
            .iter()
            .filter(|(k, _)| match self {
                Caller::SiteToken => true,
                Caller::Principal(who) => site.policy.may_read(who, r, k),
            })
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
            "props": props,
        })
    }
}

pub(super) fn reply(status: StatusCode, value: serde_json::Value) -> Outcome {
    Outcome::Response(json_response(status, &value))
}

pub(super) fn error(status: StatusCode, message: impl std::fmt::Display) -> Outcome {
    reply(status, json!({"error": message.to_string()}))
}

pub(super) fn no_content() -> Outcome {
    let mut resp = http::Response::new(bulwark_http::Body::empty());
    *resp.status_mut() = StatusCode::NO_CONTENT;
    resp.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    Outcome::Response(resp)
}

pub(super) fn store_failure(e: StoreError) -> Outcome {
    Outcome::Response(store_error_json(&e))
}

pub(super) fn not_found() -> Outcome {
    error(StatusCode::NOT_FOUND, "no such resource")
}

/// Who is asking. A request whose `Authorization` names nobody (a wrong or
/// revoked token) is refused outright rather than served as anonymous: a
/// script should learn that its token no longer works.
fn caller<'a>(req: &'a RequestCtx<'a>) -> Result<Caller<'a>, Outcome> {
    let who = req.principal();
    if !who.is_anonymous() || !req.parts.headers.contains_key(AUTHORIZATION) {
        return Ok(Caller::Principal(who));
    }
    match check_bearer(req.parts, req.site.site.config.api.token.as_deref()) {
        BearerCheck::Allowed => Ok(Caller::SiteToken),
        BearerCheck::NotConfigured | BearerCheck::Refused => Err(error(
            StatusCode::UNAUTHORIZED,
            "the bearer token is not valid (revoked, expired or mistyped)",
        )),
    }
}

/// A numeric path argument; anything else names nothing here (404).
pub(super) fn id_arg(req: &RequestCtx<'_>, name: &str) -> Option<i64> {
    req.arg(name)?.parse::<i64>().ok().filter(|id| *id > 0)
}

/// `If-Match: <version>` (quoted or not), if given.
pub(super) fn if_match(req: &RequestCtx<'_>) -> Result<Option<Version>, Outcome> {
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
            error(
                StatusCode::BAD_REQUEST,
                "If-Match must be the resource's version number",
            )
        })
}

/// Loads a resource the caller may see: `Err` is the answer (404 for one
/// they may not see, as for one that does not exist: the API does not tell
/// what exists to those who may not see it).
pub(super) async fn visible_resource(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
    id: i64,
) -> Result<Resource, Outcome> {
    let id = ResourceId(id);
    match req.site.models.store.run(move |s| s.resource(id)).await {
        Ok(Some(r)) if caller.may_see(req.site, &r) => Ok(r),
        Ok(_) => Err(not_found()),
        Err(e) => Err(store_failure(e)),
    }
}

/// A resource the caller may see and act on: 404 when they may not see it,
/// 401/403 when they see it but may not do `action` (`what` says it).
pub(super) async fn resource_for(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
    id: i64,
    action: Action,
    what: &str,
) -> Result<Resource, Outcome> {
    let r = visible_resource(req, caller, id).await?;
    if caller.may(req.site, action, &r) {
        Ok(r)
    } else {
        Err(caller.refused(what))
    }
}

/// `GET /api/stats` (with the site's token): renders, caches and refusals.
fn stats(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    if !matches!(caller, Caller::SiteToken) {
        return match req.site.site.config.api.token {
            None => error(
                StatusCode::FORBIDDEN,
                "the figures need the site's API token: set [api] token",
            ),
            Some(_) => error(
                StatusCode::UNAUTHORIZED,
                "the site's API token ([api] token) is required",
            ),
        };
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

fn openapi() -> Outcome {
    let mut resp = json_response(StatusCode::OK, &serde_json::Value::Null);
    *resp.body_mut() = bulwark_http::Body::from(OPENAPI);
    resp.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache"),
    );
    Outcome::Response(resp)
}

impl Controller for ApiController {
    fn allowed_methods(&self) -> &'static [Method] {
        match self.endpoint {
            ApiEndpoint::Resource => &[Method::GET, Method::HEAD, Method::PATCH, Method::DELETE],
            ApiEndpoint::Resources => &[Method::POST],
            ApiEndpoint::Edges => &[Method::GET, Method::HEAD, Method::POST],
            ApiEndpoint::Edge => &[Method::PATCH, Method::DELETE],
            ApiEndpoint::Revisions => &[Method::GET, Method::HEAD],
            ApiEndpoint::Restore => &[Method::POST],
            ApiEndpoint::AccessRules => &[Method::GET, Method::HEAD, Method::PUT, Method::DELETE],
            ApiEndpoint::Search
            | ApiEndpoint::Openapi
            | ApiEndpoint::Stats
            | ApiEndpoint::Backup => &[Method::GET, Method::HEAD],
            ApiEndpoint::Categories | ApiEndpoint::Predicates | ApiEndpoint::Backups => {
                &[Method::GET, Method::HEAD, Method::POST]
            }
            ApiEndpoint::Category | ApiEndpoint::Predicate => &[Method::PATCH],
            ApiEndpoint::Settings => &[Method::GET, Method::HEAD, Method::PATCH],
            ApiEndpoint::Modules => &[Method::GET, Method::HEAD, Method::PUT],
            ApiEndpoint::Cache | ApiEndpoint::BackupRestore => &[Method::POST],
        }
    }

    fn reads_body(&self) -> bool {
        true
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if self.endpoint == ApiEndpoint::Openapi {
                return openapi();
            }
            let caller = match caller(req) {
                Ok(caller) => caller,
                Err(refused) => return refused,
            };
            let method = &req.parts.method;
            match self.endpoint {
                ApiEndpoint::Resource => match *method {
                    Method::PATCH => resources::update(req, caller).await,
                    Method::DELETE => resources::delete(req, caller).await,
                    _ => resources::read(req, caller).await,
                },
                ApiEndpoint::Resources => resources::create(req, caller).await,
                ApiEndpoint::Edges => match *method {
                    Method::POST => edges::add(req, caller).await,
                    _ => edges::list(req, caller).await,
                },
                ApiEndpoint::Edge => match *method {
                    Method::PATCH => edges::move_to(req, caller).await,
                    _ => edges::remove(req, caller).await,
                },
                ApiEndpoint::Search => search::search(req, caller).await,
                ApiEndpoint::Revisions => revisions::list(req, caller).await,
                ApiEndpoint::Restore => revisions::restore(req, caller).await,
                ApiEndpoint::Stats => stats(req, caller),
                ApiEndpoint::AccessRules => rules::rules(req, caller).await,
                ApiEndpoint::Categories => categories::categories(req, caller).await,
                ApiEndpoint::Category => categories::move_category(req, caller).await,
                ApiEndpoint::Predicates => categories::predicates(req, caller).await,
                ApiEndpoint::Predicate => categories::change_predicate(req, caller).await,
                ApiEndpoint::Settings => settings::settings(req, caller).await,
                ApiEndpoint::Modules => modules::modules(req, caller).await,
                ApiEndpoint::Cache => cache::purge(req, caller).await,
                ApiEndpoint::Backups => backups::backups(req, caller).await,
                ApiEndpoint::Backup => backups::backup(req, caller).await,
                ApiEndpoint::BackupRestore => backups::restore_backup(req, caller).await,
                ApiEndpoint::Openapi => unreachable!("answered above"),
            }
        })
    }
}
