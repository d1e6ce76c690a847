//! `[media]` in `site.toml`: which types a site takes, how large, from whom,
//! and its quota.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::preview::{Preset, default_presets};
use bulwark_web::{ModuleError, read_settings};

/// The media categories, under `media`, and what goes in each.
pub(crate) const CATEGORIES: [(&str, &str); 4] = [
    ("image", "Image"),
    ("document", "Document"),
    ("video", "Video"),
    ("audio", "Audio"),
];

/// What a site takes when `[media] types` does not say.
pub(crate) const DEFAULT_TYPES: [&str; 11] = [
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

/// `[media]` in `site.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MediaSection {
    /// The largest upload, in bytes (default 25 MiB).
    #[serde(default = "default_max_bytes")]
    pub(crate) max_bytes: u64,
    /// The types (as sniffed from the content) a site takes.
    #[serde(default)]
    pub(crate) types: Option<Vec<String>>,
    /// What people of a user group may upload, where it differs from the
    /// above (`[media.groups.<group>]`); someone in several such groups has
    /// the most generous.
    #[serde(default)]
    pub(crate) groups: BTreeMap<String, GroupLimits>,
    /// The most bytes the site's files may take together (each stored file
    /// counted once); none when not set.
    #[serde(default)]
    pub(crate) quota_bytes: Option<u64>,
    /// Named preview sizes (default: thumbnail, medium, large).
    #[serde(default)]
    pub(crate) presets: Option<BTreeMap<String, Preset>>,
    /// Resizes made at once (default 2).
    #[serde(default)]
    pub(crate) resize_workers: Option<usize>,
    /// How long a preview request waits for a worker before it is answered
    /// 503 (default 2000 ms).
    #[serde(default)]
    pub(crate) resize_queue_ms: Option<u64>,
    /// Whether each file is kept in the database as well as on the disk, so
    /// every node of a site has it (default: on PostgreSQL, yes).
    #[serde(default)]
    pub(crate) files_in_database: Option<bool>,
    /// The most pixels an uploaded picture may have (default 50 million: a
    /// 48-megapixel phone photo passes); a larger one is refused with 422
    /// before its pixels are read.
    #[serde(default)]
    pub(crate) max_pixels: Option<u64>,
    /// The memory all the site's resizes at once may take, in MiB (default
    /// 512); each waits for its share, and a picture that alone needs more
    /// gets no previews.
    #[serde(default)]
    pub(crate) resize_memory_mb: Option<u64>,
    /// Whether a PDF is shown in the browser or only downloaded: `editors`
    /// (the default: shown when an editor or above uploaded it), `always`,
    /// `never`.
    #[serde(default)]
    pub(crate) pdf_inline: Option<PdfInline>,
}

/// `[media] pdf_inline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PdfInline {
    #[default]
    Editors,
    Always,
    Never,
}

impl PdfInline {
    /// Whether a PDF is shown in the browser, `by_editor` saying whether an
    /// editor (or above) uploaded it.
    pub(crate) fn shows(self, by_editor: bool) -> bool {
        match self {
            PdfInline::Always => true,
            PdfInline::Never => false,
            PdfInline::Editors => by_editor,
        }
    }
}

/// `[media.groups.<group>]`: what the people of one user group may upload.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GroupLimits {
    /// Their largest upload (default: the site's `max_bytes`).
    pub(crate) max_bytes: Option<u64>,
    /// The types they may upload (default: the site's `types`).
    pub(crate) types: Option<Vec<String>>,
}

pub(crate) fn default_max_bytes() -> u64 {
    25 * 1024 * 1024
}

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) max_bytes: u64,
    pub(crate) types: Vec<String>,
    pub(crate) groups: BTreeMap<String, GroupLimits>,
    pub(crate) quota_bytes: Option<u64>,
    pub(crate) presets: BTreeMap<String, Preset>,
    pub(crate) resize_workers: usize,
    pub(crate) resize_queue: Duration,
    pub(crate) files_in_database: Option<bool>,
    pub(crate) max_pixels: u64,
    pub(crate) resize_memory_bytes: u64,
    pub(crate) pdf_inline: PdfInline,
}

/// `[media] max_pixels` when not set.
pub(crate) const DEFAULT_MAX_PIXELS: u64 = 50_000_000;
/// `[media] resize_memory_mb` when not set.
pub(crate) const DEFAULT_RESIZE_MEMORY_MB: u64 = 512;

impl Settings {
    pub(crate) fn read(section: Option<&toml::Table>) -> Result<Settings, ModuleError> {
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
                max_pixels: None,
                resize_memory_mb: None,
                pdf_inline: None,
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
            max_pixels: section.max_pixels.unwrap_or(DEFAULT_MAX_PIXELS).max(1),
            resize_memory_bytes: section
                .resize_memory_mb
                .unwrap_or(DEFAULT_RESIZE_MEMORY_MB)
                .clamp(16, 1 << 20)
                << 20,
            pdf_inline: section.pdf_inline.unwrap_or_default(),
        })
    }
}

impl Settings {
    /// The largest upload and the types for `who`: the site's, or the most
    /// generous of their groups' where `[media.groups]` names any.
    pub(crate) fn limits_for(&self, who: &bulwark_acl::Principal) -> (u64, Vec<String>) {
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
