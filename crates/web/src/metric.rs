//! Samples for a monitoring system (the `metrics` module's `/metrics`): the
//! core's own, read from what it counts anyway, and what modules add through
//! [`GatherMetrics`](crate::events::GatherMetrics). Reading them costs the
//! request path nothing: every number here is a counter the site keeps
//! whether or not anyone reads it (only latency is timed on demand).

use std::sync::atomic::Ordering;

use crate::counters::LATENCY_BOUNDS;
use crate::site::SiteRuntime;

/// How many of the paths that found nothing `/metrics` names.
const NOT_FOUND_TOP: usize = 10;

/// Counters only grow (Prometheus sees a restart as a reset); gauges go both
/// ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    Counter,
    Gauge,
    /// One sample per bucket, with `le`, and `_sum` and `_count` (the
    /// samples' names say which).
    Histogram,
}

/// One sample: a metric's name (`bulwark_push_clients`), what it means, its
/// kind, its labels (the site's is added by whoever serves it) and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: MetricKind,
    /// For a histogram's samples: `_bucket`, `_sum` or `_count`; else empty.
    pub suffix: &'static str,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

impl Metric {
    pub fn counter(name: &'static str, help: &'static str, value: u64) -> Metric {
        Metric {
            name,
            help,
            kind: MetricKind::Counter,
            suffix: "",
            labels: Vec::new(),
            value: value as f64,
        }
    }

    pub fn gauge(name: &'static str, help: &'static str, value: f64) -> Metric {
        Metric {
            name,
            help,
            kind: MetricKind::Gauge,
            suffix: "",
            labels: Vec::new(),
            value,
        }
    }

    pub fn with(mut self, label: &'static str, value: impl Into<String>) -> Metric {
        self.labels.push((label, value.into()));
        self
    }
}

/// The core's samples of a site: answers by rule, controller and status
/// class, their latency, the caches, renders, the bottlenecks' refusals and
/// the database connections.
pub fn core_metrics(site: &SiteRuntime) -> Vec<Metric> {
    let mut out = Vec::new();
    let counters = site.counters();
    for answers in counters.answers() {
        for (class, n) in answers.by_class.iter().enumerate() {
            if *n == 0 {
                continue;
            }
            out.push(
                Metric::counter(
                    "bulwark_http_requests_total",
                    "Answers, by dispatch rule, controller kind and status class.",
                    *n,
                )
                .with("rule", answers.rule.clone())
                .with("controller", answers.controller.clone())
                .with("status", format!("{}xx", class + 1)),
            );
        }
        let timed: u64 = answers.latency.iter().sum();
        if timed == 0 {
            continue;
        }
        let sample = |suffix, value: f64| Metric {
            name: "bulwark_http_request_duration_seconds",
            help: "Time from a request's head to its answer's, by dispatch rule.",
            kind: MetricKind::Histogram,
            suffix,
            labels: vec![
                ("rule", answers.rule.clone()),
                ("controller", answers.controller.clone()),
            ],
            value,
        };
        let mut cumulative = 0;
        for (i, n) in answers.latency.iter().enumerate() {
            cumulative += n;
            let le = LATENCY_BOUNDS
                .get(i)
                .map_or_else(|| "+Inf".to_owned(), f64::to_string);
            out.push(sample("_bucket", cumulative as f64).with("le", le));
        }
        out.push(sample("_sum", answers.latency_seconds));
        out.push(sample("_count", timed as f64));
    }
    out.push(Metric::counter(
        "bulwark_not_found_total",
        "Requests that found nothing (answered 404; not those a module answered \
         with a redirect or 410).",
        counters.not_found_total(),
    ));
    for (path, n) in counters.not_found_top(NOT_FOUND_TOP) {
        out.push(
            Metric::counter(
                "bulwark_not_found_path_total",
                "The paths asked for most that found nothing, by path (the ten most; a \
                 count may be high for a path that took the place of a rarer one).",
                n,
            )
            .with("path", path),
        );
    }
    let page = |outcome: &str, n: &std::sync::atomic::AtomicU64| {
        Metric::counter(
            "bulwark_page_cache_lookups_total",
            "Pages looked up in the page cache, by outcome (hit: no render of its own).",
            n.load(Ordering::Relaxed),
        )
        .with("outcome", outcome)
    };
    out.push(page("hit", &counters.page_hits));
    out.push(page("miss", &counters.page_misses));
    let models = site.models();
    let fragment = |outcome: &str, n: &std::sync::atomic::AtomicU64| {
        Metric::counter(
            "bulwark_fragment_cache_lookups_total",
            "Fragments ({% call cache() %}) looked up, by outcome.",
            n.load(Ordering::Relaxed),
        )
        .with("outcome", outcome)
    };
    out.push(fragment("hit", &models.fragment_hits));
    out.push(fragment("miss", &models.fragment_misses));
    let stats = models.cache.stats();
    let cache = |outcome: &str, n: u64| {
        Metric::counter(
            "bulwark_cache_reads_total",
            "Reads of the site's cache (models, fragments and pages), by outcome: \
             hit, miss, grace (an old value served while one is computed), \
             stale_if_error (an old value served because computing failed).",
            n,
        )
        .with("outcome", outcome)
    };
    out.push(cache("hit", stats.hits));
    out.push(cache("miss", stats.misses));
    out.push(cache("grace", stats.grace_hits));
    out.push(cache("stale_if_error", stats.stale_if_error));
    out.push(Metric::counter(
        "bulwark_cache_evictions_total",
        "Entries the site's cache removed to stay within its byte budget.",
        stats.evictions,
    ));
    out.push(Metric::gauge(
        "bulwark_cache_entries",
        "Entries in the site's cache.",
        stats.entries as f64,
    ));
    out.push(Metric::gauge(
        "bulwark_cache_bytes",
        "Bytes the entries in the site's cache weigh.",
        stats.bytes_used as f64,
    ));
    out.push(Metric::counter(
        "bulwark_renders_total",
        "Templates rendered.",
        models.renders.load(Ordering::Relaxed),
    ));
    for (bottleneck, n) in site.refusals() {
        out.push(refused(bottleneck, n));
    }
    let pool = site.pool_use();
    for (state, n) in [("open", pool.open), ("busy", pool.busy)] {
        out.push(
            Metric::gauge(
                "bulwark_database_connections",
                "Database connections of the site: open, and busy with a query or transaction.",
                f64::from(n),
            )
            .with("state", state),
        );
    }
    out
}

/// A bottleneck's 503s: the core's and a module's (`media_resizes`) alike.
pub fn refused(bottleneck: &str, n: u64) -> Metric {
    Metric::counter(
        "bulwark_refused_total",
        "Requests answered 503 because a bottleneck was full, by bottleneck.",
        n,
    )
    .with("bottleneck", bottleneck)
}
