//! The media module (`media`): uploads, and the files behind media resources
//! (docs/media.md).
//!
//! `POST /media/upload` takes a `multipart/form-data` body with a `file`
//! field, streamed to disk as it arrives (never whole in memory) while its
//! SHA-256 is computed and its size held to `[media] max_bytes`. What the file
//! is comes from its bytes, never its name or the browser's word: a PNG named
//! `cat.jpg` is a PNG, and an HTML page is refused whatever it is called.
//! Files are kept by content hash in the site's `data/media/files/`, so two
//! uploads of one file share it. Each upload makes a media resource (category
//! `image`, `document`, `video` or `audio`, all under `media`) with its
//! metadata: `mime`, `size`, `sha256`, `original_name`, and `width` and
//! `height` for images. The access rules decide who may upload (the insert
//! right on the category) and who may fetch the file (`GET
//! /media/file/{id}`: whoever may see the resource).
//!
//! An image with EXIF metadata is turned upright by its orientation and kept
//! without any metadata, so a phone's photo does not give away where it was
//! taken (`metadata_removed: true`).
//!
//! Deleting a media resource removes its file when no other resource uses it
//! (the `media_file` table knows which resource uses which file), on every
//! node.
//!
//! A site may hold its media to a quota (`[media] quota_bytes`): an upload
//! is admitted in one transaction that counts what is stored and records the
//! file under a reservation, one admission at a time on every node, so
//! uploads arriving together cannot pass the quota between them.
//!
//! On several nodes (PostgreSQL) each file is kept in the database too, and
//! a node fetches what it lacks: `originals.rs`. Previews: `preview.rs`.

mod originals;
mod preview;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use http::header::CONTENT_TYPE;
use http::{Method, StatusCode};
use http_body_util::BodyStream;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{
    ChangeKind, Migration, NewResource, Props, ResourceId, Store, StoreError, Visibility,
};
use bulwark_web::events::{GatherFigures, ResourceChanged};
use bulwark_web::file_cache::Found;

use bulwark_web::{
    Access, Api, Content, Controller, Endpoint, Module, ModuleError, Outcome, Problem, ProblemKind,
    Representation, RequestCtx, SiteSetup, json_response, read_settings,
};
use originals::{Originals, is_hash, stored_path};
pub use preview::{Format, Preset, Previews, default_presets, focus, render};

pub const PRIORITY: i32 = 350;

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "media_file",
        sqlite: include_str!("../migrations/0001_media_file.sql"),
        postgres: include_str!("../migrations/0001_media_file.sql"),
    },
    Migration {
        version: 2,
        name: "media_file_size",
        sqlite: include_str!("../migrations/0002_media_file_size.sql"),
        postgres: include_str!("../migrations/0002_media_file_size.sql"),
    },
    Migration {
        version: 3,
        name: "media_blob",
        sqlite: include_str!("../migrations/0003_media_blob.sqlite.sql"),
        postgres: include_str!("../migrations/0003_media_blob.sql"),
    },
    Migration {
        version: 4,
        name: "media_file_reserved",
        sqlite: include_str!("../migrations/0004_media_file_reserved.sql"),
        postgres: include_str!("../migrations/0004_media_file_reserved.sql"),
    },
];

/// Among this module's observers.
const OBSERVER_PRIORITY: i32 = 500;

/// The media categories, under `media`, and what goes in each.
const CATEGORIES: [(&str, &str); 4] = [
    ("image", "Image"),
    ("document", "Document"),
    ("video", "Video"),
    ("audio", "Audio"),
];

/// What a site takes when `[media] types` does not say.
const DEFAULT_TYPES: [&str; 11] = [
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "application/pdf",
    "video/mp4",
    "video/webm",
    "audio/mpeg",
    "audio/ogg",
    "audio/x-flac",
    "audio/x-wav",
];

/// How long an upload may pause between two pieces before it is given up.
const IDLE: Duration = Duration::from_secs(30);

/// How many first bytes the type is read from.
const SNIFF_BYTES: usize = 8192;

/// `[media]` in `site.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MediaSection {
    /// The largest upload, in bytes (default 25 MiB).
    #[serde(default = "default_max_bytes")]
    max_bytes: u64,
    /// The types (as sniffed from the content) a site takes.
    #[serde(default)]
    types: Option<Vec<String>>,
    /// What people of a user group may upload, where it differs from the
    /// above (`[media.groups.<group>]`); someone in several such groups has
    /// the most generous.
    #[serde(default)]
    groups: BTreeMap<String, GroupLimits>,
    /// The most bytes the site's files may take together (each stored file
    /// counted once); none when not set.
    #[serde(default)]
    quota_bytes: Option<u64>,
    /// Named preview sizes (default: thumbnail, medium, large).
    #[serde(default)]
    presets: Option<BTreeMap<String, Preset>>,
    /// Resizes made at once (default 2).
    #[serde(default)]
    resize_workers: Option<usize>,
    /// How long a preview request waits for a worker before it is answered
    /// 503 (default 2000 ms).
    #[serde(default)]
    resize_queue_ms: Option<u64>,
    /// Whether each file is kept in the database as well as on the disk, so
    /// every node of a site has it (default: on PostgreSQL, yes).
    #[serde(default)]
    files_in_database: Option<bool>,
}

/// `[media.groups.<group>]`: what the people of one user group may upload.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupLimits {
    /// Their largest upload (default: the site's `max_bytes`).
    max_bytes: Option<u64>,
    /// The types they may upload (default: the site's `types`).
    types: Option<Vec<String>>,
}

fn default_max_bytes() -> u64 {
    25 * 1024 * 1024
}

#[derive(Debug, Clone)]
struct Settings {
    max_bytes: u64,
    types: Vec<String>,
    groups: BTreeMap<String, GroupLimits>,
    quota_bytes: Option<u64>,
    presets: BTreeMap<String, Preset>,
    resize_workers: usize,
    resize_queue: Duration,
    files_in_database: Option<bool>,
}

impl Settings {
    fn read(section: Option<&toml::Table>) -> Result<Settings, ModuleError> {
        let section: MediaSection = match section {
            Some(table) => read_settings(table)?,
            None => MediaSection {
                max_bytes: default_max_bytes(),
                types: None,
                groups: BTreeMap::new(),
                quota_bytes: None,
                presets: None,
                resize_workers: None,
                resize_queue_ms: None,
                files_in_database: None,
            },
        };
        let presets = section.presets.unwrap_or_else(default_presets);
        for (name, p) in &presets {
            let valid_name = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !valid_name || p.width == 0 || p.height == 0 || p.width > 8000 || p.height > 8000 {
                return Err(ModuleError::new(
                    format!("presets.{name}"),
                    "a preset is named with a-z, 0-9, _ and -, and is 1 to 8000 pixels each way",
                ));
            }
        }
        Ok(Settings {
            max_bytes: section.max_bytes,
            types: section
                .types
                .unwrap_or_else(|| DEFAULT_TYPES.iter().map(|t| t.to_string()).collect()),
            groups: section.groups,
            quota_bytes: section.quota_bytes,
            presets,
            resize_workers: section.resize_workers.unwrap_or(2).clamp(1, 64),
            resize_queue: Duration::from_millis(section.resize_queue_ms.unwrap_or(2000)),
            files_in_database: section.files_in_database,
        })
    }
}

impl Settings {
    /// The largest upload and the types for `who`: the site's, or the most
    /// generous of their groups' where `[media.groups]` names any.
    fn limits_for(&self, who: &bulwark_acl::Principal) -> (u64, Vec<String>) {
        let mine: Vec<&GroupLimits> = self
            .groups
            .iter()
            .filter(|(group, _)| who.in_group(group))
            .map(|(_, limits)| limits)
            .collect();
        if mine.is_empty() {
            return (self.max_bytes, self.types.clone());
        }
        let max_bytes = mine
            .iter()
            .map(|l| l.max_bytes.unwrap_or(self.max_bytes))
            .max()
            .unwrap_or(self.max_bytes);
        let mut types: Vec<String> = mine
            .iter()
            .flat_map(|l| l.types.clone().unwrap_or_else(|| self.types.clone()))
            .collect();
        types.sort();
        types.dedup();
        (max_bytes, types)
    }
}

#[derive(Default)]
pub struct MediaModule {
    /// Each site's preview signing key, read when its store opened.
    keys: Mutex<HashMap<String, Vec<u8>>>,
    /// Each site's previews, as last loaded.
    previews: Mutex<HashMap<String, Arc<Previews>>>,
}

impl MediaModule {
    pub fn new() -> Arc<MediaModule> {
        Arc::new(MediaModule::default())
    }

    /// The resizes made for `site` since it last loaded.
    pub fn resizes(&self, site: &str) -> u64 {
        self.previews
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(site)
            .map_or(0, |p| p.resizes.load(Ordering::Relaxed))
    }
}

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    MediaModule::new()
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "media",
            PRIORITY,
            &[],
            None,
            None,
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api().routes()));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for MediaModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn open_store(&self, site: &Site, store: &Store) -> Result<(), StoreError> {
        for (name, title) in CATEGORIES {
            if store.category(name).is_err() {
                store.create_category(name, Some("media"), title)?;
            }
        }
        weigh_files(store, &site.dir.join("data").join("media"))?;
        originals::forget_stale_reservations(store)?;
        let key = preview::signing_key(store)?;
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(site.name().to_string(), key);
        Ok(())
    }

    fn setup(&self, setup: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings = Arc::new(Settings::read(setup.settings())?);
        let store = setup.models().store.clone();
        let in_database = settings
            .files_in_database
            .unwrap_or(store.backend_name() == "postgres");
        let originals = Arc::new(Originals::new(
            setup.site().dir.join("data").join("media"),
            store,
            in_database,
        ));
        if in_database {
            // Files kept before this node kept them in the database, and
            // files other nodes deleted while this one was down.
            let originals = originals.clone();
            tokio::spawn(async move {
                originals.keep_unkept().await;
                originals.sweep_soon();
            });
        }
        let site_name = setup.site().name().to_string();
        let key = self
            .keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&site_name)
            .cloned()
            .ok_or_else(|| ModuleError::new("media", "the site's store was not opened"))?;
        let previews = Arc::new(Previews::new(
            settings.presets.clone(),
            key,
            settings.resize_workers,
            settings.resize_queue,
        ));
        self.previews
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(site_name, previews.clone());
        let for_templates = previews.clone();
        setup.add_template_extension(move |env| preview::register(env, for_templates.clone()));
        let for_figures = previews.clone();
        setup.observers().on_fold(
            OBSERVER_PRIORITY,
            move |_: &GatherFigures, mut figures: bulwark_web::Figures| {
                let p = &for_figures;
                figures.more.insert(
                    "media_resizes".to_owned(),
                    p.resizes.load(Ordering::Relaxed),
                );
                figures.refused.insert(
                    "media_resizes".to_owned(),
                    p.refused.load(Ordering::Relaxed),
                );
                figures
            },
        );
        let forgetting = originals.clone();
        setup
            .observers()
            .on_notify(OBSERVER_PRIORITY, move |c: &ResourceChanged| {
                if c.kind == ChangeKind::Deleted {
                    let (originals, id) = (forgetting.clone(), c.id);
                    tokio::task::spawn_blocking(move || originals.forget(id));
                }
            });
        setup.provide(Arc::new(MediaController {
            action: Action::Upload,
            settings: settings.clone(),
            previews: previews.clone(),
            originals: originals.clone(),
        }));
        setup.add_controller("media", move |options| {
            MediaController::from_rule(
                options,
                settings.clone(),
                previews.clone(),
                originals.clone(),
            )
            .map(|c| Box::new(c) as Box<dyn Controller>)
        });
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Action {
    Upload,
    File,
    Preview,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    action: Action,
}

pub struct MediaController {
    action: Action,
    settings: Arc<Settings>,
    previews: Arc<Previews>,
    originals: Arc<Originals>,
}

impl MediaController {
    fn from_rule(
        options: &toml::Table,
        settings: Arc<Settings>,
        previews: Arc<Previews>,
        originals: Arc<Originals>,
    ) -> Result<Self, ModuleError> {
        let options: Options = read_settings(options)?;
        Ok(MediaController {
            action: options.action,
            settings,
            previews,
            originals,
        })
    }
}

impl Controller for MediaController {
    fn allowed_methods(&self) -> &'static [Method] {
        match self.action {
            Action::Upload => &[Method::POST],
            Action::File | Action::Preview => bulwark_web::GET_HEAD,
        }
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match self.action {
                Action::Upload => match upload(req, self).await {
                    Ok(made) => Outcome::Response(json_response(StatusCode::CREATED, &made)),
                    Err(refused) => refused.into(),
                },
                Action::File => file(req, &self.originals).await,
                Action::Preview => preview::serve(req, &self.previews, &self.originals).await,
            }
        })
    }
}

/// The module's endpoints: `POST /media/upload`.
fn api() -> &'static Api {
    static API: std::sync::LazyLock<Api> = std::sync::LazyLock::new(|| {
        Api::new().endpoint(
            Endpoint::new("media_upload", "/media/upload")
                .post(
                    Access::Known,
                    json!({
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
                                    "title": {"type": "string"},
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
                    |req, _| Box::pin(upload_endpoint(req)),
                )
                .streaming_body(),
        )
    });
    &API
}

async fn upload_endpoint(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let media = req
        .site
        .state::<Arc<MediaController>>()
        .ok_or_else(|| Problem::internal("the media module", &"it is not set up on this site"))?;
    let made = upload(req, media).await?;
    Ok(Outcome::Response(json_response(StatusCode::CREATED, &made)))
}

/// Why an upload was not taken, for the person who sent it.
type Refused = Problem;

/// A refusal with its status (each status is one kind of problem here).
fn refused(status: StatusCode, why: impl Into<String>) -> Refused {
    let kind = match status {
        StatusCode::UNAUTHORIZED => ProblemKind::Unauthenticated,
        StatusCode::FORBIDDEN => ProblemKind::Forbidden,
        StatusCode::PAYLOAD_TOO_LARGE => ProblemKind::TooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ProblemKind::UnsupportedType,
        StatusCode::INSUFFICIENT_STORAGE => ProblemKind::StorageFull,
        StatusCode::UNPROCESSABLE_ENTITY => ProblemKind::Unprocessable,
        StatusCode::SERVICE_UNAVAILABLE => ProblemKind::Busy,
        StatusCode::INTERNAL_SERVER_ERROR => ProblemKind::Internal,
        _ => ProblemKind::BadRequest,
    };
    Problem::new(kind, why).with_status(status)
}

fn category_of(mime: &str) -> &'static str {
    match mime.split('/').next() {
        Some("image") => "image",
        Some("video") => "video",
        Some("audio") => "audio",
        _ => "document",
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A file being received: removed again unless [`Incoming::keep`] moved it.
struct Incoming {
    path: PathBuf,
    kept: bool,
}

impl Drop for Incoming {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// What the `file` field held, on disk.
struct Received {
    incoming: Incoming,
    name: String,
    size: u64,
    sha256: String,
    head: Vec<u8>,
}

async fn receive(
    field: &mut multer::Field<'static>,
    tmp_dir: &Path,
    max_bytes: u64,
) -> Result<Received, Refused> {
    let name = field
        .file_name()
        .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n).trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "upload".to_owned());
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
        let chunk = match tokio::time::timeout(IDLE, field.chunk()).await {
            Err(_) => {
                return Err(refused(
                    StatusCode::REQUEST_TIMEOUT,
                    "the upload stopped arriving; send it again",
                ));
            }
            Ok(Err(e)) => return Err(multipart_error(e)),
            Ok(Ok(None)) => break,
            Ok(Ok(Some(chunk))) => chunk,
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
        sha256: hex(&hasher.finalize()),
        head,
    })
}

/// A random number for a temporary file's name (std's hasher keys are random).
fn rand_suffix() -> u32 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::thread::current().id()) as u32
}

fn too_large(max_bytes: u64) -> Refused {
    refused(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the file is larger than this site takes ({max_bytes} bytes)"),
    )
}

fn over_quota(settings: &Settings) -> Refused {
    refused(
        StatusCode::INSUFFICIENT_STORAGE,
        format!(
            "the site's media would take more than its quota ({} bytes): delete some first",
            settings.quota_bytes.unwrap_or_default()
        ),
    )
}

fn store_refused(e: StoreError) -> Refused {
    Problem::from(e)
}

fn disk(e: std::io::Error) -> Refused {
    tracing::error!("storing an upload: {e}");
    if e.raw_os_error() == Some(28) {
        return refused(
            StatusCode::INSUFFICIENT_STORAGE,
            "the server's disk is full: nothing was stored",
        );
    }
    refused(StatusCode::INTERNAL_SERVER_ERROR, "storing the file failed")
}

fn multipart_error(e: multer::Error) -> Refused {
    match e {
        multer::Error::StreamReadFailed(_) => refused(
            StatusCode::BAD_REQUEST,
            "the upload broke off before its end; send it again",
        ),
        e => refused(StatusCode::BAD_REQUEST, format!("not a valid upload: {e}")),
    }
}

async fn upload(
    req: &RequestCtx<'_>,
    controller: &MediaController,
) -> Result<serde_json::Value, Refused> {
    let settings = &controller.settings;
    let who = req.principal().clone();
    if who.is_anonymous() {
        return Err(refused(StatusCode::UNAUTHORIZED, "log on to upload"));
    }
    let may_upload = |category: &str| {
        req.site
            .policy
            .may_insert(&who, category, Visibility::Public)
    };
    if !CATEGORIES.iter().any(|(c, _)| may_upload(c)) {
        return Err(refused(StatusCode::FORBIDDEN, "you may not upload media"));
    }
    let (max_bytes, types) = settings.limits_for(&who);
    let room = match settings.quota_bytes {
        Some(quota) => {
            let used = controller
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
    let body = req
        .take_body_stream()
        .ok_or_else(|| refused(StatusCode::BAD_REQUEST, "no body"))?;
    let stream = BodyStream::new(body).filter_map(|frame| async move {
        match frame {
            Ok(frame) => frame.into_data().ok().map(Ok::<Bytes, std::io::Error>),
            Err(e) => Some(Err(std::io::Error::other(e))),
        }
    });
    let mut multipart = multer::Multipart::new(stream, boundary);
    let originals = &controller.originals;
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
    let Some(mut received) = received else {
        return Err(refused(
            StatusCode::BAD_REQUEST,
            "no file: send it in a field called file",
        ));
    };
    if received.size == 0 {
        return Err(refused(StatusCode::BAD_REQUEST, "the file is empty"));
    }
    let mime = infer::get(&received.head).map(|t| t.mime_type().to_owned());
    let Some(mime) = mime.filter(|m| types.iter().any(|t| t == m)) else {
        return Err(refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "{} is {} (read from its content), which this site does not take; it takes {}",
                received.name,
                infer::get(&received.head).map_or("of no type known here", |t| t.mime_type()),
                types.join(", ")
            ),
        ));
    };
    let category = category_of(&mime);
    if !may_upload(category) {
        return Err(refused(
            StatusCode::FORBIDDEN,
            format!("you may not upload a {category}"),
        ));
    }
    let mut metadata_removed = false;
    let dimensions = if category == "image" {
        let path = received.incoming.path.clone();
        let cleaned = tokio::task::spawn_blocking(move || clean_image(&path))
            .await
            .ok()
            .flatten();
        if let Some(cleaned) = &cleaned
            && let Some((size, sha256)) = &cleaned.rewritten
        {
            // What is kept is the cleaned file: its own size and hash.
            received.size = *size;
            received.sha256 = sha256.clone();
            metadata_removed = true;
        }
        cleaned.map(|c| c.dimensions)
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
        if let Some(dir) = kept.parent() {
            tokio::fs::create_dir_all(dir).await.map_err(disk)?;
        }
        tokio::fs::rename(&received.incoming.path, &kept)
            .await
            .map_err(disk)?;
        received.incoming.kept = true;
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
    let mut new = NewResource::new(category, props).published(true);
    if let Some(user) = who.user_id() {
        new = new.created_by(user);
    }
    let made = req
        .site
        .models
        .store
        .run(move |s| s.create_resource(new))
        .await
        .map_err(store_refused)?;
    if let Err(e) = reservation.confirm(made).await {
        // A resource whose file is not recorded could lose its file (a sweep
        // takes what nothing records), so it does not stand.
        tracing::error!("recording the file of media {}: {e}", made.0);
        let undone = req
            .site
            .models
            .store
            .run(move |s| s.delete_resource(made, None))
            .await;
        if let Err(e) = undone {
            tracing::error!("taking back media {} after that: {e}", made.0);
        }
        return Err(store_refused(e));
    }
    Ok(json!({
        "id": made.0,
        "url": format!("/media/file/{}", made.0),
        "category": category,
        "mime": mime,
        "size": received.size,
        "sha256": received.sha256,
        "width": dimensions.map(|d| d.0),
        "height": dimensions.map(|d| d.1),
    }))
}

/// An image as it is kept: its size, and whether it was written anew.
struct Cleaned {
    dimensions: (u32, u32),
    /// The new file's size and hash, when it was rewritten.
    rewritten: Option<(u64, String)>,
}

/// Reads an uploaded image; one with EXIF metadata is turned upright by its
/// orientation and written anew without any metadata (the camera's location
/// goes with it). `None`: it cannot be read as an image.
fn clean_image(path: &Path) -> Option<Cleaned> {
    use image::ImageDecoder;
    let reader = image::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .ok()?;
    let format = reader.format()?;
    let mut decoder = reader.into_decoder().ok()?;
    let exif = decoder.exif_metadata().ok().flatten();
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    if exif.is_none() {
        return Some(Cleaned {
            dimensions: decoder.dimensions(),
            rewritten: None,
        });
    }
    // A JPEG's pixels with `jpeg-decoder` (`preview::read_jpeg` says why);
    // what it leaves (CMYK), and other formats, the `image` crate's.
    drop(decoder);
    let jpeg = if format == image::ImageFormat::Jpeg {
        let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
        preview::read_jpeg(file, |_| 1.0).ok()?.map(|(img, _)| img)
    } else {
        None
    };
    let mut img = match jpeg {
        Some(img) => img,
        None => image::ImageReader::open(path)
            .and_then(|r| r.with_guessed_format())
            .ok()?
            .decode()
            .ok()?,
    };
    img.apply_orientation(orientation);
    let tmp = path.with_extension("clean");
    let written = (|| -> image::ImageResult<()> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        match format {
            image::ImageFormat::Jpeg => img.to_rgb8().write_with_encoder(
                image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 92),
            )?,
            image::ImageFormat::WebP => img
                .to_rgba8()
                .write_with_encoder(image::codecs::webp::WebPEncoder::new_lossless(&mut out))?,
            _ => img.write_with_encoder(image::codecs::png::PngEncoder::new(&mut out))?,
        }
        std::io::Write::flush(&mut out)?;
        Ok(())
    })();
    if written.is_err() || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    Some(Cleaned {
        dimensions: (img.width(), img.height()),
        rewritten: Some((bytes.len() as u64, hex(&Sha256::digest(&bytes)))),
    })
}

/// Gives files recorded before the store knew sizes (`media_file` before its
/// second migration) their size from the disk, so the quota counts them.
fn weigh_files(store: &Store, media: &Path) -> Result<(), StoreError> {
    store.module_write(|sql| {
        let unweighed = sql.query("SELECT DISTINCT sha256 FROM media_file WHERE size = 0", &[])?;
        for row in unweighed {
            let sha256 = row.text(0);
            if !is_hash(&sha256) {
                continue;
            }
            let Ok(meta) = std::fs::metadata(stored_path(media, &sha256)) else {
                continue;
            };
            sql.execute(
                "UPDATE media_file SET size = $1 WHERE sha256 = $2 AND size = 0",
                &[(meta.len() as i64).into(), sha256.as_str().into()],
            )?;
        }
        Ok(())
    })
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
        .models
        .store
        .run(move |s| s.resource(ResourceId(id)))
        .await;
    match found {
        Ok(Some(r))
            if req.site.policy.may_see(req.principal(), &r)
                && r.props.str("sha256").is_some_and(is_hash) =>
        {
            Ok(r)
        }
        Ok(_) => Err(Outcome::NotFound),
        Err(e) => Err(bulwark_web::Problem::from(e).into()),
    }
}

/// `GET /media/file/{id}`: the file, to whoever may see its resource.
async fn file(req: &RequestCtx<'_>, originals: &Originals) -> Outcome {
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
    // A type a browser would run (a site that takes SVG) is only downloaded.
    let attachment = ["html", "svg", "xml"].iter().any(|t| mime.contains(t));
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
    let (content, modified, len) = match req.site.files.get(&key, move || Some(path)).await {
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
        content,
    })
}
