//! `/api/rsc/{id}/edges[/{predicate}/{object}]`: a resource's outgoing edges.
//! Changing them is the `link` action on the subject; the object must be one
//! the caller may see (nobody links to what they cannot know exists).

use http::StatusCode;
use serde_json::json;

use bulwark_acl::Action;
use bulwark_store::{Edge, Resource, ResourceId};

use super::input::{EdgeMove, NewEdge, json_body};
use super::{id_arg, no_content, not_found, reply, resource_for, visible_resource};
use bulwark_web::events::{EdgeChange, EdgeRefused};
use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};

fn edge_json(e: &Edge) -> serde_json::Value {
    json!({
        "id": e.id,
        "predicate": e.predicate,
        "object": e.object.0,
        "seq": e.seq,
        "created": e.created.to_rfc3339()
    })
}

/// `GET`: the edges whose object the caller may see, by predicate and order.
pub(super) async fn list(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let Some(id) = id_arg(req, "id") else {
        return Err(not_found());
    };
    visible_resource(req, caller, id).await?;
    let store = req.site.models().store.clone();
    let found = store
        .run(move |s| {
            let edges = s.edges(ResourceId(id))?;
            let objects = edges
                .iter()
                .map(|e| s.resource(e.object))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((edges, objects))
        })
        .await;
    match found {
        Ok((edges, objects)) => {
            let edges: Vec<serde_json::Value> = edges
                .iter()
                .zip(&objects)
                .filter(|(_, o)| o.as_ref().is_some_and(|o| caller.may_see(req.site, o)))
                .map(|(e, _)| edge_json(e))
                .collect();
            reply(StatusCode::OK, json!({ "edges": edges }))
        }
        Err(e) => Err(e.into()),
    }
}

/// The subject from the path, if the caller may change its edges. Checked
/// before the body is read: someone who may not learns nothing of what would
/// be wrong with their request.
async fn linkable_subject(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<i64, Problem> {
    let Some(subject) = id_arg(req, "id") else {
        return Err(not_found());
    };
    resource_for(
        req,
        caller,
        subject,
        Action::Link,
        "change this resource's edges",
    )
    .await?;
    Ok(subject)
}

/// The object of an edge, if the caller may see it.
async fn visible_object(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
    object: i64,
) -> Result<Resource, Problem> {
    visible_resource(req, caller, object)
        .await
        .map_err(|_| Problem::not_found("no such object resource"))
}

/// Asks the modules ([`EdgeChange`]) whether this edge may be added or
/// removed; `Err` is the refusal. The site's token is never refused.
fn edge_change_allowed(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
    subject: i64,
    predicate: &str,
    object: &Resource,
    added: bool,
) -> Result<(), Problem> {
    let Caller::Principal(who) = caller else {
        return Ok(());
    };
    let change = EdgeChange {
        principal: who.clone(),
        subject: ResourceId(subject),
        predicate: predicate.to_owned(),
        object: object.id,
        object_name: object.name.clone(),
        added,
    };
    match req.site.notifier().first(&change) {
        Some(EdgeRefused(why)) => Err(Problem::forbidden(why)),
        None => Ok(()),
    }
}

/// `POST`: `{"predicate", "object", "position"?}` → 201 with the edge (200
/// with the existing one when it was there already).
pub(super) async fn add(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let subject = linkable_subject(req, caller).await?;
    let new: NewEdge = json_body(req)?;
    let object = visible_object(req, caller, new.object).await?;
    edge_change_allowed(req, caller, subject, &new.predicate, &object, true)?;
    let creator = caller.user();
    let store = req.site.models().store.clone();
    let result = store
        .run(move |s| {
            let (subject, object) = (ResourceId(subject), ResourceId(new.object));
            let before = s.objects(subject, &new.predicate).unwrap_or_default();
            let existed = before.contains(&object);
            let edge = s.insert_edge(subject, &new.predicate, object, creator)?;
            if let Some(position) = new.position {
                s.move_edge(subject, &new.predicate, object, position)?;
            }
            Ok((edge, existed))
        })
        .await;
    match result {
        Ok((edge, existed)) => reply(
            if existed {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            },
            edge_json(&edge),
        ),
        Err(e) => Err(e.into()),
    }
}

/// The edge the path names (`{id}`, `{predicate}`, `{object}`): subject,
/// predicate and object, if the caller may change the subject's edges and
/// see the object.
async fn named_edge(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
) -> Result<(i64, String, Resource), Problem> {
    let (Some(predicate), Some(object)) = (req.arg("predicate"), id_arg(req, "object")) else {
        return Err(Problem::not_found("no such edge"));
    };
    let subject = linkable_subject(req, caller).await?;
    let object = visible_object(req, caller, object).await?;
    Ok((subject, predicate.to_string(), object))
}

/// `PATCH`: `{"position": n}` moves the edge to place `n` (0 is first).
pub(super) async fn move_to(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let (subject, predicate, object) = named_edge(req, caller).await?;
    let to: EdgeMove = json_body(req)?;
    let store = req.site.models().store.clone();
    match store
        .run(move |s| s.move_edge(ResourceId(subject), &predicate, object.id, to.position))
        .await
    {
        Ok(()) => no_content(),
        Err(e) => Err(e.into()),
    }
}

/// `DELETE`: removes the edge; 404 when there is none.
pub(super) async fn remove(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let (subject, predicate, object) = named_edge(req, caller).await?;
    edge_change_allowed(req, caller, subject, &predicate, &object, false)?;
    let store = req.site.models().store.clone();
    match store
        .run(move |s| s.delete_edge(ResourceId(subject), &predicate, object.id))
        .await
    {
        Ok(()) => no_content(),
        Err(e) => Err(e.into()),
    }
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_rsc_edges", "/api/rsc/{id}/edges")
            .get(
                Access::Anyone,
                || json!({
                    "operationId": "listEdges",
                    "summary": "A resource's outgoing edges",
                    "tags": [
                        "edges"
                    ],
                    "description": "Edges whose object the caller may see, by predicate and order.",
                    "responses": {
                        "200": {
                            "description": "The edges",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": [
                                            "edges"
                                        ],
                                        "additionalProperties": false,
                                        "properties": {
                                            "edges": {
                                                "type": "array",
                                                "items": {
                                                    "$ref": "#/components/schemas/Edge"
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
            )
            .post(
                Access::Known,
                || json!({
                    "operationId": "addEdge",
                    "summary": "Add an edge",
                    "tags": [
                        "edges"
                    ],
                    "description": "Needs the link right on the subject; the object must be a resource the caller may see.",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "$ref": "#/components/schemas/NewEdge"
                                }
                            }
                        }
                    },
                    "responses": {
                        "201": {
                            "description": "Added",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Edge"
                                    }
                                }
                            }
                        },
                        "200": {
                            "description": "The edge was there already",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Edge"
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
                |req, caller| Box::pin(add(req, caller)),
            ),
        Endpoint::new("api_rsc_edge", "/api/rsc/{id}/edges/{predicate}/{object}")
            .patch(
                Access::Known,
                || json!({
                    "operationId": "moveEdge",
                    "summary": "Move an edge in the subject's list",
                    "tags": [
                        "edges"
                    ],
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "$ref": "#/components/schemas/EdgeMove"
                                }
                            }
                        }
                    },
                    "responses": {
                        "204": {
                            "description": "Moved"
                        }
                    },
                    "parameters": [
                        {
                            "$ref": "#/components/parameters/id"
                        },
                        {
                            "name": "predicate",
                            "in": "path",
                            "required": true,
                            "schema": {
                                "type": "string",
                                "minLength": 1
                            }
                        },
                        {
                            "name": "object",
                            "in": "path",
                            "required": true,
                            "schema": {
                                "type": "integer",
                                "format": "int64"
                            }
                        }
                    ]
                }),
                |req, caller| Box::pin(move_to(req, caller)),
            )
            .delete(
                Access::Known,
                || json!({
                    "operationId": "removeEdge",
                    "summary": "Remove an edge",
                    "tags": [
                        "edges"
                    ],
                    "responses": {
                        "204": {
                            "description": "Removed"
                        }
                    },
                    "parameters": [
                        {
                            "$ref": "#/components/parameters/id"
                        },
                        {
                            "name": "predicate",
                            "in": "path",
                            "required": true,
                            "schema": {
                                "type": "string",
                                "minLength": 1
                            }
                        },
                        {
                            "name": "object",
                            "in": "path",
                            "required": true,
                            "schema": {
                                "type": "integer",
                                "format": "int64"
                            }
                        }
                    ]
                }),
                |req, caller| Box::pin(remove(req, caller)),
            ),
    ]
}
