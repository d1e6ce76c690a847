//! Bottlenecks: expensive work waits in a short queue with a deadline, and a
//! request that would wait longer is answered `503 Service Unavailable` with
//! `Retry-After` at once, instead of piling up until the server falls over.
//!
//! There are three such queues. Renders are limited here. The database pool has
//! its own (`[database] max_connections` and `pool_timeout_ms`): a render whose
//! model read waits past that deadline becomes a 503 as well. Templates are
//! compiled when a site loads, before it takes traffic, so compilation never
//! runs on a visitor's request in production (see `SiteTable::load`).
//!
//! Renders are limited per site (one site's rush does not starve another) and run
//! with `block_in_place`, so the runtime's workers stay free for cached pages,
//! static files and push while templates render.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Response, StatusCode};
use tokio::sync::Semaphore;

use bulwark_http::Body;

/// How many renders may run at once per site, and how long one may wait for a turn.
#[derive(Debug, Clone, Copy)]
pub struct RenderLimits {
    pub concurrency: usize,
    pub queue_timeout: Duration,
}

impl Default for RenderLimits {
    fn default() -> Self {
        RenderLimits {
            concurrency: std::thread::available_parallelism().map_or(2, |n| n.get() * 2),
            queue_timeout: Duration::from_secs(2),
        }
    }
}

pub struct Bottleneck {
    slots: Semaphore,
    queue_timeout: Duration,
    refused: AtomicU64,
    database_busy: AtomicU64,
}

/// The queue deadline passed.
#[derive(Debug)]
pub struct Busy;

impl Bottleneck {
    pub fn new(limits: RenderLimits) -> Bottleneck {
        Bottleneck {
            slots: Semaphore::new(limits.concurrency.max(1)),
            queue_timeout: limits.queue_timeout,
            refused: AtomicU64::new(0),
            database_busy: AtomicU64::new(0),
        }
    }

    /// Runs `work` when a slot is free within the deadline. Work that `cost` has
    /// seen finish quickly runs right on the runtime worker; anything slower (or
    /// not measured yet) runs with `block_in_place`, so the workers stay free for
    /// cached pages, static files and push while it renders.
    pub async fn run<T>(&self, cost: &RenderCost, work: impl FnOnce() -> T) -> Result<T, Busy> {
        let permit = match tokio::time::timeout(self.queue_timeout, self.slots.acquire()).await {
            Ok(Ok(permit)) => permit,
            _ => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                return Err(Busy);
            }
        };
        let started = Instant::now();
        let out = if cost.is_cheap() {
            work()
        } else {
            bulwark_template::off_the_runtime(work)
        };
        cost.record(started.elapsed());
        drop(permit);
        Ok(out)
    }

    /// Requests refused with 503 so far because no render slot freed up in time.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// A render gave up waiting for a database connection (the pool is the
    /// bottleneck in front of the database): it was answered with 503 too.
    pub fn note_database_busy(&self) {
        self.database_busy.fetch_add(1, Ordering::Relaxed);
    }

    /// Requests refused with 503 so far because the database was busy.
    pub fn database_busy(&self) -> u64 {
        self.database_busy.load(Ordering::Relaxed)
    }
}

/// How long one kind of render (a dispatch rule's) usually takes: a moving
/// average of its last runs, in microseconds.
///
/// `block_in_place` hands the worker's core to another thread and back, which
/// costs more than a small template takes to render (at 50k renders/s it halved
/// the rate and grew the blocking pool to ~180 threads). So renders known to be
/// quick run inline, and only slow ones move off the worker.
#[derive(Debug)]
pub struct RenderCost(AtomicU32);

/// Renders that usually finish faster than this run on the runtime worker.
const INLINE_BELOW: Duration = Duration::from_micros(500);
const UNMEASURED: u32 = u32::MAX;

impl Default for RenderCost {
    fn default() -> Self {
        RenderCost(AtomicU32::new(UNMEASURED))
    }
}

impl RenderCost {
    fn is_cheap(&self) -> bool {
        u128::from(self.0.load(Ordering::Relaxed)) < INLINE_BELOW.as_micros()
    }

    /// Folds one run in (7/8 of the old average, 1/8 of the new run): one slow
    /// render moves a cheap page off the workers after a few runs, not at once.
    fn record(&self, took: Duration) {
        let micros = u32::try_from(took.as_micros()).unwrap_or(u32::MAX - 1);
        let old = self.0.load(Ordering::Relaxed);
        let new = if old == UNMEASURED {
            micros
        } else {
            ((u64::from(old) * 7 + u64::from(micros)) / 8) as u32
        };
        self.0.store(new, Ordering::Relaxed);
    }
}

pub fn busy_response() -> Response<Body> {
    let html = "<!doctype html><html><head><meta charset=\"utf-8\"><title>503 Service Unavailable</title></head>\
                <body><h1>Busy</h1><p>Too many visitors at once. Please try again in a moment.</p></body></html>";
    let mut resp = Response::new(Body::from(Bytes::from_static(html.as_bytes())));
    *resp.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let h = resp.headers_mut();
    h.insert(RETRY_AFTER, HeaderValue::from_static("1"));
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_move_inline_once_measured_quick_and_back_off_when_slow() {
        let cost = RenderCost::default();
        assert!(!cost.is_cheap(), "unmeasured work stays off the workers");
        cost.record(Duration::from_micros(40));
        assert!(cost.is_cheap());
        // One slow run does not flip it; a few in a row do.
        cost.record(Duration::from_millis(2));
        assert!(cost.is_cheap());
        for _ in 0..4 {
            cost.record(Duration::from_millis(20));
        }
        assert!(!cost.is_cheap());
        for _ in 0..40 {
            cost.record(Duration::from_micros(40));
        }
        assert!(cost.is_cheap());
    }
}
