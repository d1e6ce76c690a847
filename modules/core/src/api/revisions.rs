//! `/api/rsc/{id}/revisions`: earlier versions of a resource, and putting one
//! back. Both need the right to change the resource: a revision may hold a
//! draft or a property the public never saw.

use http::StatusCode;
use serde_json::json;

use bulwark_acl::Action;
use bulwark_store::{ResourceId, RestorePublication, StoreError};
use serde::Deserialize;

use super::input::json_body;
use super::{id_arg, if_match, not_found, reply, resource_for, resource_json};
use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};

/// `GET`: newest first, each with the resource as it was.
pub(super) async fn list(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let Some(id) = id_arg(req, "id") else {
        return Err(not_found());
    };
    resource_for(
        req,
        caller,
        id,
        Action::Update,
        "see this resource's revisions",
    )
    .await?;
    match req
        .site
        .models()
        .store
        .run(move |s| s.revisions(ResourceId(id)))
        .await
    {
        Ok(revisions) => {
            let list: Vec<serde_json::Value> = revisions
                .iter()
                .map(|rev| {
                    json!({
                        "id": rev.id,
                        "version": rev.version.0,
                        "created": rev.created.to_rfc3339(),
                        "modifier": rev.modifier.map(|u| u.0),
                        "resource": resource_json(caller, req.site, &rev.snapshot)
                    })
                })
                .collect();
            reply(StatusCode::OK, json!({ "revisions": list }))
        }
        Err(e) => Err(e.into()),
    }
}

/// What a restore puts back besides the content: `{"publication": true}`
/// also whether and when the resource is published, and who may see it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Restore {
    #[serde(default)]
    publication: bool,
}

/// `POST .../revisions/{revision}/restore` (optionally `If-Match`): the
/// content as that revision had it, saved as a new version; publication
/// stays as it is unless the body asks (`{"publication": true}`).
pub(super) async fn restore(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let (Some(id), Some(revision)) = (id_arg(req, "id"), id_arg(req, "revision")) else {
        return Err(Problem::not_found("no such revision"));
    };
    let asked: Restore = if req.body.is_empty() {
        Restore::default()
    } else {
        json_body(req)?
    };
    let publication = if asked.publication {
        RestorePublication::Too
    } else {
        RestorePublication::Keep
    };
    let if_match = if_match(req)?;
    let current = resource_for(req, caller, id, Action::Update, "restore this resource").await?;
    let modifier = caller.user();
    let result = req
        .site
        .models()
        .store
        .run(move |s| {
            let rev = s.revision(revision)?;
            if rev.resource != ResourceId(id) {
                return Err(StoreError::RevisionNotFound(revision));
            }
            s.restore_revision(
                revision,
                if_match.unwrap_or(current.version),
                modifier,
                publication,
            )
        })
        .await;
    match result {
        Ok(r) => reply(StatusCode::OK, resource_json(caller, req.site, &r)),
        Err(e) => Err(e.into()),
    }
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_rsc_revisions", "/api/rsc/{id}/revisions")
            .get(
                Access::Known,
                || json!({
                    "operationId": "listRevisions",
                    "summary": "Earlier versions of a resource",
                    "tags": [
                        "revisions"
                    ],
                    "description": "Newest first. Needs the right to change the resource.",
                    "responses": {
                        "200": {
                            "description": "The revisions",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": [
                                            "revisions"
                                        ],
                                        "additionalProperties": false,
                                        "properties": {
                                            "revisions": {
                                                "type": "array",
                                                "items": {
                                                    "$ref": "#/components/schemas/Revision"
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "parameters": [
                        {
                            "$ref": "#/components/parameters/id"
                        }
                    ]
                }),
                |req, caller| Box::pin(list(req, caller)),
            ),
        Endpoint::new("api_rsc_restore", "/api/rsc/{id}/revisions/{revision}/restore")
            .post(
                Access::Known,
                || json!({
                    "operationId": "restoreRevision",
                    "summary": "Put a revision back",
                    "tags": [
                        "revisions"
                    ],
                    "description": "The content (properties, name, category) as that revision had it, saved as a new version (so it can be undone the same way). Whether and when the resource is published, and who may see it, stay as they are unless the body says `{\"publication\": true}`. Needs the right to change the resource.",
                    "requestBody": {
                        "required": false,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "properties": {
                                        "publication": {
                                            "type": "boolean",
                                            "default": false,
                                            "description": "Also put back published, publication_start, publication_end and visibility"
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "parameters": [
                        {
                            "$ref": "#/components/parameters/id"
                        },
                        {
                            "name": "revision",
                            "in": "path",
                            "required": true,
                            "schema": {
                                "type": "integer",
                                "format": "int64"
                            }
                        },
                        {
                            "$ref": "#/components/parameters/ifMatch"
                        }
                    ],
                    "responses": {
                        "200": {
                            "description": "The restored resource",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Resource"
                                    }
                                }
                            }
                        },
                        "409": {
                            "$ref": "#/components/responses/Conflict"
                        }
                    }
                }),
                |req, caller| Box::pin(restore(req, caller)),
            ),
    ]
}
