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
use super::{Caller, error, reply, store_failure};
use crate::representation::Outcome;
use crate::request::RequestCtx;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsChange {
    settings: BTreeMap<String, Option<String>>,
}

/// A key some part of Bulwark keeps for itself.
fn reserved(key: &str) -> bool {
    key.contains('.')
}

async fn answer(req: &RequestCtx<'_>) -> Outcome {
    match req.site.models.store.run(|s| s.config_values()).await {
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
        Err(e) => store_failure(e),
    }
}

pub(super) async fn settings(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    if !caller.in_group(MANAGERS) {
        return caller.refused("see or change the site's settings");
    }
    if req.parts.method != Method::PATCH {
        return answer(req).await;
    }
    let change: SettingsChange = match json_body(req) {
        Ok(c) => c,
        Err(bad) => return bad,
    };
    if let Some(key) = change.settings.keys().find(|k| reserved(k)) {
        return error(
            StatusCode::BAD_REQUEST,
            format!("{key:?} belongs to a part of Bulwark and is not changed here"),
        );
    }
    let changed = req
        .site
        .models
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
        Err(e) => store_failure(e),
    }
}
