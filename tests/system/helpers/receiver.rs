//! A webhook receiver for tests: a real HTTP/1.1 server on loopback that
//! keeps every request it gets (headers and body), answers each with the
//! next status of a script (then 200), and checks signatures the way the
//! Standard Webhooks specification says a receiver must.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// One request received.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HashMap<String, String>,
    pub body: String,
    /// The status it was answered with.
    pub status: u16,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }

    /// Whether its signature verifies under `secret` (`whsec_...`): the
    /// HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` with the
    /// base64-decoded secret, one of the space-separated `v1,` signatures.
    pub fn signed_by(&self, secret: &str) -> bool {
        let key = base64::engine::general_purpose::STANDARD
            .decode(secret.trim_start_matches("whsec_"))
            .unwrap();
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key).unwrap();
        mac.update(
            format!(
                "{}.{}.{}",
                self.header("webhook-id"),
                self.header("webhook-timestamp"),
                self.body
            )
            .as_bytes(),
        );
        let expected =
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        self.header("webhook-signature")
            .split(' ')
            .filter_map(|s| s.strip_prefix("v1,"))
            .any(|s| s == expected)
    }
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
    script: VecDeque<u16>,
}

/// The receiver; it stops when dropped.
pub struct Receiver {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// On a free port, or on `addr` (a receiver that comes back).
    pub async fn start(addr: Option<SocketAddr>, script: &[u16]) -> Receiver {
        let listener = TcpListener::bind(addr.unwrap_or_else(|| "127.0.0.1:0".parse().unwrap()))
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            received: Vec::new(),
            script: script.iter().copied().collect(),
        }));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let state = shared.clone();
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut read = BufReader::new(read);
                    loop {
                        let mut headers = HashMap::new();
                        let mut line = String::new();
                        if read.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        loop {
                            line.clear();
                            if read.read_line(&mut line).await.unwrap_or(0) == 0 {
                                return;
                            }
                            let trimmed = line.trim_end();
                            if trimmed.is_empty() {
                                break;
                            }
                            if let Some((k, v)) = trimmed.split_once(':') {
                                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
                            }
                        }
                        let len: usize = headers
                            .get("content-length")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0);
                        let mut body = vec![0; len];
                        if read.read_exact(&mut body).await.is_err() {
                            return;
                        }
                        let status = {
                            let mut state = state.lock().unwrap();
                            let status = state.script.pop_front().unwrap_or(200);
                            state.received.push(Received {
                                headers,
                                body: String::from_utf8_lossy(&body).into_owned(),
                                status,
                            });
                            status
                        };
                        let answer = format!(
                            "HTTP/1.1 {status} X\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"
                        );
                        if write.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Receiver { addr, state, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// Every request so far, in the order they came.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    /// The requests answered 2xx: the messages delivered.
    pub fn delivered(&self) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| (200..300).contains(&r.status))
            .collect()
    }
}
