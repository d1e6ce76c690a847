//! `/api/access/rules`: the site's access rules, for managers and the site's
//! token. `GET` shows the rules in force; `PUT {"rules": [...]}` stores new
//! ones in the site's database (in force at once, replacing `site.toml`'s);
//! `DELETE` forgets them (`site.toml`'s or the defaults are in force again).
//! Either change flushes the site's caches: pages rendered under the old
//! rules must not be served under the new.

use http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::MANAGERS;
use bulwark_acl::stored::{RuleDoc, StoreRulesError, rule_docs};

use super::input::json_body;
use super::{Caller, error, reply, store_failure};
use crate::representation::Outcome;
use crate::request::RequestCtx;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewRules {
    rules: Vec<RuleDoc>,
}

fn answer(req: &RequestCtx<'_>) -> Outcome {
    let policy = &req.site.site_policy;
    let rules = policy.rules();
    reply(
        StatusCode::OK,
        json!({
            "stored": policy.has_stored_rules(),
            "rules": rule_docs(&rules),
        }),
    )
}

pub(super) async fn rules(req: &RequestCtx<'_>, caller: Caller<'_>) -> Outcome {
    if !caller.in_group(MANAGERS) {
        return caller.refused("see or change the access rules");
    }
    let policy = req.site.site_policy.clone();
    let store = req.site.models.store.clone();
    match req.parts.method {
        Method::PUT => {
            let new: NewRules = match json_body(req) {
                Ok(n) => n,
                Err(bad) => return bad,
            };
            let stored = store
                .run(move |s| Ok(policy.store_rules(s, &new.rules)))
                .await;
            match stored {
                Ok(Ok(_)) => {}
                Ok(Err(StoreRulesError::Invalid(problem))) => {
                    return error(StatusCode::BAD_REQUEST, problem);
                }
                Ok(Err(StoreRulesError::Store(e))) | Err(e) => return store_failure(e),
            }
        }
        Method::DELETE => {
            if let Err(e) = store.run(move |s| policy.forget_stored_rules(s)).await {
                return store_failure(e);
            }
        }
        _ => return answer(req),
    }
    req.site.models.cache.flush_all();
    answer(req)
}
