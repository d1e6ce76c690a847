//! A running site's live figures, once a second: requests and renders per
//! second, the page cache's hit ratio, the answers each bottleneck refused
//! with a 503, database connections in use. The core gathers its own and
//! asks the site's modules for theirs ([`GatherFigures`], a fold: the push
//! module adds its clients), then tells them all ([`SiteFigures`]: the admin
//! publishes them to its dashboard). Nothing is gathered for a site no
//! module listens to.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::events::{GatherFigures, SiteFigures};
use crate::site::SiteRuntime;

/// How often the figures are gathered.
pub const FIGURES_EVERY: Duration = Duration::from_secs(1);

/// Database connections: open, and busy with a query or transaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolUse {
    pub open: u32,
    pub busy: u32,
}

/// One second of a site (on one node).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub site: String,
    /// The node they are of, where the site runs on several (the cluster
    /// module names it, and brings the other nodes' figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub requests_per_s: f64,
    pub renders_per_s: f64,
    /// Of the pages looked up in the page cache in the last second, the part
    /// answered without a render of their own; `None` when none was asked for.
    pub page_cache_hit_ratio: Option<f64>,
    /// The 503s each bottleneck answered since the site started, by name
    /// (`renders`, `database`, `lib_builds`, and those modules add).
    pub refused: BTreeMap<String, u64>,
    pub database: PoolUse,
    /// What modules add (`push_clients`).
    pub more: BTreeMap<String, u64>,
}

/// The running totals one second's figures are the difference of.
#[derive(Clone, Copy)]
struct Totals {
    at: Instant,
    requests: u64,
    renders: u64,
    page_hits: u64,
    page_misses: u64,
}

impl Totals {
    fn read(site: &SiteRuntime) -> Totals {
        let c = &site.counters();
        Totals {
            at: Instant::now(),
            requests: c.requests(),
            renders: site.models().renders.load(Ordering::Relaxed),
            page_hits: c.page_hits.load(Ordering::Relaxed),
            page_misses: c.page_misses.load(Ordering::Relaxed),
        }
    }
}

fn figures(site: &SiteRuntime, before: Totals, now: Totals) -> Figures {
    let seconds = now.at.duration_since(before.at).as_secs_f64().max(1e-3);
    let per_s = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / seconds;
    let hits = now.page_hits.saturating_sub(before.page_hits);
    let misses = now.page_misses.saturating_sub(before.page_misses);
    Figures {
        site: site.site().name().to_string(),
        node: None,
        requests_per_s: per_s(before.requests, now.requests),
        renders_per_s: per_s(before.renders, now.renders),
        page_cache_hit_ratio: (hits + misses > 0).then(|| hits as f64 / (hits + misses) as f64),
        refused: site
            .refusals()
            .into_iter()
            .map(|(name, n)| (name.to_owned(), n))
            .collect(),
        database: site.pool_use(),
        more: BTreeMap::new(),
    }
}

/// Gathers and sends the site's figures every [`FIGURES_EVERY`] while the
/// site runs: the task ends with the last handle on the runtime (a reload
/// starts a new one).
pub(crate) fn spawn(site: &Arc<SiteRuntime>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak: Weak<SiteRuntime> = Arc::downgrade(site);
    let mut before = Totals::read(site);
    runtime.spawn(async move {
        let mut every = tokio::time::interval(FIGURES_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        every.tick().await;
        loop {
            every.tick().await;
            let Some(site) = weak.upgrade() else { return };
            let now = Totals::read(&site);
            if site.notifier().has_observers::<SiteFigures>() {
                let own = figures(&site, before, now);
                let all = site.notifier().fold(&GatherFigures, own);
                site.notifier().notify(&SiteFigures(Arc::new(all)));
            }
            before = now;
        }
    });
}
