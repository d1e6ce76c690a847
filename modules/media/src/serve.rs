//! Serving media files (`GET /media/file/{id}`), from memory when hot, to
//! whoever may see their resource; the `media` controller kind.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::StatusCode;
use serde::Deserialize;

use bulwark_acl::AccessPolicy;
use bulwark_store::ResourceId;
use bulwark_web::file_cache::Found;

use crate::originals::{Originals, is_hash};
use crate::preview::Previews;
use bulwark_web::{
    Content, Controller, ModuleError, Outcome, Problem, Representation, RequestCtx, read_settings,
};

use crate::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Action {
    File,
    Preview,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Options {
    pub(crate) action: Action,
}

/// What the module keeps per site, for its controller and its upload
/// endpoint.
pub(crate) struct Media {
    pub(crate) settings: Arc<Settings>,
    pub(crate) previews: Arc<Previews>,
    pub(crate) originals: Arc<Originals>,
}

/// `controller = "media"`: a media resource's file or a preview of it.
pub struct MediaController {
    action: Action,
    media: Arc<Media>,
}

impl MediaController {
    pub(crate) fn from_rule(options: &toml::Table, media: Arc<Media>) -> Result<Self, ModuleError> {
        let options: Options = read_settings(options)?;
        Ok(MediaController {
            action: options.action,
            media,
        })
    }
}

impl Controller for MediaController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let media = &self.media;
            match self.action {
                Action::File => file(req, media).await,
                Action::Preview => preview::serve(req, &media.previews, &media.originals).await,
            }
        })
    }
}

/// The media resource named by the path's `id`, if the caller may see it
/// and it has a file; `Err` is the answer (404 for anything else).
pub(crate) async fn visible_media(
    req: &RequestCtx<'_>,
) -> Result<bulwark_store::Resource, Outcome> {
    let id = req
        .arg("id")
        .and_then(|a| a.parse::<i64>().ok())
        .filter(|id| *id > 0)
        .ok_or(Outcome::NotFound)?;
    let found = req
        .site
        .models()
        .store
        .run(move |s| s.resource(ResourceId(id)))
        .await;
    match found {
        Ok(Some(r))
            if req.site.policy().may_see(req.principal(), &r)
                && r.props.str("sha256").is_some_and(is_hash) =>
        {
            Ok(r)
        }
        Ok(_) => Err(Outcome::NotFound),
        Err(e) => Err(bulwark_web::Problem::from(e).into()),
    }
}

/// The PDF type, which `[media] pdf_inline` is about.
pub(crate) const PDF: &str = "application/pdf";

/// The property an upload gets when an editor (or above, or the site's
/// token) sent it: their PDFs may be shown in the browser.
pub(crate) const UPLOADED_BY_EDITOR: &str = "uploaded_by_editor";

/// `GET /media/file/{id}`: the file, to whoever may see its resource.
pub(crate) async fn file(req: &RequestCtx<'_>, media: &Media) -> Outcome {
    let originals = &media.originals;
    let resource = match visible_media(req).await {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    let (Some(sha256), Some(mime)) = (resource.props.str("sha256"), resource.props.str("mime"))
    else {
        return Outcome::NotFound;
    };
    let Ok(content_type) = http::HeaderValue::from_str(mime) else {
        return Outcome::NotFound;
    };
    // A type a browser would run (a site that takes SVG) is only downloaded;
    // a PDF (whose viewer may run its scripts on the site's origin) is shown
    // in the browser only as `[media] pdf_inline` says.
    let attachment = ["html", "svg", "xml"].iter().any(|t| mime.contains(t))
        || (mime == PDF
            && !media.settings.pdf_inline.shows(
                resource.props.0.get(UPLOADED_BY_EDITOR) == Some(&serde_json::Value::Bool(true)),
            ));
    // Private: what a resource may show can change with the rules.
    let found = held(
        req,
        originals.path(sha256),
        sha256,
        content_type.clone(),
        "private, max-age=60",
        attachment,
    )
    .await;
    if !matches!(found, Outcome::NotFound) {
        return found;
    }
    // Not on this node's disk: from the database, where files are kept too.
    match originals.local(sha256).await {
        Ok(path) => {
            held(
                req,
                path,
                sha256,
                content_type,
                "private, max-age=60",
                attachment,
            )
            .await
        }
        Err(missing) => missing_file(resource.id, missing),
    }
}

/// The answer for a file this node cannot have: 404 when it is gone, 503
/// when the database could not give it now.
pub(crate) fn missing_file(id: ResourceId, missing: originals::Missing) -> Outcome {
    match missing {
        originals::Missing::Gone => Outcome::NotFound,
        originals::Missing::Failed(why) => {
            tracing::warn!("the file of media {}: {why}", id.0);
            Problem::busy("the file cannot be read now; try again in a moment", 1).into()
        }
    }
}

/// A file of this module's (named by content: it never changes), from
/// memory when hot.
pub(crate) async fn held(
    req: &RequestCtx<'_>,
    path: PathBuf,
    sha256: &str,
    content_type: http::HeaderValue,
    cache_control: &'static str,
    attachment: bool,
) -> Outcome {
    let key = format!("media/{}", path.display());
    let (content, modified, len) = match req.site.files().get(&key, move || Some(path)).await {
        Found::Held(held) => (held.content(), held.modified, held.len),
        Found::Disk {
            path,
            modified,
            len,
        } => (Content::File { path, len }, modified, len),
        Found::Missing => return Outcome::NotFound,
    };
    let etag = http::HeaderValue::from_str(&format!("\"{}-{len:x}\"", &sha256[..16])).ok();
    Outcome::Found(Representation {
        status: StatusCode::OK,
        content_type,
        last_modified: Some(modified),
        cache_control,
        per_language: false,
        stale: false,
        etag,
        attachment,
        surrogate_keys: None,
        content,
    })
}
