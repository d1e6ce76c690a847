//! `/api/access/rules`: the site's access rules, for managers and the site's
//! token. `GET` shows the rules in force; `PUT {"rules": [...]}` stores new
//! ones in the site's database (in force at once, replacing `site.toml`'s);
//! `DELETE` forgets them (`site.toml`'s or the defaults are in force again).
//! Either change flushes the site's caches: pages rendered under the old
//! rules must not be served under the new.

use http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::MANAGERS;
use bulwark_acl::stored::{RuleDoc, StoreRulesError, rule_docs};

use super::input::json_body;
use super::reply;
use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewRules {
    rules: Vec<RuleDoc>,
}

fn answer(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let policy = &req.site.policy();
    let rules = policy.rules();
    reply(
        StatusCode::OK,
        json!({
            "stored": policy.has_stored_rules(),
            "rules": rule_docs(&rules)
        }),
    )
}

pub(super) async fn rules(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    let policy = req.site.policy().clone();
    let store = req.site.models().store.clone();
    match req.parts.method {
        Method::PUT => {
            let new: NewRules = json_body(req)?;
            let stored = store
                .run(move |s| Ok(policy.store_rules(s, &new.rules)))
                .await;
            match stored {
                Ok(Ok(_)) => {}
                Ok(Err(StoreRulesError::Invalid(problem))) => {
                    return Err(Problem::bad_request(problem.to_string()));
                }
                Ok(Err(StoreRulesError::Store(e))) | Err(e) => return Err(e.into()),
            }
        }
        Method::DELETE => {
            if let Err(e) = store.run(move |s| policy.forget_stored_rules(s)).await {
                return Err(e.into());
            }
        }
        _ => return answer(req),
    }
    req.site.models().cache.flush_all();
    answer(req)
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_access_rules", "/api/access/rules")
            .get(
                Access::Group(MANAGERS),
                || json!({
                    "operationId": "getAccessRules",
                    "summary": "The access rules in force",
                    "tags": [
                        "access"
                    ],
                    "description": "Managers and administrators (or the site's token) only.",
                    "responses": {
                        "200": {
                            "description": "The rules in force",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/AccessRules"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(rules(req, caller)),
            )
            .put(
                Access::Group(MANAGERS),
                || json!({
                    "operationId": "storeAccessRules",
                    "summary": "Store new access rules",
                    "tags": [
                        "access"
                    ],
                    "description": "Kept in the site's database and in force at once, replacing those of site.toml (or the defaults); the site's caches are flushed. Managers and administrators only.",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": [
                                        "rules"
                                    ],
                                    "properties": {
                                        "rules": {
                                            "type": "array",
                                            "items": {
                                                "$ref": "#/components/schemas/AccessRule"
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "responses": {
                        "200": {
                            "description": "The rules in force",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/AccessRules"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(rules(req, caller)),
            )
            .delete(
                Access::Group(MANAGERS),
                || json!({
                    "operationId": "forgetAccessRules",
                    "summary": "Forget the stored access rules",
                    "tags": [
                        "access"
                    ],
                    "description": "The rules of site.toml (or the defaults) are in force again; the site's caches are flushed.",
                    "responses": {
                        "200": {
                            "description": "The rules in force",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/AccessRules"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(rules(req, caller)),
            ),
    ]
}
