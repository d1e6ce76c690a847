//! `POST /media/upload`: the endpoint, the multipart body streamed to disk,
//! the type from the bytes, the quota admitted in one transaction, and the
//! media resource made from it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_util::StreamExt;
use http::StatusCode;
use http::header::CONTENT_TYPE;
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use bulwark_store::{NewResource, Props, StoreError, Visibility};

use bulwark_web::{Access, Api, Caller, Endpoint, Outcome, Problem, RequestCtx, json_response};

use crate::clean::*;
use crate::*;

/// How long an upload may pause between two pieces before it is given up.
pub(crate) const IDLE: Duration = Duration::from_secs(30);

/// How many first bytes the type is read from.
pub(crate) const SNIFF_BYTES: usize = 8192;

/// The module's endpoints: `POST /media/upload`.
pub(crate) fn api() -> &'static Api {
    static API: std::sync::LazyLock<Api> = std::sync::LazyLock::new(|| {
        Api::new().endpoint(
            Endpoint::new("media_upload", "/media/upload")
                .post(
                    Access::Known,
                    || json!({
                        "operationId": "uploadMedia",
                        "summary": "Upload a file",
                        "description": "A multipart form with the file in the field `file` (and \
                            optionally `title`): a new media resource, its type found from its bytes. \
                            The body is read as it arrives, within the caller's size limit and the \
                            site's quota. A session sends its CSRF token in the X-CSRF-Token header.",
                        "tags": ["media"],
                        "requestBody": {
                            "required": true,
                            "content": {"multipart/form-data": {"schema": {
                                "type": "object",
                                "required": ["file"],
                                "properties": {
                                    "file": {"type": "string", "format": "binary"},
                                    // Multipart fields are text whatever they hold: any
                                    // text is a title.
                                    "title": {"description": "the title (text)"},
                                },
                            }}},
                        },
                        "responses": {
                            "201": {
                                "description": "The new media resource",
                                "content": {"application/json": {"schema": {"type": "object"}}},
                            },
                        },
                    }),
                    |req, caller| Box::pin(upload_endpoint(req, caller)),
                )
                .streaming_body(),
        )
    });
    &API
}

pub(crate) async fn upload_endpoint(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
) -> Result<Outcome, Problem> {
    let media = req
        .site
        .state::<Arc<Media>>()
        .ok_or_else(|| Problem::internal("the media module", &"it is not set up on this site"))?;
    let made = upload(req, caller, media).await?;
    Ok(Outcome::Response(json_response(StatusCode::CREATED, &made)))
}

/// Why an upload was not taken, for the person who sent it.
pub(crate) type Refused = Problem;

/// A refusal with its status (each status is one kind of problem here).
pub(crate) fn refused(status: StatusCode, why: impl Into<String>) -> Refused {
    Problem::with_status_of(status, why)
}

pub(crate) fn category_of(mime: &str) -> &'static str {
    match mime.split('/').next() {
        Some("image") => "image",
        Some("video") => "video",
        Some("audio") => "audio",
        _ => "document",
    }
}

/// A file being received: removed again unless [`Incoming::keep`] moved it.
pub(crate) struct Incoming {
    pub(crate) path: PathBuf,
    pub(crate) kept: bool,
}

impl Drop for Incoming {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// What the `file` field held, on disk.
pub(crate) struct Received {
    pub(crate) incoming: Incoming,
    pub(crate) name: String,
    pub(crate) size: u64,
    pub(crate) sha256: String,
    pub(crate) head: Vec<u8>,
}

impl Received {
    /// Puts the received file where it is kept (its content's place); the
    /// caller holds `Originals::admitting`, so no sweep takes it meanwhile.
    pub(crate) async fn put_at(&mut self, kept: &Path) -> Result<(), Refused> {
        if let Some(dir) = kept.parent() {
            tokio::fs::create_dir_all(dir).await.map_err(disk)?;
        }
        tokio::fs::rename(&self.incoming.path, kept)
            .await
            .map_err(disk)?;
        self.incoming.kept = true;
        Ok(())
    }
}

pub(crate) async fn receive(
    field: &mut multer::Field<'static>,
    tmp_dir: &Path,
    max_bytes: u64,
) -> Result<Received, Refused> {
    let name = field
        .file_name()
        .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n).trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "upload".to_owned());
    receive_stream(
        name,
        field.map(|c| c.map_err(multipart_error)),
        tmp_dir,
        max_bytes,
    )
    .await
}

/// Takes a file from `chunks` into the temporary folder, counting its size
/// (held to `max_bytes`), hashing it and keeping its first bytes to sniff:
/// an upload's field, a file an import reads or fetches.
pub(crate) async fn receive_stream<S>(
    name: String,
    mut chunks: S,
    tmp_dir: &Path,
    max_bytes: u64,
) -> Result<Received, Refused>
where
    S: futures_util::Stream<Item = Result<Bytes, Refused>> + Unpin,
{
    tokio::fs::create_dir_all(tmp_dir).await.map_err(disk)?;
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let incoming = Incoming {
        path: tmp_dir.join(format!("{stamp:x}-{:x}", rand_suffix())),
        kept: false,
    };
    let mut out = tokio::fs::File::create(&incoming.path)
        .await
        .map_err(disk)?;
    let (mut size, mut hasher, mut head) = (0u64, Sha256::new(), Vec::new());
    loop {
        let chunk = match tokio::time::timeout(IDLE, chunks.next()).await {
            Err(_) => {
                return Err(refused(
                    StatusCode::REQUEST_TIMEOUT,
                    "the upload stopped arriving; send it again",
                ));
            }
            Ok(Some(Err(refusal))) => return Err(refusal),
            Ok(None) => break,
            Ok(Some(Ok(chunk))) => chunk,
        };
        size += chunk.len() as u64;
        if size > max_bytes {
            return Err(too_large(max_bytes));
        }
        if head.len() < SNIFF_BYTES {
            let take = (SNIFF_BYTES - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
        }
        hasher.update(&chunk);
        out.write_all(&chunk).await.map_err(disk)?;
    }
    out.flush().await.map_err(disk)?;
    out.sync_all().await.map_err(disk)?;
    Ok(Received {
        incoming,
        name,
        size,
        sha256: hex::encode(hasher.finalize()),
        head,
    })
}

/// A random number for a temporary file's name (std's hasher keys are random).
pub(crate) fn rand_suffix() -> u32 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::thread::current().id()) as u32
}

pub(crate) fn too_large(max_bytes: u64) -> Refused {
    refused(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the file is larger than this site takes ({max_bytes} bytes)"),
    )
}

pub(crate) fn over_quota(settings: &Settings) -> Refused {
    refused(
        StatusCode::INSUFFICIENT_STORAGE,
        format!(
            "the site's media would take more than its quota ({} bytes): delete some first",
            settings.quota_bytes.unwrap_or_default()
        ),
    )
}

/// Types (`image/png`...) as an editor reads them: "pictures (JPEG, PNG),
/// PDF documents and audio (MP3)".
fn said_as_people_say_it(types: &[String]) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for mime in types {
        let (kind, sub) = mime.split_once('/').unwrap_or((mime.as_str(), ""));
        let (group, name) = match (kind, sub) {
            ("image", sub) => ("pictures", format_name(sub)),
            ("application", "pdf") => ("PDF documents", None),
            ("audio", sub) => ("audio", format_name(sub)),
            ("video", sub) => ("video", format_name(sub)),
            _ => (mime.as_str(), None),
        };
        match groups.iter_mut().find(|(g, _)| g == group) {
            Some((_, names)) => names.extend(name),
            None => groups.push((group.to_owned(), name.into_iter().collect())),
        }
    }
    let said: Vec<String> = groups
        .into_iter()
        .map(|(group, names)| match names.is_empty() {
            true => group,
            false => format!("{group} ({})", names.join(", ")),
        })
        .collect();
    match said.as_slice() {
        [] => "nothing".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A format's usual name from its MIME subtype.
fn format_name(subtype: &str) -> Option<&'static str> {
    Some(match subtype {
        "jpeg" => "JPEG",
        "png" => "PNG",
        "gif" => "GIF",
        "webp" => "WebP",
        "avif" => "AVIF",
        "heic" | "heif" => "HEIC",
        "tiff" => "TIFF",
        "svg+xml" => "SVG",
        "mpeg" => "MP3",
        "mp4" => "MP4",
        "ogg" => "Ogg",
        "x-flac" | "flac" => "FLAC",
        "x-wav" | "wav" => "WAV",
        "webm" => "WebM",
        "quicktime" => "QuickTime",
        "x-m4a" | "m4a" => "M4A",
        _ => return None,
    })
}

pub(crate) fn store_refused(e: StoreError) -> Refused {
    Problem::from(e)
}

pub(crate) fn disk(e: std::io::Error) -> Refused {
    tracing::error!("storing an upload: {e}");
    if e.raw_os_error() == Some(28) {
        return refused(
            StatusCode::INSUFFICIENT_STORAGE,
            "the server's disk is full: nothing was stored",
        );
    }
    refused(StatusCode::INTERNAL_SERVER_ERROR, "storing the file failed")
}

pub(crate) fn multipart_error(e: multer::Error) -> Refused {
    match e {
        multer::Error::StreamReadFailed(_) => refused(
            StatusCode::BAD_REQUEST,
            "the upload broke off before its end; send it again",
        ),
        e => refused(StatusCode::BAD_REQUEST, format!("not a valid upload: {e}")),
    }
}

/// Takes an upload from `caller`: a logged-on user within their limits, or
/// the site's token (which may do everything, within the site's limits).
pub(crate) async fn upload(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
    media: &Media,
) -> Result<serde_json::Value, Refused> {
    let settings = &media.settings;
    if let Caller::Principal(who) = caller
        && who.is_anonymous()
    {
        return Err(refused(StatusCode::UNAUTHORIZED, "log on to upload"));
    }
    let may_upload = |category: &str| caller.may_insert(req.site, category, Visibility::Public);
    if !CATEGORIES.iter().any(|(c, _)| may_upload(c)) {
        return Err(refused(StatusCode::FORBIDDEN, "you may not upload media"));
    }
    let (max_bytes, types) = match caller {
        Caller::Principal(who) => settings.limits_for(who),
        Caller::SiteToken => (settings.max_bytes, settings.types.clone()),
    };
    let room = match settings.quota_bytes {
        Some(quota) => {
            let used = media
                .originals
                .stored_bytes()
                .await
                .map_err(store_refused)?;
            Some(quota.saturating_sub(used))
        }
        None => None,
    };
    if room == Some(0) {
        return Err(over_quota(settings));
    }
    let boundary = req
        .parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| multer::parse_boundary(v).ok())
        .ok_or_else(|| {
            refused(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the file as multipart/form-data, in a field called file",
            )
        })?;
    let declared = req
        .parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    // Room for the form's own lines around the file.
    if declared.is_some_and(|n| n > max_bytes + 64 * 1024) {
        return Err(too_large(max_bytes));
    }
    if declared
        .zip(room)
        .is_some_and(|(n, room)| n > room + 64 * 1024)
    {
        return Err(over_quota(settings));
    }
    let stream = req
        .take_body_chunks()
        .ok_or_else(|| refused(StatusCode::BAD_REQUEST, "no body"))?;
    let mut multipart = multer::Multipart::new(stream, boundary);
    let originals = &media.originals;
    let mut received = None;
    while let Some(mut field) = match tokio::time::timeout(IDLE, multipart.next_field()).await {
        Err(_) => {
            return Err(refused(
                StatusCode::REQUEST_TIMEOUT,
                "the upload stopped arriving; send it again",
            ));
        }
        Ok(next) => next.map_err(multipart_error)?,
    } {
        if field.name() == Some("file") && received.is_none() {
            received = Some(receive(&mut field, &originals.dir.join("tmp"), max_bytes).await?);
        }
    }
    let Some(received) = received else {
        return Err(refused(
            StatusCode::BAD_REQUEST,
            "no file: send it in a field called file",
        ));
    };
    if received.size == 0 {
        return Err(refused(StatusCode::BAD_REQUEST, "the file is empty"));
    }
    let by_editor = match caller {
        Caller::SiteToken => true,
        Caller::Principal(who) => who.in_group(bulwark_acl::EDITORS),
    };
    let keeping = Keeping {
        types: &types,
        may_upload: &may_upload,
        by_editor,
        creator: caller.user(),
        published: true,
        imported: None,
    };
    keep(&req.site.models().store, media, received, &keeping)
        .await
        .map(|(_, made)| made)
}

/// How a received file is kept: the types taken, who may upload what, and
/// what its resource says of who sent it.
pub(crate) struct Keeping<'a> {
    pub(crate) types: &'a [String],
    pub(crate) may_upload: &'a (dyn Fn(&str) -> bool + Sync),
    /// Sent by an editor (or the site's token): a PDF of theirs may be shown inline.
    pub(crate) by_editor: bool,
    pub(crate) creator: Option<bulwark_store::ResourceId>,
    /// Unpublished: only those who may see drafts see it (a visitor's file).
    pub(crate) published: bool,
    /// What an import knows of it: a unique name, properties over the ones
    /// taken from the file (its title, alt text), when it was made.
    pub(crate) imported: Option<&'a Imported>,
}

/// What an import says of a file it brings ([`crate::MediaImport`]).
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub name: Option<String>,
    pub props: Props,
    pub created: Option<chrono::DateTime<chrono::Utc>>,
}

/// Checks a received file (its type from its bytes, a picture's pixels and
/// metadata), admits it against the quota, keeps it by its content and makes
/// its media resource: the resource's id, and what an upload answers.
pub(crate) async fn keep(
    store: &bulwark_store::Store,
    media: &Media,
    mut received: Received,
    keeping: &Keeping<'_>,
) -> Result<(bulwark_store::ResourceId, serde_json::Value), Refused> {
    let settings = &media.settings;
    let originals = &media.originals;
    let (types, may_upload) = (keeping.types, keeping.may_upload);
    let mime = infer::get(&received.head).map(|t| t.mime_type().to_owned());
    let Some(mime) = mime.filter(|m| types.iter().any(|t| t == m)) else {
        let kind = infer::get(&received.head).map_or("of no kind known here".to_owned(), |t| {
            t.extension().to_uppercase()
        });
        return Err(refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "{} (its content is {kind}) cannot be uploaded here: only {} can.",
                received.name,
                said_as_people_say_it(types)
            ),
        ));
    };
    let category = category_of(&mime);
    if !(may_upload)(category) {
        return Err(refused(
            StatusCode::FORBIDDEN,
            format!("you may not upload a {category}"),
        ));
    }
    let mut metadata_removed = false;
    let dimensions = if category == "image" {
        let path = received.incoming.path.clone();
        let max_pixels = settings.max_pixels;
        // The size from the header first: a picture over the limit is
        // refused before anything reads its pixels or its metadata.
        let cleaned = tokio::task::spawn_blocking(move || match header(&path) {
            Some((_, (w, h), _)) if u64::from(w) * u64::from(h) > max_pixels => Err((w, h)),
            _ => Ok(clean_image(&path)),
        })
        .await
        .unwrap_or(Ok(None));
        let cleaned = match cleaned {
            Ok(cleaned) => cleaned,
            Err((w, h)) => {
                return Err(refused(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!(
                        "{} is {w} x {h} pixels ({:.1} megapixels); this site takes pictures \
                         of up to {:.1} megapixels: make it smaller and send it again",
                        received.name,
                        (u64::from(w) * u64::from(h)) as f64 / 1e6,
                        max_pixels as f64 / 1e6
                    ),
                ));
            }
        };
        if let Some(cleaned) = &cleaned
            && let Some((size, sha256)) = &cleaned.rewritten
        {
            // What is kept is the cleaned file: its own size and hash.
            received.size = *size;
            received.sha256 = sha256.clone();
            metadata_removed = true;
        }
        // As people see it: turned by its orientation.
        cleaned.map(|c| c.upright_dimensions())
    } else {
        None
    };
    if category == "image" && dimensions.is_none() {
        return Err(refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "{} looks like {mime} but cannot be read as an image",
                received.name
            ),
        ));
    }
    // Admitted against the quota, on every node at once (a reservation that
    // the resource takes over, or that goes back if anything below fails),
    // and put in its place while this node does not sweep.
    let admitting = originals.admitting.lock().await;
    let reservation = originals
        .admit(&received.sha256, received.size, settings.quota_bytes)
        .await
        .map_err(store_refused)?
        .ok_or_else(|| over_quota(settings))?;
    // Kept by content: a second upload of the same bytes shares the file.
    let kept = originals.path(&received.sha256);
    let shared = tokio::fs::try_exists(&kept).await.unwrap_or(false);
    if shared {
        drop(received.incoming);
        received.incoming = Incoming {
            path: PathBuf::new(),
            kept: true,
        };
    } else {
        received.put_at(&kept).await?;
    }
    drop(admitting);
    if let Err(why) = originals.keep_in_database(&kept, &received.sha256).await {
        tracing::error!("keeping an upload in the database: {why}");
        return Err(refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "the file could not be kept in the database; send it again in a moment",
        ));
    }
    let mut props = Props::new()
        .with("title", received.name.as_str())
        .with("original_name", received.name.as_str())
        .with("mime", mime.as_str())
        .with("size", received.size)
        .with("sha256", received.sha256.as_str());
    if let Some((width, height)) = dimensions {
        props = props.with("width", width).with("height", height);
    }
    if metadata_removed {
        props = props.with("metadata_removed", true);
    }
    if mime == PDF {
        props = props.with(UPLOADED_BY_EDITOR, keeping.by_editor);
    }
    if let Some(imported) = keeping.imported {
        for (key, value) in &imported.props.0 {
            props.0.insert(key.clone(), value.clone());
        }
    }
    let mut new = NewResource::new(category, props).published(keeping.published);
    if let Some(imported) = keeping.imported {
        new.name = imported.name.clone();
        new.created = imported.created;
    }
    if let Some(user) = keeping.creator {
        new = new.created_by(user);
    }
    let made = store
        .run(move |s| s.create_resource(new))
        .await
        .map_err(store_refused)?;
    if let Err(e) = reservation.confirm(made).await {
        // A resource whose file is not recorded could lose its file (a sweep
        // takes what nothing records), so it does not stand.
        tracing::error!("recording the file of media {}: {e}", made.0);
        let undone = store.run(move |s| s.delete_resource(made, None)).await;
        if let Err(e) = undone {
            tracing::error!("taking back media {} after that: {e}", made.0);
        }
        return Err(store_refused(e));
    }
    Ok((
        made,
        json!({
            "id": made.0,
            "url": format!("/media/file/{}", made.0),
            "category": category,
            "mime": mime,
            "size": received.size,
            "sha256": received.sha256,
            "width": dimensions.map(|d| d.0),
            "height": dimensions.map(|d| d.1),
        }),
    ))
}

/// A file a visitor sends with a form (the forms module's file fields),
/// taken as an upload is: within the size and types the site allows
/// `who` (`[media]`, and `[media.groups.*]` for their groups), its type from
/// its bytes, a picture within the pixel limit and cleaned of its metadata,
/// within the quota. It becomes a media resource that is not published, so
/// only those who may see drafts (editors) see it.
pub async fn accept_form_file(
    site: &bulwark_web::SiteRuntime,
    field: &mut multer::Field<'static>,
    who: &bulwark_acl::Principal,
) -> Result<bulwark_store::ResourceId, Problem> {
    let media = site
        .state::<std::sync::Arc<Media>>()
        .cloned()
        .ok_or_else(|| Problem::internal("the media module", &"it is not set up on this site"))?;
    let (max_bytes, types) = media.settings.limits_for(who);
    let received = receive(field, &media.originals.dir.join("tmp"), max_bytes).await?;
    if received.size == 0 {
        return Err(refused(StatusCode::BAD_REQUEST, "the file is empty"));
    }
    // The form's editor chose to take files: any category of media will do.
    let keeping = Keeping {
        types: &types,
        may_upload: &|_| true,
        by_editor: false,
        creator: who.user_id(),
        published: false,
        imported: None,
    };
    keep(&site.models().store, &media, received, &keeping)
        .await
        .map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_types_a_site_takes_are_said_as_people_say_them() {
        let types: Vec<String> = crate::settings::DEFAULT_TYPES
            .iter()
            .map(|t| t.to_string())
            .collect();
        assert_eq!(
            said_as_people_say_it(&types),
            "pictures (JPEG, PNG, GIF, WebP), PDF documents, video (MP4, WebM) and audio (MP3, Ogg, FLAC, WAV)"
        );
        assert_eq!(
            said_as_people_say_it(&["image/png".to_string()]),
            "pictures (PNG)"
        );
        assert_eq!(
            said_as_people_say_it(&["text/csv".to_string(), "application/pdf".to_string()]),
            "text/csv and PDF documents"
        );
    }
}
