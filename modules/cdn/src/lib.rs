//! The `cdn` module: a shared cache in front of the site (Varnish with its
//! xkey module, or a CDN that purges by surrogate key) kept as exact as the
//! site's own page cache.
//!
//! Pages from the page cache go out with their dependency keys as surrogate
//! keys (the core's `Surrogate`, asked for here) and `Surrogate-Control:
//! max-age`, which lets the cache in front keep a page Bulwark tells browsers
//! not to. When keys are flushed (a change, here or on another node; a
//! template changed at a reload; `bulwark purge`), their tokens go to every
//! configured purge address as one `PURGE` request with the tokens in a
//! header (`xkey-purge` by default, what the VCL in docs/operations.md reads);
//! a flush of everything purges the site's own token, which every page
//! carries.
//!
//! Purges are sent off the request path, in batches: what was flushed while
//! one request was on its way goes in the next. A purge that fails is logged
//! and tried once more; the page's `max-age` bounds how long a missed purge
//! can keep a page stale.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http::HeaderName;
use serde::Deserialize;
use tokio::sync::mpsc;

use bulwark_site::ModuleManifest;
use bulwark_web::events::CacheFlushed;
use bulwark_web::{
    Module, ModuleError, SiteSetup, Surrogate, read_settings, surrogate_site_token, surrogate_token,
};

pub const PRIORITY: i32 = 500;

/// Tokens per purge request: well inside Varnish's 8 KiB header limit.
const TOKENS_PER_PURGE: usize = 200;

pub struct Cdn;

pub fn module() -> Arc<dyn Module> {
    Arc::new(Cdn)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "cdn",
            PRIORITY,
            &[],
            None,
            None,
            include_str!("../module.toml"),
        );
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

/// `[cdn]` of `site.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Settings {
    /// The response header carrying the keys: `xkey` (Varnish) or
    /// `Surrogate-Key`.
    header: String,
    /// How long the cache in front may keep a page, in seconds.
    max_age: u64,
    /// Where purges go (`http://127.0.0.1:6081/`).
    purge: Vec<String>,
    /// The request header a purge carries the keys in.
    purge_header: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            header: "xkey".to_owned(),
            max_age: 3600,
            purge: Vec::new(),
            purge_header: "xkey-purge".to_owned(),
        }
    }
}

impl Module for Cdn {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings: Settings = match site.settings() {
            Some(table) => read_settings(table)?,
            None => Settings::default(),
        };
        let header = HeaderName::try_from(settings.header.as_str())
            .map_err(|_| ModuleError::new("header", "not a header name"))?;
        let purge_header = HeaderName::try_from(settings.purge_header.as_str())
            .map_err(|_| ModuleError::new("purge_header", "not a header name"))?;
        for url in &settings.purge {
            let parsed = reqwest::Url::parse(url)
                .map_err(|e| ModuleError::new("purge", format!("{url:?}: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(ModuleError::new("purge", format!("{url:?}: not http(s)")));
            }
        }
        site.send_surrogate_keys(Surrogate::new(header, settings.max_age));
        if settings.purge.is_empty() {
            return Ok(());
        }
        let name = site.site().name().to_string();
        let (flushed, purges) = mpsc::unbounded_channel::<Vec<String>>();
        let for_observer = name.clone();
        site.observers()
            .on_notify(PRIORITY, move |f: &CacheFlushed| {
                let tokens = if f.all {
                    vec![surrogate_site_token(&for_observer)]
                } else {
                    f.keys
                        .iter()
                        .map(|k| surrogate_token(&for_observer, k))
                        .collect()
                };
                if !tokens.is_empty() {
                    let _ = flushed.send(tokens);
                }
            });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(forward(name, settings.purge, purge_header, purges));
        }
        Ok(())
    }
}

/// Sends what was flushed to every purge address until the site's
/// observers go (a reload starts a new forwarder).
async fn forward(
    site: String,
    urls: Vec<String>,
    header: HeaderName,
    mut purges: mpsc::UnboundedReceiver<Vec<String>>,
) {
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(site, "cdn: no HTTP client, purges are not sent: {e}");
            return;
        }
    };
    let method = reqwest::Method::from_bytes(b"PURGE").expect("a method");
    while let Some(first) = purges.recv().await {
        let mut tokens: BTreeSet<String> = first.into_iter().collect();
        while let Ok(more) = purges.try_recv() {
            tokens.extend(more);
        }
        let tokens: Vec<String> = tokens.into_iter().collect();
        for chunk in tokens.chunks(TOKENS_PER_PURGE) {
            let keys = chunk.join(" ");
            for url in &urls {
                let send = || {
                    client
                        .request(method.clone(), url)
                        .header(header.clone(), keys.as_str())
                        .send()
                };
                let mut sent = send().await;
                if !sent.as_ref().is_ok_and(|r| r.status().is_success()) {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    sent = send().await;
                }
                match sent {
                    Ok(r) if r.status().is_success() => {}
                    Ok(r) => tracing::warn!(site, "cdn: purge at {url} answered {}", r.status()),
                    Err(e) => tracing::warn!(site, "cdn: purge at {url}: {e}"),
                }
            }
        }
    }
}
