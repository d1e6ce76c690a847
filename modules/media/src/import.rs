//! Files an import brings (the import module's WordPress attachments): taken
//! as an upload is, by the same checks (type from the bytes, a picture within
//! the pixel limit and cleaned of its metadata, within the quota), from a
//! local file or fetched from a URL. Usable without a running site: the
//! command line opens the site's store and its `[media]` settings only.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use http::StatusCode;

use bulwark_site::Site;
use bulwark_store::{ResourceId, Store};
use bulwark_web::{ModuleError, Problem};

use crate::originals::Originals;
use crate::preview::{Previews, signing_key};
use crate::serve::Media;
use crate::settings::Settings;
use crate::upload::{Imported, Keeping, disk, keep, receive_stream, refused};

/// The media of one site, for an import.
pub struct MediaImport {
    media: Media,
    store: Store,
}

/// Reads a file in pieces of this size.
const PIECE: usize = 256 * 1024;

impl MediaImport {
    /// The media of `site`, whose database `store` is.
    pub fn open(site: &Site, store: &Store) -> Result<MediaImport, ModuleError> {
        let settings = Arc::new(Settings::read(site.config.module_settings.get("media"))?);
        let in_database = settings
            .files_in_database
            .unwrap_or(store.backend_name() == "postgres");
        let originals = Arc::new(Originals::new(
            site.dir.join("data").join("media"),
            store.clone(),
            in_database,
        ));
        let key = signing_key(store).map_err(|e| ModuleError::new("media", e.to_string()))?;
        let previews = Arc::new(Previews::new(
            settings.presets.clone(),
            key,
            1,
            settings.resize_queue,
            settings.resize_memory_bytes,
        ));
        Ok(MediaImport {
            media: Media {
                settings,
                previews,
                originals,
            },
            store: store.clone(),
        })
    }

    /// Where the file with content hash `sha256` is on this node (fetched
    /// from the database first when another node kept it): for an export.
    pub async fn local_file(&self, sha256: &str) -> Result<std::path::PathBuf, Problem> {
        self.media.originals.local(sha256).await.map_err(|missing| {
            refused(
                StatusCode::NOT_FOUND,
                format!("the file {sha256}: {missing:?}"),
            )
        })
    }

    /// A preview's address, as templates make it (`image(id, preset)`).
    pub fn preview_url(&self, id: ResourceId, preset: &str, sha256: &str) -> String {
        self.media
            .previews
            .url(id.0, preset, sha256, crate::preview::focus(None, None))
    }

    /// The site's preview sizes: name, width and height.
    pub fn presets(&self) -> Vec<(String, u32, u32)> {
        self.media
            .previews
            .presets
            .iter()
            .map(|(name, p)| (name.clone(), p.width, p.height))
            .collect()
    }

    /// Keeps the file at `path` as a new published media resource; returns
    /// its id and what an upload answers (`sha256`, `width`...).
    pub async fn file(
        &self,
        path: &Path,
        imported: &Imported,
    ) -> Result<(ResourceId, serde_json::Value), Problem> {
        let file = tokio::fs::File::open(path)
            .await
            .map_err(|e| refused(StatusCode::NOT_FOUND, format!("{}: {e}", path.display())))?;
        let chunks =
            tokio_util::io::ReaderStream::with_capacity(file, PIECE).map(|c| c.map_err(disk));
        self.take(name_of(&path.to_string_lossy()), chunks, imported)
            .await
    }

    /// Keeps the file that arrives in `chunks` (fetched from a URL, say) as
    /// a new published media resource named `name`.
    pub async fn stream<S>(
        &self,
        name: &str,
        chunks: S,
        imported: &Imported,
    ) -> Result<(ResourceId, serde_json::Value), Problem>
    where
        S: futures_util::Stream<Item = Result<Bytes, Problem>> + Unpin,
    {
        self.take(name_of(name), chunks, imported).await
    }

    /// The file with content hash `sha256`, for media resource `id` (an
    /// export's resource, imported again): recorded as the resource's file,
    /// taken from `source` when the site does not hold it yet (and checked
    /// to be what its hash says). `false` when the resource had it already.
    pub async fn adopt(
        &self,
        id: ResourceId,
        sha256: &str,
        source: Option<&Path>,
    ) -> Result<bool, Problem> {
        if !crate::originals::is_hash(sha256) {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                format!("{sha256:?} is not a SHA-256"),
            ));
        }
        let recorded = {
            let sha = sha256.to_owned();
            self.store
                .run(move |s| {
                    s.module_read(|sql| {
                        Ok(sql
                            .query_one(
                                "SELECT sha256 FROM media_file WHERE rsc_id = $1",
                                &[id.0.into()],
                            )?
                            .map(|r| r.text(0) == sha))
                    })
                })
                .await
                .map_err(crate::upload::store_refused)?
        };
        if recorded == Some(true) {
            return Ok(false);
        }
        let originals = &self.media.originals;
        let kept = originals.path(sha256);
        let have = tokio::fs::try_exists(&kept).await.unwrap_or(false);
        let size = match (have, source) {
            (true, _) => tokio::fs::metadata(&kept).await.map_err(disk)?.len(),
            (false, Some(source)) => {
                let file = tokio::fs::File::open(source).await.map_err(disk)?;
                let chunks = tokio_util::io::ReaderStream::with_capacity(file, PIECE)
                    .map(|c| c.map_err(disk));
                let tmp = originals.dir.join("tmp");
                let mut received =
                    receive_stream(sha256.to_owned(), chunks, &tmp, u64::MAX).await?;
                if received.sha256 != sha256 {
                    return Err(refused(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        format!("the file given for {sha256} is not that file"),
                    ));
                }
                let admitting = originals.admitting.lock().await;
                received.put_at(&kept).await?;
                drop(admitting);
                received.size
            }
            (false, None) => {
                return Err(refused(
                    StatusCode::NOT_FOUND,
                    format!("the site has no file {sha256}: export with --media to bring it"),
                ));
            }
        };
        if recorded.is_some() {
            // The resource used another file: it uses this one now.
            self.media.originals.forget(id);
        }
        let reservation = originals
            .admit(sha256, size, self.media.settings.quota_bytes)
            .await
            .map_err(crate::upload::store_refused)?
            .ok_or_else(|| crate::upload::over_quota(&self.media.settings))?;
        if let Err(why) = originals.keep_in_database(&kept, sha256).await {
            return Err(Problem::internal("keeping a file in the database", &why));
        }
        reservation
            .confirm(id)
            .await
            .map_err(crate::upload::store_refused)?;
        Ok(true)
    }

    async fn take<S>(
        &self,
        name: String,
        chunks: S,
        imported: &Imported,
    ) -> Result<(ResourceId, serde_json::Value), Problem>
    where
        S: futures_util::Stream<Item = Result<Bytes, Problem>> + Unpin,
    {
        let settings = &self.media.settings;
        let tmp = self.media.originals.dir.join("tmp");
        let received = receive_stream(name, chunks, &tmp, settings.max_bytes).await?;
        if received.size == 0 {
            return Err(refused(StatusCode::BAD_REQUEST, "the file is empty"));
        }
        let keeping = Keeping {
            types: &settings.types,
            may_upload: &|_| true,
            by_editor: true,
            creator: None,
            published: true,
            imported: Some(imported),
        };
        keep(&self.store, &self.media, received, &keeping).await
    }
}

/// The last part of a path or URL, without its query: the file's name.
fn name_of(path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path).trim();
    match name.is_empty() {
        true => "file".to_owned(),
        false => percent_decode(name),
    }
}

fn percent_decode(name: &str) -> String {
    percent_encoding::percent_decode_str(name)
        .decode_utf8_lossy()
        .into_owned()
}
