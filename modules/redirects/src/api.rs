//! `/api/redirects`: the rules, for editors (and the site token).
//!
//! - `GET /api/redirects`: every rule with its hits;
//! - `POST /api/redirects`: one rule, `{"from", "to" | "to_rsc", "status"}`;
//! - `POST /api/redirects/import`: `{"csv": "..."}`, lines `from,to,status`
//!   (a header line `from,to,status` may come first; `to` empty with 410):
//!   all of them or, when a line is wrong, none, and every wrong line named;
//! - `DELETE /api/redirects/{id}`.

use std::sync::{Arc, LazyLock};

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::EDITORS;
use bulwark_store::StoreError;
use bulwark_web::{
    Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, empty_response, id_arg,
    json_response,
};

use crate::rules::{self, NewRule, Rules};

/// Lines an import takes at most.
const MAX_IMPORT_LINES: usize = 10_000;

fn may_edit(caller: Caller<'_>) -> Result<(), Problem> {
    match caller {
        Caller::SiteToken => Ok(()),
        caller if caller.in_group(EDITORS) => Ok(()),
        caller => Err(caller.refused("change the redirects")),
    }
}

fn rules_of(req: &RequestCtx<'_>) -> Result<Arc<Rules>, Problem> {
    req.site
        .state::<Arc<Rules>>()
        .cloned()
        .ok_or_else(|| Problem::internal("the redirects module", &"it is not set up on this site"))
}

/// Reads the rules again on this node now (the others hear of the change),
/// and gives them.
async fn reload(req: &RequestCtx<'_>) -> Result<Vec<rules::Rule>, Problem> {
    let rules = rules_of(req)?;
    let fresh = req.site.models().store.run(rules::load).await?;
    rules.replace(fresh.clone());
    Ok(fresh)
}

fn added_or_refused(added: Result<(), StoreError>, what: &str) -> Result<(), Problem> {
    match added {
        Ok(()) => Ok(()),
        Err(StoreError::Duplicate(_)) => Err(Problem::conflict(format!(
            "{what}: there is a rule for that old path already; remove it first"
        ))),
        Err(e) => Err(e.into()),
    }
}

async fn list(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    may_edit(caller)?;
    let all = req.site.models().store.run(rules::load).await?;
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "redirects": all }),
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Asked {
    from: String,
    #[serde(default)]
    to: Option<String>,
    #[serde(default)]
    to_rsc: Option<i64>,
    #[serde(default)]
    status: Option<u16>,
}

async fn add(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    may_edit(caller)?;
    let asked: Asked = serde_json::from_slice(&req.body).map_err(|e| {
        Problem::bad_request(format!(
            "expected {{\"from\", \"to\" or \"to_rsc\", \"status\"}}: {e}"
        ))
    })?;
    let rule = NewRule::new(&asked.from, asked.to.as_deref(), asked.to_rsc, asked.status)
        .map_err(|e| Problem::bad_request(e.to_string()))?;
    let from = rule.from.clone();
    let store = req.site.models().store.clone();
    added_or_refused(store.run(move |s| rules::add(s, &[rule])).await, &from)?;
    let made = reload(req).await?.into_iter().find(|r| r.from == from);
    Ok(Outcome::Response(json_response(
        StatusCode::CREATED,
        &json!(made),
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Import {
    csv: String,
}

/// The rules of a CSV text, or every wrong line with what is wrong with it.
pub(crate) fn parse_csv(text: &str) -> Result<Vec<NewRule>, Vec<String>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let (mut found, mut wrong) = (Vec::new(), Vec::new());
    for (n, record) in reader.records().enumerate() {
        let line = n + 1;
        if line > MAX_IMPORT_LINES {
            wrong.push(format!(
                "more than {MAX_IMPORT_LINES} lines: split the file"
            ));
            break;
        }
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                wrong.push(format!("line {line}: {e}"));
                continue;
            }
        };
        let field = |i: usize| record.get(i).unwrap_or("").trim();
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        if line == 1 && field(0).eq_ignore_ascii_case("from") {
            continue; // the header line
        }
        if record.len() > 3 {
            wrong.push(format!(
                "line {line}: at most three fields (from, to, status)"
            ));
            continue;
        }
        let status = match field(2) {
            "" => None,
            s => match s.parse::<u16>() {
                Ok(s) => Some(s),
                Err(_) => {
                    wrong.push(format!("line {line}: status {s:?} is not a number"));
                    continue;
                }
            },
        };
        let to = Some(field(1)).filter(|t| !t.is_empty());
        match NewRule::new(field(0), to, None, status) {
            Ok(rule) => found.push(rule),
            Err(why) => wrong.push(format!("line {line}: {why}")),
        }
    }
    let mut seen = std::collections::HashMap::new();
    for (i, rule) in found.iter().enumerate() {
        if let Some(first) = seen.insert(rule.from.clone(), i) {
            wrong.push(format!(
                "{} is in the file twice (rules {} and {})",
                rule.from,
                first + 1,
                i + 1
            ));
        }
    }
    if wrong.is_empty() {
        Ok(found)
    } else {
        Err(wrong)
    }
}

async fn import(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    may_edit(caller)?;
    let asked: Import = serde_json::from_slice(&req.body).map_err(|e| {
        Problem::bad_request(format!(
            "expected {{\"csv\": \"from,to,status\\n...\"}}: {e}"
        ))
    })?;
    let found = parse_csv(&asked.csv).map_err(|wrong| {
        Problem::bad_request(format!("nothing was imported: {}", wrong.join("; ")))
            .with("lines", json!(wrong))
    })?;
    let count = found.len();
    let store = req.site.models().store.clone();
    added_or_refused(
        store.run(move |s| rules::add(s, &found)).await,
        "nothing was imported",
    )?;
    reload(req).await?;
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "imported": count }),
    )))
}

async fn remove(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    may_edit(caller)?;
    let id = id_arg(req, "id").ok_or_else(|| Problem::not_found("no such rule"))?;
    let removed = req
        .site
        .models()
        .store
        .run(move |s| rules::remove(s, id))
        .await?;
    if !removed {
        return Err(Problem::not_found("no such rule"));
    }
    reload(req).await?;
    Ok(Outcome::Response(empty_response(StatusCode::NO_CONTENT)))
}

fn rule_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["id", "from", "to", "to_rsc", "status", "hits", "last_hit"],
        "properties": {
            "id": {"type": "integer"},
            "from": {"type": "string"},
            "to": {"type": ["string", "null"]},
            "to_rsc": {"type": ["integer", "null"]},
            "status": {"type": "integer", "enum": [301, 302, 307, 308, 410]},
            "hits": {"type": "integer"},
            "last_hit": {"type": ["string", "null"]},
        },
    })
}

fn doc(
    id: &str,
    summary: &str,
    description: &str,
    body: Option<serde_json::Value>,
    ok: (&str, &str, serde_json::Value),
) -> serde_json::Value {
    let mut doc = json!({
        "operationId": id,
        "summary": summary,
        "description": description,
        "tags": ["redirects"],
        "responses": {ok.0: {"description": ok.1, "content": {"application/json": {"schema": ok.2}}}},
    });
    if let Some(schema) = body {
        doc["requestBody"] =
            json!({"required": true, "content": {"application/json": {"schema": schema}}});
    }
    doc
}

pub(crate) fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        Api::new()
            .endpoint(
                Endpoint::new("redirects", "/api/redirects")
                    .get(
                        Access::Known,
                        || doc("listRedirects", "List the redirects",
                            "Every rule, newest first, with its hits. Editors and above.",
                            None,
                            ("200", "The rules", json!({"type": "object", "required": ["redirects"],
                                "properties": {"redirects": {"type": "array", "items": rule_schema()}}}))),
                        |req, caller| Box::pin(list(req, caller)),
                    )
                    .post(
                        Access::Known,
                        || doc("addRedirect", "Add a redirect",
                            "An old path (`from`, starting with /) and where it went: `to` (a path or \
                             an http(s) URL) or `to_rsc` (a resource's page), with `status` 301 (the \
                             default), 302, 307 or 308; or no target and 410 Gone. 409 when the old \
                             path has a rule already. Editors and above.",
                            Some(json!({"type": "object", "required": ["from"], "additionalProperties": false,
                                "properties": {
                                    "from": {"type": "string"},
                                    "to": {"type": ["string", "null"]},
                                    "to_rsc": {"type": ["integer", "null"]},
                                    "status": {"type": ["integer", "null"]},
                                }})),
                            ("201", "Added", rule_schema())),
                        |req, caller| Box::pin(add(req, caller)),
                    ),
            )
            .endpoint(
                Endpoint::new("redirects_import", "/api/redirects/import").post(
                    Access::Known,
                    || doc("importRedirects", "Import redirects from CSV",
                        "`csv`: lines `from,to,status` (a header line may come first; `to` empty \
                         with 410). All of them are added, or, when any line is wrong or names an \
                         old path that has a rule, none; the problem lists every wrong line \
                         (`lines`). Editors and above.",
                        Some(json!({"type": "object", "required": ["csv"], "additionalProperties": false,
                            "properties": {"csv": {"type": "string"}}})),
                        ("200", "Imported", json!({"type": "object", "required": ["imported"],
                            "properties": {"imported": {"type": "integer"}}}))),
                    |req, caller| Box::pin(import(req, caller)),
                ),
            )
            .endpoint(
                Endpoint::new("redirect", "/api/redirects/{id}").delete(
                    Access::Known,
                    || {
                        let mut d = doc("removeRedirect", "Remove a redirect",
                            "The old path answers 404 again. Editors and above.",
                            None, ("204", "Removed", json!({})));
                        d["parameters"] = json!([{"name": "id", "in": "path", "required": true,
                            "schema": {"type": "integer"}}]);
                        d["responses"] = json!({"204": {"description": "Removed"}});
                        d
                    },
                    |req, caller| Box::pin(remove(req, caller)),
                ),
            )
    });
    &API
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_file_is_all_rules_or_every_wrong_line_named() {
        let good = "from,to,status\n/old,/new,301\n\n/gone,,410\n/temp , /elsewhere , 302\n";
        let rules = parse_csv(good).unwrap();
        assert_eq!(rules.len(), 3);
        assert_eq!(
            (
                rules[2].from.as_str(),
                rules[2].to.as_deref(),
                rules[2].status
            ),
            ("/temp", Some("/elsewhere"), 302)
        );
        let bad = "/ok,/fine\nnot-a-path,/x\n/a,/b,abc\n/c,/d,200\n/ok,/twice\n";
        let wrong = parse_csv(bad).unwrap_err();
        assert!(wrong[0].starts_with("line 2:"), "{wrong:?}");
        assert!(wrong[1].starts_with("line 3: status \"abc\""), "{wrong:?}");
        assert!(wrong[2].starts_with("line 4: status 200"), "{wrong:?}");
        assert!(wrong[3].contains("/ok is in the file twice"), "{wrong:?}");
        assert_eq!(wrong.len(), 4);
    }
}
