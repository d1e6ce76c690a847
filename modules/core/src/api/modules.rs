//! `/api/modules`: which of the binary's modules the site enables, for
//! administrators (and the site's token). `GET` lists every module with what
//! it needs; `PUT {"enabled": ["seo", "push", ...]}` writes the list into the
//! site's `site.toml` (its comments and layout kept) and loads the sites
//! again, as a `SIGHUP` would: requests in flight finish on the old site, the
//! next ones see the new modules. A list that would not load (an unknown
//! module, one without what it needs) changes nothing. `core` is always on;
//! `auth` and `admin` stay on here, since turning them off from the admin
//! would leave no way back: that is done in `site.toml`.

use std::collections::BTreeSet;
use std::path::Path;

use http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::ADMINISTRATORS;

use super::input::json_body;

use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};
use bulwark_web::{ModuleInfo, ReloadError};

/// Always on, whatever `site.toml` says.
const CORE: &str = "core";
/// Not turned off from here (see the module's documentation).
const KEPT_ON: [&str; 2] = ["auth", "admin"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Enabled {
    enabled: Vec<String>,
}

fn listing(available: &[ModuleInfo], enabled: impl Fn(&ModuleInfo) -> bool) -> Outcome {
    let modules: Vec<serde_json::Value> = available
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "enabled": m.name == CORE || enabled(m),
                "needs": m.depends,
                "changeable": m.name != CORE && !(KEPT_ON.contains(&m.name) && enabled(m))
            })
        })
        .collect();
    Outcome::Response(bulwark_web::json_response(
        StatusCode::OK,
        &json!({ "modules": modules }),
    ))
}

/// What is wrong with enabling exactly `wanted`, if anything.
fn check(available: &[ModuleInfo], wanted: &BTreeSet<&str>) -> Result<(), String> {
    for name in wanted {
        let Some(module) = available.iter().find(|m| m.name == *name) else {
            return Err(format!("there is no module {name:?} in this Bulwark"));
        };
        if let Some(missing) = module
            .depends
            .iter()
            .find(|d| **d != CORE && !wanted.contains(*d))
        {
            return Err(format!("{name} needs {missing}: enable both"));
        }
    }
    for kept in KEPT_ON {
        let on_now = available.iter().any(|m| m.name == kept && m.enabled);
        if on_now && !wanted.contains(kept) {
            return Err(format!(
                "{kept} stays on here (the admin runs on it): turn it off in site.toml"
            ));
        }
    }
    Ok(())
}

/// `site.toml` with `modules` set to `names`: the modules already listed keep
/// their place, new ones go at the end, everything else in the file stays.
fn with_modules(text: &str, names: &BTreeSet<&str>) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("site.toml does not parse: {e}"))?;
    let listed: Vec<String> = doc
        .get("modules")
        .and_then(|m| m.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut order: Vec<&str> = listed
        .iter()
        .map(String::as_str)
        .filter(|n| names.contains(n))
        .collect();
    order.extend(
        names
            .iter()
            .copied()
            .filter(|n| !listed.iter().any(|l| l == n)),
    );
    let mut array = toml_edit::Array::new();
    array.extend(order);
    match doc.get_mut("modules").and_then(|m| m.as_value_mut()) {
        Some(value) => {
            let decor = value.decor().clone();
            *value = toml_edit::Value::Array(array);
            *value.decor_mut() = decor;
        }
        None => {
            doc.insert("modules", toml_edit::value(array));
        }
    }
    Ok(doc.to_string())
}

/// Replaces the file at once: a reader sees the old text or the new.
fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("toml.new");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

pub(super) async fn modules(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    let available = &req.site.available_modules();
    if req.parts.method != Method::PUT {
        return Ok(listing(available, |m| m.enabled));
    }
    let change: Enabled = json_body(req)?;
    let wanted: BTreeSet<&str> = change
        .enabled
        .iter()
        .map(String::as_str)
        .filter(|n| *n != CORE)
        .collect();
    if let Err(problem) = check(available, &wanted) {
        return Err(Problem::bad_request(problem));
    }
    let reload = req.site.reload_handle().clone();
    let file = req.site.site().dir.join("site.toml");
    let before = match tokio::fs::read_to_string(&file).await {
        Ok(text) => text,
        Err(e) => {
            return Err(Problem::internal(
                "reading site.toml",
                &format!("{}: {e}", file.display()),
            ));
        }
    };
    let after = match with_modules(&before, &wanted) {
        Ok(text) => text,
        Err(problem) => return Err(Problem::conflict(problem)),
    };
    if let Err(e) = write_whole(&file, &after) {
        return Err(Problem::internal(
            "writing site.toml",
            &format!("{}: {e}", file.display()),
        ));
    }
    match reload.reload().await {
        Ok(()) => {}
        Err(ReloadError::Refused(problems))
            if problems.iter().any(|p| p.concerns(req.site.site())) =>
        {
            // This site kept running as it was: the file goes back to what it
            // runs.
            if let Err(e) = write_whole(&file, &before) {
                tracing::error!("putting {} back: {e}", file.display());
            }
            let problems = problems
                .iter()
                .filter(|p| p.concerns(req.site.site()))
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ");
            return Err(Problem::bad_request(format!(
                "the site does not load with these modules: {problems}"
            )));
        }
        // Another site's trouble, or the server stopping: not this change's.
        Err(other) => tracing::warn!("reloading after a change of modules: {other}"),
    }
    tracing::info!(site = %req.site.site().name(), "modules now: {:?}", wanted);
    Ok(listing(available, |m| wanted.contains(m.name)))
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_modules", "/api/modules")
            .get(
                Access::Group(ADMINISTRATORS),
                || json!({
                    "operationId": "listModules",
                    "summary": "The modules of this Bulwark, and which the site enables",
                    "tags": [
                        "site"
                    ],
                    "description": "Administrators only.",
                    "responses": {
                        "200": {
                            "description": "The modules",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Modules"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(modules(req, caller)),
            )
            .put(
                Access::Group(ADMINISTRATORS),
                || json!({
                    "operationId": "setModules",
                    "summary": "Enable exactly these modules",
                    "tags": [
                        "site"
                    ],
                    "description": "Writes the list into the site's site.toml (the rest of the file kept) and loads the sites again; a list that would not load changes nothing (400). core is always on; auth and admin stay on. Administrators only.",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": [
                                        "enabled"
                                    ],
                                    "properties": {
                                        "enabled": {
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
                            "description": "The modules now",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Modules"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(modules(req, caller)),
            ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modules_line_changes_and_the_rest_of_the_file_stays() {
        let text = "# My site\nhostname = \"x.test\"\nmodules = [\"seo\", \"push\", \"auth\"] # the modules\n\n[database]\n# kept\ndemo_content = true\n";
        let names: BTreeSet<&str> = ["auth", "seo", "mail"].into_iter().collect();
        let out = with_modules(text, &names).unwrap();
        assert_eq!(
            out,
            "# My site\nhostname = \"x.test\"\nmodules = [\"seo\", \"auth\", \"mail\"] # the modules\n\n[database]\n# kept\ndemo_content = true\n"
        );
        let out = with_modules("hostname = \"x.test\"\n", &names).unwrap();
        assert!(
            out.contains("modules = [\"auth\", \"mail\", \"seo\"]"),
            "{out}"
        );
        assert!(with_modules("modules = [", &names).is_err());
    }
}
