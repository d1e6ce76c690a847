//! `lib`: static files from the `lib/` folders of the site and its modules,
//! combined into one body when a URL names several.

use std::sync::Arc;
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::StatusCode;

use bulwark_site::{LibSource, split_lib_path};

use crate::bottleneck::{Busy, busy_response};
use crate::content_type::content_type_for;
use crate::controllers::Controller;
use bulwark_http::{Effort, EncodedBody};

use crate::representation::{Content, Outcome, Representation};
use crate::request::RequestCtx;

/// Single files above this size are streamed from disk rather than held in memory.
const STREAM_THRESHOLD: u64 = 512 * 1024;
/// A combined body larger than this is refused rather than held in memory.
const COMBINED_MAX: u64 = 16 * 1024 * 1024;

/// Serves (combined) static files from the `lib/` folders of the site and its modules.
pub struct LibController;

impl Controller for LibController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(tail) = req.args.iter().find(|(k, _)| k == "path").map(|(_, v)| v) else {
                return Outcome::NotFound;
            };
            let Some(names) = split_lib_path(tail) else {
                return Outcome::NotFound;
            };
            let mut files = Vec::with_capacity(names.len());
            for name in &names {
                match req.site.site().lib.lookup(name) {
                    Some(file) => files.push(file),
                    None => return Outcome::NotFound,
                }
            }
            let newest = files.iter().map(|f| f.modified).max().unwrap_or(UNIX_EPOCH);
            let content_type = content_type_for(&names[0]);
            let cache_control = "public, max-age=31536000, immutable";
            if let [single] = files.as_slice()
                && let LibSource::Disk(path) = &single.source
                && single.len > STREAM_THRESHOLD
            {
                return Outcome::Found(Representation {
                    status: StatusCode::OK,
                    content_type,
                    last_modified: Some(single.modified),
                    cache_control,
                    per_language: false,
                    stale: false,
                    etag: None,
                    attachment: false,
                    surrogate_keys: None,
                    content: Content::File {
                        path: path.clone(),
                        len: single.len,
                    },
                });
            }
            let input_bytes = files.iter().map(|f| f.len).sum::<u64>();
            if input_bytes > COMBINED_MAX {
                tracing::warn!(site = %req.site.site().name(), "lib: {tail:?} is too large to combine");
                return Outcome::NotFound;
            }
            let stamp = newest
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let key = format!("{}\n{stamp}", names.join("\n"));
            // Only a combination not in the cache waits for the build bottleneck;
            // one flight per key, so a rush on a new combination is one build.
            let built = req
                .site
                .lib_cache()
                .try_get_with(key, async move {
                    match req
                        .site
                        .lib_builds()
                        .run(input_bytes, move || combine(&files))
                        .await
                    {
                        Ok(built) => built.map_err(BuildError::Io),
                        Err(Busy) => Err(BuildError::Busy),
                    }
                })
                .await;
            match built {
                Ok(encoded) => Outcome::Found(Representation {
                    status: StatusCode::OK,
                    content_type,
                    last_modified: Some(newest),
                    cache_control,
                    per_language: false,
                    stale: false,
                    etag: None,
                    attachment: false,
                    surrogate_keys: None,
                    content: Content::Encoded(encoded),
                }),
                Err(e) => match &*e {
                    BuildError::Busy => Outcome::Response(busy_response()),
                    BuildError::Io(e) => {
                        tracing::warn!(site = %req.site.site().name(), "lib: {tail:?}: {e}");
                        Outcome::NotFound
                    }
                },
            }
        })
    }
}

/// Why a combined body could not be built.
enum BuildError {
    /// No build slot or memory freed up in time.
    Busy,
    Io(std::io::Error),
}

/// Concatenates the files (a newline between text files that lack one) and encodes
/// the result once.
fn combine(files: &[bulwark_site::LibFile]) -> std::io::Result<Arc<EncodedBody>> {
    let mut out = Vec::new();
    for file in files {
        match &file.source {
            LibSource::Disk(path) => out.extend(std::fs::read(path)?),
            LibSource::Embedded(bytes) => out.extend_from_slice(bytes),
        }
        if files.len() > 1 && out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
    }
    Ok(Arc::new(EncodedBody::new(Bytes::from(out), Effort::Best)))
}
