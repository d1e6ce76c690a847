//! `[comments]` in `site.toml`.

use std::time::Duration;

use serde::Deserialize;

use bulwark_module_auth::visitor_posts::PostLimits;
use bulwark_web::{ModuleError, read_settings};

/// Which new comments wait for a moderator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Moderation {
    /// Every comment.
    All,
    /// A comment from an address (or a user) none of whose comments was
    /// approved yet.
    FirstTime,
    /// None: comments appear at once (spam defences still apply).
    None,
}

/// `[comments]`, checked.
#[derive(Debug, Clone)]
pub struct CommentSettings {
    pub moderation: Moderation,
    /// Resources in these categories (and the ones below them) take comments.
    pub categories: Vec<String>,
    /// Told of every new comment besides the resource's authors; empty: the
    /// accounts in the editors group (and above) that have an address.
    pub notify: Vec<String>,
    /// More links than this and a comment is held as spam.
    pub max_links: usize,
    /// Characters a comment may have.
    pub max_length: usize,
    pub limits: PostLimits,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    moderation: Option<Moderation>,
    categories: Option<Vec<String>>,
    notify: Option<Vec<String>>,
    max_links: Option<usize>,
    max_length: Option<usize>,
    min_fill_seconds: Option<u64>,
    per_minute: Option<u32>,
}

impl CommentSettings {
    pub fn parse(table: Option<&toml::Table>) -> Result<CommentSettings, ModuleError> {
        let section: Section = match table {
            Some(table) => read_settings(table)?,
            None => Section::default(),
        };
        let per_minute = section.per_minute.unwrap_or(5);
        if per_minute == 0 {
            return Err(ModuleError::new(
                "per_minute",
                "must be at least 1 (to close comments, leave the module out)",
            ));
        }
        Ok(CommentSettings {
            moderation: section.moderation.unwrap_or(Moderation::FirstTime),
            categories: section
                .categories
                .unwrap_or_else(|| vec!["article".to_owned()]),
            notify: section.notify.unwrap_or_default(),
            max_links: section.max_links.unwrap_or(2),
            max_length: section.max_length.unwrap_or(5000).clamp(1, 100_000),
            limits: PostLimits {
                min_fill: Duration::from_secs(section.min_fill_seconds.unwrap_or(3)),
                per_minute,
            },
        })
    }
}
