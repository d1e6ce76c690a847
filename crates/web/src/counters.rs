//! What a site counts as it serves: answers by dispatch rule and status class,
//! their latency (when something reads it), page cache hits. Read once a
//! second for the live figures (`figures.rs`), and by `/metrics` and `bulwark
//! status`.
//!
//! A site's counters outlive its reloads (they are kept with its store), so a
//! count only grows while the server runs, as Prometheus expects of a counter.
//! An answer costs one relaxed add on its rule's counter (the total of
//! requests is their sum, not a counter of its own); its latency, two clock
//! reads and one more add, only on a site whose modules asked for it
//! ([`SiteSetup::measure_latency`](crate::SiteSetup::measure_latency)).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use bulwark_site::{Controller, DispatchRule};

/// The upper bounds of the latency buckets, in seconds (Prometheus's `le`).
pub const LATENCY_BOUNDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// What the core counts per site as it serves (relaxed atomics: a figure a
/// request late is still right).
#[derive(Debug, Default)]
pub struct Counters {
    /// Pages answered from the page cache, or from a render another request led.
    pub(crate) page_hits: AtomicU64,
    /// Pages that had to be rendered for the cache.
    pub(crate) page_misses: AtomicU64,
    /// By rule name and controller kind.
    rules: RwLock<BTreeMap<(String, String), Arc<RuleCounters>>>,
    /// Answers no rule matched (a 404, or a redirect a module found).
    unmatched: Arc<RuleCounters>,
    /// The paths asked for most that found nothing.
    not_found: NotFoundPaths,
}

/// How many paths that found nothing are counted one by one; the rest take
/// the place of the least asked for.
const NOT_FOUND_TRACKED: usize = 64;
/// A path longer than this is counted by its first characters.
const NOT_FOUND_PATH_CHARS: usize = 200;

/// The paths most asked for that found nothing, for `/metrics`: the "space
/// saving" count (Metwally, Agrawal, El Abbadi, 2005). At most
/// [`NOT_FOUND_TRACKED`] paths are held; a new one takes the place of the
/// least counted and starts from its count, so a path asked for often is
/// never pushed out by many asked for once (a scanner's), and the memory and
/// the metric's labels stay bounded whatever is asked. Written here rather
/// than taken from a crate: it is a map and one scan, and the crates that
/// offer top-k (count-min sketches) do not say which paths.
#[derive(Debug, Default)]
struct NotFoundPaths {
    counted: Mutex<HashMap<Box<str>, u64>>,
    total: AtomicU64,
}

impl NotFoundPaths {
    fn count(&self, path: &str) {
        self.total.fetch_add(1, Ordering::Relaxed);
        let path = match path.char_indices().nth(NOT_FOUND_PATH_CHARS) {
            Some((end, _)) => &path[..end],
            None => path,
        };
        let mut counted = self.counted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = counted.get_mut(path) {
            *n += 1;
            return;
        }
        let mut start = 0;
        if counted.len() >= NOT_FOUND_TRACKED
            && let Some(least) = counted
                .iter()
                .min_by_key(|(_, n)| **n)
                .map(|(p, n)| (p.clone(), *n))
        {
            counted.remove(&least.0);
            start = least.1;
        }
        counted.insert(path.into(), start + 1);
    }

    fn top(&self, n: usize) -> Vec<(String, u64)> {
        let counted = self.counted.lock().unwrap_or_else(|e| e.into_inner());
        let mut top: Vec<(String, u64)> =
            counted.iter().map(|(p, n)| (p.to_string(), *n)).collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        top.truncate(n);
        top
    }
}

/// The answers of one dispatch rule.
#[derive(Debug, Default)]
pub struct RuleCounters {
    /// By status class: 1xx to 5xx.
    answers: [AtomicU64; 5],
    /// Answers that fell in each latency bucket; the last is above them all.
    latency: [AtomicU64; LATENCY_BOUNDS.len() + 1],
    latency_micros: AtomicU64,
}

impl RuleCounters {
    #[inline]
    pub(crate) fn answered(&self, status: http::StatusCode, took: Option<Duration>) {
        let class = usize::from(status.as_u16() / 100).clamp(1, 5) - 1;
        self.answers[class].fetch_add(1, Ordering::Relaxed);
        if let Some(took) = took {
            let seconds = took.as_secs_f64();
            let bucket = LATENCY_BOUNDS
                .iter()
                .position(|bound| seconds <= *bound)
                .unwrap_or(LATENCY_BOUNDS.len());
            self.latency[bucket].fetch_add(1, Ordering::Relaxed);
            let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
            self.latency_micros.fetch_add(micros, Ordering::Relaxed);
        }
    }

    fn total(&self) -> u64 {
        self.answers.iter().map(|a| a.load(Ordering::Relaxed)).sum()
    }
}

/// One rule's answers as read at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleAnswers {
    /// The dispatch rule's name; empty for requests no rule matched.
    pub rule: String,
    /// Its controller kind (`template`, `page`, `file`, `endpoint`, a
    /// module's kind such as `push`).
    pub controller: String,
    /// Answers by status class (`[1xx, 2xx, 3xx, 4xx, 5xx]`).
    pub by_class: [u64; 5],
    /// Answers timed, per bucket of [`LATENCY_BOUNDS`] (not cumulative; the
    /// last holds those above every bound).
    pub latency: [u64; LATENCY_BOUNDS.len() + 1],
    pub latency_seconds: f64,
}

impl Counters {
    pub(crate) fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters of each of `rules` (by index), made when first needed
    /// and the same ones after a reload.
    pub(crate) fn for_rules(&self, rules: &[DispatchRule]) -> Vec<Arc<RuleCounters>> {
        let mut known = self.rules.write().unwrap_or_else(|e| e.into_inner());
        rules
            .iter()
            .map(|rule| {
                let key = (
                    rule.name.clone(),
                    controller_kind(&rule.controller).to_owned(),
                );
                known.entry(key).or_default().clone()
            })
            .collect()
    }

    pub(crate) fn unmatched(&self) -> &RuleCounters {
        &self.unmatched
    }

    /// A request for `path` found nothing (and no module had it moved).
    pub(crate) fn not_found(&self, path: &str) {
        self.not_found.count(path);
    }

    /// Requests that found nothing since the server started.
    pub fn not_found_total(&self) -> u64 {
        self.not_found.total.load(Ordering::Relaxed)
    }

    /// The `n` paths asked for most that found nothing, most first, with how
    /// often (never fewer than they were asked for; more only for a path
    /// that took the place of another).
    pub fn not_found_top(&self, n: usize) -> Vec<(String, u64)> {
        self.not_found.top(n)
    }

    /// Every answer of the site (not an alias's redirect).
    pub fn requests(&self) -> u64 {
        let rules = self.rules.read().unwrap_or_else(|e| e.into_inner());
        rules.values().map(|r| r.total()).sum::<u64>() + self.unmatched.total()
    }

    /// Each rule's answers (those with any), and the unmatched requests'.
    pub fn answers(&self) -> Vec<RuleAnswers> {
        let read = |rule: &str, controller: &str, c: &RuleCounters| RuleAnswers {
            rule: rule.to_owned(),
            controller: controller.to_owned(),
            by_class: std::array::from_fn(|i| c.answers[i].load(Ordering::Relaxed)),
            latency: std::array::from_fn(|i| c.latency[i].load(Ordering::Relaxed)),
            latency_seconds: c.latency_micros.load(Ordering::Relaxed) as f64 / 1e6,
        };
        let rules = self.rules.read().unwrap_or_else(|e| e.into_inner());
        rules
            .iter()
            .map(|((rule, controller), c)| read(rule, controller, c))
            .chain(std::iter::once(read("", "none", &self.unmatched)))
            .filter(|a| a.by_class.iter().any(|n| *n > 0))
            .collect()
    }
}

/// The name of a rule's controller kind.
pub fn controller_kind(controller: &Controller) -> &str {
    match controller {
        Controller::Template { .. } => "template",
        Controller::Lib => "lib",
        Controller::File { .. } => "file",
        Controller::Redirect { .. } => "redirect",
        Controller::Page { .. } => "page",
        Controller::Endpoint { .. } => "endpoint",
        Controller::Module { kind, .. } => kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_counts_in_its_class_and_its_latency_bucket() {
        let c = RuleCounters::default();
        c.answered(http::StatusCode::OK, Some(Duration::from_micros(700)));
        c.answered(http::StatusCode::NOT_FOUND, None);
        c.answered(
            http::StatusCode::SERVICE_UNAVAILABLE,
            Some(Duration::from_secs(60)),
        );
        let counters = Counters::default();
        assert_eq!(c.total(), 3);
        assert_eq!(
            std::array::from_fn::<u64, 5, _>(|i| c.answers[i].load(Ordering::Relaxed)),
            [0, 1, 0, 1, 1]
        );
        assert_eq!(c.latency[1].load(Ordering::Relaxed), 1, "0.7 ms is <= 1 ms");
        assert_eq!(c.latency[LATENCY_BOUNDS.len()].load(Ordering::Relaxed), 1);
        assert_eq!(counters.requests(), 0);
    }

    #[test]
    fn a_path_asked_for_often_stays_on_top_of_many_asked_for_once() {
        let counters = Counters::default();
        for i in 0..1000 {
            counters.not_found(&format!("/scan/{i}"));
            if i % 10 == 0 {
                counters.not_found("/wp-login.php");
            }
        }
        counters.not_found(&format!("/{}", "x".repeat(5000)));
        assert_eq!(counters.not_found_total(), 1101);
        let top = counters.not_found_top(1);
        assert_eq!(top[0].0, "/wp-login.php");
        assert!(top[0].1 >= 100, "never fewer than asked for: {top:?}");
        let held = counters.not_found.counted.lock().unwrap();
        assert_eq!(held.len(), NOT_FOUND_TRACKED, "bounded");
        assert!(
            held.keys()
                .all(|p| p.chars().count() <= NOT_FOUND_PATH_CHARS)
        );
    }
}
