//! `POST /api/cache`: purge what the caches hold, for those who edit the site.
//!
//! - `{"url": "/path?query"}`: that page, in every language of the site;
//! - `{"resource": 42}`: everything that showed resource 42 (its dependency key:
//!   pages, fragments and model values alike);
//! - `{"all": true}`: the whole site (managers only: the next requests all render).
//!
//! Caches only ever hold what is still true (every change flushes what it makes
//! stale), so this is for what the caches cannot know: a template or file edited
//! on disk without `--dev`, an external system's data, a page to see rendered now.

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::MANAGERS;
use bulwark_store::{ResourceId, dependency};
use bulwark_template::ModelKey;

use super::input::json_body;
use super::reply;
use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};

/// The group whose people may purge a page or a resource.
const EDITORS: &str = "editors";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Purge {
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    resource: Option<i64>,
    #[serde(default)]
    all: bool,
}

pub(super) async fn purge(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let purge: Purge = json_body(req)?;
    let cache = &req.site.models().cache;
    match purge {
        Purge {
            url: Some(url),
            resource: None,
            all: false,
        } => {
            let Ok(uri) = url.parse::<http::Uri>() else {
                return Err(Problem::bad_request(format!("{url:?} is not a URL")));
            };
            if !uri.path().starts_with('/') {
                return Err(Problem::bad_request(
                    "the url must be a path on this site, such as /about",
                ));
            }
            let query = uri.query().unwrap_or("");
            for language in &req.site.config().languages {
                cache.flush(&ModelKey::page(language, uri.path(), query));
            }
            reply(StatusCode::OK, json!({ "purged": "url", "url": url }))
        }
        Purge {
            url: None,
            resource: Some(id),
            all: false,
        } if id > 0 => {
            cache.flush_dependency(&dependency::resource(ResourceId(id)));
            reply(
                StatusCode::OK,
                json!({ "purged": "resource", "resource": id }),
            )
        }
        Purge {
            url: None,
            resource: None,
            all: true,
        } => {
            if !caller.in_group(MANAGERS) {
                return Err(caller.refused("flush the whole site's caches"));
            }
            cache.flush_all();
            reply(StatusCode::OK, json!({ "purged": "all" }))
        }
        _ => Err(Problem::bad_request(
            "give exactly one of url (a path), resource (an id) or all (true)",
        )),
    }
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_cache", "/api/cache")
            .post(
                Access::Group(EDITORS),
                || json!({
                    "operationId": "purgeCache",
                    "summary": "Purge the caches",
                    "tags": [
                        "site"
                    ],
                    "description": "Exactly one of: `url` (that page, in every language), `resource` (everything that showed it), `all` true (the whole site; managers only). Editors and above.",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "properties": {
                                        "url": {
                                            "type": [
                                                "string",
                                                "null"
                                            ]
                                        },
                                        "resource": {
                                            "type": [
                                                "integer",
                                                "null"
                                            ],
                                            "format": "int64",
                                            "minimum": 1
                                        },
                                        "all": {
                                            "type": "boolean"
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "responses": {
                        "200": {
                            "description": "What was purged",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": [
                                            "purged"
                                        ],
                                        "properties": {
                                            "purged": {
                                                "type": "string",
                                                "enum": [
                                                    "url",
                                                    "resource",
                                                    "all"
                                                ]
                                            },
                                            "url": {
                                                "type": "string"
                                            },
                                            "resource": {
                                                "type": "integer"
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(purge(req, caller)),
            ),
    ]
}
