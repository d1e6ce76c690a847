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
use super::{Caller, error, reply, store_failure};
use crate::representation::Outcome;
use crate::request::RequestCtx;

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
) -> Result<String, Outcome> {
    let Some(name) = req.arg("name").map(str::to_owned) else {
        return Err(error(StatusCode::NOT_FOUND, format!("no such {kind}")));
    };
    let lookup = name.clone();
    let found = req
        .site
        .models
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
        Ok(_) => Err(error(StatusCode::NOT_FOUND, format!("no such {kind}"))),
        Err(e) => Err(store_failure(e)),
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
        .models
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

fn created(made: Result<ResourceId, StoreError>) -> Outcome {
    match made {
        Ok(id) => reply(StatusCode::CREATED, json!({ "id": id.0 })),
        Err(e) => store_failure(e),
    }
}

/// `/api/categories`: `GET` the tree (parents before children), `POST` a new one.
pub(super) async fn categories(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    if req.parts.method == Method::POST {
        if !caller.may_insert(req.site, "category", Visibility::Public) {
            return caller.refused("add categories");
        }
        let new: NewCategory = match json_body(req) {
            Ok(n) => n,
            Err(bad) => return bad,
        };
        let made = req
            .site
            .models
            .store
            .run(move |s| s.create_category(&new.name, new.parent.as_deref(), &new.title))
            .await;
        return created(made);
    }
    let (cats, resources) = match with_resources(req, Store::categories, |c| c.id).await {
        Ok(found) => found,
        Err(e) => return store_failure(e),
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
                "may_change": r.as_ref().is_some_and(|r| caller.may(req.site, Action::Update, r)),
            })
        })
        .collect();
    reply(StatusCode::OK, json!({ "categories": list }))
}

/// `PATCH /api/categories/{name}`: move it (with what is below it).
pub(super) async fn move_category(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    let name = match named(req, caller, "category", Action::Update).await {
        Ok(name) => name,
        Err(refused) => return refused,
    };
    let to: CategoryMove = match json_body(req) {
        Ok(m) => m,
        Err(bad) => return bad,
    };
    let moved = req
        .site
        .models
        .store
        .run(move |s| s.place_category(&name, to.parent.as_deref(), to.position))
        .await;
    match moved {
        Ok(()) => categories(req, caller).await,
        Err(e) => store_failure(e),
    }
}

/// `/api/predicates`: `GET` every predicate with the categories it connects,
/// `POST` a new one.
pub(super) async fn predicates(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    if req.parts.method == Method::POST {
        if !caller.may_insert(req.site, "predicate", Visibility::Public) {
            return caller.refused("add predicates");
        }
        let new: NewPredicate = match json_body(req) {
            Ok(n) => n,
            Err(bad) => return bad,
        };
        let made = req
            .site
            .models
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
        Err(e) => return store_failure(e),
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
                "may_change": r.as_ref().is_some_and(|r| caller.may(req.site, Action::Update, r)),
            })
        })
        .collect();
    reply(StatusCode::OK, json!({ "predicates": list }))
}

/// `PATCH /api/predicates/{name}`: which categories it may connect.
pub(super) async fn change_predicate(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    let name = match named(req, caller, "predicate", Action::Update).await {
        Ok(name) => name,
        Err(refused) => return refused,
    };
    let change: PredicateCategories = match json_body(req) {
        Ok(c) => c,
        Err(bad) => return bad,
    };
    let changed = req
        .site
        .models
        .store
        .run(move |s| {
            let subjects: Vec<&str> = change.subjects.iter().map(String::as_str).collect();
            let objects: Vec<&str> = change.objects.iter().map(String::as_str).collect();
            s.set_predicate_categories(&name, &subjects, &objects)
        })
        .await;
    match changed {
        Ok(()) => predicates(req, caller).await,
        Err(e) => store_failure(e),
    }
}
