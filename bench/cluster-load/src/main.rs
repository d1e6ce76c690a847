//! Voters for the voting site (`sites/voting`) on several nodes behind a load
//! balancer: each voter walks the whole way a browser does (about 25 requests:
//! the start page, the projects with their images, the theme filter's Ajax
//! answers, two project pages, the form, the post, the confirmation), with
//! think time between pages, and new voters arrive at a target rate whatever
//! the answers (an open loop). A request that fails (no connection, 502, 503,
//! 504) is tried again up to three times, as a browser's user would; a voter
//! who still gets no answer, or a wrong one, is a voter-visible error.
//!
//! At the end it reports votes an hour, p50/p99 per kind of request, retries
//! and errors, and compares every vote it was told was accepted (a `303` to the
//! confirmation, or a `409` on a retry of a post whose first answer was lost)
//! with the votes in the database.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use rand::Rng;
use reqwest::{Method, StatusCode};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
struct Args {
    /// The load balancer.
    #[arg(long, default_value = "http://127.0.0.1:18080")]
    url: String,
    /// The site's host name.
    #[arg(long, default_value = "voting.localhost")]
    host: String,
    /// New voters a second.
    #[arg(long, default_value_t = 20.0)]
    rate: f64,
    /// Seconds during which voters arrive.
    #[arg(long, default_value_t = 60)]
    duration: u64,
    /// Mean think time between a voter's pages, in milliseconds (each pause is
    /// drawn from half to one and a half of it).
    #[arg(long, default_value_t = 300)]
    think_ms: u64,
    /// Voters in progress at most (arrivals beyond it wait).
    #[arg(long, default_value_t = 4000)]
    max_voters: usize,
    /// PostgreSQL of the site, to check the votes.
    #[arg(long)]
    db_url: String,
    #[arg(long)]
    schema: String,
    /// Tells this run's e-mail addresses from other runs'.
    #[arg(long, default_value = "run")]
    run: String,
    /// Runtime threads (the driver shares the machine with the nodes).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// The kinds of request a voter makes, for the report.
const KINDS: [&str; 9] = [
    "start", "static", "projects", "filter", "project", "form", "post", "thanks", "all",
];

struct Shared {
    args: Args,
    client: reqwest::Client,
    latency: Mutex<BTreeMap<&'static str, Histogram<u64>>>,
    requests: AtomicU64,
    retries: AtomicU64,
    failed_attempts: AtomicU64,
    voters_done: AtomicU64,
    voters_failed: AtomicU64,
    accepted: Mutex<Vec<String>>,
    accepted_on_retry: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
}

/// What a voter saw go wrong, in the end.
#[derive(Debug)]
struct VoterError(String);

struct Answer {
    status: StatusCode,
    location: Option<String>,
    body: String,
    /// Attempts it took (1: the first was answered).
    attempts: u64,
}

impl Shared {
    fn record(&self, kind: &'static str, took: Duration) {
        let us = took.as_micros().max(1) as u64;
        let mut latency = self.latency.lock();
        for k in [kind, "all"] {
            latency
                .entry(k)
                .or_insert_with(|| Histogram::new_with_bounds(1, 120_000_000, 3).unwrap())
                .saturating_record(us);
        }
    }

    fn error(&self, what: String) {
        *self.errors.lock().entry(what).or_default() += 1;
    }

    /// One request, tried again on a lost connection or a 502/503/504 (what a
    /// dying node and a balancer that has not noticed yet answer).
    async fn fetch(
        &self,
        kind: &'static str,
        method: Method,
        path: &str,
        form: Option<&str>,
    ) -> Result<Answer, VoterError> {
        let mut last = String::new();
        for attempt in 0..4 {
            if attempt > 0 {
                self.retries.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
            }
            let mut req = self
                .client
                .request(method.clone(), format!("{}{path}", self.args.url))
                .header("host", &self.args.host)
                .header("accept-language", "nl-NL,nl;q=0.9,en;q=0.8");
            if let Some(form) = form {
                req = req
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(form.to_owned());
            }
            let started = Instant::now();
            self.requests.fetch_add(1, Ordering::Relaxed);
            let sent = req.send().await;
            let answer = match sent {
                Ok(resp) => {
                    let status = resp.status();
                    let location = resp
                        .headers()
                        .get("location")
                        .and_then(|l| l.to_str().ok())
                        .map(str::to_owned);
                    match resp.text().await {
                        Ok(body) => Ok(Answer {
                            status,
                            location,
                            body,
                            attempts: attempt + 1,
                        }),
                        Err(e) => Err(format!("reading the body: {}", kind_of(&e))),
                    }
                }
                Err(e) => Err(kind_of(&e)),
            };
            self.record(kind, started.elapsed());
            match answer {
                Ok(a)
                    if matches!(
                        a.status,
                        StatusCode::BAD_GATEWAY
                            | StatusCode::SERVICE_UNAVAILABLE
                            | StatusCode::GATEWAY_TIMEOUT
                    ) =>
                {
                    self.failed_attempts.fetch_add(1, Ordering::Relaxed);
                    last = format!("{kind}: {}", a.status.as_u16());
                }
                Ok(a) => return Ok(a),
                Err(e) => {
                    self.failed_attempts.fetch_add(1, Ordering::Relaxed);
                    last = format!("{kind}: {e}");
                }
            }
        }
        Err(VoterError(last))
    }

    async fn get(&self, kind: &'static str, path: &str) -> Result<Answer, VoterError> {
        let a = self.fetch(kind, Method::GET, path, None).await?;
        if a.status != StatusCode::OK {
            return Err(VoterError(format!("{kind}: {}", a.status.as_u16())));
        }
        Ok(a)
    }

    async fn think(&self) {
        let mean = self.args.think_ms as f64;
        if mean > 0.0 {
            let ms = rand::rng().random_range(mean * 0.5..=mean * 1.5);
            tokio::time::sleep(Duration::from_millis(ms as u64)).await;
        }
    }

    /// The static files a page names that this voter has not loaded yet, six at
    /// a time like a browser.
    async fn assets(&self, page: &str, loaded: &mut HashSet<String>) -> Result<(), VoterError> {
        let wanted: Vec<String> = between_all(page, "src=\"/lib/", "\"")
            .into_iter()
            .chain(between_all(page, "href=\"/lib/", "\""))
            .map(|p| format!("/lib/{p}"))
            .filter(|p| loaded.insert(p.clone()))
            .collect();
        for group in wanted.chunks(6) {
            let fetches = group.iter().map(|p| self.get("static", p));
            for result in futures_util::future::join_all(fetches).await {
                result?;
            }
        }
        Ok(())
    }
}

fn kind_of(e: &reqwest::Error) -> String {
    if e.is_connect() {
        "no connection".into()
    } else if e.is_timeout() {
        "timeout".into()
    } else if e.is_body() || e.is_decode() {
        "body cut".into()
    } else {
        "connection lost".into()
    }
}

fn between_all(text: &str, start: &str, end: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(start) {
        rest = &rest[i + start.len()..];
        let Some(j) = rest.find(end) else { break };
        out.push(rest[..j].to_owned());
        rest = &rest[j..];
    }
    out
}

fn enc(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b' ' => "+".into(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One voter, from the start page to the confirmation.
async fn vote(shared: &Shared, n: u64) -> Result<(), VoterError> {
    let mut loaded = HashSet::new();
    let start = shared.get("start", "/").await?;
    shared.assets(&start.body, &mut loaded).await?;
    shared.think().await;

    let projects = shared.get("projects", "/projects").await?;
    shared.assets(&projects.body, &mut loaded).await?;
    let ids = between_all(&projects.body, "data-id=\"", "\"");
    if ids.len() < 3 {
        return Err(VoterError(format!("projects: {} listed", ids.len())));
    }
    shared.think().await;
    for theme in ["project_nature", "project_care", "project_sport"]
        .iter()
        .take(3)
    {
        shared
            .get("filter", &format!("/projects/list?theme={theme}"))
            .await?;
        shared.think().await;
    }
    let picks: Vec<String> = {
        let mut rng = rand::rng();
        let mut picks = Vec::new();
        while picks.len() < 3 {
            let id = ids[rng.random_range(0..ids.len())].clone();
            if !picks.contains(&id) {
                picks.push(id);
            }
        }
        picks
    };
    for id in &picks[..2] {
        let page = shared.get("project", &format!("/projects/{id}")).await?;
        shared.assets(&page.body, &mut loaded).await?;
        shared.think().await;
    }
    let query: Vec<String> = picks.iter().map(|p| format!("p={p}")).collect();
    let form = shared
        .get("form", &format!("/vote?{}", query.join("&")))
        .await?;
    let ballot = between_all(&form.body, "name=\"_ballot\" value=\"", "\"")
        .pop()
        .ok_or_else(|| VoterError("form: no ballot".into()))?;
    shared.think().await;

    let email = format!("v{}-{n}@example.nl", shared.args.run);
    let mut body = format!(
        "_ballot={}&name={}&email={}&postcode=1234+AB",
        enc(&ballot),
        enc(&format!("Voter {n}")),
        enc(&email)
    );
    for p in &picks {
        body.push_str(&format!("&p={p}"));
    }
    // The post's own retry: a 409 after an attempt whose answer was lost means
    // that attempt counted.
    let mut tried = false;
    let location = loop {
        let answer = shared
            .fetch("post", Method::POST, "/vote", Some(&body))
            .await;
        match answer {
            Ok(a) if a.status == StatusCode::SEE_OTHER => {
                break a.location.unwrap_or_default();
            }
            Ok(a) if a.status == StatusCode::CONFLICT && (tried || a.attempts > 1) => {
                shared.accepted_on_retry.fetch_add(1, Ordering::Relaxed);
                shared.accepted.lock().push(email);
                return Ok(());
            }
            Ok(a) => {
                return Err(VoterError(format!(
                    "post: {} {}",
                    a.status.as_u16(),
                    between_all(&a.body, "class=\"error\"", "<").join(" ")
                )));
            }
            Err(e) if !tried => {
                // Retried inside `fetch` already; once more, as a voter who
                // presses the button again.
                shared.error(format!("post, pressed again after: {}", e.0));
            }
            Err(e) => return Err(e),
        }
        tried = true;
    };
    shared.accepted.lock().push(email);
    shared.think().await;
    shared.get("thanks", &location).await?;
    Ok(())
}

fn main() {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(args));
}

async fn run(args: Args) {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(2000)
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let shared = Arc::new(Shared {
        args,
        client,
        latency: Mutex::new(BTreeMap::new()),
        requests: AtomicU64::new(0),
        retries: AtomicU64::new(0),
        failed_attempts: AtomicU64::new(0),
        voters_done: AtomicU64::new(0),
        voters_failed: AtomicU64::new(0),
        accepted: Mutex::new(Vec::new()),
        accepted_on_retry: AtomicU64::new(0),
        errors: Mutex::new(BTreeMap::new()),
    });
    let voters = Arc::new(tokio::sync::Semaphore::new(shared.args.max_voters));
    let began = Instant::now();
    let every = Duration::from_secs_f64(1.0 / shared.args.rate);
    let total = (shared.args.rate * shared.args.duration as f64) as u64;
    let reporter = {
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(5));
            tick.tick().await;
            loop {
                tick.tick().await;
                eprintln!(
                    "{:>4}s: {} votes accepted, {} voters failed, {} requests, {} retries",
                    began.elapsed().as_secs(),
                    shared.accepted.lock().len(),
                    shared.voters_failed.load(Ordering::Relaxed),
                    shared.requests.load(Ordering::Relaxed),
                    shared.retries.load(Ordering::Relaxed),
                );
            }
        })
    };
    let mut tasks = Vec::new();
    for n in 0..total {
        tokio::time::sleep_until((began + every.mul_f64(n as f64)).into()).await;
        let permit = voters.clone().acquire_owned().await.unwrap();
        let shared = shared.clone();
        tasks.push(tokio::spawn(async move {
            match vote(&shared, n).await {
                Ok(()) => shared.voters_done.fetch_add(1, Ordering::Relaxed),
                Err(e) => {
                    shared.error(e.0);
                    shared.voters_failed.fetch_add(1, Ordering::Relaxed)
                }
            };
            drop(permit);
        }));
    }
    let arrivals_took = began.elapsed();
    for t in tasks {
        let _ = t.await;
    }
    let took = began.elapsed();
    reporter.abort();
    report(&shared, arrivals_took, took).await;
}

async fn report(shared: &Shared, arrivals_took: Duration, took: Duration) {
    let accepted = shared.accepted.lock().clone();
    let requests = shared.requests.load(Ordering::Relaxed);
    let args = &shared.args;
    println!(
        "target {:.1} voters/s for {} s ({:.0} votes/hour), think time {} ms mean",
        args.rate,
        args.duration,
        args.rate * 3600.0,
        args.think_ms
    );
    println!(
        "voters: {} finished, {} failed (voter-visible errors); votes accepted: {} ({} known only from a 409 on a retried post)",
        shared.voters_done.load(Ordering::Relaxed),
        shared.voters_failed.load(Ordering::Relaxed),
        accepted.len(),
        shared.accepted_on_retry.load(Ordering::Relaxed),
    );
    println!(
        "achieved: {:.0} votes/hour over the arrivals ({:.1} s), {:.0} requests/s over the whole run ({:.1} s), {:.1} requests per voter",
        accepted.len() as f64 / arrivals_took.as_secs_f64() * 3600.0,
        arrivals_took.as_secs_f64(),
        requests as f64 / took.as_secs_f64(),
        took.as_secs_f64(),
        requests as f64 / (accepted.len().max(1)) as f64,
    );
    println!(
        "retries: {} (attempts that failed: {})",
        shared.retries.load(Ordering::Relaxed),
        shared.failed_attempts.load(Ordering::Relaxed)
    );
    println!(
        "{:<9} {:>8} {:>9} {:>9} {:>9}",
        "kind", "count", "p50 ms", "p99 ms", "max ms"
    );
    {
        let latency = shared.latency.lock();
        for kind in KINDS {
            if let Some(h) = latency.get(kind) {
                println!(
                    "{kind:<9} {:>8} {:>9.2} {:>9.2} {:>9.1}",
                    h.len(),
                    h.value_at_quantile(0.5) as f64 / 1000.0,
                    h.value_at_quantile(0.99) as f64 / 1000.0,
                    h.max() as f64 / 1000.0
                );
            }
        }
    }
    for (what, n) in shared.errors.lock().iter() {
        println!("error x{n}: {what}");
    }
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        // utime and stime, fields 14 and 15, after the command's closing parenthesis.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or("", |(_, f)| f)
            .split_whitespace()
            .collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        println!("driver cpu seconds: {:.1}", (ticks(11) + ticks(12)) / 100.0);
    }
    // Every accepted vote must be in the database.
    use sqlx::Connection;
    let mut db = sqlx::PgConnection::connect(&args.db_url)
        .await
        .expect("the database, to check the votes");
    let stored: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT email FROM \"{}\".voting_vote WHERE email LIKE $1",
        args.schema
    )))
    .bind(format!("v{}-%", args.run))
    .fetch_all(&mut db)
    .await
    .expect("reading the votes");
    let stored: HashSet<String> = stored.into_iter().collect();
    let lost: Vec<&String> = accepted.iter().filter(|e| !stored.contains(*e)).collect();
    let accepted_set: HashSet<&String> = accepted.iter().collect();
    let unacknowledged = stored.iter().filter(|e| !accepted_set.contains(e)).count();
    println!(
        "database: {} votes of this run; accepted votes missing: {}; stored votes the voter was not told of: {}",
        stored.len(),
        lost.len(),
        unacknowledged
    );
    for e in lost.iter().take(10) {
        println!("  lost: {e}");
    }
    if !lost.is_empty() {
        std::process::exit(1);
    }
}
