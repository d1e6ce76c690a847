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
