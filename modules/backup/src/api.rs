//! `/api/backups[/{name}[/restore]]`: the site's backups, for administrators
//! (and the site's token): a backup holds everything, password hashes
//! included.
//!
//! - `GET /api/backups`: the backups kept in the site's `data/backups/`, newest first;
//! - `POST /api/backups`: make one now ([`crate::archive::make`]);
//! - `GET /api/backups/{name}`: download it;
//! - `POST /api/backups/{name}/restore` with `{"confirm": "<the site's name>"}`:
//!   put it back ([`crate::archive::restore`]). The confirmation is the site's
//!   name, so a stray request (or a fuzzer) cannot restore by accident.

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

use http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, Method, Response, StatusCode};
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::ADMINISTRATORS;
use bulwark_web::{Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, json_response};

use crate::archive::{self, Backup, Quiet};
use crate::{BackupError, SiteBackups};

pub(crate) fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        endpoints()
            .into_iter()
            .fold(Api::new(), Api::endpoint)
            .schema("Backup", || {
                json!({
                    "type": "object",
                    "required": ["name", "size", "created", "encrypted", "scheduled"],
                    "properties": {
                        "name": {"type": "string"},
                        "size": {"type": "integer", "format": "int64"},
                        "created": {"type": "string", "format": "date-time"},
                        "encrypted": {"type": "boolean"},
                        "scheduled": {"type": "boolean"}
                    }
                })
            })
    });
    &API
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RestoreConfirmation {
    confirm: String,
}

fn backups(req: &RequestCtx<'_>) -> Result<Arc<SiteBackups>, Problem> {
    req.site
        .state::<Arc<SiteBackups>>()
        .cloned()
        .ok_or_else(|| Problem::not_found("this site does not run the backup module"))
}

fn problem(e: BackupError) -> Problem {
    match e {
        BackupError::Store(e) => e.into(),
        BackupError::Io { what, source } => Problem::internal(&what, &source),
        e @ (BackupError::Encrypted | BackupError::Key(_)) => {
            Problem::new(bulwark_web::ProblemKind::Invalid, e.to_string())
        }
        e => Problem::conflict(e.to_string()),
    }
}

fn json(b: &Backup) -> serde_json::Value {
    json!({
        "name": b.name, "size": b.size, "created": b.created.to_rfc3339(),
        "encrypted": b.encrypted, "scheduled": b.scheduled,
    })
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, BackupError> + Send + 'static,
) -> Result<T, Problem> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Problem::internal("the backup task", &e))?
        .map_err(problem)
}

fn reply(status: StatusCode, value: serde_json::Value) -> Result<Outcome, Problem> {
    Ok(Outcome::Response(json_response(status, &value)))
}

async fn list(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let dir = backups(req)?.folder();
    let found = blocking(move || archive::list(&dir)).await?;
    reply(
        StatusCode::OK,
        json!({ "backups": found.iter().map(json).collect::<Vec<_>>() }),
    )
}

async fn make(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let site = backups(req)?;
    let store = req.site.models().store.clone();
    let made = blocking(move || site.make(&store, false, &Quiet)).await?;
    reply(StatusCode::CREATED, json(&made))
}

/// The backup named in the path, if there is one.
fn named(req: &RequestCtx<'_>) -> Result<(String, PathBuf), Problem> {
    let dir = backups(req)?.folder();
    let name = req.arg("name").unwrap_or_default();
    archive::named(&dir, name)
        .map(|path| (name.to_owned(), path))
        .ok_or_else(|| Problem::not_found("no such backup"))
}

async fn download(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    let (name, path) = named(req)?;
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| Problem::internal("opening the backup", &e))?;
    let len = file
        .metadata()
        .await
        .map_err(|e| Problem::internal("reading the backup", &e))?
        .len();
    let mut resp = Response::new(bulwark_http::Body::stream(file, len));
    let headers = resp.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(disposition) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        headers.insert(CONTENT_DISPOSITION, disposition);
    }
    Ok(Outcome::Response(resp))
}

async fn restore(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    let (_, path) = named(req)?;
    let confirmation: RestoreConfirmation = serde_json::from_slice(&req.body)
        .map_err(|e| Problem::bad_request(format!("bad JSON body: {e}")))?;
    let site_name = &req.site.config().name;
    if confirmation.confirm != site_name.as_str() {
        return Err(Problem::invalid(
            "confirm",
            format!("to restore, confirm with the site's name ({site_name:?})"),
        ));
    }
    let site_dir = backups(req)?.site_dir.clone();
    let store = req.site.models().store.clone();
    blocking(move || archive::restore(&site_dir, &store, &path, &[], &Quiet)).await?;
    reply(StatusCode::OK, json!({ "restored": true }))
}

async fn listing_or_new(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    match req.parts.method {
        Method::POST => make(req).await,
        _ => list(req).await,
    }
}

/// This file's endpoints, with their OpenAPI descriptions.
fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_backups", "/api/backups")
            .get(
                Access::Group(ADMINISTRATORS),
                || json!({
                    "operationId": "listBackups",
                    "summary": "The site's backups",
                    "tags": [
                        "site"
                    ],
                    "description": "Newest first. Administrators only.",
                    "responses": {
                        "200": {
                            "description": "The backups",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": [
                                            "backups"
                                        ],
                                        "properties": {
                                            "backups": {
                                                "type": "array",
                                                "items": {
                                                    "$ref": "#/components/schemas/Backup"
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(listing_or_new(req, caller)),
            )
            .post(
                Access::Group(ADMINISTRATORS),
                || json!({
                    "operationId": "makeBackup",
                    "summary": "Make a backup now",
                    "tags": [
                        "site"
                    ],
                    "description": "One archive of the database (a consistent snapshot, taken while the site serves and writes) and the site's files, kept in the site's data/backups/ (encrypted when [backup] encrypt_to says so). Administrators only.",
                    "responses": {
                        "201": {
                            "description": "Made",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/Backup"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(listing_or_new(req, caller)),
            ),
        Endpoint::new("api_backup", "/api/backups/{name}")
            .get(
                Access::Group(ADMINISTRATORS),
                || json!({
                    "operationId": "downloadBackup",
                    "summary": "Download a backup",
                    "tags": [
                        "site"
                    ],
                    "description": "Administrators only.",
                    "responses": {
                        "200": {
                            "description": "The file",
                            "content": {
                                "application/octet-stream": {
                                    "schema": {
                                        "type": "string",
                                        "format": "binary"
                                    }
                                }
                            },
                            "headers": {
                                "Content-Disposition": {
                                    "schema": {
                                        "type": "string"
                                    },
                                    "description": "attachment, with the file's name"
                                }
                            }
                        }
                    },
                    "parameters": [
                        {
                            "name": "name",
                            "in": "path",
                            "required": true,
                            "description": "The backup's file name.",
                            "schema": {
                                "type": "string",
                                "minLength": 1,
                                "maxLength": 120
                            }
                        }
                    ]
                }),
                |req, caller| Box::pin(download(req, caller)),
            ),
        Endpoint::new("api_backup_restore", "/api/backups/{name}/restore")
            .post(
                Access::Group(ADMINISTRATORS),
                || json!({
                    "operationId": "restoreBackup",
                    "summary": "Put a backup back",
                    "tags": [
                        "site"
                    ],
                    "description": "Puts the backup's files back, then replaces everything in the site's database at once and flushes every cache (on every node). `confirm` must be the site's name. An encrypted backup is restored with `bulwark restore --identity`. Administrators only.",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": [
                                        "confirm"
                                    ],
                                    "properties": {
                                        "confirm": {
                                            "type": "string"
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "responses": {
                        "200": {
                            "description": "Restored",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": [
                                            "restored"
                                        ],
                                        "properties": {
                                            "restored": {
                                                "type": "boolean"
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    },
                    "parameters": [
                        {
                            "name": "name",
                            "in": "path",
                            "required": true,
                            "description": "The backup's file name.",
                            "schema": {
                                "type": "string",
                                "minLength": 1,
                                "maxLength": 120
                            }
                        }
                    ]
                }),
                |req, caller| Box::pin(restore(req, caller)),
            ),
    ]
}

#[cfg(test)]
mod tests {
    use crate::archive::valid_name;

    #[test]
    fn backup_names_cannot_leave_their_folder() {
        assert!(valid_name("default-20261124-101500.tar.gz"));
        assert!(valid_name("default-20261124-101500-2-auto.tar.gz.age"));
        for bad in [
            "",
            ".tar.gz",
            "../site.db",
            ".hidden.tar.gz",
            "a/b.tar.gz",
            "a..tar.gz",
            "x.sqlite",
            "a\\b.tar.gz",
            "a b.tar.gz",
        ] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }
}
