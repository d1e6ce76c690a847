//! The running sites as the HTTP server sees them: one [`Handler`] for every site
//! in a folder, reloaded in development mode when a `site.toml` changes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use http::{Request, Response};
use hyper::body::Incoming;

use bulwark_http::{Body, Handler, Peer};
use bulwark_template::SiteModels;

use crate::dispatch::dispatch;
use crate::error::LoadError;
use crate::module::Module;
use crate::options::SitesOptions;
use crate::reload::{ReloadError, ReloadHandle, ReloadReply};
use crate::stores::SiteStores;
use crate::table::SiteTable;
use crate::tls::{TlsError, server_config};

pub struct Sites {
    table: ArcSwap<SiteTable>,
    stores: SiteStores,
    modules: Vec<Arc<dyn Module>>,
    options: SitesOptions,
    sites_dir: PathBuf,
    /// Handed to every site, for the admin's changes to `site.toml`.
    reload: ReloadHandle,
}

impl Sites {
    /// Loads every site in `sites_dir` with the `modules` this binary ships (a site
    /// enables the ones it names). In development mode the sites reload when a
    /// `site.toml` changes, for as long as the returned value lives.
    pub async fn load(
        sites_dir: &Path,
        options: SitesOptions,
        modules: Vec<Arc<dyn Module>>,
    ) -> Result<Arc<Sites>, Vec<LoadError>> {
        let stores = SiteStores::default();
        let (reload, requests) = tokio::sync::mpsc::channel(8);
        let reload = ReloadHandle(reload);
        let (table, _) =
            SiteTable::load(sites_dir, &options, &modules, &stores, &reload, None).await?;
        let sites = Arc::new(Sites {
            table: ArcSwap::from_pointee(table),
            stores,
            modules,
            options,
            sites_dir: sites_dir.to_path_buf(),
            reload,
        });
        tokio::spawn(read_changed_certificates(Arc::downgrade(&sites)));
        if sites.options.dev {
            tokio::spawn(reload_on_change(Arc::downgrade(&sites)));
        }
        tokio::spawn(reload_on_request(Arc::downgrade(&sites), requests));
        Ok(sites)
    }

    /// Loads every site again (a changed `site.toml` or template, a site added
    /// or removed) and swaps the new set in at once; requests in flight finish on
    /// the old one. A site that fails to load keeps running as it was, and its
    /// errors are returned; the others are replaced. Databases stay open across
    /// reloads. Pages and fragments rendered from a template that changed (or
    /// that pulls one in) are dropped from the cache; the rest stay. A site
    /// whose configuration changed has all of its cache dropped.
    /// Certificate files are read again.
    pub async fn reload(&self) -> Result<(), Vec<LoadError>> {
        let running = self.table.load_full();
        let (table, errors) = SiteTable::load(
            &self.sites_dir,
            &self.options,
            &self.modules,
            &self.stores,
            &self.reload,
            Some(&running),
        )
        .await?;
        let table = Arc::new(table);
        let configs = table.sites.iter().map(|s| s.runtime.config());
        for e in self.stores.certificates.load_files(configs) {
            tracing::error!("the certificate stays as it was: {e}");
        }
        // Swapped in first, then flushed: a render that started on the old
        // templates read the key's serial before the flush, so its page is not
        // stored.
        self.table.store(table.clone());
        for site in &table.sites {
            let name = site.runtime.site().name();
            let Some(before) = running.site(name.as_str()) else {
                continue;
            };
            if Arc::ptr_eq(site, before) {
                continue;
            }
            // Its configuration changed where a render reads it (a setting, a
            // language, a module, a rule): which page read which part of it
            // is not recorded, so every page of the site is rendered again,
            // here and in a cache in front (the flush's observers); the other
            // sites' pages stay.
            if !site.runtime.config().renders_like(before.runtime.config()) {
                tracing::info!(
                    site = %name,
                    "its configuration changed: every page of it is rendered again"
                );
                crate::stores::flush_all(site.runtime.models(), site.runtime.notifier());
                continue;
            }
            let changed = site
                .runtime
                .templates()
                .snapshot()
                .changed_since(before.runtime.templates().snapshot());
            if !changed.is_empty() {
                tracing::info!(
                    site = %name,
                    "{} template(s) changed or pull in one that did: their pages are rendered again",
                    changed.len()
                );
            }
            if !changed.is_empty() {
                crate::stores::flush(site.runtime.models(), site.runtime.notifier(), changed);
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// A TLS configuration for every site that names a certificate (picked by
    /// SNI), or `None` if none does.
    pub fn tls_config(&self) -> Result<Option<Arc<rustls::ServerConfig>>, TlsError> {
        let table = self.table.load();
        let configs: Vec<&bulwark_site::SiteConfig> =
            table.sites.iter().map(|s| s.runtime.config()).collect();
        server_config(&configs, &self.stores.certificates)
    }

    /// Called when the server stops: the databases hear it is gone, so
    /// another server may start on them at once, and every site's store
    /// closes (its tasks end, its connections are given back).
    pub async fn close(&self) {
        self.stores.close().await;
    }

    /// Every running site, as `bulwark status` shows it. Blocks while each
    /// site's cache runs its pending maintenance.
    pub fn status(&self) -> Vec<crate::SiteStatus> {
        let table = self.table.load();
        table
            .sites
            .iter()
            .map(|s| crate::SiteStatus::of(&s.runtime))
            .collect()
    }

    /// Drops what `purge` names from a site's cache; `false` if there is no
    /// such site.
    pub fn purge(&self, site: &str, purge: &crate::Purge) -> bool {
        match self.table.load().site(site) {
            Some(served) => {
                purge.apply(&served.runtime);
                true
            }
            None => false,
        }
    }

    /// A running site, by name.
    pub fn runtime(&self, site: &str) -> Option<Arc<crate::SiteRuntime>> {
        self.table.load().site(site).map(|s| s.runtime.clone())
    }

    /// A site's data (store and model cache), for programs that embed the sites.
    pub fn site_models(&self, site: &str) -> Option<Arc<SiteModels>> {
        self.table
            .load()
            .site(site)
            .map(|s| s.runtime.models().clone())
    }
}

impl Handler for Sites {
    fn handle(
        &self,
        req: Request<Incoming>,
        peer: Peer,
    ) -> impl Future<Output = Response<Body>> + Send {
        // Boxed once here: the request's whole state machine (dispatch, the
        // controller, respond) is several kilobytes, and a future is moved by
        // copying all of it, unstarted or not. Unboxed, the server's wrappers
        // and hyper's slot for the request in flight copied it about ten
        // times per request (a sixth of a small JSON answer's instructions,
        // under callgrind); a box is one allocation and moves as a pointer.
        Box::pin(dispatch(self.table.load_full(), &self.options, req, peer))
    }
}

/// How often certificate files are looked at for a change.
const CERTIFICATE_FILES_EVERY: Duration = Duration::from_secs(5);

/// Reads a site's certificate files again when they change (a renewal by
/// certbot, a copy by hand), for as long as the sites run; a file that does
/// not read leaves the certificate served as it was.
async fn read_changed_certificates(sites: Weak<Sites>) {
    loop {
        tokio::time::sleep(CERTIFICATE_FILES_EVERY).await;
        let Some(sites) = sites.upgrade() else { return };
        let (certificates, table) = (sites.stores.certificates.clone(), sites.table.load_full());
        drop(sites);
        let errors = tokio::task::spawn_blocking(move || {
            certificates.load_files(table.sites.iter().map(|s| s.runtime.config()))
        })
        .await
        .unwrap_or_default();
        for e in errors {
            tracing::error!("the certificate stays as it was: {e}");
        }
    }
}

/// Reloads one request at a time, for as long as the sites run.
async fn reload_on_request(
    sites: Weak<Sites>,
    mut requests: tokio::sync::mpsc::Receiver<ReloadReply>,
) {
    while let Some(reply) = requests.recv().await {
        let Some(sites) = sites.upgrade() else { return };
        let outcome = sites.reload().await.map_err(ReloadError::Refused);
        let _ = reply.send(outcome);
    }
}

/// Development mode: rebuilds the site table when a `site.toml` changes or a site
/// folder appears or goes, and swaps it in. A broken config is reported and the
/// running sites stay as they were. Ends when the sites are dropped.
async fn reload_on_change(sites: Weak<Sites>) {
    let Some(dir) = sites.upgrade().map(|s| s.sites_dir.clone()) else {
        return;
    };
    let mut seen = config_fingerprint(&dir);
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let Some(sites) = sites.upgrade() else {
            return;
        };
        let now = config_fingerprint(&dir);
        if now == seen {
            continue;
        }
        seen = now;
        match sites.reload().await {
            Ok(()) => tracing::info!("site configuration reloaded"),
            Err(errors) => {
                for e in errors {
                    tracing::error!("kept as it ran: {e}");
                }
            }
        }
    }
}

fn config_fingerprint(sites_dir: &Path) -> Vec<(PathBuf, Option<SystemTime>)> {
    let mut out: Vec<_> = std::fs::read_dir(sites_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let toml = e.path().join("site.toml");
            let modified = toml.metadata().and_then(|m| m.modified()).ok();
            (toml, modified)
        })
        .collect();
    out.sort();
    out
}
