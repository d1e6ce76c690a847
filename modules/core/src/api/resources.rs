//! `/api/rsc` and `/api/rsc/{id}`: create, read, change and delete resources.

use http::header::{ETAG, LOCATION};
use http::{HeaderValue, StatusCode};

use bulwark_acl::Action;
use bulwark_store::{NewResource, PropsChange, ResourceId, ResourceUpdate, StoreError, Version};

use super::input::{NewFields, PatchFields, json_body, visibility};
use super::{
    id_arg, if_match, no_content, not_found, reply, resource_for, resource_json, visible_resource,
};
use bulwark_web::{
    Access, Caller, Endpoint, Outcome, Problem, RequestCtx, empty_response, json_response,
    not_modified,
};
use serde_json::json;

/// How often a write without `If-Match` is tried again after losing a race with
/// another write (each try re-reads the current version, so it only loses when a
/// write committed in between).
const MAX_ATTEMPTS: u32 = 100;

/// `GET /api/rsc/{id}`: the resource as the caller may see it, with its
/// version as `ETag` (`"7"`, what `If-Match` takes): `If-None-Match` with it
/// gets `304` and no body. 410 for one that was public and is deleted.
pub(super) async fn read(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let Some(id) = id_arg(req, "id") else {
        return Err(not_found());
    };
    match visible_resource(req, caller, id).await {
        Ok(r) => {
            let etag = HeaderValue::from_str(&format!("\"{}\"", r.version.0))
                .expect("a number is a header value");
            let mut resp = if not_modified(req.parts, Some(&etag), None) {
                empty_response(StatusCode::NOT_MODIFIED)
            } else {
                json_response(StatusCode::OK, &resource_json(caller, req.site, &r))
            };
            resp.headers_mut().insert(ETAG, etag);
            Ok(Outcome::Response(resp))
        }
        Err(refused) => {
            let key = id.to_string();
            match req.site.models().store.run(move |s| s.deletion(&key)).await {
                Ok(Some(gone)) if gone.was_public => Err(Problem::new(
                    bulwark_web::ProblemKind::Gone,
                    "this resource was deleted",
                )),
                Ok(_) => Err(refused),
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// `POST /api/rsc`: a new resource, if the rules let the caller insert its
/// category with its visibility. 201 with `Location`.
pub(super) async fn create(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let fields: NewFields = json_body(req)?;
    let visibility = visibility(
        fields.visibility,
        fields.content_group,
        bulwark_store::Visibility::Public,
    )?;
    if !caller.may_insert(req.site, &fields.category, visibility) {
        return Err(caller.refused(&format!("create a {:?} resource", fields.category)));
    }
    let new = NewResource {
        name: fields.name,
        category: fields.category,
        published: fields.published,
        publication_start: fields.publication_start,
        publication_end: fields.publication_end,
        visibility,
        creator: caller.user(),
        created: None,
        props: fields.props,
    };
    let store = req.site.models().store.clone();
    match store
        .run(move |s| {
            let id = s.create_resource(new)?;
            s.resource(id)?
                .ok_or_else(|| StoreError::ResourceNotFound(id.to_string()))
        })
        .await
    {
        Ok(r) => {
            let mut outcome = reply(StatusCode::CREATED, resource_json(caller, req.site, &r))?;
            if let Outcome::Response(resp) = &mut outcome
                && let Ok(location) = HeaderValue::from_str(&format!("/api/rsc/{}", r.id.0))
            {
                resp.headers_mut().insert(LOCATION, location);
            }
            Ok(outcome)
        }
        Err(e) => Err(e.into()),
    }
}

/// `PATCH /api/rsc/{id}`: a merge patch of the resource. With `If-Match`, a
/// change made since that version is a 409; without, the patch applies to
/// whatever is current.
pub(super) async fn update(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let Some(id) = id_arg(req, "id") else {
        return Err(not_found());
    };
    // Who may change it first: someone who may not learns nothing of what
    // would be wrong with their change.
    let current = resource_for(req, caller, id, Action::Update, "change this resource").await?;
    let patch: PatchFields = json_body(req)?;
    let if_match = if_match(req)?;
    // A new category or visibility is where the resource would be inserted:
    // the rules must allow that too (an editor cannot move an article into a
    // content group they may not write).
    let new_visibility = visibility(patch.visibility, patch.content_group, current.visibility)?;
    let new_category = patch
        .category
        .clone()
        .unwrap_or_else(|| current.category_name.clone());
    if (new_category != current.category_name || new_visibility != current.visibility)
        && !caller.may_insert(req.site, &new_category, new_visibility)
    {
        return Err(caller.refused(&format!(
            "move this resource to category {new_category:?} with that visibility"
        )));
    }
    let mut update = ResourceUpdate::new(ResourceId(id), if_match.unwrap_or(current.version));
    update.name = patch.name;
    update.category = patch.category;
    update.published = patch.published;
    update.publication_start = patch.publication_start;
    update.publication_end = patch.publication_end;
    update.visibility = (new_visibility != current.visibility).then_some(new_visibility);
    update.modifier = caller.user();
    update.props = patch.props.map_or(PropsChange::Keep, PropsChange::Merge);
    let store = req.site.models().store.clone();
    let result = store
        .run(move |s| {
            // Sanitised once, here, before any write begins: it is the slow
            // part, and neither the writer nor a retry should wait for it.
            let update = update.sanitize()?;
            let mut attempts = 0;
            loop {
                let current = s
                    .resource(ResourceId(id))?
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
        Ok(r) => reply(StatusCode::OK, resource_json(caller, req.site, &r)),
        Err(e) => Err(e.into()),
    }
}

/// `DELETE /api/rsc/{id}` (optionally `If-Match`): 204.
pub(super) async fn delete(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let Some(id) = id_arg(req, "id") else {
        return Err(not_found());
    };
    let if_match: Option<Version> = if_match(req)?;
    resource_for(req, caller, id, Action::Delete, "delete this resource").await?;
    match req
        .site
        .models()
        .store
        .run(move |s| s.delete_resource(ResourceId(id), if_match))
        .await
    {
        Ok(()) => no_content(),
        Err(e) => Err(e.into()),
    }
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_rsc_new", "/api/rsc")
            .post(
                Access::Known,
                || json!({
                    "operationId": "createResource",
                    "summary": "Create a resource",
                    "tags": [
                        "resources"
                    ],
                    "description": "Needs the insert right for the category with the given visibility (the site's access rules).",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "$ref": "#/components/schemas/NewResource"
                                }
                            }
                        }
                    },
                    "responses": {
                        "201": {
                            "description": "Created",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Resource"
                                    }
                                }
                            },
                            "headers": {
                                "Location": {
                                    "description": "The new resource's API URL",
                                    "schema": {
                                        "type": "string"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(create(req, caller)),
            ),
        Endpoint::new("api_rsc", "/api/rsc/{id}")
            .get(
                Access::Anyone,
                || json!({
                    "operationId": "getResource",
                    "summary": "Read a resource",
                    "tags": [
                        "resources"
                    ],
                    "description": "As the caller may see it: a resource they may not see is a 404, as one that does not exist; properties some groups may not read are left out. The answer's ETag is the version (`\"7\"`); sent back in If-None-Match it gets 304 while the resource is unchanged.",
                    "responses": {
                        "200": {
                            "description": "The resource",
                            "headers": {
                                "ETag": {
                                    "description": "The resource's version, quoted",
                                    "schema": {"type": "string"}
                                }
                            },
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Resource"
                                    }
                                }
                            }
                        },
                        "304": {
                            "description": "Unchanged since the version named in If-None-Match"
                        },
                        "410": {
                            "$ref": "#/components/responses/Gone"
                        }
                    },
                    "parameters": [
                        {
                            "$ref": "#/components/parameters/id"
                        }
                    ]
                }),
                |req, caller| Box::pin(read(req, caller)),
            )
            .patch(
                Access::Known,
                || json!({
                    "operationId": "updateResource",
                    "summary": "Change a resource",
                    "tags": [
                        "resources"
                    ],
                    "description": "A merge patch (RFC 7396) of the resource: fields left out stay; in `props`, `null` removes a property. With `If-Match: <version>` a change made since that version is refused with 409.",
                    "parameters": [
                        {
                            "$ref": "#/components/parameters/id"
                        },
                        {
                            "$ref": "#/components/parameters/ifMatch"
                        }
                    ],
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "$ref": "#/components/schemas/ResourcePatch"
                                }
                            }
                        }
                    },
                    "responses": {
                        "200": {
                            "description": "The changed resource",
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
                        },
                        "422": {
                            "$ref": "#/components/responses/Unprocessable"
                        }
                    }
                }),
                |req, caller| Box::pin(update(req, caller)),
            )
            .delete(
                Access::Known,
                || json!({
                    "operationId": "deleteResource",
                    "summary": "Delete a resource",
                    "tags": [
                        "resources"
                    ],
                    "parameters": [
                        {
                            "$ref": "#/components/parameters/id"
                        },
                        {
                            "$ref": "#/components/parameters/ifMatch"
                        }
                    ],
                    "responses": {
                        "204": {
                            "description": "Deleted"
                        },
                        "409": {
                            "$ref": "#/components/responses/Conflict"
                        }
                    }
                }),
                |req, caller| Box::pin(delete(req, caller)),
            ),
    ]
}
