//! The `metrics` module: `/metrics` in the Prometheus text format, for a
//! monitoring system to scrape.
//!
//! Every number is one the site keeps anyway (`bulwark_web::core_metrics`:
//! answers by rule and status class, caches, renders, bottlenecks, database
//! connections), what modules add through the `GatherMetrics` fold (push,
//! media, webhooks, mail, backups...), the site's storage (database size, free
//! disk) and the process's own (memory, open files, CPU). Only
//! the latency histogram costs something per request (two clock reads), and
//! only on a site that enables this module.
//!
//! Closed unless configured: `[metrics] allow` names the addresses and
//! networks that may read it, `[metrics] token` a bearer token that may. A
//! request that came through a proxy (it carries `X-Forwarded-For` or
//! `Forwarded`, and the proxy is not a `--trusted-proxy`) is never let in by
//! address, since the address is then the proxy's.

mod process;
mod storage;
mod text;

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode};
use serde::Deserialize;

use bulwark_http::Networks;
use bulwark_site::ModuleManifest;
use bulwark_web::events::GatherMetrics;
use bulwark_web::{
    BearerCheck, Content, Controller, Module, ModuleError, Outcome, Problem, Representation,
    RequestCtx, SiteSetup, check_bearer, core_metrics, read_settings,
};

pub const PRIORITY: i32 = 500;

pub struct Metrics;

pub fn module() -> Arc<dyn Module> {
    Arc::new(Metrics)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "metrics",
            PRIORITY,
            &[],
            None,
            None,
            include_str!("../module.toml"),
        );
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

/// `[metrics]` of `site.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Addresses and networks that may read `/metrics`.
    #[serde(default)]
    allow: Vec<String>,
    /// A bearer token that may read it from anywhere.
    token: Option<String>,
}

/// Who may read the metrics.
struct Readers {
    allow: Networks,
    token: Option<String>,
}

impl Readers {
    fn from_settings(table: Option<&toml::Table>) -> Result<Readers, ModuleError> {
        let settings: Settings = match table {
            Some(table) => read_settings(table)?,
            None => Settings::default(),
        };
        let allow = Networks::parse(&settings.allow)
            .map_err(|e| ModuleError::new("allow", e.to_string()))?;
        if let Some(token) = &settings.token
            && token.len() < 16
        {
            return Err(ModuleError::new(
                "token",
                "must be at least 16 characters (it is a password)",
            ));
        }
        Ok(Readers {
            allow,
            token: settings.token,
        })
    }

    fn admit(&self, req: &RequestCtx<'_>) -> Result<(), Problem> {
        match check_bearer(req.parts, self.token.as_deref()) {
            BearerCheck::Allowed => return Ok(()),
            BearerCheck::Refused if req.parts.headers.contains_key(http::header::AUTHORIZATION) => {
                return Err(Problem::unauthenticated("wrong token for /metrics"));
            }
            _ => {}
        }
        let forwarded = ["x-forwarded-for", "forwarded"]
            .iter()
            .any(|h| req.parts.headers.contains_key(*h));
        let peer = req.peer().addr.ip();
        if self.allow.contains(peer) && !(forwarded && peer.is_loopback()) {
            return Ok(());
        }
        if self.allow.is_empty() && self.token.is_none() {
            return Err(Problem::forbidden(
                "/metrics is closed: the site's [metrics] section names no address (allow) \
                 and no token",
            ));
        }
        Err(Problem::forbidden(format!(
            "{peer} may not read /metrics (see [metrics] allow and token)"
        )))
    }
}

struct MetricsController {
    readers: Arc<Readers>,
}

impl Controller for MetricsController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if let Err(problem) = self.readers.admit(req) {
                return Outcome::from(problem);
            }
            let own = core_metrics(req.site);
            // Modules' observers may read the database (webhooks): off the
            // runtime's workers.
            let notifier = req.site.notifier().clone();
            let (site, store) = (req.site.site().clone(), req.site.models().store.clone());
            let gathered = tokio::task::spawn_blocking(move || {
                let mut metrics = notifier.fold(&GatherMetrics, own);
                metrics.extend(storage::metrics(&site, &store));
                metrics
            })
            .await;
            let Ok(mut metrics) = gathered else {
                return Outcome::from(Problem::internal(
                    "gathering the metrics",
                    &"an observer panicked",
                ));
            };
            metrics.extend(process::metrics());
            let body = text::render(req.site.site().name().as_str(), &metrics);
            Outcome::Found(Representation {
                status: StatusCode::OK,
                content_type: HeaderValue::from_static(text::CONTENT_TYPE),
                last_modified: None,
                cache_control: "no-store",
                content: Content::Dynamic(Bytes::from(body)),
                per_language: false,
                stale: false,
                etag: None,
                attachment: false,
                surrogate_keys: None,
            })
        })
    }
}

impl Module for Metrics {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let readers = Arc::new(Readers::from_settings(site.settings())?);
        site.measure_latency();
        site.add_controller("metrics", move |options| {
            if let Some(key) = options.keys().next() {
                return Err(ModuleError::new(
                    key.clone(),
                    "the metrics rule takes no options",
                ));
            }
            Ok(Box::new(MetricsController {
                readers: readers.clone(),
            }) as Box<dyn Controller>)
        });
        Ok(())
    }
}
