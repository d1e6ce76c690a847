//! The forms module's endpoints:
//!
//! - `POST /forms/{id}/submit`: a visitor's answers ([`crate::submit`]);
//! - `GET /api/forms/{id}/submissions` (editors): the answers, newest first,
//!   with the form's fields, `limit` and `before` for the next page;
//! - `GET /api/forms/{id}/submissions.csv` (editors): every answer as CSV,
//!   a column per field in the form's order, then when and from where;
//! - `DELETE /api/forms/{id}/submissions/{sid}` (editors).

use std::sync::LazyLock;

use http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use serde_json::{Value, json};

use bulwark_acl::EDITORS;
use bulwark_store::{ResourceId, StoreError};
use bulwark_web::{
    Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, empty_response, json_response,
};

use crate::definition::{Definition, FieldType, as_text, read_definition};
use crate::table;

fn moderates(caller: Caller<'_>) -> Result<(), Problem> {
    match caller {
        Caller::SiteToken => Ok(()),
        caller if caller.in_group(EDITORS) => Ok(()),
        caller => Err(caller.refused("read a form's answers")),
    }
}

/// The form `{id}`, its title and fields, for an editor who may see it.
async fn form(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
) -> Result<(ResourceId, String, Definition), Problem> {
    moderates(caller)?;
    let form = crate::find_form(req, caller.principal()).await?;
    let id = form.id;
    // Answers stored under a definition since changed are still listed by
    // the fields the form has now; a broken one lists none.
    let definition =
        read_definition(form.props.get("fields")).unwrap_or(Definition { fields: Vec::new() });
    let title = form
        .title()
        .map(bulwark_store::html_to_plain)
        .unwrap_or_else(|| format!("form {id}"));
    Ok((id, title, definition))
}

async fn list(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let (id, title, definition) = form(req, caller).await?;
    let number = |name: &str| -> Result<Option<i64>, Problem> {
        req.query_param(name)
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.parse()
                    .map_err(|_| Problem::invalid(name, format!("{name} must be a number")))
            })
            .transpose()
    };
    let before = number("before")?;
    let limit = match number("limit")? {
        None => 50,
        Some(n @ 1..=500) => n as usize,
        Some(_) => return Err(Problem::invalid("limit", "limit is between 1 and 500")),
    };
    let store = req.site.models().store.clone();
    let (found, count) = store
        .run(move |s| {
            Ok::<_, StoreError>((table::list(s, id, before, limit)?, table::count(s, id)?))
        })
        .await?;
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({
            "form": {"id": id.0, "title": title, "fields": definition.fields},
            "count": count,
            "submissions": found,
        }),
    )))
}

/// A cell as a spreadsheet will not run it: one that begins with `=`, `+`,
/// `-`, `@`, a tab or a carriage return (what Excel, LibreOffice and Google
/// Sheets take for a formula) gets a `'` in front, as OWASP's guidance on CSV
/// injection says; a plain number (`-5`, `+3.2`) stays as it is.
fn spreadsheet_safe(cell: &str) -> std::borrow::Cow<'_, str> {
    let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula && cell.parse::<f64>().is_err() {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

async fn csv(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let (id, title, definition) = form(req, caller).await?;
    let store = req.site.models().store.clone();
    let all = store
        .run(move |s| table::list(s, id, None, 100_000))
        .await?;
    let origin = req.site.config().origin();
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> = definition.fields.iter().map(|f| f.label.clone()).collect();
    head.extend(["Sent".to_owned(), "From".to_owned()]);
    let write_failed = |e: csv::Error| Problem::internal("writing the CSV file", &e);
    writer
        .write_record(head.iter().map(|cell| spreadsheet_safe(cell).into_owned()))
        .map_err(write_failed)?;
    for submission in &all {
        let mut row: Vec<String> = definition
            .fields
            .iter()
            .map(|f| {
                let value = submission.answers.get(&f.name);
                match (f.kind, value.and_then(Value::as_i64)) {
                    (FieldType::File, Some(media)) => format!("{origin}/media/file/{media}"),
                    _ => as_text(f, value),
                }
            })
            .collect();
        row.push(submission.created.to_rfc3339());
        row.push(submission.address.clone().unwrap_or_default());
        writer
            .write_record(row.iter().map(|cell| spreadsheet_safe(cell).into_owned()))
            .map_err(write_failed)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| Problem::internal("writing the CSV file", &e))?;
    let file_name: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let mut resp = Response::new(bulwark_http::Body::from(bytes::Bytes::from(bytes)));
    let headers = resp.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(disposition) = HeaderValue::from_str(&format!(
        "attachment; filename=\"{}-answers.csv\"",
        file_name.trim_matches('-')
    )) {
        headers.insert(CONTENT_DISPOSITION, disposition);
    }
    Ok(Outcome::Response(resp))
}

async fn remove(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let (id, _, _) = form(req, caller).await?;
    let sid = req
        .arg("sid")
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| Problem::not_found("no such answers"))?;
    let removed = req
        .site
        .models()
        .store
        .run(move |s| table::remove(s, id, sid))
        .await?;
    if !removed {
        return Err(Problem::not_found("no such answers"));
    }
    Ok(Outcome::Response(empty_response(StatusCode::NO_CONTENT)))
}

fn doc(id: &str, summary: &str, description: &str, ok: (&str, &str, &str, Value)) -> Value {
    json!({
        "operationId": id,
        "summary": summary,
        "description": description,
        "tags": ["forms"],
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
        "responses": {ok.0: {"description": ok.1, "content": {ok.2: {"schema": ok.3}}}},
    })
}

pub(crate) fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        Api::new()
            .endpoint(
                Endpoint::new("form_submit", "/forms/{id}/submit")
                    .post(
                        Access::Anyone,
                        || {
                            let mut d = doc("submitForm", "Answer a form",
                                "The form's fields by name, as a plain form or as \
                                 multipart/form-data with files; `_ticket` from GET \
                                 /api/form-ticket, and `extra_info` left empty. A browser gets a \
                                 page back; with `Accept: application/json`, 201 `{\"id\"}`, or a \
                                 problem whose `fields` names each wrong field; 429 past the \
                                 answers an address may send a minute.",
                                ("201", "Taken", "application/json",
                                 json!({"type": "object", "required": ["id"], "properties": {"id": {"type": ["integer", "null"]}}})));
                            d["requestBody"] = json!({"required": true, "content": {
                                "application/x-www-form-urlencoded": {"schema": {"type": "object"}},
                                "multipart/form-data": {"schema": {"type": "object"}},
                            }});
                            d
                        },
                        |req, caller| Box::pin(crate::submit::submit(req, caller)),
                    )
                    .streaming_body(),
            )
            .endpoint(
                Endpoint::new("form_submissions", "/api/forms/{id}/submissions").get(
                    Access::Known,
                    || {
                        let mut d = doc("listFormSubmissions", "A form's answers",
                            "Newest first, with the form's fields; `limit` (50) and `before` (an \
                             id) page through them. Editors and above.",
                            ("200", "The answers", "application/json", json!({"type": "object",
                                "required": ["form", "count", "submissions"]})));
                        d["parameters"].as_array_mut().into_iter().for_each(|p| {
                            p.push(json!({"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 500}}));
                            p.push(json!({"name": "before", "in": "query", "schema": {"type": "integer"}}));
                        });
                        d
                    },
                    |req, caller| Box::pin(list(req, caller)),
                ),
            )
            .endpoint(
                Endpoint::new("form_submissions_csv", "/api/forms/{id}/submissions.csv").get(
                    Access::Known,
                    || doc("formSubmissionsCsv", "A form's answers as CSV",
                        "Every answer: a column per field in the form's order (a file as its \
                         address), then when it was sent and from which network. Editors and above.",
                        ("200", "The CSV file", "text/csv", json!({"type": "string"}))),
                    |req, caller| Box::pin(csv(req, caller)),
                ),
            )
            .endpoint(
                Endpoint::new("form_submission", "/api/forms/{id}/submissions/{sid}").delete(
                    Access::Known,
                    || {
                        let mut d = doc("removeFormSubmission", "Remove one answer",
                            "Editors and above.", ("204", "Removed", "application/json", json!({})));
                        d["parameters"].as_array_mut().into_iter().for_each(|p| {
                            p.push(json!({"name": "sid", "in": "path", "required": true, "schema": {"type": "integer"}}));
                        });
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
    fn cells_a_spreadsheet_would_run_get_a_quote_and_numbers_do_not() {
        for (typed, written) in [
            (
                "=HYPERLINK(\"http://evil.example\")",
                "'=HYPERLINK(\"http://evil.example\")",
            ),
            ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("-5", "-5"),
            ("+3.25", "+3.25"),
            ("Ann = Bob", "Ann = Bob"),
            ("", ""),
        ] {
            assert_eq!(spreadsheet_safe(typed), written, "{typed:?}");
        }
    }
}
