//! `/api/categories[/{name}]` and `/api/predicates[/{name}]`: the data model.
//! Categories and predicates are resources (of category `category` and
//! `predicate`), so the site's access rules decide who may see, create and
//! change them like anything else: by default editors read them and managers
//! change them. Moving a category moves everything below it; a move that would
//! make a cycle is a 400 and changes nothing.

use http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::Action;
use bulwark_store::{Resource, ResourceId, Store, StoreError, Visibility};

use super::input::json_body;
use super::reply;
use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};

/// `POST /api/categories`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewCategory {
    name: String,
    title: String,
    #[serde(default)]
    parent: Option<String>,
}

/// `PATCH /api/categories/{name}`: where it goes. `parent: null` is the top.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CategoryMove {
    /// Required, and may be null (the top): a move names where it goes.
    #[serde(deserialize_with = "Option::<String>::deserialize")]
    parent: Option<String>,
    #[serde(default)]
    position: Option<usize>,
}

/// `POST /api/predicates`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewPredicate {
    name: String,
    title: String,
    #[serde(default)]
    subjects: Vec<String>,
    #[serde(default)]
    objects: Vec<String>,
}

/// `PATCH /api/predicates/{name}`: the categories it may connect (empty: any).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PredicateCategories {
    subjects: Vec<String>,
    objects: Vec<String>,
}

fn title(r: Option<&Resource>) -> serde_json::Value {
    r.and_then(|r| r.props.0.get("title").cloned())
        .unwrap_or(serde_json::Value::Null)
}

/// The category or predicate resource named in the path, if the caller may
/// `action` it; `Err` is the answer (404 for one they may not see).
async fn named(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
    kind: &'static str,
    action: Action,
) -> Result<String, Problem> {
    let Some(name) = req.arg("name").map(str::to_owned) else {
        return Err(Problem::not_found(format!("no such {kind}")));
    };
    let lookup = name.clone();
    let found = req
        .site
        .models()
        .store
        .run(move |s| s.resource_by_name(&lookup))
        .await;
    match found {
        Ok(Some(r)) if r.category_name == kind && caller.may_see(req.site, &r) => {
            if caller.may(req.site, action, &r) {
                Ok(name)
            } else {
                Err(caller.refused(&format!("change the {kind} {name:?}")))
            }
        }
        Ok(_) => Err(Problem::not_found(format!("no such {kind}"))),
        Err(e) => Err(e.into()),
    }
}

/// Everything `list` gives, with the resource of each (the access rules
/// decide who sees which).
async fn with_resources<T: Send + 'static>(
    req: &RequestCtx<'_>,
    list: fn(&Store) -> Result<Vec<T>, StoreError>,
    id: fn(&T) -> ResourceId,
) -> Result<(Vec<T>, Vec<Option<Resource>>), StoreError> {
    req.site
        .models()
        .store
        .run(move |s| {
            let items = list(s)?;
            let resources = items
                .iter()
                .map(|item| s.resource(id(item)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((items, resources))
        })
        .await
}

fn created(made: Result<ResourceId, StoreError>) -> Result<Outcome, Problem> {
    match made {
        Ok(id) => reply(StatusCode::CREATED, json!({ "id": id.0 })),
        Err(e) => Err(e.into()),
    }
}

/// `/api/categories`: `GET` the tree (parents before children), `POST` a new one.
pub(super) async fn categories(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
) -> Result<Outcome, Problem> {
    if req.parts.method == Method::POST {
        if !caller.may_insert(req.site, "category", Visibility::Public) {
            return Err(caller.refused("add categories"));
        }
        let new: NewCategory = json_body(req)?;
        let made = req
            .site
            .models()
            .store
            .run(move |s| s.create_category(&new.name, new.parent.as_deref(), &new.title))
            .await;
        return created(made);
    }
    let (cats, resources) = match with_resources(req, Store::categories, |c| c.id).await {
        Ok(found) => found,
        Err(e) => return Err(e.into()),
    };
    let name_of = |id| cats.iter().find(|c| c.id == id).map(|c| c.name.clone());
    let list: Vec<serde_json::Value> = cats
        .iter()
        .zip(&resources)
        .filter(|(_, r)| r.as_ref().is_some_and(|r| caller.may_see(req.site, r)))
        .map(|(c, r)| {
            json!({
                "id": c.id.0,
                "name": c.name,
                "title": title(r.as_ref()),
                "parent": c.parent.and_then(name_of),
                "depth": c.depth,
                "may_change": r.as_ref().is_some_and(|r| caller.may(req.site, Action::Update, r))
            })
        })
        .collect();
    reply(StatusCode::OK, json!({ "categories": list }))
}

/// `PATCH /api/categories/{name}`: move it (with what is below it).
pub(super) async fn move_category(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
) -> Result<Outcome, Problem> {
    let name = named(req, caller, "category", Action::Update).await?;
    let to: CategoryMove = json_body(req)?;
    let moved = req
        .site
        .models()
        .store
        .run(move |s| s.place_category(&name, to.parent.as_deref(), to.position))
        .await;
    match moved {
        Ok(()) => categories(req, caller).await,
        Err(e) => Err(e.into()),
    }
}

/// `/api/predicates`: `GET` every predicate with the categories it connects,
/// `POST` a new one.
pub(super) async fn predicates(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
) -> Result<Outcome, Problem> {
    if req.parts.method == Method::POST {
        if !caller.may_insert(req.site, "predicate", Visibility::Public) {
            return Err(caller.refused("add predicates"));
        }
        let new: NewPredicate = json_body(req)?;
        let made = req
            .site
            .models()
            .store
            .run(move |s| {
                let subjects: Vec<&str> = new.subjects.iter().map(String::as_str).collect();
                let objects: Vec<&str> = new.objects.iter().map(String::as_str).collect();
                s.create_predicate(&new.name, &new.title, &subjects, &objects)
            })
            .await;
        return created(made);
    }
    let (predicates, resources) = match with_resources(req, Store::predicates, |p| p.id).await {
        Ok(found) => found,
        Err(e) => return Err(e.into()),
    };
    let list: Vec<serde_json::Value> = predicates
        .iter()
        .zip(&resources)
        .filter(|(_, r)| r.as_ref().is_some_and(|r| caller.may_see(req.site, r)))
        .map(|(p, r)| {
            json!({
                "id": p.id.0,
                "name": p.name,
                "title": title(r.as_ref()),
                "subjects": p.subject_categories,
                "objects": p.object_categories,
                "may_change": r.as_ref().is_some_and(|r| caller.may(req.site, Action::Update, r))
            })
        })
        .collect();
    reply(StatusCode::OK, json!({ "predicates": list }))
}

/// `PATCH /api/predicates/{name}`: which categories it may connect.
pub(super) async fn change_predicate(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
) -> Result<Outcome, Problem> {
    let name = named(req, caller, "predicate", Action::Update).await?;
    let change: PredicateCategories = json_body(req)?;
    let changed = req
        .site
        .models()
        .store
        .run(move |s| {
            let subjects: Vec<&str> = change.subjects.iter().map(String::as_str).collect();
            let objects: Vec<&str> = change.objects.iter().map(String::as_str).collect();
            s.set_predicate_categories(&name, &subjects, &objects)
        })
        .await;
    match changed {
        Ok(()) => predicates(req, caller).await,
        Err(e) => Err(e.into()),
    }
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_categories", "/api/categories")
            .get(
                Access::Anyone,
                || json!({
                    "operationId": "listCategories",
                    "summary": "The category tree",
                    "tags": [
                        "model"
                    ],
                    "description": "Every category the caller may see, with whether they may move it.",
                    "responses": {
                        "200": {
                            "description": "The tree",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Categories"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(categories(req, caller)),
            )
            .post(
                Access::Known,
                || json!({
                    "operationId": "createCategory",
                    "summary": "Add a category",
                    "tags": [
                        "model"
                    ],
                    "description": "Needs the right to create a category resource (managers, by default). `parent` null or absent: at the top.",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": [
                                        "name",
                                        "title"
                                    ],
                                    "properties": {
                                        "name": {
                                            "type": "string"
                                        },
                                        "title": {
                                            "type": "string"
                                        },
                                        "parent": {
                                            "type": [
                                                "string",
                                                "null"
                                            ]
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "responses": {
                        "201": {
                            "description": "Made",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": [
                                            "id"
                                        ],
                                        "properties": {
                                            "id": {
                                                "type": "integer",
                                                "format": "int64"
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(categories(req, caller)),
            ),
        Endpoint::new("api_category", "/api/categories/{name}")
            .patch(
                Access::Known,
                || json!({
                    "operationId": "moveCategory",
                    "summary": "Move a category, with everything below it",
                    "tags": [
                        "model"
                    ],
                    "description": "To another parent (null: the top) and, with `position`, to that place among its new siblings (0: first). A move under itself is refused with a 400 and changes nothing.",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": [
                                        "parent"
                                    ],
                                    "properties": {
                                        "parent": {
                                            "type": [
                                                "string",
                                                "null"
                                            ]
                                        },
                                        "position": {
                                            "type": [
                                                "integer",
                                                "null"
                                            ],
                                            "minimum": 0
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "responses": {
                        "200": {
                            "description": "The tree after the move",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Categories"
                                    }
                                }
                            }
                        }
                    },
                    "parameters": [
                        {
                            "name": "name",
                            "in": "path",
                            "required": true,
                            "description": "The category's name.",
                            "schema": {
                                "type": "string",
                                "minLength": 1,
                                "maxLength": 100
                            }
                        }
                    ]
                }),
                |req, caller| Box::pin(move_category(req, caller)),
            ),
        Endpoint::new("api_predicates", "/api/predicates")
            .get(
                Access::Anyone,
                || json!({
                    "operationId": "listPredicates",
                    "summary": "The predicates",
                    "tags": [
                        "model"
                    ],
                    "description": "Every predicate the caller may see, with the categories it may connect.",
                    "responses": {
                        "200": {
                            "description": "The predicates",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Predicates"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(predicates(req, caller)),
            )
            .post(
                Access::Known,
                || json!({
                    "operationId": "createPredicate",
                    "summary": "Add a predicate",
                    "tags": [
                        "model"
                    ],
                    "description": "Needs the right to create a predicate resource (managers, by default).",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": [
                                        "name",
                                        "title"
                                    ],
                                    "properties": {
                                        "name": {
                                            "type": "string"
                                        },
                                        "title": {
                                            "type": "string"
                                        },
                                        "subjects": {
                                            "type": "array",
                                            "items": {
                                                "type": "string"
                                            }
                                        },
                                        "objects": {
                                            "type": "array",
                                            "items": {
                                                "type": "string"
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "responses": {
                        "201": {
                            "description": "Made",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": [
                                            "id"
                                        ],
                                        "properties": {
                                            "id": {
                                                "type": "integer",
                                                "format": "int64"
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(predicates(req, caller)),
            ),
        Endpoint::new("api_predicate", "/api/predicates/{name}")
            .patch(
                Access::Known,
                || json!({
                    "operationId": "changePredicate",
                    "summary": "Which categories a predicate connects",
                    "tags": [
                        "model"
                    ],
                    "description": "Replaces the subject and object categories (empty: any).",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": [
                                        "subjects",
                                        "objects"
                                    ],
                                    "properties": {
                                        "subjects": {
                                            "type": "array",
                                            "items": {
                                                "type": "string"
                                            }
                                        },
                                        "objects": {
                                            "type": "array",
                                            "items": {
                                                "type": "string"
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "responses": {
                        "200": {
                            "description": "The predicates after the change",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Predicates"
                                    }
                                }
                            }
                        }
                    },
                    "parameters": [
                        {
                            "name": "name",
                            "in": "path",
                            "required": true,
                            "description": "The predicate's name.",
                            "schema": {
                                "type": "string",
                                "minLength": 1,
                                "maxLength": 100
                            }
                        }
                    ]
                }),
                |req, caller| Box::pin(change_predicate(req, caller)),
            ),
    ]
}
