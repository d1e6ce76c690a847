//! The push module's endpoints: WebSocket, Server-Sent Events and long-poll
//! transports onto the client tasks of `bulwark-push`, the command endpoint for the
//! transports that cannot send, and the authenticated server-side publish API.
//!
//! Every transport starts with a `hello` naming the client id and its token. A
//! client that comes back with its id and token gets its task (subscriptions,
//! waiting messages) back; a changed id tells it to subscribe again, with the
//! positions it has, to recover.
//!
//! The id may travel in the URL (`?client=ID`), so it shows in access logs; the
//! token never does: it comes back in the `X-Push-Token` header (long-poll,
//! commands), as a WebSocket subprotocol `bulwark-push.token.<token>` (browsers
//! cannot set headers on a WebSocket), or in a cookie `bulwark-push-<id>` that
//! `bulwark.js` sets for `/push` just before opening an event stream (nor on an
//! `EventSource`). A request that names a client without its token is treated as
//! a new visitor: it gets a new client (within its address's rate), or `410` from
//! `/push/command`, never the named client's messages.
//!
//! A client acts for the request's principal (the session cookie's user, or
//! anonymous) for its life, and only a request for that principal resumes it.
//! A logged-on visitor's WebSocket must come from the site's own pages
//! ([`from_own_pages`]), and their commands carry the session's CSRF token,
//! which their `hello` gives them.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::{SinkExt, StreamExt};
use http::header::{
    CACHE_CONTROL, CONNECTION, CONTENT_ENCODING, CONTENT_TYPE, RETRY_AFTER, UPGRADE,
};
use http::{HeaderValue, Method, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::json;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message as WsMessage, Utf8Bytes};

use bulwark_http::{Body, negotiate};
use bulwark_push::{ClientHandle, Encoding, Hub, Position, PushError, Topic};
use bulwark_web::{
    Authenticated, Authenticator, BearerCheck, Controller, ModuleError, Outcome, Problem,
    RequestCtx, check_bearer, json_response, read_settings,
};

use crate::settings::PushSettings;
use crate::{SitePush, rsc};

/// How long a long-poll request waits for a batch before answering `204`.
const POLL_WAIT: Duration = Duration::from_secs(25);
/// How often a stream with nothing to say sends a keep-alive (and rechecks
/// its session), unless `[push] keepalive_ms` says otherwise.
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
    push: Arc<SitePush>,
    transport: PushTransport,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PushOptions {
    transport: PushTransport,
}

impl PushController {
    pub(crate) fn new(
        push: Arc<SitePush>,
        options: &toml::Table,
    ) -> Result<PushController, ModuleError> {
        let options: PushOptions = read_settings(options)?;
        Ok(PushController {
            push,
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
            let push = &self.push;
            Outcome::Response(match self.transport {
                PushTransport::Websocket => websocket(push, req),
                PushTransport::Sse => sse(push, req),
                PushTransport::Poll => poll(push, req).await,
                PushTransport::Command => command(push, req).await,
                PushTransport::Publish => publish(&push.hub, &push.settings, req),
                PushTransport::Stats => stats(&push.hub, &push.settings, req),
            })
        })
    }
}

/// An HTTP answer that refuses: a problem (`application/problem+json`), as
/// every JSON error is. (A refused command inside a batch stays a message of
/// the push protocol, `{"type": "error"}`.)
fn error_json(status: StatusCode, message: &str) -> Response<Body> {
    Problem::with_status_of(status, message).into_response()
}

/// The header that carries a client's token (long-poll, commands).
const TOKEN_HEADER: &str = "x-push-token";
/// The WebSocket subprotocol of push, and the prefix of the one carrying a token.
const WS_PROTOCOL: &str = "bulwark-push";
const WS_TOKEN_PROTOCOL: &str = "bulwark-push.token.";
/// The cookie carrying a token for an event stream is this prefix and the id.
const TOKEN_COOKIE: &str = "bulwark-push-";

/// The client a request names (`?client=ID`), if it shows that client's token.
fn resumed(hub: &Arc<Hub>, req: &RequestCtx<'_>) -> Option<ClientHandle> {
    let id = req.query_param("client")?;
    let token = presented_token(req, id)?;
    hub.resume(id, token, req.principal()).ok()
}

/// The token a request shows for client `id`, from wherever its transport can
/// put it (never the URL).
fn presented_token<'r>(req: &'r RequestCtx<'_>, id: &str) -> Option<&'r str> {
    let headers = &req.parts.headers;
    let values = |name| {
        headers
            .get_all(name)
            .into_iter()
            .filter_map(|v| v.to_str().ok())
    };
    values(TOKEN_HEADER)
        .map(str::trim)
        .next()
        .or_else(|| {
            values("sec-websocket-protocol")
                .flat_map(|v| v.split(','))
                .find_map(|p| p.trim().strip_prefix(WS_TOKEN_PROTOCOL))
        })
        .or_else(|| {
            values("cookie")
                .flat_map(|v| v.split(';'))
                .filter_map(|kv| kv.trim().split_once('='))
                .find(|(name, _)| name.strip_prefix(TOKEN_COOKIE) == Some(id))
                .map(|(_, token)| token)
        })
}

/// Why a transport gets no client.
enum Refusal {
    /// This address made its share of new clients: `429` with `Retry-After`.
    TooFast(Duration),
    /// The hub is full: `503`.
    Hub(PushError),
}

impl Refusal {
    fn response(self) -> Response<Body> {
        match self {
            Refusal::TooFast(wait) => {
                let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                let mut resp = error_json(
                    StatusCode::TOO_MANY_REQUESTS,
                    &format!(
                        "too many new push clients from this address: try again in {seconds} s"
                    ),
                );
                resp.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
                resp
            }
            Refusal::Hub(e) => error_json(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
        }
    }
}

/// The client a transport attaches to: the one it names with its token, else a
/// new one, if the visitor's address may make one now. `true` with a resumed
/// client.
fn client_for(push: &SitePush, req: &RequestCtx<'_>) -> Result<(ClientHandle, bool), Refusal> {
    if let Some(client) = resumed(&push.hub, req) {
        return Ok((client, true));
    }
    push.new_clients
        .admit(req.peer().addr.ip())
        .map_err(Refusal::TooFast)?;
    let client = push.hub.connect_as(req.principal()).map_err(Refusal::Hub)?;
    Ok((client, false))
}

/// The first message of every transport. The token is the client's secret: it
/// goes only in this body, which no log records. A logged-on visitor also gets
/// their session's CSRF token, which `POST /push/command` needs (as every
/// state-changing request with a session cookie does): no other site's page
/// can read this body (see [`from_own_pages`] for the one transport that would
/// let it).
fn hello(client: &ClientHandle, req: &RequestCtx<'_>) -> serde_json::Value {
    let mut hello = json!({
        "type": "hello", "client": client.id().as_str(),
        "token": client.token().to_string(), "epoch": client.epoch(),
    });
    if let Some(csrf) = &req.auth().csrf_token {
        hello["csrf_token"] = json!(csrf.as_ref());
    }
    hello
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

/// Runs one command (the JSON `bulwark.js` sends: `{"op": "subscribe", ...}`)
/// for a client; the reply says what happened, errors included. Public for the
/// fuzz target, which drives it with a real hub.
pub async fn run_command(client: &ClientHandle, text: &str) -> serde_json::Value {
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
                Err(e @ PushError::PublishingTooFast { retry_after_ms }) => {
                    let mut reply = error("publish", &topic, e);
                    reply["retry_after_ms"] = json!(retry_after_ms);
                    reply
                }
                Err(e) => error("publish", &topic, e),
            }
        }
    }
}

/// `POST /push/command?client=ID` with the client's token in `X-Push-Token`: one
/// command object or an array of at most `max_commands_per_request`.
async fn command(push: &SitePush, req: &RequestCtx<'_>) -> Response<Body> {
    if req.query_param("client").is_none() {
        return error_json(StatusCode::BAD_REQUEST, "the client parameter is missing");
    }
    let Some(client) = resumed(&push.hub, req) else {
        return error_json(StatusCode::GONE, "unknown or expired client: connect again");
    };
    let text = String::from_utf8_lossy(&req.body);
    let commands: Vec<String> = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Array(items)) => items.iter().map(|v| v.to_string()).collect(),
        Ok(single) => vec![single.to_string()],
        Err(e) => return error_json(StatusCode::BAD_REQUEST, &format!("bad JSON: {e}")),
    };
    let limit = push.settings.max_commands_per_request();
    if commands.len() > limit {
        return error_json(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "{} commands in one request: at most {limit} are accepted",
                commands.len()
            ),
        );
    }
    let mut replies = Vec::with_capacity(commands.len());
    for c in &commands {
        replies.push(run_command(&client, c).await);
    }
    json_response(StatusCode::OK, &serde_json::Value::Array(replies))
}

/// `GET|POST /push/poll?client=ID` with `X-Push-Token`: a hello for a new or
/// expired client (or one named without its token), else what is waiting or the
/// next batch within 25 s, else `204`.
async fn poll(push: &SitePush, req: &RequestCtx<'_>) -> Response<Body> {
    let client = match client_for(push, req) {
        Ok((client, true)) => client,
        Ok((client, false)) => return json_response(StatusCode::OK, &hello(&client, req)),
        Err(refusal) => return refusal.response(),
    };
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

/// A stream's keep-alive: every [`STREAM_KEEPALIVE`] (or `[push]
/// keepalive_ms`), busy or not (one timer for the connection's life, not one
/// per batch).
fn keepalive_timer(push: &SitePush) -> tokio::time::Interval {
    let every = push
        .settings
        .keepalive_ms
        .map_or(STREAM_KEEPALIVE, Duration::from_millis);
    let mut timer = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    timer
}

/// The session a WebSocket or event stream was opened with. A stream lives for
/// hours, long after the request that opened it was checked: at every
/// keep-alive it asks the site's authenticator again, and ends once the
/// session has ended (logoff, expiry, ended from another browser, a new
/// password) or stands for someone else now (other groups). The browser
/// client then reconnects as whoever its cookie says now.
struct SessionWatch {
    authenticator: Arc<dyn Authenticator>,
    opened_as: Authenticated,
}

impl SessionWatch {
    /// `None` for a connection without a session: nothing can end.
    fn of(req: &RequestCtx<'_>) -> Option<SessionWatch> {
        req.auth().session.as_ref()?;
        Some(SessionWatch {
            authenticator: req.site.authenticator().cloned()?,
            opened_as: req.auth().clone(),
        })
    }

    async fn stands(watch: &Option<SessionWatch>) -> bool {
        let Some(w) = watch else {
            return true;
        };
        w.authenticator
            .recheck(&w.opened_as)
            .await
            .is_some_and(|now| now == w.opened_as.principal)
    }
}

/// What a stream says before it ends for its session.
const SESSION_ENDED: &str = "the session ended";

/// `GET /push/sse?client=ID` with the cookie `bulwark-push-ID`: an event stream;
/// commands go to `/push/command`.
fn sse(push: &SitePush, req: &RequestCtx<'_>) -> Response<Body> {
    let client = match client_for(push, req) {
        Ok((client, _)) => client,
        Err(refusal) => return refusal.response(),
    };
    let first = format!("event: hello\ndata: {}\n\n", hello(&client, req));
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    let watch = SessionWatch::of(req);
    let mut keepalive = keepalive_timer(push);
    tokio::spawn(async move {
        if tx.send(Bytes::from(first)).await.is_err() {
            return;
        }
        // One wait for a batch at a time, kept across the keep-alives (see
        // `websocket_connection`).
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
                Ok(None) if !SessionWatch::stands(&watch).await => {
                    let ended = json!({"reason": SESSION_ENDED});
                    let _ = tx
                        .send(Bytes::from(format!("event: ended\ndata: {ended}\n\n")))
                        .await;
                    return;
                }
                Ok(None) => Bytes::from_static(b": keep-alive\n\n"),
                Ok(Some(batch)) => {
                    let mut out = Vec::with_capacity(batch.body.len() + 32);
                    if batch.lost {
                        out.extend_from_slice(b"event: lost\ndata: {}\n\n");
                    }
                    if batch.count > 0 {
                        sse_event(&mut out, &batch.body);
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

/// One event whose data is `body`. A `data:` line ends at a CR, an LF or a CRLF,
/// and a payload's JSON may hold any of them as whitespace (strings cannot hold
/// them raw): each line of the body gets its own `data:` line, and the reader
/// joins them with LF, which is JSON whitespace as well.
fn sse_event(out: &mut Vec<u8>, body: &[u8]) {
    let mut rest = body;
    loop {
        let end = rest
            .iter()
            .position(|b| *b == b'\r' || *b == b'\n')
            .unwrap_or(rest.len());
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&rest[..end]);
        out.push(b'\n');
        if end == rest.len() {
            break;
        }
        let crlf = rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n');
        rest = &rest[end + 1 + usize::from(crlf)..];
    }
    out.push(b'\n');
}

/// `GET /push/ws?client=ID` with `Upgrade: websocket`, offering the subprotocols
/// `bulwark-push` and `bulwark-push.token.<token>`.
fn websocket(push: &SitePush, req: &RequestCtx<'_>) -> Response<Body> {
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
    if !req.principal().is_anonymous() && !from_own_pages(req) {
        return error_json(
            StatusCode::FORBIDDEN,
            "a logged-on visitor's push connection must come from this site's own pages",
        );
    }
    let client = match client_for(push, req) {
        Ok((client, _)) => client,
        Err(refusal) => return refusal.response(),
    };
    let hello = hello(&client, req);
    let watch = SessionWatch::of(req);
    let keepalive = keepalive_timer(push);
    // A browser that offers subprotocols fails the connection unless one is
    // chosen; the token's is never echoed.
    let offers_push = headers
        .get_all("sec-websocket-protocol")
        .into_iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == WS_PROTOCOL);
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    tokio::spawn(websocket_connection(
        on_upgrade, client, hello, keepalive, watch,
    ));
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = resp.headers_mut();
    h.insert(UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    h.insert(
        "sec-websocket-accept",
        HeaderValue::from_str(&accept).expect("base64 is ASCII"),
    );
    if offers_push {
        h.insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(WS_PROTOCOL),
        );
    }
    resp
}

/// Whether a WebSocket handshake comes from this site's own pages (the same
/// host and port), or from no page at all (programs send no `Origin`). Any page may open a WebSocket to any
/// host, the browser sends that host's cookies along (`SameSite` keeps them from
/// other sites' pages, not from a sibling subdomain's) and the same-origin
/// policy does not stop the page reading the socket: without this check a page
/// elsewhere could act for a logged-on visitor and read their own topics. The
/// event stream and long-poll need no check: another site's page cannot read
/// what they answer.
fn from_own_pages(req: &RequestCtx<'_>) -> bool {
    bulwark_web::origin_of(req.parts, req.site) != bulwark_web::Origin::Foreign
}

/// A WebSocket client's connection, from the upgrade to its end: the task
/// lives as long as the visitor stays, so its size is memory per connection.
/// One `async move` block, not `async fn`s awaiting each other: an async fn
/// keeps its arguments apart from the locals they move into, and a spawning
/// block around it kept them a third time (2.1 KB a connection, now about
/// half; bench/RESULTS.md).
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn would store its arguments twice"
)]
fn websocket_connection(
    on_upgrade: hyper::upgrade::OnUpgrade,
    client: ClientHandle,
    hello: serde_json::Value,
    mut keepalive: tokio::time::Interval,
    watch: Option<SessionWatch>,
) -> impl Future<Output = ()> + Send + 'static {
    async move {
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
        let (mut sink, mut stream) = ws.split();
        if sink.send(WsMessage::text(hello.to_string())).await.is_err() {
            return;
        }
        drop(hello);
        // The wait for the next batch lives across loop turns: a keep-alive or a
        // command from the client does not cancel it, so a batch already handed over
        // is never put back (cancelling is safe, but costs a requeue).
        let mut next = std::pin::pin!(client.batch(Encoding::Identity));
        loop {
            tokio::select! {
                _ = keepalive.tick() => {
                    if !SessionWatch::stands(&watch).await {
                        let _ = sink
                            .send(WsMessage::Close(Some(CloseFrame {
                                code: CloseCode::Policy,
                                reason: SESSION_ENDED.into(),
                            })))
                            .await;
                        return;
                    }
                    if sink.send(WsMessage::Ping(Bytes::new())).await.is_err() {
                        return;
                    }
                }
                incoming = stream.next() => match incoming {
                    Some(Ok(WsMessage::Text(text))) => {
                        // Boxed: a command is rare, its state large.
                        let reply = Box::pin(run_command(&client, text.as_str())).await;
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
}

/// `POST /push/publish` with `Authorization: Bearer <publish_token>` and a JSON body
/// `{"topic": "...", "payload": ...}`: publishing from other programs.
fn publish(hub: &Hub, settings: &PushSettings, req: &RequestCtx<'_>) -> Response<Body> {
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
    if Topic::parse(&publication.topic).is_ok_and(|t| rsc::is_resource_topic(&t)) {
        return error_json(
            StatusCode::FORBIDDEN,
            "rsc/ topics say who may see the resource: only its committed changes publish there",
        );
    }
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
fn stats(hub: &Hub, settings: &PushSettings, req: &RequestCtx<'_>) -> Response<Body> {
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
