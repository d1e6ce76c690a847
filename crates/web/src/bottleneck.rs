//! Bottlenecks: expensive work waits in a short queue with a deadline, and a
//! request that would wait longer is answered `503 Service Unavailable` with
//! `Retry-After` at once, instead of piling up until the server falls over.
//!
//! There are four such queues. Renders are limited here, and so is building a
//! combined `/lib/` body ([`LibBuilds`]: concurrency and memory). The database pool has
//! its own (`[database] max_connections` and `pool_timeout_ms`): a render whose
//! model read waits past that deadline becomes a 503 as well. Templates are
//! compiled when a site loads, before it takes traffic, so compilation never
//! runs on a visitor's request in production (see `SiteTable::load`).
//!
//! Renders are limited per site (one site's rush does not starve another) and run
//! with `block_in_place`, so the runtime's workers stay free for cached pages,
//! static files and push while templates render.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
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
    slots: Slots,
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
            slots: Slots::new(limits.concurrency.max(1)),
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
        // A free slot is taken without a timer (reading the clock and
        // registering a deadline cost more than a small render's lookup).
        let slot = match self.slots.try_take() {
            Some(slot) => slot,
            // Boxed: waiting is the rare case, and its timer would make every
            // render's future larger.
            None => {
                match Box::pin(tokio::time::timeout(self.queue_timeout, self.slots.take())).await {
                    Ok(slot) => slot,
                    Err(_) => {
                        self.refused.fetch_add(1, Ordering::Relaxed);
                        return Err(Busy);
                    }
                }
            }
        };
        let started = Instant::now();
        let out = if cost.is_cheap() {
            work()
        } else {
            bulwark_template::off_the_runtime(work)
        };
        cost.record(started.elapsed());
        drop(slot);
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

/// The render slots: taken and given back with one atomic operation each,
/// and a queue only for those who wait. (tokio's `Semaphore` locks its queue of
/// waiters whenever a permit is given back, waiters or not: a lock shared by
/// every render of the site, on every request.)
struct Slots {
    free: AtomicUsize,
    /// How many are waiting in [`take`](Self::take): a slot given back wakes
    /// one only then.
    waiting: AtomicUsize,
    freed: tokio::sync::Notify,
}

/// A slot in use, given back when dropped (also when a render panics).
struct Slot<'a>(&'a Slots);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.free.fetch_add(1, Ordering::SeqCst);
        // SeqCst on both sides: a waiter counts itself before it looks for a
        // free slot, and a slot is freed before waiters are looked for, so
        // one of the two sees the other.
        if self.0.waiting.load(Ordering::SeqCst) > 0 {
            self.0.freed.notify_one();
        }
    }
}

impl Slots {
    fn new(slots: usize) -> Slots {
        Slots {
            free: AtomicUsize::new(slots),
            waiting: AtomicUsize::new(0),
            freed: tokio::sync::Notify::new(),
        }
    }

    fn try_take(&self) -> Option<Slot<'_>> {
        self.free
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .ok()
            .map(|_| Slot(self))
    }

    /// Waits for a free slot (cancelled by dropping: a wake-up it was given
    /// passes on to the next waiter, as `Notify` does).
    async fn take(&self) -> Slot<'_> {
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(slot) = self.try_take() {
                return slot;
            }
            freed.await;
        }
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

/// How many combined `/lib/` bodies a site may build at once, how much memory the
/// builds may take together, and how long a build may wait for its turn.
#[derive(Debug, Clone, Copy)]
pub struct LibLimits {
    pub concurrency: usize,
    pub memory_bytes: u64,
    pub queue_timeout: Duration,
}

impl Default for LibLimits {
    fn default() -> Self {
        LibLimits {
            concurrency: std::thread::available_parallelism().map_or(2, |n| n.get()),
            memory_bytes: 128 * 1024 * 1024,
            queue_timeout: Duration::from_secs(2),
        }
    }
}

/// The bottleneck in front of building combined `/lib/` bodies (read the files,
/// compress them with gzip and brotli at their best).
///
/// Each URL names its own combination, so a visitor can ask for as many distinct
/// ones as there are orderings of a site's files, and building one costs seconds of
/// CPU and tens of megabytes for large inputs. Builds take a slot (one per core: the
/// work is CPU-bound) and their estimated peak memory from a budget; a build that
/// gets neither within the deadline is refused (503), while combinations already
/// built keep being served from the cache.
pub struct LibBuilds {
    slots: Semaphore,
    memory_kib: Semaphore,
    memory_budget_kib: u32,
    queue_timeout: Duration,
    refused: AtomicU64,
}

impl LibBuilds {
    pub fn new(limits: LibLimits) -> LibBuilds {
        let memory_budget_kib = u32::try_from(limits.memory_bytes / 1024)
            .unwrap_or(u32::MAX >> 4)
            .max(1024);
        LibBuilds {
            slots: Semaphore::new(limits.concurrency.max(1)),
            memory_kib: Semaphore::new(memory_budget_kib as usize),
            memory_budget_kib,
            queue_timeout: limits.queue_timeout,
            refused: AtomicU64::new(0),
        }
    }

    /// Runs `build` (input of `input_bytes`) on the blocking pool once a slot and its
    /// memory are free within the deadline.
    pub async fn run<T: Send + 'static>(
        &self,
        input_bytes: u64,
        build: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Busy> {
        // A build larger than the whole budget runs alone rather than never.
        let cost = build_cost_kib(input_bytes).min(self.memory_budget_kib);
        let acquire = async {
            let slot = self.slots.acquire().await.ok()?;
            let memory = self.memory_kib.acquire_many(cost).await.ok()?;
            Some((slot, memory))
        };
        let Ok(Some(permits)) = tokio::time::timeout(self.queue_timeout, acquire).await else {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Err(Busy);
        };
        let out = tokio::task::spawn_blocking(build)
            .await
            .expect("a lib build does not panic");
        drop(permits);
        Ok(out)
    }

    /// Builds refused with 503 so far.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

/// The peak memory of building a combined body, in KiB: the input and its two
/// compressed copies, plus brotli's working memory, which measured at about 2 MiB
/// plus 16 times the input, levelling off near 35 MiB with its 1 MiB window
/// (`bulwark_encoding`, `Effort::Best`).
fn build_cost_kib(input_bytes: u64) -> u32 {
    let working = (2 * 1024 * 1024 + 16 * input_bytes).min(40 * 1024 * 1024);
    u32::try_from((3 * input_bytes + working) / 1024).unwrap_or(u32::MAX)
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

    #[tokio::test]
    async fn a_render_slot_given_back_goes_to_a_waiter_even_past_one_that_gave_up() {
        use futures_util::FutureExt;
        let slots = Slots::new(1);
        let first = slots.try_take().expect("one slot is free");
        assert!(slots.try_take().is_none(), "the only slot is taken");
        let mut gives_up = Box::pin(slots.take());
        let mut waits = Box::pin(slots.take());
        assert!(gives_up.as_mut().now_or_never().is_none());
        assert!(waits.as_mut().now_or_never().is_none());
        drop(first);
        // The first waiter was woken; it goes away without taking the slot,
        // and the wake-up passes to the second.
        drop(gives_up);
        let second = waits.await;
        assert_eq!(slots.waiting.load(Ordering::SeqCst), 0);
        drop(second);
        assert!(slots.try_take().is_some(), "given back when dropped");
    }

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

    #[test]
    fn a_lib_build_costs_its_input_and_outputs_plus_bounded_brotli_memory() {
        assert_eq!(build_cost_kib(0), 2048);
        assert_eq!(build_cost_kib(100 * 1024), 2048 + 300 + 1600);
        // Brotli's share stops growing; the copies do not.
        assert_eq!(build_cost_kib(16 * 1024 * 1024), 40 * 1024 + 48 * 1024);
    }

    #[tokio::test]
    async fn a_lib_build_beyond_the_slots_waits_out_the_deadline_and_is_refused() {
        let builds = std::sync::Arc::new(LibBuilds::new(LibLimits {
            concurrency: 1,
            memory_bytes: 1 << 30,
            queue_timeout: Duration::from_millis(50),
        }));
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let first = tokio::spawn({
            let builds = builds.clone();
            async move { builds.run(10, move || hold.recv().is_ok()).await }
        });
        while builds.slots.available_permits() == 1 {
            tokio::task::yield_now().await;
        }
        assert!(builds.run(10, || ()).await.is_err());
        assert_eq!(builds.refused(), 1);
        release.send(()).unwrap();
        assert!(first.await.unwrap().unwrap());
        assert!(builds.run(10, || ()).await.is_ok(), "the slot is back");
    }

    #[tokio::test]
    async fn lib_builds_share_one_memory_budget() {
        let builds = std::sync::Arc::new(LibBuilds::new(LibLimits {
            concurrency: 4,
            memory_bytes: 64 * 1024 * 1024,
            queue_timeout: Duration::from_millis(50),
        }));
        let (release, hold) = std::sync::mpsc::channel::<()>();
        // About 50 MiB of the 64: a second build of its size does not fit.
        let big = 4 * 1024 * 1024;
        let first = tokio::spawn({
            let builds = builds.clone();
            async move { builds.run(big, move || hold.recv().is_ok()).await }
        });
        while builds.slots.available_permits() == 4 {
            tokio::task::yield_now().await;
        }
        assert!(builds.run(big, || ()).await.is_err());
        assert!(builds.run(1024, || ()).await.is_ok(), "a small one fits");
        release.send(()).unwrap();
        assert!(first.await.unwrap().unwrap());
        assert!(builds.run(big, || ()).await.is_ok());
    }
}
