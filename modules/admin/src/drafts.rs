//! Working copies: what an editor has typed into a resource's editor and not
//! saved, kept on the server as they type (`PUT /api/rsc/{id}/draft`), one per
//! editor and resource, in the module's table `admin_draft`. The editor offers
//! it back when it opens again, in this browser or another; saving the
//! resource, or discarding, removes it (`DELETE`). A draft is never published
//! and never a revision: only its editor reads it (`GET`), and only while they
//! may still change the resource.

use chrono::{TimeZone, Utc};
use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use bulwark_store::{Migration, ModuleSql, ResourceId, StoreError};
use bulwark_web::{
    Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, empty_response, json_response,
};

use crate::editing::editable;

pub(crate) const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "drafts",
    sqlite: include_str!("../migrations/sqlite/0001_drafts.sql"),
    postgres: include_str!("../migrations/postgres/0001_drafts.sql"),
}];

/// The largest draft kept: the fields as JSON.
const MAX_DRAFT_BYTES: usize = 1024 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Kept {
    /// The resource's version the editor is typing on.
    version: i64,
    /// The editor's fields.
    fields: serde_json::Map<String, serde_json::Value>,
}

/// Unix milliseconds as RFC 3339, as the table keeps them.
fn moment(ms: i64) -> Option<String> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.to_rfc3339())
}

fn read(
    sql: &mut ModuleSql<'_>,
    rsc: ResourceId,
    person: ResourceId,
) -> Result<Option<(i64, String, i64)>, StoreError> {
    Ok(sql
        .query_one(
            "SELECT version, fields, saved FROM admin_draft WHERE rsc_id = $1 AND person_id = $2",
            &[rsc.0.into(), person.0.into()],
        )?
        .map(|r| (r.int(0), r.text(1), r.int(2))))
}

async fn get(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let (resource, person) = editable(req, caller).await?;
    let rsc = resource.id;
    let store = req.site.models().store.clone();
    let found = store
        .run(move |s| s.module_read(|sql| read(sql, rsc, person)))
        .await?;
    let Some((version, fields, saved)) = found else {
        return Err(Problem::not_found("no draft of yours for this resource"));
    };
    let fields: serde_json::Value =
        serde_json::from_str(&fields).map_err(|e| Problem::internal("reading a draft", &e))?;
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "version": version, "fields": fields, "saved": moment(saved) }),
    )))
}

async fn put(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let kept: Kept = serde_json::from_slice(&req.body).map_err(|e| {
        Problem::bad_request(format!(
            "expected {{\"version\", \"fields\": {{...}}}}: {e}"
        ))
    })?;
    let fields = serde_json::Value::Object(kept.fields).to_string();
    if fields.len() > MAX_DRAFT_BYTES {
        return Err(Problem::bad_request(format!(
            "a draft is at most {MAX_DRAFT_BYTES} bytes of JSON"
        )));
    }
    let (resource, person) = editable(req, caller).await?;
    let (rsc, version) = (resource.id, kept.version);
    let now = Utc::now().timestamp_millis();
    let store = req.site.models().store.clone();
    store
        .run(move |s| {
            s.module_write(|sql| {
                sql.execute(
                    "INSERT INTO admin_draft (rsc_id, person_id, version, fields, saved) \
                     VALUES ($1, $2, $3, $4, $5) \
                     ON CONFLICT (rsc_id, person_id) DO UPDATE SET version = excluded.version, \
                     fields = excluded.fields, saved = excluded.saved",
                    &[
                        rsc.0.into(),
                        person.0.into(),
                        version.into(),
                        fields.into(),
                        now.into(),
                    ],
                )
            })
        })
        .await?;
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "saved": moment(now) }),
    )))
}

async fn delete(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let (resource, person) = editable(req, caller).await?;
    let rsc = resource.id;
    let store = req.site.models().store.clone();
    store
        .run(move |s| {
            s.module_write(|sql| {
                sql.execute(
                    "DELETE FROM admin_draft WHERE rsc_id = $1 AND person_id = $2",
                    &[rsc.0.into(), person.0.into()],
                )
            })
        })
        .await?;
    Ok(Outcome::Response(empty_response(StatusCode::NO_CONTENT)))
}

fn draft_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["version", "fields"],
        "additionalProperties": false,
        "properties": {
            "version": {"type": "integer", "description": "the resource's version it was typed on"},
            "fields": {"type": "object", "description": "the editor's fields, as the editor keeps them"},
        },
    })
}

/// `GET`, `PUT` and `DELETE /api/rsc/{id}/draft`, added to `api`.
pub(crate) fn endpoints(api: Api) -> Api {
    api.endpoint(
        Endpoint::new("admin_draft", "/api/rsc/{id}/draft")
            .get(
                Access::Known,
                || {
                    json!({
                        "operationId": "getDraft",
                        "summary": "Your working copy of a resource",
                        "description": "What you typed into the admin's editor and did not save. \
                            Needs the right to change the resource; 404 when you have none.",
                        "tags": ["admin"],
                        "parameters": [{"$ref": "#/components/parameters/id"}],
                        "responses": {
                            "200": {
                                "description": "The draft, and when it was kept",
                                "content": {"application/json": {"schema": {
                                    "type": "object",
                                    "required": ["version", "fields", "saved"],
                                    "properties": {
                                        "version": {"type": "integer"},
                                        "fields": {"type": "object"},
                                        "saved": {"type": ["string", "null"], "format": "date-time"},
                                    },
                                }}},
                            },
                        },
                    })
                },
                |req, caller| Box::pin(get(req, caller)),
            )
            .put(
                Access::Known,
                || {
                    json!({
                        "operationId": "keepDraft",
                        "summary": "Keep your working copy of a resource",
                        "description": "Replaces your draft of the resource (at most 1 MiB of \
                            JSON). Not published, not a revision. Needs the right to change it.",
                        "tags": ["admin"],
                        "parameters": [{"$ref": "#/components/parameters/id"}],
                        "requestBody": {
                            "required": true,
                            "content": {"application/json": {"schema": draft_schema()}},
                        },
                        "responses": {
                            "200": {
                                "description": "Kept",
                                "content": {"application/json": {"schema": {
                                    "type": "object",
                                    "required": ["saved"],
                                    "properties": {"saved": {"type": "string", "format": "date-time"}},
                                }}},
                            },
                        },
                    })
                },
                |req, caller| Box::pin(put(req, caller)),
            )
            .delete(
                Access::Known,
                || {
                    json!({
                        "operationId": "dropDraft",
                        "summary": "Drop your working copy of a resource",
                        "description": "After a save, or when you discard it. Needs the right \
                            to change the resource.",
                        "tags": ["admin"],
                        "parameters": [{"$ref": "#/components/parameters/id"}],
                        "responses": {"204": {"description": "Gone (or there was none)"}},
                    })
                },
                |req, caller| Box::pin(delete(req, caller)),
            ),
    )
}
