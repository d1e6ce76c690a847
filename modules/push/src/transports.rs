//! The push module's endpoints: WebSocket, Server-Sent Events and long-poll
//! transports onto the client tasks of `bulwark-push`, the command endpoint for the
//! transports that cannot send, and the authenticated server-side publish API.
//!
//! Every transport starts with a `hello` naming the client id. A client that comes
//! back with its id gets its task (subscriptions, waiting messages) back; a changed
//! id tells it to subscribe again, with the positions it has, to recover.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::{SinkExt, StreamExt};
use http::header::{CACHE_CONTROL, CONNECTION, CONTENT_ENCODING, CONTENT_TYPE, UPGRADE};
use http::{HeaderValue, Method, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::json;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message as WsMessage, Utf8Bytes};

use bulwark_http::{Body, negotiate};
use bulwark_push::{ClientHandle, Encoding, Hub, Position, PushError};
use bulwark_web::{
    BearerCheck, Controller, ModuleError, Outcome, RequestCtx, check_bearer, json_response,
    read_settings,
};

use crate::settings::PushSettings;

/// How long a long-poll request waits for a batch before answering `204`.
const POLL_WAIT: Duration = Duration::from_secs(25);
/// How often a stream with nothing to say sends a keep-alive.
const STREAM_KEEPALIVE: Duration = Duration::from_secs(15);

/// The push endpoints: three transports, commands for the two that cannot send
/// them, the server-side publish API and the hub's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PushTransport {
    Websocket,
    Sse,
    Poll,
    Command,
    Publish,
    Stats,
}

/// A `controller = "push"` rule: `transport = "websocket" | "sse" | "poll" |
/// "command" | "publish" | "stats"`.
pub(crate) struct PushController {
    hub: Arc<Hub>,
    settings: Arc<PushSettings>,
    transport: PushTransport,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PushOptions {
    transport: PushTransport,
}

impl PushController {
    pub(crate) fn new(
        hub: Arc<Hub>,
        settings: Arc<PushSettings>,
        options: &toml::Table,
    ) -> Result<PushController, ModuleError> {
        let options: PushOptions = read_settings(options)?;
        Ok(PushController {
            hub,
            settings,
            transport: options.transport,
        })
    }
}

impl Controller for PushController {
    fn allowed_methods(&self) -> &'static [Method] {
        match self.transport {
            PushTransport::Websocket | PushTransport::Sse => &[Method::GET],
            PushTransport::Poll => &[Method::GET, Method::POST],
            PushTransport::Command | PushTransport::Publish => &[Method::POST],
            PushTransport::Stats => &[Method::GET],
        }
    }

    fn reads_body(&self) -> bool {
        true
    }

    fn waits_long(&self) -> bool {
        self.transport == PushTransport::Poll
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let hub = self.hub.clone();
            Outcome::Response(match self.transport {
                PushTransport::Websocket => websocket(hub, req),
                PushTransport::Sse => sse(hub, req),
                PushTransport::Poll => poll(hub, req).await,
                PushTransport::Command => command(hub, req).await,
                PushTransport::Publish => publish(hub, &self.settings, req),
                PushTransport::Stats => stats(hub, &self.settings, req),
            })
        })
    }
}

fn error_json(status: StatusCode, message: &str) -> Response<Body> {
    json_response(status, &json!({"type": "error", "message": message}))
}

fn connect(hub: &Arc<Hub>, req: &RequestCtx<'_>) -> Result<ClientHandle, PushError> {
    hub.connect_as(req.query_param("client"), req.principal())
}

fn unavailable(e: PushError) -> Response<Body> {
    error_json(StatusCode::SERVICE_UNAVAILABLE, &e.to_string())
}

fn hello(client: &ClientHandle) -> serde_json::Value {
    json!({"type": "hello", "client": client.id().as_str(), "epoch": client.epoch()})
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum ClientCommand {
    Subscribe {
        topic: String,
        since: Option<Position>,
        #[serde(default)]
        snapshot: bool,
    },
    Unsubscribe {
        topic: String,
    },
    Publish {
        topic: String,
        // A `RawValue` cannot sit inside an internally tagged enum (serde buffers it).
        payload: serde_json::Value,
    },
}

/// Runs one command for a client; the reply says what happened, errors included.
async fn run_command(client: &ClientHandle, text: &str) -> serde_json::Value {
    let command: ClientCommand = match serde_json::from_str(text) {
        Ok(c) => c,
        Err(e) => return json!({"type": "error", "message": format!("bad command: {e}")}),
    };
    let error = |op: &str, topic: &str, e: PushError| json!({"type": "error", "op": op, "topic": topic, "message": e.to_string()});
    match command {
        ClientCommand::Subscribe {
            topic,
            since,
            snapshot,
        } => match client.subscribe(&topic, since, snapshot).await {
            Ok(reply) => {
                let mut v = serde_json::to_value(reply).expect("serialisable");
                v["type"] = json!("subscribed");
                v
            }
            Err(e) => error("subscribe", &topic, e),
        },
        ClientCommand::Unsubscribe { topic } => match client.unsubscribe(&topic).await {
            Ok(()) => json!({"type": "unsubscribed", "filter": topic}),
            Err(e) => error("unsubscribe", &topic, e),
        },
        ClientCommand::Publish { topic, payload } => {
            match client.publish(&topic, &payload.to_string()) {
                Ok(position) => json!({"type": "published", "topic": topic, "position": position}),
                Err(e) => error("publish", &topic, e),
            }
        }
    }
}

/// `POST /push/command?client=ID`: one command object or an array of them.
async fn command(hub: Arc<Hub>, req: &RequestCtx<'_>) -> Response<Body> {
    let Some(id) = req.query_param("client") else {
        return error_json(StatusCode::BAD_REQUEST, "the client parameter is missing");
    };
    let client = match hub.connect(Some(id)) {
        Ok(c) if c.id().as_str() == id => c,
        _ => return error_json(StatusCode::GONE, "unknown or expired client: connect again"),
    };
    let text = String::from_utf8_lossy(&req.body);
    let commands: Vec<String> = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Array(items)) => items.iter().map(|v| v.to_string()).collect(),
        Ok(single) => vec![single.to_string()],
        Err(e) => return error_json(StatusCode::BAD_REQUEST, &format!("bad JSON: {e}")),
    };
    let mut replies = Vec::with_capacity(commands.len());
    for c in &commands {
        replies.push(run_command(&client, c).await);
    }
    json_response(StatusCode::OK, &serde_json::Value::Array(replies))
}

/// `GET|POST /push/poll?client=ID`: a hello for a new or expired client, else what
/// is waiting or the next batch within 25 s, else `204`.
async fn poll(hub: Arc<Hub>, req: &RequestCtx<'_>) -> Response<Body> {
    let asked = req.query_param("client");
    let client = match connect(&hub, req) {
        Ok(c) => c,
        Err(e) => return unavailable(e),
    };
    if asked != Some(client.id().as_str()) {
        return json_response(StatusCode::OK, &hello(&client));
    }
    match client
        .next_batch(POLL_WAIT, negotiate(&req.parts.headers))
        .await
    {
        Ok(Some(batch)) => {
            let lost = batch.lost;
            let body = if batch.count == 0 {
                Bytes::from(json!({"epoch": client.epoch(), "messages": []}).to_string())
            } else {
                batch.body
            };
            let mut resp = Response::new(Body::from(body));
            let h = resp.headers_mut();
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            if batch.count > 0
                && let Some(coding) = batch.encoding.header_value()
            {
                h.insert(CONTENT_ENCODING, HeaderValue::from_static(coding));
            }
            if lost {
                h.insert("x-push-lost", HeaderValue::from_static("1"));
            }
            resp
        }
        Ok(None) => {
            let mut resp = Response::new(Body::empty());
            *resp.status_mut() = StatusCode::NO_CONTENT;
            resp
        }
        Err(e @ PushError::Superseded) => error_json(StatusCode::CONFLICT, &e.to_string()),
        Err(e) => error_json(StatusCode::GONE, &e.to_string()),
    }
}

/// A stream's keep-alive: every [`STREAM_KEEPALIVE`], busy or not (one timer for
/// the connection's life, not one per batch).
fn keepalive_timer() -> tokio::time::Interval {
    let mut timer = tokio::time::interval_at(
        tokio::time::Instant::now() + STREAM_KEEPALIVE,
        STREAM_KEEPALIVE,
    );
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    timer
}

/// `GET /push/sse?client=ID`: an event stream; commands go to `/push/command`.
fn sse(hub: Arc<Hub>, req: &RequestCtx<'_>) -> Response<Body> {
    let client = match connect(&hub, req) {
        Ok(c) => c,
        Err(e) => return unavailable(e),
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        let first = format!("event: hello\ndata: {}\n\n", hello(&client));
        if tx.send(Bytes::from(first)).await.is_err() {
            return;
        }
        let mut keepalive = keepalive_timer();
        // One wait for a batch at a time, kept across the keep-alives (see
        // `serve_websocket`).
        let mut next = std::pin::pin!(client.batch(Encoding::Identity));
        loop {
            let event = tokio::select! {
                _ = tx.closed() => return,
                _ = keepalive.tick() => Ok(None),
                batch = next.as_mut() => {
                    next.set(client.batch(Encoding::Identity));
                    batch.map(Some)
                }
            };
            let frame = match event {
                Ok(None) => Bytes::from_static(b": keep-alive\n\n"),
                Ok(Some(batch)) => {
                    let mut out = Vec::with_capacity(batch.body.len() + 32);
                    if batch.lost {
                        out.extend_from_slice(b"event: lost\ndata: {}\n\n");
                    }
                    if batch.count > 0 {
                        // `data:` lines cannot hold a newline (payloads may have them).
                        for line in batch.body.split(|b| *b == b'\n') {
                            out.extend_from_slice(b"data: ");
                            out.extend_from_slice(line);
                            out.push(b'\n');
                        }
                        out.push(b'\n');
                    }
                    Bytes::from(out)
                }
                Err(_) => return,
            };
            if tx.send(frame).await.is_err() {
                return;
            }
        }
    });
    let mut resp = Response::new(Body::channel(rx));
    let h = resp.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `GET /push/ws?client=ID` with `Upgrade: websocket`.
fn websocket(hub: Arc<Hub>, req: &RequestCtx<'_>) -> Response<Body> {
    let headers = &req.parts.headers;
    let is_upgrade = headers
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let Some(key) = headers.get("sec-websocket-key").filter(|_| is_upgrade) else {
        return error_json(StatusCode::BAD_REQUEST, "expected a WebSocket upgrade");
    };
    let Some(on_upgrade) = req.upgrade.lock().expect("upgrade slot").take() else {
        return error_json(
            StatusCode::BAD_REQUEST,
            "this connection cannot be upgraded",
        );
    };
    let client = match connect(&hub, req) {
        Ok(c) => c,
        Err(e) => return unavailable(e),
    };
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        // Small buffers: most connections are idle most of the time, and their memory
        // is what limits how many one node holds (tungstenite defaults to 128 KiB).
        let config = WebSocketConfig::default()
            .read_buffer_size(2 * 1024)
            .write_buffer_size(0)
            .max_write_buffer_size(1024 * 1024)
            .max_message_size(Some(128 * 1024))
            .max_frame_size(Some(128 * 1024));
        let ws = tokio_tungstenite::WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Server,
            Some(config),
        )
        .await;
        serve_websocket(ws, client).await;
    });
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = resp.headers_mut();
    h.insert(UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    h.insert(
        "sec-websocket-accept",
        HeaderValue::from_str(&accept).expect("base64 is ASCII"),
    );
    resp
}

async fn serve_websocket<S>(ws: tokio_tungstenite::WebSocketStream<S>, client: ClientHandle)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut sink, mut stream) = ws.split();
    if sink
        .send(WsMessage::text(hello(&client).to_string()))
        .await
        .is_err()
    {
        return;
    }
    let mut keepalive = keepalive_timer();
    // The wait for the next batch lives across loop turns: a keep-alive or a
    // command from the client does not cancel it, so a batch already handed over
    // is never put back (cancelling is safe, but costs a requeue).
    let mut next = std::pin::pin!(client.batch(Encoding::Identity));
    loop {
        tokio::select! {
            _ = keepalive.tick() => {
                if sink.send(WsMessage::Ping(Bytes::new())).await.is_err() {
                    return;
                }
            }
            incoming = stream.next() => match incoming {
                Some(Ok(WsMessage::Text(text))) => {
                    let reply = run_command(&client, text.as_str()).await;
                    if sink.send(WsMessage::text(reply.to_string())).await.is_err() {
                        return;
                    }
                }
                Some(Ok(WsMessage::Ping(data))) => {
                    let _ = sink.send(WsMessage::Pong(data)).await;
                }
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            batch = next.as_mut() => {
                next.set(client.batch(Encoding::Identity));
                let frames = match batch {
                    Ok(batch) => {
                        let mut frames = Vec::new();
                        if batch.lost {
                            frames.push(WsMessage::text(json!({"type": "lost"}).to_string()));
                        }
                        if batch.count > 0 {
                            // The shared body itself, not a copy per client.
                            match Utf8Bytes::try_from(batch.body) {
                                Ok(text) => frames.push(WsMessage::Text(text)),
                                Err(_) => return,
                            }
                        }
                        frames
                    }
                    Err(_) => return,
                };
                for frame in frames {
                    if sink.send(frame).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// `POST /push/publish` with `Authorization: Bearer <publish_token>` and a JSON body
/// `{"topic": "...", "payload": ...}`: publishing from other programs.
fn publish(hub: Arc<Hub>, settings: &PushSettings, req: &RequestCtx<'_>) -> Response<Body> {
    if let Err(resp) = authorize(settings, req) {
        return *resp;
    }
    #[derive(Deserialize)]
    struct Publication {
        topic: String,
        payload: Box<serde_json::value::RawValue>,
    }
    let publication: Publication = match serde_json::from_slice(&req.body) {
        Ok(p) => p,
        Err(e) => return error_json(StatusCode::BAD_REQUEST, &format!("bad JSON: {e}")),
    };
    match hub.publish(&publication.topic, publication.payload.get()) {
        Ok(position) => json_response(
            StatusCode::OK,
            &json!({"type": "published", "position": position}),
        ),
        Err(e @ PushError::TooLarge { .. }) => {
            error_json(StatusCode::PAYLOAD_TOO_LARGE, &e.to_string())
        }
        Err(e) => error_json(StatusCode::BAD_REQUEST, &e.to_string()),
    }
}

/// `GET /push/stats` with the publish token: the hub's counters.
fn stats(hub: Arc<Hub>, settings: &PushSettings, req: &RequestCtx<'_>) -> Response<Body> {
    if let Err(resp) = authorize(settings, req) {
        return *resp;
    }
    let s = hub.stats();
    json_response(
        StatusCode::OK,
        &json!({
            "clients": s.clients, "published": s.published, "delivered": s.delivered,
            "batches": s.batches, "encodings_needed": s.encodings_needed,
            "encodings_computed": s.encodings_computed, "lost": s.lost,
            "delivery_p50_us": s.delivery_p50_us, "delivery_p99_us": s.delivery_p99_us,
            "delivery_max_us": s.delivery_max_us,
        }),
    )
}

/// The server-side endpoints need `Authorization: Bearer <push.publish_token>`.
fn authorize(settings: &PushSettings, req: &RequestCtx<'_>) -> Result<(), Box<Response<Body>>> {
    match check_bearer(req.parts, settings.publish_token.as_deref()) {
        BearerCheck::Allowed => Ok(()),
        BearerCheck::NotConfigured => Err(Box::new(error_json(
            StatusCode::FORBIDDEN,
            "publishing over HTTP is off: set push.publish_token",
        ))),
        BearerCheck::Refused => Err(Box::new(error_json(
            StatusCode::UNAUTHORIZED,
            "a valid bearer token is required",
        ))),
    }
}
