//! `file`: files from a folder of the site (uploads), streamed, with ranges.

use std::time::SystemTime;

use futures_util::future::BoxFuture;
use http::StatusCode;

use bulwark_site::resolve_inside;

use crate::controllers::{Controller, content_type_for};
use crate::representation::{Content, Outcome, Representation};
use crate::request::RequestCtx;

/// Serves files from a folder of the site (uploads), streamed, with ranges.
pub struct FileController {
    pub root: String,
}

impl Controller for FileController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(rel) = req
                .args
                .iter()
                .find(|(k, _)| k == "path")
                .map(|(_, v)| v.clone())
            else {
                return Outcome::NotFound;
            };
            let Some(folder) = req.site.site.folder(&self.root) else {
                return Outcome::NotFound;
            };
            let found = tokio::task::spawn_blocking(move || {
                let path = resolve_inside(&folder, &rel)?;
                let meta = path.metadata().ok()?;
                Some((path, meta))
            })
            .await
            .ok()
            .flatten();
            let Some((path, meta)) = found else {
                return Outcome::NotFound;
            };
            Outcome::Found(Representation {
                status: StatusCode::OK,
                content_type: content_type_for(&path.to_string_lossy()),
                last_modified: Some(meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)),
                cache_control: "public, max-age=3600",
                per_language: false,
                stale: false,
                content: Content::File {
                    path,
                    len: meta.len(),
                },
            })
        })
    }
}
