//! `POST /forms/{id}/submit`: a visitor's answers to a form.
//!
//! A plain form (`application/x-www-form-urlencoded`) or, for a form with
//! file fields, `multipart/form-data`, read as it arrives: the text fields
//! come first (the form puts its ticket and hidden field at the top), so a
//! bot is known before any file of its is kept; each file goes through the
//! media module's checks (type from its bytes, size, pixels, the quota) and
//! becomes a media resource only editors see.
//!
//! The answer is a page (`form_posted.tpl`: the form's thanks, or the form
//! again with each wrong field named and what was typed, or, without a
//! ticket, the answers back to confirm), or JSON for a caller that asks for
//! it (`Accept: application/json`): `201 {"id"}`, a problem naming the
//! fields (`fields`), `429`.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::StreamExt;
use http::StatusCode;
use http::header::{ACCEPT, CONTENT_TYPE};
use minijinja::Value as TemplateValue;
use serde_json::{Value, json};

use bulwark_module_auth::visitor_posts::{
    HONEYPOT_FIELD, PostGuard, TICKET_FIELD, Verdict, VisitorPost,
};
use bulwark_module_mail::{looks_like_address, queue_to_each};
use bulwark_store::{Resource, ResourceId, StoreError};
use bulwark_web::{Caller, Outcome, Problem, ProblemKind, RequestCtx, json_response, render_page};

use crate::SiteForms;
use crate::definition::{Definition, FieldType, as_text, read_definition};
use crate::table::{self, Submission};

/// Bytes of text fields a submission may have (files aside).
const MAX_TEXT_BYTES: usize = 256 * 1024;

/// What was sent: text fields in order, files by field name (the media
/// resources they became).
#[derive(Default)]
struct Sent {
    fields: Vec<(String, String)>,
    files: BTreeMap<String, i64>,
}

impl Sent {
    fn field(&self, name: &str) -> &str {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// Why the answers were not taken.
enum Refusal {
    Wrong(BTreeMap<String, String>),
    Confirm(String),
    TooMany(std::time::Duration),
    Problem(Problem),
}

impl From<Problem> for Refusal {
    fn from(p: Problem) -> Refusal {
        Refusal::Problem(p)
    }
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Refusal {
        Refusal::Problem(e.into())
    }
}

pub(crate) async fn submit(req: &RequestCtx<'_>, _caller: Caller<'_>) -> Result<Outcome, Problem> {
    let forms =
        req.site.state::<Arc<SiteForms>>().cloned().ok_or_else(|| {
            Problem::internal("the forms module", &"it is not set up on this site")
        })?;
    let wants_json = req
        .parts
        .headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"));
    let (form, definition) = form_of(req).await?;
    let mut sent = Sent::default();
    let result = take(req, &forms, &form, &definition, &mut sent).await;
    if result.is_err() {
        forget_files(req, &sent).await;
    }
    match result {
        Ok(Taken::Stored(submission)) => {
            let store = req.site.models().store.clone();
            tell_by_mail(&forms, store, &form, &definition, &submission);
            if wants_json {
                return Ok(Outcome::Response(json_response(
                    StatusCode::CREATED,
                    &json!({ "id": submission.id }),
                )));
            }
            Ok(answer_page(req, &form, "thanks", StatusCode::OK, &sent, None, None).await)
        }
        Ok(Taken::Dropped) if wants_json => Ok(Outcome::Response(json_response(
            StatusCode::CREATED,
            &json!({ "id": null }),
        ))),
        Ok(Taken::Dropped) => {
            Ok(answer_page(req, &form, "thanks", StatusCode::OK, &sent, None, None).await)
        }
        Err(Refusal::Wrong(wrong)) if wants_json => Err(Problem::invalid(
            wrong.keys().next().cloned().unwrap_or_default(),
            "some answers are missing or wrong",
        )
        .with("fields", json!(wrong))),
        Err(Refusal::Wrong(wrong)) => Ok(answer_page(
            req,
            &form,
            "invalid",
            StatusCode::BAD_REQUEST,
            &sent,
            Some(wrong),
            None,
        )
        .await),
        Err(Refusal::Confirm(_)) if wants_json => Err(Problem::invalid(
            TICKET_FIELD,
            "ask GET /api/form-ticket when the visitor starts, and send its ticket",
        )),
        Err(Refusal::Confirm(ticket)) => Ok(answer_page(
            req,
            &form,
            "confirm",
            StatusCode::OK,
            &sent,
            None,
            Some(ticket),
        )
        .await),
        Err(Refusal::TooMany(wait)) => Err(Problem::new(
            ProblemKind::TooManyRequests,
            format!(
                "many answers came from your address just now; try again in {} seconds",
                wait.as_secs().max(1)
            ),
        )
        .with_retry_after(wait.as_secs().max(1))),
        Err(Refusal::Problem(p)) => Err(p),
    }
}

enum Taken {
    Stored(Submission),
    /// A bot's: nothing kept, thanked like a person.
    Dropped,
}

/// Reads what was sent, judges it and stores it.
async fn take(
    req: &RequestCtx<'_>,
    forms: &SiteForms,
    form: &Resource,
    definition: &Definition,
    sent: &mut Sent,
) -> Result<Taken, Refusal> {
    let guard =
        req.site.state::<Arc<PostGuard>>().cloned().ok_or_else(|| {
            Problem::internal("the forms module", &"the auth module is not set up")
        })?;
    let principal = req.principal().clone();
    // Editors try out their own forms: no defences for them.
    let trusted = principal.in_group(bulwark_acl::EDITORS);
    let judge = |sent: &Sent| {
        let guard = guard.clone();
        let honeypot = sent.field(HONEYPOT_FIELD).to_owned();
        let ticket = sent.field(TICKET_FIELD).to_owned();
        let address = req.peer().addr.ip();
        let limits = forms.settings.limits;
        let target = ticket_target(form.id);
        async move {
            if trusted {
                return Ok(Verdict::Welcome);
            }
            let post = VisitorPost {
                address,
                honeypot: &honeypot,
                ticket: &ticket,
                target: &target,
            };
            guard.check("form", &post, limits).await
        }
    };
    let verdict = read_body(req, definition, sent, judge).await?;
    match verdict {
        Verdict::Welcome => {}
        Verdict::Bot(sign) => {
            tracing::info!(address = %req.peer().addr.ip(), form = form.id.0, "form answers dropped: {sign}");
            return Ok(Taken::Dropped);
        }
        Verdict::NoTicket => {
            return Err(Refusal::Confirm(
                guard
                    .confirm_ticket(&ticket_target(form.id), forms.settings.limits)
                    .await?,
            ));
        }
        Verdict::TooMany { retry_after } => return Err(Refusal::TooMany(retry_after)),
    }
    let answers = definition
        .answers(&sent.fields, &sent.files)
        .map_err(Refusal::Wrong)?;
    let (id, user) = (form.id, principal.user_id());
    let address = Some(bulwark_http::visitor_network(req.peer().addr.ip()).to_string());
    let stored = req
        .site
        .models()
        .store
        .run(move |s| table::insert(s, id, &answers, user, address))
        .await?;
    Ok(Taken::Stored(stored))
}

/// The form `{id}` names, if the visitor may see it and its fields can be read.
async fn form_of(req: &RequestCtx<'_>) -> Result<(Resource, Definition), Problem> {
    let form = crate::find_form(req, Some(req.principal())).await?;
    let definition = read_definition(form.props.get("fields")).map_err(|why| {
        Problem::new(
            ProblemKind::Unprocessable,
            format!("this form cannot take answers: {why}"),
        )
    })?;
    Ok((form, definition))
}

/// Reads the body into `sent` and asks `judge` about it: a multipart body
/// before its first file (and, with no file, at its end), a plain one at
/// its end. Files of a post judged a bot's are not kept.
async fn read_body<F, Fut>(
    req: &RequestCtx<'_>,
    definition: &Definition,
    sent: &mut Sent,
    judge: F,
) -> Result<Verdict, Refusal>
where
    F: Fn(&Sent) -> Fut,
    Fut: std::future::Future<Output = Result<Verdict, StoreError>>,
{
    let content_type = req
        .parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let stream = req
        .take_body_chunks()
        .ok_or_else(|| Problem::bad_request("no body"))?;
    let Ok(boundary) = multer::parse_boundary(&content_type) else {
        let mut bytes = Vec::new();
        let mut stream = Box::pin(stream);
        while let Some(chunk) = stream.next().await {
            let chunk =
                chunk.map_err(|e| Problem::bad_request(format!("the answers broke off: {e}")))?;
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_TEXT_BYTES {
                return Err(too_long().into());
            }
        }
        sent.fields = bulwark_web::parse_form(&bytes);
        return Ok(judge(sent).await?);
    };
    let mut multipart = multer::Multipart::new(stream, boundary);
    let (mut text_bytes, mut verdict) = (0usize, None);
    let principal = req.principal().clone();
    while let Some(mut field) = multipart
        .next_field()
        .await
        .map_err(|e| Problem::bad_request(format!("not a valid form: {e}")))?
    {
        let name = field.name().unwrap_or("").to_owned();
        let is_file = definition
            .fields
            .iter()
            .any(|f| f.name == name && f.kind == FieldType::File);
        if is_file && field.file_name().is_some_and(|n| !n.is_empty()) {
            if verdict.is_none() {
                verdict = Some(judge(sent).await?);
            }
            if verdict != Some(Verdict::Welcome) || sent.files.contains_key(&name) {
                continue; // Not kept: a bot's, or a second file for one field.
            }
            match bulwark_module_media::accept_form_file(req.site, &mut field, &principal).await {
                Ok(id) => {
                    sent.files.insert(name, id.0);
                }
                Err(problem) => {
                    let mut wrong = BTreeMap::new();
                    wrong.insert(name, problem.detail().to_owned());
                    return Err(Refusal::Wrong(wrong));
                }
            }
            continue;
        }
        let text = field
            .text()
            .await
            .map_err(|e| Problem::bad_request(format!("not a valid form: {e}")))?;
        text_bytes += text.len();
        if text_bytes > MAX_TEXT_BYTES {
            return Err(too_long().into());
        }
        sent.fields.push((name, text));
    }
    match verdict {
        Some(verdict) => Ok(verdict),
        None => Ok(judge(sent).await?),
    }
}

fn too_long() -> Problem {
    Problem::new(
        ProblemKind::TooLarge,
        format!("the answers are longer than a form takes ({MAX_TEXT_BYTES} bytes)"),
    )
}

/// The files of a post that was not taken go again.
async fn forget_files(req: &RequestCtx<'_>, sent: &Sent) {
    for id in sent.files.values().copied() {
        let gone = req
            .site
            .models()
            .store
            .run(move |s| s.delete_resource(ResourceId(id), None))
            .await;
        if let Err(e) = gone {
            tracing::warn!("forms: removing the file {id} of answers not taken: {e}");
        }
    }
}

async fn answer_page(
    req: &RequestCtx<'_>,
    form: &Resource,
    outcome: &str,
    status: StatusCode,
    sent: &Sent,
    wrong: Option<BTreeMap<String, String>>,
    ticket: Option<String>,
) -> Outcome {
    let mut typed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in &sent.fields {
        if k != TICKET_FIELD && k != HONEYPOT_FIELD {
            typed.entry(k.clone()).or_default().push(v.clone());
        }
    }
    let mut vars = BTreeMap::new();
    vars.insert("form_id".to_owned(), TemplateValue::from(form.id.0));
    vars.insert("outcome".to_owned(), TemplateValue::from(outcome));
    vars.insert(
        "values".to_owned(),
        TemplateValue::from(minijinja::value::Serde(&typed)),
    );
    vars.insert(
        "errors".to_owned(),
        TemplateValue::from(minijinja::value::Serde(wrong.unwrap_or_default())),
    );
    vars.insert(
        "ticket".to_owned(),
        TemplateValue::from(ticket.unwrap_or_default()),
    );
    match render_page(req, "form_posted.tpl", status, vars).await {
        Outcome::Found(mut page) => {
            // What was typed comes back in it: no cache keeps it.
            page.cache_control = "no-store";
            Outcome::Found(page)
        }
        other => other,
    }
}

/// Mails the answers to the form's recipients (none named: the editors),
/// off the request.
fn tell_by_mail(
    forms: &SiteForms,
    store: bulwark_store::Store,
    form: &Resource,
    definition: &Definition,
    submission: &Submission,
) {
    let recipients: Vec<String> = form
        .props
        .get("recipients")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let title = form
        .title()
        .map(bulwark_store::html_to_plain)
        .unwrap_or_else(|| format!("form {}", form.id));
    let mut text = format!("New answers to “{title}”:\n\n");
    for f in &definition.fields {
        let answer = match f.kind {
            FieldType::File => submission
                .answers
                .get(&f.name)
                .and_then(Value::as_i64)
                .map(|id| format!("{}/media/file/{id}", forms.origin))
                .unwrap_or_default(),
            _ => as_text(f, submission.answers.get(&f.name)),
        };
        text.push_str(&format!("{}: {answer}\n", f.label));
    }
    text.push_str(&format!(
        "\nAll answers: {}/admin/forms?form={}\n",
        forms.origin, form.id
    ));
    let subject = format!("New answers to “{title}”");
    // Answering the mail answers the visitor: the first e-mail address they
    // gave (a contact form's "your address").
    let reply_to = definition
        .fields
        .iter()
        .filter(|f| f.kind == FieldType::Email)
        .filter_map(|f| submission.answers.get(&f.name).and_then(Value::as_str))
        .map(str::trim)
        .find(|address| looks_like_address(address))
        .map(str::to_owned);
    let notifier = forms.notifier.current();
    tokio::spawn(async move {
        let recipients = if recipients.is_empty() {
            let editors = store
                .run(|s| {
                    bulwark_module_auth::accounts::site_activity_addresses(s, bulwark_acl::EDITORS)
                })
                .await;
            match editors {
                Ok(editors) => editors,
                Err(e) => {
                    tracing::warn!("forms: finding the editors to mail answers to: {e}");
                    return;
                }
            }
        } else {
            recipients
        };
        queue_to_each(
            &notifier,
            &recipients,
            &subject,
            &text,
            reply_to.as_deref(),
            "forms",
        )
        .await;
    });
}

/// What a ticket for posts to form `id` names (`GET /api/form-ticket?for=`;
/// `_form.tpl` writes the same in `data-ticket-for`).
fn ticket_target(id: ResourceId) -> String {
    format!("form:{}", id.0)
}
