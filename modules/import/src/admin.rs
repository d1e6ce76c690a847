//! The import from the admin (`/admin/import`): an administrator uploads a
//! WordPress export, the import runs on the server as the command line's
//! does (the same code), its progress goes to them over push (their own
//! topic `user/{id}/import/{job}`), and the report stays to be read.
//!
//! - `POST /api/import/wordpress`: `multipart/form-data` with the file in
//!   `file`, `fetch_media=on` to fetch attachments from the old site and
//!   `users=on` to give each author an account (an author's), `invite=on`
//!   to mail each account made a link to choose its password;
//!   streamed to the site's `data/import/`; answers `202` with the job.
//! - `GET /api/import/jobs/{id}`: where the job is: its stage, how far, and
//!   once done its report (or what stopped it).
//!
//! Jobs live on the node that runs them, in memory: one import at a time per
//! site (a second is refused with 409 while one runs).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use http::StatusCode;
use http::header::CONTENT_TYPE;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use bulwark_module_media::MediaImport;
use bulwark_store::ResourceId;
use bulwark_web::{
    Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, id_arg, json_response,
};

use crate::SiteUrls;
use crate::wordpress::{self, Options};
use crate::{Enabled, Progress, Report};

/// The largest export file taken (512 MiB).
pub const MAX_BYTES: u64 = 512 * 1024 * 1024;

/// A site's import jobs, newest last.
#[derive(Default)]
pub struct Jobs {
    next: AtomicU64,
    jobs: Mutex<HashMap<u64, Arc<Job>>>,
}

impl Jobs {
    /// The jobs by state, for `/metrics`: `running`, `done` and `failed`
    /// (those kept on this node since the site was loaded).
    pub fn metrics(&self) -> Vec<bulwark_web::Metric> {
        let mut counts = [0u64; 3];
        for job in self.jobs.lock().unwrap_or_else(|e| e.into_inner()).values() {
            let state = job.state.lock().unwrap_or_else(|e| e.into_inner());
            let i = match &state.finished {
                None => 0,
                Some(Ok(_)) => 1,
                Some(Err(_)) => 2,
            };
            counts[i] += 1;
        }
        ["running", "done", "failed"]
            .into_iter()
            .zip(counts)
            .map(|(state, n)| {
                bulwark_web::Metric::gauge(
                    "bulwark_import_jobs",
                    "Imports started from the admin on this node, by state: running, done, \
                     failed.",
                    n as f64,
                )
                .with("state", state)
            })
            .collect()
    }
}

/// One import, as far as it has come.
pub struct Job {
    pub id: u64,
    /// Who started it: the one its progress is pushed to.
    pub user: Option<ResourceId>,
    state: Mutex<State>,
}

#[derive(Default, Clone)]
struct State {
    stage: String,
    done: u64,
    total: u64,
    finished: Option<Result<Report, String>>,
    last_push: Option<Instant>,
}

impl Job {
    fn json(&self) -> Value {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let (state, report, error) = match &s.finished {
            None => ("running", Value::Null, Value::Null),
            Some(Ok(report)) => ("done", json!(report), Value::Null),
            Some(Err(e)) => ("failed", Value::Null, json!(e)),
        };
        json!({
            "id": self.id, "state": state, "stage": s.stage, "done": s.done, "total": s.total,
            "report": report, "error": error,
        })
    }

    fn running(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .finished
            .is_none()
    }
}

/// Progress pushed to the one who started the import, at most four times a
/// second (and at every new stage).
struct Pushed {
    job: Arc<Job>,
    notifier: Arc<bulwark_notify::Notifier>,
}

impl Pushed {
    fn push(&self, force: bool) {
        let Some(user) = self.job.user else {
            return;
        };
        {
            let mut s = self.job.state.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            if !force
                && s.last_push
                    .is_some_and(|t| now - t < Duration::from_millis(250))
            {
                return;
            }
            s.last_push = Some(now);
        }
        let topic = format!("import/{}", self.job.id);
        if let Err(e) =
            bulwark_module_push::publish_to_user(&self.notifier, user, &topic, &self.job.json())
        {
            tracing::debug!("import progress not pushed: {e}");
        }
    }
}

impl Progress for Pushed {
    fn stage(&self, what: &str, total: u64) {
        {
            let mut s = self.job.state.lock().unwrap_or_else(|e| e.into_inner());
            s.stage = what.to_owned();
            s.total = total;
            s.done = 0;
        }
        self.push(true);
    }

    fn advance(&self, n: u64) {
        self.job
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .done += n;
        self.push(false);
    }
}

fn administrators(caller: Caller<'_>) -> Result<(), Problem> {
    match caller {
        Caller::SiteToken => Ok(()),
        caller if caller.in_group(bulwark_acl::ADMINISTRATORS) => Ok(()),
        caller => Err(caller.refused("import a site")),
    }
}

fn jobs(req: &RequestCtx<'_>) -> Result<Arc<Jobs>, Problem> {
    req.site
        .state::<Arc<Jobs>>()
        .cloned()
        .ok_or_else(|| Problem::internal("the import module", &"it is not set up on this site"))
}

async fn start(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    administrators(caller)?;
    let jobs = jobs(req)?;
    if jobs
        .jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .any(|j| j.running())
    {
        return Err(Problem::conflict(
            "an import is running on this site: wait for its report",
        ));
    }
    let site = req.site.site().clone();
    let store = req.site.models().store.clone();
    if !site.modules.iter().any(|m| m.name == "media") {
        return Err(Problem::conflict(
            "the site does not enable the media module, which keeps the attachments",
        ));
    }
    let boundary = req
        .parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| multer::parse_boundary(v).ok())
        .ok_or_else(|| {
            Problem::with_status_of(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the export as multipart/form-data, in a field called file",
            )
        })?;
    let stream = req
        .take_body_chunks()
        .ok_or_else(|| Problem::bad_request("no body"))?;
    let mut multipart = multer::Multipart::new(stream, boundary);
    let id = jobs.next.fetch_add(1, Ordering::Relaxed) + 1;
    let dir = site.dir.join("data").join("import");
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(|e| Problem::internal("making data/import", &e))?;
    let path = dir.join(format!("wordpress-{}-{id}.xml", std::process::id()));
    let (mut file_seen, mut fetch_media, mut users, mut invite) = (false, false, false, false);
    // What the editor called the file: errors name it, never the server's path.
    let mut shown_name = "the export".to_owned();
    while let Some(mut field) = multipart
        .next_field()
        .await
        .map_err(|e| Problem::bad_request(format!("not a valid upload: {e}")))?
    {
        match field.name() {
            Some("file") if !file_seen => {
                file_seen = true;
                if let Some(name) = field.file_name().filter(|n| !n.trim().is_empty()) {
                    shown_name = name.to_owned();
                }
                receive(&mut field, &path).await?;
            }
            Some("file") => {
                let _ = tokio::fs::remove_file(&path).await;
                return Err(Problem::bad_request("one export file at a time"));
            }
            Some(name @ ("fetch_media" | "users" | "invite")) => {
                let name = name.to_owned();
                let value = field.text().await.unwrap_or_default();
                // What a form's checkbox sends ("on", or nothing), and
                // "off": exactly the document's enum, so a number or a
                // boolean (which a form cannot tell from text) is refused.
                let on = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    other => {
                        let _ = tokio::fs::remove_file(&path).await;
                        return Err(Problem::invalid(&name, format!("{other:?}: on or off")));
                    }
                };
                match name.as_str() {
                    "users" => users = on,
                    "invite" => invite = on,
                    _ => fetch_media = on,
                }
            }
            other => {
                let _ = tokio::fs::remove_file(&path).await;
                return Err(Problem::bad_request(format!(
                    "{}: the fields are file, fetch_media, users and invite",
                    other.unwrap_or("a field without a name")
                )));
            }
        }
    }
    if !file_seen {
        let _ = tokio::fs::remove_file(&path).await;
        return Err(Problem::invalid(
            "file",
            "no file: send the export in a field called file",
        ));
    }
    let enabled = Enabled::of(site.modules.iter().map(|m| m.name));
    let options = Options {
        uploads: None,
        fetch_media,
        batch: 100,
        users: users.then(|| bulwark_acl::AUTHORS.to_owned()),
        invite,
        site_urls: SiteUrls::of(&site),
    };
    if let Err(refused) = wordpress::invitations(&options, &enabled) {
        let _ = tokio::fs::remove_file(&path).await;
        return Err(Problem::invalid("invite", refused.to_string()));
    }
    let media = MediaImport::open(&site, &store).map_err(|e| Problem::internal("the media", &e))?;
    let job = Arc::new(Job {
        id,
        user: caller.user(),
        state: Mutex::new(State {
            stage: "starting".into(),
            ..State::default()
        }),
    });
    jobs.jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, job.clone());
    let progress = Pushed {
        job: job.clone(),
        notifier: req.site.notifier().clone(),
    };
    tokio::spawn(async move {
        let done = wordpress::import(&store, &media, enabled, &path, &options, &progress).await;
        let _ = tokio::fs::remove_file(&path).await;
        if let Err(e) = &done {
            tracing::warn!("an import from the admin stopped: {e}");
        }
        progress
            .job
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .finished = Some(
            done.map_err(|e| error_chain(&e).replace(&path.display().to_string(), &shown_name)),
        );
        progress.push(true);
    });
    Ok(Outcome::Response(json_response(
        StatusCode::ACCEPTED,
        &job.json(),
    )))
}

/// An error with its causes, as one sentence.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

/// The upload, streamed to `path` and held to [`MAX_BYTES`].
async fn receive(field: &mut multer::Field<'static>, path: &Path) -> Result<(), Problem> {
    let failed = |e: std::io::Error| Problem::internal("keeping the upload", &e);
    let mut out = tokio::fs::File::create(path).await.map_err(failed)?;
    let mut size = 0u64;
    while let Some(chunk) = field
        .chunk()
        .await
        .map_err(|e| Problem::bad_request(format!("the upload broke off: {e}")))?
    {
        size += chunk.len() as u64;
        if size > MAX_BYTES {
            drop(out);
            let _ = tokio::fs::remove_file(path).await;
            return Err(Problem::with_status_of(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the export is larger than {} MiB: import it with `bulwark import wordpress`",
                    MAX_BYTES >> 20
                ),
            ));
        }
        out.write_all(&chunk).await.map_err(failed)?;
    }
    out.flush().await.map_err(failed)?;
    Ok(())
}

async fn status(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    administrators(caller)?;
    let id = id_arg(req, "id").ok_or_else(|| Problem::not_found("no such import"))?;
    let job = jobs(req)?
        .jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(id as u64))
        .cloned()
        .ok_or_else(|| Problem::not_found("no such import (on this node, since it started)"))?;
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &job.json(),
    )))
}

fn doc(id: &str, summary: &str, description: &str, ok: (&str, &str)) -> Value {
    let mut doc = json!({
        "operationId": id,
        "summary": summary,
        "description": description,
        "tags": ["import"],
        "responses": {ok.0: {"description": ok.1, "content": {"application/json": {"schema": {"type": "object"}}}}},
    });
    if id == "importJob" {
        doc["parameters"] =
            json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}]);
    } else {
        doc["requestBody"] = json!({"required": true, "content": {"multipart/form-data": {"schema": {
            "type": "object", "required": ["file"],
            "properties": {"file": {"type": "string", "format": "binary"},
                           "fetch_media": {"type": "string", "enum": ["on", "off"]},
                           "users": {"type": "string", "enum": ["on", "off"]},
                           "invite": {"type": "string", "enum": ["on", "off"]}},
            "additionalProperties": false}}}});
    }
    doc
}

pub(crate) fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        Api::new()
            .endpoint(
                Endpoint::new("import_wordpress", "/api/import/wordpress")
                    .post(
                        Access::Known,
                        || doc("importWordpress", "Import a WordPress site",
                            "A WordPress export (WXR) in `file`, imported as `bulwark import wordpress` \
                             does; `fetch_media=on` fetches the attachments from the old site, `users=on` gives \
                             each author an author's account (no password: they set it with a reset), \
                             `invite=on` mails each account made a link to choose it (needs `users=on` and \
                             the mail module). Answers \
                             at once with the job; its progress goes to the caller over push \
                             (`user/{id}/import/{job}`). Administrators.",
                            ("202", "Started")),
                        |req, caller| Box::pin(start(req, caller)),
                    )
                    .streaming_body(),
            )
            .endpoint(Endpoint::new("import_job", "/api/import/jobs/{id}").get(
                Access::Known,
                || doc("importJob", "An import's progress and report",
                    "Its stage, how far it is, and once done its report (counts by kind, \
                     what was skipped and why) or what stopped it. Administrators.",
                    ("200", "The job")),
                |req, caller| Box::pin(status(req, caller)),
            ))
    });
    &API
}
