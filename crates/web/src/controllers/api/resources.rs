//! `/api/rsc` and `/api/rsc/{id}`: create, read, change and delete resources.

use http::header::LOCATION;
use http::{HeaderValue, StatusCode};

use bulwark_acl::Action;
use bulwark_store::{NewResource, PropsChange, ResourceId, ResourceUpdate, StoreError, Version};

use super::input::{NewFields, PatchFields, json_body, visibility};
use super::{
    Caller, error, id_arg, if_match, no_content, not_found, reply, resource_for, store_failure,
    visible_resource,
};
use crate::representation::Outcome;
use crate::request::RequestCtx;

/// How often a write without `If-Match` is tried again after losing a race with
/// another write (each try re-reads the current version, so it only loses when a
/// write committed in between).
const MAX_ATTEMPTS: u32 = 100;

/// `GET /api/rsc/{id}`: the resource as the caller may see it; 410 for one
/// that was public and is deleted.
pub(super) async fn read(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    let Some(id) = id_arg(req, "id") else {
        return not_found();
    };
    match visible_resource(req, caller, id).await {
        Ok(r) => reply(StatusCode::OK, caller.resource_json(req.site, &r)),
        Err(refused) => {
            let key = id.to_string();
            match req.site.models.store.run(move |s| s.deletion(&key)).await {
                Ok(Some(gone)) if gone.was_public => {
                    error(StatusCode::GONE, "this resource was deleted")
                }
                Ok(_) => refused,
                Err(e) => store_failure(e),
            }
        }
    }
}

/// `POST /api/rsc`: a new resource, if the rules let the caller insert its
/// category with its visibility. 201 with `Location`.
pub(super) async fn create(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    let fields: NewFields = match json_body(req) {
        Ok(f) => f,
        Err(bad) => return bad,
    };
    let visibility = match visibility(
        fields.visibility,
        fields.content_group,
        bulwark_store::Visibility::Public,
    ) {
        Ok(v) => v,
        Err(bad) => return bad,
    };
    if !caller.may_insert(req.site, &fields.category, visibility) {
        return caller.refused(&format!("create a {:?} resource", fields.category));
    }
    let new = NewResource {
        name: fields.name,
        category: fields.category,
        published: fields.published,
        publication_start: fields.publication_start,
        publication_end: fields.publication_end,
        visibility,
        creator: caller.user(),
        props: fields.props,
    };
    let store = req.site.models.store.clone();
    match store
        .run(move |s| {
            let id = s.create_resource(new)?;
            s.resource(id)?
                .ok_or_else(|| StoreError::ResourceNotFound(id.to_string()))
        })
        .await
    {
        Ok(r) => {
            let mut outcome = reply(StatusCode::CREATED, caller.resource_json(req.site, &r));
            if let Outcome::Response(resp) = &mut outcome
                && let Ok(location) = HeaderValue::from_str(&format!("/api/rsc/{}", r.id.0))
            {
                resp.headers_mut().insert(LOCATION, location);
            }
            outcome
        }
        Err(e) => store_failure(e),
    }
}

/// `PATCH /api/rsc/{id}`: a merge patch of the resource. With `If-Match`, a
/// change made since that version is a 409; without, the patch applies to
/// whatever is current.
pub(super) async fn update(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    let Some(id) = id_arg(req, "id") else {
        return not_found();
    };
    // Who may change it first: someone who may not learns nothing of what
    // would be wrong with their change.
    let current = match resource_for(req, caller, id, Action::Update, "change this resource").await
    {
        Ok(r) => r,
        Err(refused) => return refused,
    };
    let patch: PatchFields = match json_body(req) {
        Ok(f) => f,
        Err(bad) => return bad,
    };
    let if_match = match if_match(req) {
        Ok(v) => v,
        Err(bad) => return bad,
    };
    // A new category or visibility is where the resource would be inserted:
    // the rules must allow that too (an editor cannot move an article into a
    // content group they may not write).
    let new_visibility = match visibility(patch.visibility, patch.content_group, current.visibility)
    {
        Ok(v) => v,
        Err(bad) => return bad,
    };
    let new_category = patch
        .category
        .clone()
        .unwrap_or_else(|| current.category_name.clone());
    if (new_category != current.category_name || new_visibility != current.visibility)
        && !caller.may_insert(req.site, &new_category, new_visibility)
    {
        return caller.refused(&format!(
            "move this resource to category {new_category:?} with that visibility"
        ));
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
    let store = req.site.models.store.clone();
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
        Ok(r) => reply(StatusCode::OK, caller.resource_json(req.site, &r)),
        Err(e) => store_failure(e),
    }
}

/// `DELETE /api/rsc/{id}` (optionally `If-Match`): 204.
pub(super) async fn delete(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    let Some(id) = id_arg(req, "id") else {
        return not_found();
    };
    let if_match: Option<Version> = match if_match(req) {
        Ok(v) => v,
        Err(bad) => return bad,
    };
    if let Err(refused) =
        resource_for(req, caller, id, Action::Delete, "delete this resource").await
    {
        return refused;
    }
    match req
        .site
        .models
        .store
        .run(move |s| s.delete_resource(ResourceId(id), if_match))
        .await
    {
        Ok(()) => no_content(),
        Err(e) => store_failure(e),
    }
}
