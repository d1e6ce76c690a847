//! `/api/backups[/{name}[/restore]]`: snapshots of the site's database, for
//! administrators (and the site's token): a backup holds everything, password
//! hashes included.
//!
//! - `GET /api/backups`: the backups kept in the site's `data/backups/`, newest first;
//! - `POST /api/backups`: make one now (a consistent snapshot while the site goes
//!   on serving and writing: `VACUUM INTO` on SQLite, `pg_dump` on PostgreSQL);
//! - `GET /api/backups/{name}`: download it;
//! - `POST /api/backups/{name}/restore` with `{"confirm": "<the site's name>"}`:
//!   put it back, replacing everything in the database at once, then flush the
//!   caches. SQLite sites only: a PostgreSQL site is restored into an empty
//!   schema with its nodes stopped. The confirmation is the site's name, so
//!   a stray request (or a fuzzer) cannot restore by accident.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, Method, Response, StatusCode};
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::ADMINISTRATORS;

use super::input::json_body;
use super::reply;
use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RestoreConfirmation {
    confirm: String,
}

fn folder(req: &RequestCtx<'_>) -> PathBuf {
    req.site.site().dir.join("data").join("backups")
}

/// A backup's file name as this API makes them: letters, digits, `-`, `_`
/// and one `.` before the extension; nothing that could leave the folder.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name.matches('.').count() == 1
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The backup named in the path, if there is one.
fn named(req: &RequestCtx<'_>) -> Result<(String, PathBuf), Problem> {
    let missing = || Problem::not_found("no such backup");
    let name = req
        .arg("name")
        .filter(|n| valid_name(n))
        .ok_or_else(missing)?;
    let path = folder(req).join(name);
    if path.is_file() {
        Ok((name.to_owned(), path))
    } else {
        Err(missing())
    }
}

fn listing(dir: &Path) -> std::io::Result<Vec<serde_json::Value>> {
    let mut found: Vec<(SystemTime, serde_json::Value)> = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = entry.metadata()?;
        if !meta.is_file() || !valid_name(&name) {
            continue;
        }
        let made = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        found.push((
            made,
            json!({
                "name": name,
                "size": meta.len(),
                "created": DateTime::<Utc>::from(made).to_rfc3339()
            }),
        ));
    }
    found.sort_by_key(|b| std::cmp::Reverse(b.0));
    Ok(found.into_iter().map(|(_, v)| v).collect())
}

fn io_failure(what: &str, e: std::io::Error) -> Problem {
    Problem::internal(what, &e)
}

async fn list(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let dir = folder(req);
    match tokio::task::spawn_blocking(move || listing(&dir)).await {
        Ok(Ok(backups)) => reply(StatusCode::OK, json!({ "backups": backups })),
        Ok(Err(e)) => Err(io_failure("listing the backups", e)),
        Err(e) => Err(io_failure("listing the backups", std::io::Error::other(e))),
    }
}

/// A new backup's name: the time, and a number for a second one within the
/// same second.
fn new_backup_path(dir: &Path, extension: &str) -> std::io::Result<(String, PathBuf)> {
    std::fs::create_dir_all(dir)?;
    let stamp = Utc::now().format("%Y%m%d-%H%M%S");
    (0..100)
        .map(|n| match n {
            0 => format!("backup-{stamp}.{extension}"),
            n => format!("backup-{stamp}-{n}.{extension}"),
        })
        .find(|name| !dir.join(name).exists())
        .map(|name| {
            let path = dir.join(&name);
            (name, path)
        })
        .ok_or_else(|| std::io::ErrorKind::AlreadyExists.into())
}

async fn make(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let dir = folder(req);
    let extension = if req.site.models().store.backend_name() == "sqlite" {
        "sqlite"
    } else {
        "sql"
    };
    let (name, path) =
        match tokio::task::spawn_blocking(move || new_backup_path(&dir, extension)).await {
            Ok(Ok(named)) => named,
            Ok(Err(e)) => return Err(io_failure("making data/backups", e)),
            Err(e) => return Err(io_failure("making data/backups", std::io::Error::other(e))),
        };
    let dest = path.clone();
    if let Err(e) = req.site.models().store.run(move |s| s.backup(&dest)).await {
        return Err(e.into());
    }
    let size = tokio::fs::metadata(&path)
        .await
        .map(|m| m.len())
        .unwrap_or(0);
    reply(
        StatusCode::CREATED,
        json!({"name": name, "size": size, "created": Utc::now().to_rfc3339()}),
    )
}

async fn download(path: PathBuf, name: &str) -> Result<Outcome, Problem> {
    let file = match tokio::fs::File::open(&path).await {
        Ok(f) => f,
        Err(e) => return Err(io_failure("opening the backup", e)),
    };
    let len = match file.metadata().await {
        Ok(m) => m.len(),
        Err(e) => return Err(io_failure("reading the backup", e)),
    };
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

async fn restore(req: &RequestCtx<'_>, path: PathBuf) -> Result<Outcome, Problem> {
    let confirmation: RestoreConfirmation = json_body(req)?;
    let site_name = &req.site.config().name;
    if confirmation.confirm != site_name.as_str() {
        return Err(Problem::invalid(
            "confirm",
            format!("to restore, confirm with the site's name ({site_name:?})"),
        ));
    }
    let restored = req
        .site
        .models()
        .store
        .run(move |s| s.restore_in_place(&path))
        .await;
    match restored {
        Ok(()) => {
            // Everything may have changed: nothing cached may survive.
            req.site.models().cache.flush_all();
            reply(StatusCode::OK, json!({ "restored": true }))
        }
        Err(e) => Err(e.into()),
    }
}

/// `/api/backups`.
pub(super) async fn backups(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    match req.parts.method {
        Method::POST => make(req).await,
        _ => list(req).await,
    }
}

/// `/api/backups/{name}`: download one.
pub(super) async fn backup(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    let (name, path) = named(req)?;
    download(path, &name).await
}

/// `/api/backups/{name}/restore`.
pub(super) async fn restore_backup(
    req: &RequestCtx<'_>,
    _: Caller<'_>,
) -> Result<Outcome, Problem> {
    let (_, path) = named(req)?;
    restore(req, path).await
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
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
                |req, caller| Box::pin(backups(req, caller)),
            )
            .post(
                Access::Group(ADMINISTRATORS),
                || json!({
                    "operationId": "makeBackup",
                    "summary": "Make a backup now",
                    "tags": [
                        "site"
                    ],
                    "description": "A consistent snapshot of the database, kept in the site's data/backups/. Administrators only.",
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
                |req, caller| Box::pin(backups(req, caller)),
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
                                "maxLength": 100
                            }
                        }
                    ]
                }),
                |req, caller| Box::pin(backup(req, caller)),
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
                    "description": "Replaces everything in the site's database at once and flushes the caches; SQLite sites only. `confirm` must be the site's name. Administrators only.",
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
                                "maxLength": 100
                            }
                        }
                    ]
                }),
                |req, caller| Box::pin(restore_backup(req, caller)),
            ),
    ]
}

#[cfg(test)]
mod tests {
    use super::valid_name;

    #[test]
    fn backup_names_cannot_leave_their_folder() {
        assert!(valid_name("backup-20261124-101500.sqlite"));
        assert!(valid_name("backup-20261124-101500-2.sql"));
        for bad in [
            "",
            "../site.db",
            ".hidden",
            "a/b.sql",
            "a..sql",
            "x.tar.gz",
            "a\\b.sql",
            "a b.sql",
        ] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }
}
