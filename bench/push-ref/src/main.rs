//! The reference for the push benchmark, as nginx is for the HTTP one: the plainest
//! WebSocket fan-out one would write with the same libraries (tokio, hyper,
//! tokio-tungstenite), speaking just enough of Bulwark's protocol for `push-load`.
//! A publication is serialised once and written at once to every subscriber: no
//! batching, history, recovery, ACL, limits or per-client task. What Bulwark does
//! on top of this costs what the two runs differ by.
//!
//! Usage: push-ref 127.0.0.1:8201

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use parking_lot::RwLock;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A subscriber: its connection's id and the queue its writer reads.
type Subscriber = (u64, mpsc::UnboundedSender<Utf8Bytes>);

#[derive(Default)]
struct State {
    topics: RwLock<HashMap<String, Vec<Subscriber>>>,
    next_id: AtomicU64,
}

#[derive(Deserialize)]
struct Subscribe {
    topic: String,
}

#[derive(Deserialize)]
struct Publication {
    topic: String,
    payload: Box<serde_json::value::RawValue>,
}

fn reply(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *resp.status_mut() = status;
    resp
}

async fn handle(
    state: Arc<State>,
    mut req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    match req.uri().path() {
        "/json" => Ok(reply(StatusCode::OK, "{}")),
        "/push/stats" => Ok(reply(StatusCode::OK, "{}")),
        "/push/publish" => {
            let Ok(body) = req.into_body().collect().await else {
                return Ok(reply(StatusCode::BAD_REQUEST, "{}"));
            };
            let Ok(p) = serde_json::from_slice::<Publication>(&body.to_bytes()) else {
                return Ok(reply(StatusCode::BAD_REQUEST, "{}"));
            };
            let frame = format!(
                r#"{{"epoch":0,"messages":[{{"topic":{},"offset":0,"payload":{}}}]}}"#,
                serde_json::to_string(&p.topic).expect("a string"),
                p.payload.get()
            );
            let frame = Utf8Bytes::from(frame);
            if let Some(subscribers) = state.topics.read().get(&p.topic) {
                for (_, tx) in subscribers {
                    let _ = tx.send(frame.clone());
                }
            }
            Ok(reply(StatusCode::OK, r#"{"type":"published"}"#))
        }
        "/push/ws" => {
            let Some(key) = req.headers().get("sec-websocket-key").cloned() else {
                return Ok(reply(StatusCode::BAD_REQUEST, "{}"));
            };
            let on_upgrade = hyper::upgrade::on(&mut req);
            tokio::spawn(async move {
                if let Ok(upgraded) = on_upgrade.await {
                    serve(state, TokioIo::new(upgraded)).await;
                }
            });
            let accept =
                tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
            let resp = Response::builder()
                .status(StatusCode::SWITCHING_PROTOCOLS)
                .header("upgrade", "websocket")
                .header("connection", "Upgrade")
                .header("sec-websocket-accept", accept)
                .body(Full::new(Bytes::new()))
                .expect("valid headers");
            Ok(resp)
        }
        _ => Ok(reply(StatusCode::NOT_FOUND, "{}")),
    }
}

async fn serve<S>(state: Arc<State>, io: S)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    // The same small buffers as Bulwark's, so memory compares too.
    let config = WebSocketConfig::default()
        .read_buffer_size(2 * 1024)
        .write_buffer_size(0);
    let ws =
        tokio_tungstenite::WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
    let (mut sink, mut stream) = ws.split();
    let id = state.next_id.fetch_add(1, Ordering::Relaxed);
    let (tx, mut rx) = mpsc::unbounded_channel::<Utf8Bytes>();
    let hello = format!(r#"{{"type":"hello","client":"{id}","epoch":0}}"#);
    if sink.send(Message::text(hello)).await.is_err() {
        return;
    }
    let mut topics = Vec::new();
    loop {
        tokio::select! {
            frame = rx.recv() => match frame {
                Some(frame) => {
                    if sink.send(Message::Text(frame)).await.is_err() {
                        break;
                    }
                }
                None => break,
            },
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if let Ok(s) = serde_json::from_str::<Subscribe>(text.as_str()) {
                        state
                            .topics
                            .write()
                            .entry(s.topic.clone())
                            .or_default()
                            .push((id, tx.clone()));
                        topics.push(s.topic);
                        // push-load counts a client ready once this arrives.
                        let ack = Message::text(r#"{"type":"subscribed"}"#);
                        if sink.send(ack).await.is_err() {
                            break;
                        }
                    }
                }
                Some(Ok(_)) => {}
                _ => break,
            },
        }
    }
    let mut map = state.topics.write();
    for topic in topics {
        if let Some(subscribers) = map.get_mut(&topic) {
            subscribers.retain(|(other, _)| *other != id);
        }
    }
}

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8201".into());
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .expect("binding the address");
    let state = Arc::new(State::default());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        });
    }
}
