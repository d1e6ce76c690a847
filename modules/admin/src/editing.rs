//! Who else has a resource open in the editor. Each editor's page says, over
//! `POST /api/rsc/{id}/editing`, that it is there (on opening and every 20
//! seconds), that it saved a version, or that it left; the server publishes
//! each on the push topic `admin/editing/{id}` for editors (and the groups
//! above them) only, named by the person's title, so that nobody can speak
//! for someone else. The pages keep the list themselves: one not heard from
//! for a minute has gone. No table and no state on the server, so on several
//! nodes the cluster module's relay of publications is all it needs.

use std::sync::Arc;

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::Action;
use bulwark_module_push::{Publish, PushAccess, PushAction};
use bulwark_store::{Resource, ResourceId};
use bulwark_web::{
    Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, SiteSetup, id_arg, resource_for,
};

use crate::ADMIN_GROUP;
use crate::figures::Editors;

/// The topics: `admin/editing/{id}`.
pub const EDITING_TOPIC: &str = "admin/editing/";

/// Among this module's observers.
const OBSERVER_PRIORITY: i32 = 500;

/// What an editor's page says.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Said {
    /// Which page of theirs (a person may have the editor open twice).
    tab: String,
    state: State,
    /// With `saved`: the version it made.
    #[serde(default)]
    version: Option<i64>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum State {
    Here,
    Saved,
    Left,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Here => "here",
            State::Saved => "saved",
            State::Left => "left",
        }
    }
}

/// A resource the caller may edit in the admin (`{id}` of the path), and the
/// caller: 404 when they may not see it, 401/403 when they may not change it
/// or are not an editor.
pub(crate) async fn editable(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
) -> Result<(Resource, ResourceId), Problem> {
    let id = id_arg(req, "id").ok_or_else(|| Problem::not_found("no such resource"))?;
    let what = "edit this resource";
    let resource = resource_for(req, caller, id, Action::Update, what).await?;
    match caller.user() {
        Some(user) if caller.in_group(ADMIN_GROUP) => Ok((resource, user)),
        _ => Err(caller.refused(what)),
    }
}

async fn editing(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let said: Said = serde_json::from_slice(&req.body).map_err(|e| {
        Problem::bad_request(format!(
            "expected {{\"tab\", \"state\": \"here\" | \"saved\" | \"left\", \"version\"}}: {e}"
        ))
    })?;
    if said.tab.is_empty() || said.tab.len() > 64 {
        return Err(Problem::bad_request("tab: 1 to 64 characters"));
    }
    let (resource, user) = editable(req, caller).await?;
    let id = resource.id.0;
    let store = req.site.models().store.clone();
    let person = store.run(move |s| s.resource(user)).await?;
    let name = person.as_ref().and_then(|p| p.title());
    let payload = json!({
        "tab": said.tab,
        "state": said.state.as_str(),
        "version": said.version,
        "user": user.0,
        "name": name.unwrap_or("someone without a name"),
    });
    let published = req.site.notifier().first(&Publish {
        topic: format!("{EDITING_TOPIC}{id}"),
        payload: payload.to_string(),
        audience: Some(Arc::new(Editors)),
    });
    match published {
        Some(Err(e)) => Err(Problem::internal("telling the other editors", &e)),
        // `None`: the site has no push, and there is nobody to tell.
        _ => Ok(Outcome::Response(bulwark_web::json_response(
            StatusCode::OK,
            &json!({ "told": published.is_some() }),
        ))),
    }
}

/// Editors may subscribe to the topics; nobody publishes there but the server.
pub(crate) fn observe(setup: &mut SiteSetup<'_>) {
    setup
        .observers()
        .on_first(OBSERVER_PRIORITY, |access: &PushAccess| {
            let id = access.topic.strip_prefix(EDITING_TOPIC)?;
            id.parse::<u64>().ok()?;
            Some(match access.action {
                PushAction::Subscribe => access.principal.in_group(ADMIN_GROUP),
                PushAction::Publish => false,
            })
        });
}

/// The module's endpoints: `POST /api/rsc/{id}/editing`, and the drafts'.
pub(crate) fn api() -> &'static Api {
    static API: std::sync::LazyLock<Api> = std::sync::LazyLock::new(|| {
        crate::drafts::endpoints(Api::new()).endpoint(Endpoint::new("admin_editing", "/api/rsc/{id}/editing").post(
            Access::Known,
            || {
                json!({
                    "operationId": "sayEditing",
                    "summary": "Tell the other editors of a resource about this one",
                    "description": "An editor's page is on the resource (`here`, on opening and \
                        every 20 seconds), saved a version (`saved`, with it), or left (`left`). \
                        Published on the push topic `admin/editing/{id}` for editors only, with \
                        the caller's id and title. Needs the right to change the resource.",
                    "tags": ["admin"],
                    "parameters": [{"$ref": "#/components/parameters/id"}],
                    "requestBody": {
                        "required": true,
                        "content": {"application/json": {"schema": {
                            "type": "object",
                            "required": ["tab", "state"],
                            "additionalProperties": false,
                            "properties": {
                                "tab": {"type": "string", "minLength": 1, "maxLength": 64},
                                "state": {"type": "string", "enum": ["here", "saved", "left"]},
                                "version": {"type": ["integer", "null"]},
                            },
                        }}},
                    },
                    "responses": {
                        "200": {
                            "description": "Told (`told`: false when the site has no push)",
                            "content": {"application/json": {"schema": {
                                "type": "object",
                                "required": ["told"],
                                "additionalProperties": false,
                                "properties": {"told": {"type": "boolean"}},
                            }}},
                        },
                    },
                })
            },
            |req, caller| Box::pin(editing(req, caller)),
        ))
    });
    &API
}
