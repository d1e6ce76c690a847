//! How the running sites behave, as the command line sets it.

use std::time::Duration;

use bulwark_template::TemplateOptions;

use crate::bottleneck::{LibLimits, RenderLimits};

#[derive(Debug, Clone)]
pub struct SitesOptions {
    /// Template reload, config reload and detailed error pages.
    pub dev: bool,
    /// Template instructions per render.
    pub fuel: u64,
    /// Concurrent renders per site and how long a render may queue (then 503).
    pub render_limits: RenderLimits,
    /// Concurrent builds of combined `/lib/` bodies per site, their memory, and how
    /// long one may queue (then 503).
    pub lib_limits: LibLimits,
    /// Bytes of hot files each site holds in memory (its `files/`, media and
    /// previews); files above a thirty-second of it are streamed from disk.
    pub file_memory_bytes: u64,
    /// The largest request body a controller is handed (larger ones get 413).
    pub max_body_bytes: u64,
    /// How long a request body may take to arrive once the head is in (then 408,
    /// and the connection closes).
    pub body_timeout: Duration,
}

impl Default for SitesOptions {
    fn default() -> Self {
        SitesOptions {
            dev: false,
            fuel: TemplateOptions::default().fuel,
            render_limits: RenderLimits::default(),
            lib_limits: LibLimits::default(),
            file_memory_bytes: 128 * 1024 * 1024,
            max_body_bytes: 8 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
        }
    }
}

impl SitesOptions {
    pub(crate) fn template_options(&self) -> TemplateOptions {
        TemplateOptions {
            dev: self.dev,
            fuel: self.fuel,
        }
    }
}
