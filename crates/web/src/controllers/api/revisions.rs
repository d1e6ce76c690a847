//! `/api/rsc/{id}/revisions`: earlier versions of a resource, and putting one
//! back. Both need the right to change the resource: a revision may hold a
//! draft or a property the public never saw.

use http::StatusCode;
use serde_json::json;

use bulwark_acl::Action;
use bulwark_store::{ResourceId, StoreError};

use super::{Caller, error, id_arg, if_match, not_found, reply, resource_for, store_failure};
use crate::representation::Outcome;
use crate::request::RequestCtx;

/// `GET`: newest first, each with the resource as it was.
pub(super) async fn list(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    let Some(id) = id_arg(req, "id") else {
        return not_found();
    };
    if let Err(refused) = resource_for(
        req,
        caller,
        id,
        Action::Update,
        "see this resource's revisions",
    )
    .await
    {
        return refused;
    }
    match req
        .site
        .models
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
                        "resource": caller.resource_json(req.site, &rev.snapshot),
                    })
                })
                .collect();
            reply(StatusCode::OK, json!({ "revisions": list }))
        }
        Err(e) => store_failure(e),
    }
}

/// `POST .../revisions/{revision}/restore` (optionally `If-Match`): the
/// resource as that revision had it, saved as a new version.
pub(super) async fn restore(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    let (Some(id), Some(revision)) = (id_arg(req, "id"), id_arg(req, "revision")) else {
        return error(StatusCode::NOT_FOUND, "no such revision");
    };
    let if_match = match if_match(req) {
        Ok(v) => v,
        Err(bad) => return bad,
    };
    let current = match resource_for(req, caller, id, Action::Update, "restore this resource").await
    {
        Ok(r) => r,
        Err(refused) => return refused,
    };
    let modifier = caller.user();
    let result = req
        .site
        .models
        .store
        .run(move |s| {
            let rev = s.revision(revision)?;
            if rev.resource != ResourceId(id) {
                return Err(StoreError::RevisionNotFound(revision));
            }
            s.restore_revision(revision, if_match.unwrap_or(current.version), modifier)
        })
        .await;
    match result {
        Ok(r) => reply(StatusCode::OK, caller.resource_json(req.site, &r)),
        Err(e) => store_failure(e),
    }
}
