//! Push load: N clients (a mix of WebSocket and long-poll) over T topics, each
//! subscribed to 1-5 random topics, and a publisher at a fixed rate whose payloads
//! carry their send time. Reports delivery latency, the server's CPU and memory
//! (read from /proc), and its count of computed vs. needed encodings.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use parking_lot::Mutex;
use rand::Rng;
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::Read;
use tokio_tungstenite::tungstenite::Message;

#[derive(Parser)]
// A later option wins, so a script can append overrides to the user's options.
#[command(args_override_self = true)]
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
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    rate: u64,
    /// Seconds of publishing.
    #[arg(long, default_value_t = 20)]
    duration: u64,
    #[arg(long, default_value = "bench")]
    token: String,
    /// Threads for the load generator (it shares the machine with the server);
    /// default: one per core. One thread alone falls behind at 10,000 clients.
    #[arg(long)]
    threads: Option<usize>,
}

// The generator shares the machine with the server: every cycle it spends is one
// the server does not get, so it is kept lean (mimalloc, one plain HTTP/1.1
// connection per long-poll client, typed parsing of only the timestamps).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// What a batch says that the benchmark needs: each message's send time.
#[derive(Deserialize)]
struct BatchIn {
    #[serde(default)]
    messages: Vec<MessageIn>,
}

#[derive(Deserialize)]
struct MessageIn {
    payload: PayloadIn,
}

#[derive(Deserialize)]
struct PayloadIn {
    t: Option<u64>,
}

fn record(shared: &Shared, batch: &[u8]) {
    let Ok(batch) = serde_json::from_slice::<BatchIn>(batch) else {
        return;
    };
    let now = now_micros();
    let mut h = shared.latency.lock();
    for m in &batch.messages {
        if let Some(t) = m.payload.t {
            let _ = h.record(now.saturating_sub(t).max(1));
        }
    }
    shared
        .received
        .fetch_add(batch.messages.len() as u64, Ordering::Relaxed);
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
    // Ready once every subscription is confirmed.
    let mut confirmed = 0;
    while confirmed < topics.len() {
        match ws.next().await {
            Some(Ok(Message::Text(reply))) if reply.as_str().contains(r#""subscribed""#) => {
                confirmed += 1
            }
            Some(Ok(_)) => {}
            _ => {
                shared.failed.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }
    shared.ready.fetch_add(1, Ordering::Relaxed);
    while let Some(Ok(frame)) = ws.next().await {
        if let Message::Text(text) = frame {
            record(&shared, text.as_bytes());
        }
    }
}

/// One keep-alive HTTP/1.1 connection, as a browser's long-poll uses.
struct PollConnection {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    host: String,
}

impl PollConnection {
    async fn open(addr: &str) -> Option<PollConnection> {
        let stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        stream.set_nodelay(true).ok()?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .ok()?;
        tokio::spawn(connection);
        Some(PollConnection {
            sender,
            host: addr.to_string(),
        })
    }

    /// POSTs and returns the status and the (decoded) body.
    /// A POST, with the client's token once it has one (`X-Push-Token`).
    async fn post(&mut self, path: &str, token: &str, body: Bytes) -> Option<(u16, Bytes)> {
        let request = hyper::Request::post(path)
            .header("host", &self.host)
            .header("x-push-token", token)
            .header("accept-encoding", "gzip")
            .header("content-type", "application/json")
            .body(Full::new(body))
            .ok()?;
        self.sender.ready().await.ok()?;
        let response = self.sender.send_request(request).await.ok()?;
        let status = response.status().as_u16();
        let gzip = response
            .headers()
            .get("content-encoding")
            .is_some_and(|v| v == "gzip");
        let body = response.into_body().collect().await.ok()?.to_bytes();
        if !gzip {
            return Some((status, body));
        }
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&body[..])
            .read_to_end(&mut plain)
            .ok()?;
        Some((status, Bytes::from(plain)))
    }
}

async fn poll_client(addr: String, topics: Vec<String>, shared: Arc<Shared>) {
    let failed = || shared.failed.fetch_add(1, Ordering::Relaxed);
    let Some(mut connection) = PollConnection::open(&addr).await else {
        failed();
        return;
    };
    let hello: Value = match connection.post("/push/poll", "", Bytes::new()).await {
        Some((200, body)) => serde_json::from_slice(&body).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let (Some(id), Some(token)) = (hello["client"].as_str(), hello["token"].as_str()) else {
        failed();
        return;
    };
    let (id, token) = (id.to_string(), token.to_string());
    let commands: Vec<Value> = topics
        .iter()
        .map(|t| json!({"op": "subscribe", "topic": t}))
        .collect();
    let commands = Bytes::from(serde_json::to_vec(&commands).unwrap());
    if !matches!(
        connection
            .post(&format!("/push/command?client={id}"), &token, commands)
            .await,
        Some((200, _))
    ) {
        failed();
        return;
    }
    shared.ready.fetch_add(1, Ordering::Relaxed);
    let poll = format!("/push/poll?client={id}");
    loop {
        match connection.post(&poll, &token, Bytes::new()).await {
            Some((200, body)) => record(&shared, &body),
            Some((204, _)) => {}
            _ => {
                failed();
                return;
            }
        }
    }
}

/// utime + stime of a process, in clock ticks (1/100 s).
fn cpu_ticks_of(stat_path: &str) -> u64 {
    let stat = std::fs::read_to_string(stat_path).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line.
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args = Args::parse();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(
            args.threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
        )
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(run(args));
}

async fn run(args: Args) {
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
    let addr = args
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let websockets = (args.clients as f64 * args.websocket_share).round() as usize;
    let started = Instant::now();
    for i in 0..args.clients {
        let topics = pick_topics(args.topics);
        let shared = shared.clone();
        let url = args.url.clone();
        if i < websockets {
            tokio::spawn(websocket_client(url, topics, shared));
        } else {
            tokio::spawn(poll_client(addr.clone(), topics, shared));
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
    eprintln!("{ready} clients ready; publishing for {}s", args.duration);
    shared.latency.lock().reset();
    shared.received.store(0, Ordering::Relaxed);
    let server_stat = format!("/proc/{}/stat", args.pid);
    let cpu_before = cpu_ticks_of(&server_stat);
    let own_cpu_before = cpu_ticks_of("/proc/self/stat");
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
    let cpu = (cpu_ticks_of(&server_stat) - cpu_before) as f64 / 100.0 / elapsed * 100.0;
    let own_cpu =
        (cpu_ticks_of("/proc/self/stat") - own_cpu_before) as f64 / 100.0 / elapsed * 100.0;
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
    println!(
        "CPU                  server {cpu:.0}%, this load generator {own_cpu:.0}% of one core while publishing ({} cores)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
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
    // For scripts: one line, key=value.
    println!(
        "summary p50_ms={:.1} p99_ms={:.1} cpu={cpu:.0} rss_peak_mib={}",
        h.value_at_quantile(0.5) as f64 / 1000.0,
        h.value_at_quantile(0.99) as f64 / 1000.0,
        peak_rss / 1024
    );
    std::process::exit(0);
}
