//! `file`: files from a folder of the site (uploads), hot ones from memory
//! (`file_cache`), large ones streamed; with ranges and validators. Types a
//! browser would run (HTML, SVG, XML) are sent as downloads, so an uploaded
//! page can never run as the site's own.

use futures_util::future::BoxFuture;
use http::StatusCode;

use bulwark_site::resolve_inside;

use crate::content_type::content_type_for;
use crate::controllers::Controller;
use crate::file_cache::{Found, etag_for};
use crate::representation::{Content, Outcome, Representation};
use crate::request::RequestCtx;

/// Serves files from a folder of the site (uploads).
pub struct FileController {
    pub root: String,
}

impl Controller for FileController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(rel) = req.arg("path") else {
                return Outcome::NotFound;
            };
            let key = format!("{}/{rel}", self.root);
            let (site, root, rel) = (req.site.site().clone(), self.root.clone(), rel.to_owned());
            let found = req
                .site
                .files()
                .get(&key, move || resolve_inside(&site.folder(&root)?, &rel))
                .await;
            let name = key.rsplit('/').next().unwrap_or_default();
            let (content, modified, etag, content_type) = match found {
                Found::Held(held) => (
                    held.content(),
                    held.modified,
                    held.etag.clone(),
                    held.content_type.clone(),
                ),
                Found::Disk {
                    path,
                    modified,
                    len,
                } => (
                    Content::File { path, len },
                    modified,
                    etag_for(modified, len),
                    content_type_for(name),
                ),
                Found::Missing => return Outcome::NotFound,
            };
            Outcome::Found(Representation {
                status: StatusCode::OK,
                content_type,
                last_modified: Some(modified),
                cache_control: "public, max-age=3600",
                per_language: false,
                stale: false,
                etag: Some(etag),
                attachment: runs_in_a_browser(name),
                surrogate_keys: None,
                content,
            })
        })
    }
}

/// Whether a browser would run a file of this name as a page of the site
/// (scripts in HTML, SVG, XML with a stylesheet).
pub fn runs_in_a_browser(name: &str) -> bool {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    matches!(
        ext.as_str(),
        "html"
            | "htm"
            | "xhtml"
            | "shtml"
            | "svg"
            | "svgz"
            | "xml"
            | "xsl"
            | "xslt"
            | "mht"
            | "mhtml"
    )
}
