//! Push load: N clients (a mix of WebSocket and long-poll) over T topics, each
//! subscribed to 1-5 random topics, and a publisher at a fixed rate whose payloads
//! carry their send time. Reports delivery latency, the server's CPU and memory
//! (read from /proc), and its count of computed vs. needed encodings.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use rand::Rng;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

#[derive(Parser)]
struct Args {
    /// Base URL of the server.
    #[arg(long, default_value = "http://127.0.0.1:8200")]
    url: String,
    /// The server's process id (for CPU and memory).
    #[arg(long)]
    pid: u32,
    #[arg(long, default_value_t = 10_000)]
    clients: usize,
    /// Share of clients that use WebSocket; the rest long-poll.
    #[arg(long, default_value_t = 0.5)]
    websocket_share: f64,
    #[arg(long, default_value_t = 50)]
    topics: usize,
    /// Publications per second.
    #[arg(long, default_value_t = 100)]
    rate: u64,
    /// Seconds of publishing.
    #[arg(long, default_value_t = 20)]
    duration: u64,
    #[arg(long, default_value = "bench")]
    token: String,
}

struct Shared {
    latency: Mutex<Histogram<u64>>,
    received: AtomicU64,
    ready: AtomicU64,
    failed: AtomicU64,
}

fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

fn record(shared: &Shared, batch: &Value) {
    let Some(messages) = batch["messages"].as_array() else {
        return;
    };
    let now = now_micros();
    let mut h = shared.latency.lock();
    for m in messages {
        if let Some(t) = m["payload"]["t"].as_u64() {
            let _ = h.record(now.saturating_sub(t).max(1));
        }
    }
    shared
        .received
        .fetch_add(messages.len() as u64, Ordering::Relaxed);
}

fn pick_topics(n: usize) -> Vec<String> {
    let mut rng = rand::rng();
    let count = rng.random_range(1..=5);
    let mut topics: Vec<String> = Vec::new();
    while topics.len() < count {
        let t = format!("bench/t{}", rng.random_range(0..n));
        if !topics.contains(&t) {
            topics.push(t);
        }
    }
    topics
}

async fn websocket_client(url: String, topics: Vec<String>, shared: Arc<Shared>) {
    let ws_url = format!("{}/push/ws", url.replacen("http", "ws", 1));
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(ws_url).await else {
        shared.failed.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let _hello = ws.next().await;
    for t in &topics {
        let cmd = json!({"op": "subscribe", "topic": t}).to_string();
        if ws.send(Message::text(cmd)).await.is_err() {
            shared.failed.fetch_add(1, Ordering::Relaxed);
            return;
        }
    }
    shared.ready.fetch_add(1, Ordering::Relaxed);
    while let Some(Ok(frame)) = ws.next().await {
        if let Message::Text(text) = frame
            && let Ok(v) = serde_json::from_str::<Value>(text.as_str())
        {
            record(&shared, &v);
        }
    }
}

async fn poll_client(http: reqwest::Client, url: String, topics: Vec<String>, shared: Arc<Shared>) {
    let hello: Value = match http.post(format!("{url}/push/poll")).send().await {
        Ok(r) => r.json().await.unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    let Some(id) = hello["client"].as_str().map(str::to_string) else {
        shared.failed.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let commands: Vec<Value> = topics
        .iter()
        .map(|t| json!({"op": "subscribe", "topic": t}))
        .collect();
    if http
        .post(format!("{url}/push/command?client={id}"))
        .json(&commands)
        .send()
        .await
        .is_err()
    {
        shared.failed.fetch_add(1, Ordering::Relaxed);
        return;
    }
    shared.ready.fetch_add(1, Ordering::Relaxed);
    let poll = format!("{url}/push/poll?client={id}");
    loop {
        match http.post(&poll).send().await {
            Ok(r) if r.status() == 200 => {
                if let Ok(v) = r.json::<Value>().await {
                    record(&shared, &v);
                }
            }
            Ok(r) if r.status() == 204 => {}
            _ => {
                shared.failed.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line.
    fields
        .get(11)
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        + fields
            .get(12)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let shared = Arc::new(Shared {
        latency: Mutex::new(Histogram::new(3).unwrap()),
        received: AtomicU64::new(0),
        ready: AtomicU64::new(0),
        failed: AtomicU64::new(0),
    });
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(usize::MAX)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let rss_idle_server = rss_kib(args.pid);
    let websockets = (args.clients as f64 * args.websocket_share).round() as usize;
    let started = Instant::now();
    for i in 0..args.clients {
        let topics = pick_topics(args.topics);
        let shared = shared.clone();
        let url = args.url.clone();
        if i < websockets {
            tokio::spawn(websocket_client(url, topics, shared));
        } else {
            tokio::spawn(poll_client(http.clone(), url, topics, shared));
        }
        // Connect at about 2,000 clients a second, as arrivals rather than one burst.
        if i % 100 == 99 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    while shared.ready.load(Ordering::Relaxed) + shared.failed.load(Ordering::Relaxed)
        < args.clients as u64
    {
        if started.elapsed() > Duration::from_secs(120) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let connect_time = started.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_connected = rss_kib(args.pid);
    let ready = shared.ready.load(Ordering::Relaxed);

    // Publish at a steady rate; record from a clean histogram.
    shared.latency.lock().reset();
    shared.received.store(0, Ordering::Relaxed);
    let cpu_before = cpu_ticks(args.pid);
    let publish_started = Instant::now();
    let mut peak_rss = rss_connected;
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / args.rate));
    let mut published = 0u64;
    let mut last_sample = Instant::now();
    while publish_started.elapsed() < Duration::from_secs(args.duration) {
        ticker.tick().await;
        let topic = format!("bench/t{}", rand::rng().random_range(0..args.topics));
        let http = http.clone();
        let url = format!("{}/push/publish", args.url);
        let token = args.token.clone();
        tokio::spawn(async move {
            let body = json!({"topic": topic, "payload": {"t": now_micros()}});
            let _ = http.post(url).bearer_auth(token).json(&body).send().await;
        });
        published += 1;
        if last_sample.elapsed() > Duration::from_secs(1) {
            peak_rss = peak_rss.max(rss_kib(args.pid));
            last_sample = Instant::now();
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let elapsed = publish_started.elapsed().as_secs_f64();
    let cpu = (cpu_ticks(args.pid) - cpu_before) as f64 / 100.0 / elapsed * 100.0;
    let stats: Value = http
        .get(format!("{}/push/stats", args.url))
        .bearer_auth(&args.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap_or(Value::Null);
    let h = shared.latency.lock();
    let per_conn =
        (rss_connected.saturating_sub(rss_idle_server)) as f64 * 1024.0 / ready.max(1) as f64;
    println!(
        "clients ready        {ready} of {} ({websockets} WebSocket, {} long-poll), failed {}, connected in {:.1}s",
        args.clients,
        args.clients - websockets,
        shared.failed.load(Ordering::Relaxed),
        connect_time.as_secs_f64()
    );
    println!(
        "published            {published} on {} topics at {}/s for {}s",
        args.topics, args.rate, args.duration
    );
    println!(
        "delivered            {} messages",
        shared.received.load(Ordering::Relaxed)
    );
    println!(
        "latency              p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        h.value_at_quantile(0.5) as f64 / 1000.0,
        h.value_at_quantile(0.99) as f64 / 1000.0,
        h.max() as f64 / 1000.0
    );
    let ms = |key: &str| stats[key].as_f64().unwrap_or(f64::NAN) / 1000.0;
    println!(
        "server side          p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms from publication until a transport took the message",
        ms("delivery_p50_us"),
        ms("delivery_p99_us"),
        ms("delivery_max_us")
    );
    println!("server CPU           {cpu:.0}% of one core while publishing");
    println!(
        "server RSS           idle {} MiB, connected {} MiB, peak {} MiB; {:.1} KiB per connection",
        rss_idle_server / 1024,
        rss_connected / 1024,
        peak_rss / 1024,
        per_conn / 1024.0
    );
    println!(
        "encodings            {} computed of {} needed",
        stats["encodings_computed"], stats["encodings_needed"]
    );
    std::process::exit(0);
}
