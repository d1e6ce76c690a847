//! `/api/config`: the site's run-time settings (what templates read as
//! `m.config.<key>`), for managers and the site's token. `GET` lists them;
//! `PATCH {"settings": {"key": "value", "other": null}}` sets and removes
//! (null) in one go. Keys with a dot belong to a part of Bulwark
//! (`access.rules` is the access rules' own, changed through
//! `/api/access/rules`): they are listed but not changed here.

use std::collections::BTreeMap;

use http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::MANAGERS;

use super::input::json_body;
use super::reply;
use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsChange {
    settings: BTreeMap<String, Option<String>>,
}

/// A key some part of Bulwark keeps for itself.
fn reserved(key: &str) -> bool {
    key.contains('.')
}

async fn answer(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    match req.site.models().store.run(|s| s.config_values()).await {
        Ok(values) => {
            let settings: Vec<serde_json::Value> = values
                .into_iter()
                .map(|(key, value)| {
                    let changeable = !reserved(&key);
                    json!({"key": key, "value": value, "changeable": changeable})
                })
                .collect();
            reply(StatusCode::OK, json!({ "settings": settings }))
        }
        Err(e) => Err(e.into()),
    }
}

pub(super) async fn settings(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    if req.parts.method != Method::PATCH {
        return answer(req).await;
    }
    let change: SettingsChange = json_body(req)?;
    if let Some(key) = change.settings.keys().find(|k| reserved(k)) {
        return Err(Problem::bad_request(format!(
            "{key:?} belongs to a part of Bulwark and is not changed here"
        )));
    }
    let changed = req
        .site
        .models()
        .store
        .run(move |s| {
            for (key, value) in &change.settings {
                match value {
                    Some(value) => s.set_config_value(key, value)?,
                    None => s.delete_config_value(key)?,
                }
            }
            Ok(())
        })
        .await;
    match changed {
        Ok(()) => answer(req).await,
        Err(e) => Err(e.into()),
    }
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_config", "/api/config")
            .get(
                Access::Group(MANAGERS),
                || json!({
                    "operationId": "getSettings",
                    "summary": "The site's settings",
                    "tags": [
                        "site"
                    ],
                    "description": "What templates read as `m.config.<key>`. Managers and administrators only.",
                    "responses": {
                        "200": {
                            "description": "The settings",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Settings"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(settings(req, caller)),
            )
            .patch(
                Access::Group(MANAGERS),
                || json!({
                    "operationId": "changeSettings",
                    "summary": "Set and remove settings",
                    "tags": [
                        "site"
                    ],
                    "description": "A string sets a key, null removes it, all in one go. Keys with a dot are refused (400). Managers and administrators only.",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": [
                                        "settings"
                                    ],
                                    "properties": {
                                        "settings": {
                                            "type": "object",
                                            "additionalProperties": {
                                                "type": [
                                                    "string",
                                                    "null"
                                                ]
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "responses": {
                        "200": {
                            "description": "The settings after the change",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Settings"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(settings(req, caller)),
            ),
    ]
}
