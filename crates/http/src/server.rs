//! The HTTP server: accepting connections, limits, host dispatch, shutdown.
//!
//! hyper is used directly rather than through axum: the routing that matters here is
//! per host and per site (compiled from `site.toml`), and the measured cost of a
//! general-purpose router and middleware stack on the hot path is 20-40% of the
//! request rate (`../shared/STACK.md`).
//!
//! Limits come from hyper where hyper has them: the header buffer size (requests
//! with larger heads get `431`), the header read timeout (slowloris; in hyper 1.12 it
//! also bounds how long an idle keep-alive connection may wait for its next
//! request). The body limit is ours: a `Content-Length` over it is refused at once,
//! a chunked body is counted while it is read.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use arc_swap::ArcSwap;
use bytes::Bytes;
use futures_util::FutureExt;
use http::header::{CONNECTION, CONTENT_LENGTH, HOST, LOCATION, REFERER, USER_AGENT};
use http::{HeaderValue, Method, Request, Response, StatusCode, Version};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use bulwark_site::SiteError;
use bulwark_template::TemplateOptions;

use crate::access_log::{AccessEntry, AccessLog, AccessLogTarget};
use crate::body::Body;
use crate::bottleneck::RenderLimits;
use crate::controller::{RequestCtx, respond};
use crate::data::SiteStores;
use crate::error_page::{error_response, html_response, plain_error_page};
use crate::runtime::{HostTarget, PushHubs, SiteRuntime, SiteTable};

#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub listen: SocketAddr,
    /// Where HTTPS is served, for sites that name a certificate.
    pub listen_tls: Option<SocketAddr>,
    /// Template reload, config reload and detailed error pages.
    pub dev: bool,
    pub max_body_bytes: u64,
    /// The most a request head (request line and headers) may take.
    pub max_header_bytes: usize,
    /// Time allowed for a request head to arrive, and for an idle keep-alive
    /// connection to send its next request.
    pub header_read_timeout: Duration,
    /// How long in-flight requests may finish after a shutdown signal.
    pub shutdown_grace: Duration,
    pub access_log: AccessLogTarget,
    /// Template instructions per render.
    pub fuel: u64,
    /// Concurrent renders per site and how long a render may queue (then 503).
    pub render_limits: RenderLimits,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8000)),
            listen_tls: None,
            dev: false,
            max_body_bytes: 8 * 1024 * 1024,
            max_header_bytes: 64 * 1024,
            header_read_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
            access_log: AccessLogTarget::Off,
            fuel: TemplateOptions::default().fuel,
            render_limits: RenderLimits::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Sites(Vec<SiteError>),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("TLS: {0}")]
    Tls(String),
}

struct ServerState {
    table: ArcSwap<SiteTable>,
    hubs: PushHubs,
    stores: SiteStores,
    options: ServerOptions,
    log: AccessLog,
}

pub struct Server {
    state: Arc<ServerState>,
    sites_dir: PathBuf,
    listener: TcpListener,
    tls: Option<(TcpListener, tokio_rustls::TlsAcceptor)>,
}

impl Server {
    /// Loads every site and binds the listeners; nothing is served until [`run`].
    pub async fn bind(sites_dir: &Path, options: ServerOptions) -> Result<Server, ServerError> {
        let template_options = template_options(&options);
        let hubs = PushHubs::default();
        let stores = SiteStores::default();
        let table = SiteTable::load(
            sites_dir,
            &template_options,
            &hubs,
            &stores,
            options.render_limits,
        )
        .await
        .map_err(ServerError::Sites)?;
        let io = |what: String| move |source| ServerError::Io { what, source };
        let listener = TcpListener::bind(options.listen)
            .await
            .map_err(io(format!("listening on {}", options.listen)))?;
        let tls = match (
            crate::tls::server_config(&table).map_err(ServerError::Tls)?,
            options.listen_tls,
        ) {
            (Some(config), Some(addr)) => {
                let l = TcpListener::bind(addr)
                    .await
                    .map_err(io(format!("listening on {addr}")))?;
                Some((l, tokio_rustls::TlsAcceptor::from(config)))
            }
            (Some(_), None) => {
                tracing::warn!(
                    "sites name TLS certificates, but no TLS address is set (--listen-tls)"
                );
                None
            }
            _ => None,
        };
        let log = AccessLog::start(options.access_log.clone()).map_err(io("access log".into()))?;
        Ok(Server {
            state: Arc::new(ServerState {
                table: ArcSwap::from_pointee(table),
                hubs,
                stores,
                options,
                log,
            }),
            sites_dir: sites_dir.to_path_buf(),
            listener,
            tls,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("bound listener has an address")
    }

    /// A site's data (store and model cache), for programs that embed the server.
    pub fn site_models(&self, site: &str) -> Option<Arc<bulwark_template::SiteModels>> {
        self.state
            .table
            .load()
            .sites
            .iter()
            .find(|rt| rt.site.name().as_str() == site)
            .map(|rt| rt.models.clone())
    }

    pub fn tls_local_addr(&self) -> Option<SocketAddr> {
        self.tls.as_ref().and_then(|(l, _)| l.local_addr().ok())
    }

    /// Serves until `shutdown` completes, then stops accepting and gives in-flight
    /// requests up to the grace period to finish.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let stop = CancellationToken::new();
        let connections = Connections::default();
        let builder = Arc::new(Protocols::new(&self.state.options));
        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(accept_loop(
            self.listener,
            None,
            self.state.clone(),
            builder.clone(),
            connections.clone(),
            stop.clone(),
        )));
        if let Some((listener, acceptor)) = self.tls {
            tasks.push(tokio::spawn(accept_loop(
                listener,
                Some(acceptor),
                self.state.clone(),
                builder.clone(),
                connections.clone(),
                stop.clone(),
            )));
        }
        if self.state.options.dev {
            tokio::spawn(reload_on_change(
                self.sites_dir.clone(),
                self.state.clone(),
                stop.clone(),
            ));
        }
        shutdown.await;
        stop.cancel();
        for task in tasks {
            let _ = task.await;
        }
        if self.state.log.dropped() > 0 {
            tracing::warn!(
                "access log: {} entries dropped (writer too slow)",
                self.state.log.dropped()
            );
        }
        connections.closing.cancel();
        connections.tasks.close();
        tokio::select! {
            _ = connections.tasks.wait() => tracing::info!("all connections closed"),
            _ = tokio::time::sleep(self.state.options.shutdown_grace) => {
                tracing::warn!("shutdown grace period over; closing remaining connections");
            }
        }
    }
}

fn template_options(options: &ServerOptions) -> TemplateOptions {
    TemplateOptions {
        dev: options.dev,
        fuel: options.fuel,
    }
}

/// HTTP/1.1 and HTTP/2 set up once for every connection. Plain connections speak
/// HTTP/1.1 only and TLS ones what ALPN chose. (hyper-util's `auto` builder, which
/// sniffs the protocol, hands hyper the sniffed bytes first; hyper's read buffer
/// then doubles to 16 KiB on every connection, the largest part of what an idle
/// keep-alive or a waiting long-poll costs. Browsers never speak HTTP/2 without
/// TLS, so nothing is lost.)
struct Protocols {
    http1: hyper::server::conn::http1::Builder,
    http2: hyper::server::conn::http2::Builder<TokioExecutor>,
}

impl Protocols {
    fn new(options: &ServerOptions) -> Protocols {
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(options.header_read_timeout)
            .max_buf_size(options.max_header_bytes.max(8192))
            // Most responses are small: one copied buffer and one write() beat writev().
            .writev(false)
            .pipeline_flush(true)
            .keep_alive(true);
        let mut http2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
        http2
            .timer(TokioTimer::new())
            .max_header_list_size(options.max_header_bytes.min(u32::MAX as usize) as u32)
            .keep_alive_interval(Some(Duration::from_secs(30)))
            .max_concurrent_streams(256);
        Protocols { http1, http2 }
    }
}

/// The open connections, for a graceful shutdown: `closing` asks each to finish
/// its request in flight and close; `tasks` tells when they all have.
#[derive(Clone, Default)]
struct Connections {
    tasks: tokio_util::task::TaskTracker,
    closing: CancellationToken,
}

/// Serves one HTTP/1.1 connection (upgrades included) until it ends or the server
/// closes it gracefully.
async fn serve_http1<I, S>(protocols: &Protocols, io: I, service: S, closing: CancellationToken)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Body>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let conn = protocols
        .http1
        .serve_connection(io, service)
        .with_upgrades();
    tokio::pin!(conn);
    if let Err(e) = until_closed(conn, closing, |c| c.graceful_shutdown()).await
        && e.is_parse_version_h2()
    {
        static TOLD: std::sync::Once = std::sync::Once::new();
        TOLD.call_once(|| {
            tracing::warn!(
                "a client tried HTTP/2 without TLS (h2c); plain connections speak HTTP/1.1 \
                 (a proxy in front must use HTTP/1.1; this is logged once)"
            )
        });
    }
}

async fn serve_http2<I, S>(protocols: &Protocols, io: I, service: S, closing: CancellationToken)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Body> + Send,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let conn = protocols.http2.serve_connection(io, service);
    tokio::pin!(conn);
    let _ = until_closed(conn, closing, |c| c.graceful_shutdown()).await;
}

/// Drives a connection to its end; when the server starts closing, asks it to
/// finish what is in flight (`shutdown`) and waits for that.
async fn until_closed<C: Future>(
    mut conn: std::pin::Pin<&mut C>,
    closing: CancellationToken,
    shutdown: impl FnOnce(std::pin::Pin<&mut C>),
) -> C::Output {
    tokio::select! {
        ended = conn.as_mut() => return ended,
        _ = closing.cancelled() => {}
    }
    shutdown(conn.as_mut());
    conn.await
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    state: Arc<ServerState>,
    builder: Arc<Protocols>,
    connections: Connections,
    stop: CancellationToken,
) {
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let secure = tls.is_some();
        let service = service_fn(move |req| {
            let state = state.clone();
            async move { Ok::<_, Infallible>(handle(state, req, peer, secure).await) }
        });
        let closing = connections.closing.clone();
        let builder = builder.clone();
        match &tls {
            None => {
                connections.tasks.spawn(async move {
                    serve_http1(&builder, TokioIo::new(stream), service, closing).await;
                });
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                connections.tasks.spawn(async move {
                    // A handshake still going when the server closes is dropped.
                    let handshake =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
                    let stream = tokio::select! {
                        done = handshake => match done {
                            Ok(Ok(s)) => s,
                            _ => return,
                        },
                        _ = closing.cancelled() => return,
                    };
                    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                        serve_http2(&builder, TokioIo::new(stream), service, closing).await;
                    } else {
                        serve_http1(&builder, TokioIo::new(stream), service, closing).await;
                    }
                });
            }
        }
    }
}

/// How long a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

async fn handle(
    state: Arc<ServerState>,
    req: Request<Incoming>,
    peer: SocketAddr,
    secure: bool,
) -> Response<Body> {
    let start = Instant::now();
    let logged = state.log.enabled().then(|| {
        let header = |name| {
            req.headers()
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
                .unwrap_or("-")
                .to_string()
        };
        (
            format!("{} {} {:?}", req.method(), req.uri(), req.version()),
            header(HOST),
            header(REFERER),
            header(USER_AGENT),
        )
    });
    let resp = match AssertUnwindSafe(dispatch(&state, req, secure))
        .catch_unwind()
        .await
    {
        Ok(resp) => resp,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!("request panicked: {message}");
            html_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                plain_error_page(StatusCode::INTERNAL_SERVER_ERROR),
            )
        }
    };
    if let Some((request_line, host, referer, user_agent)) = logged {
        let bytes = resp
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .unwrap_or(0);
        state.log.record(AccessEntry {
            time: SystemTime::now(),
            peer: peer.ip(),
            host,
            request_line,
            status: resp.status().as_u16(),
            bytes,
            referer,
            user_agent,
            duration: start.elapsed(),
        });
    }
    resp
}

async fn dispatch(state: &ServerState, req: Request<Incoming>, secure: bool) -> Response<Body> {
    let (mut parts, body) = req.into_parts();
    let upgrade = parts.extensions.remove::<hyper::upgrade::OnUpgrade>();
    let Some(host) = request_host(&parts) else {
        return plain_response(StatusCode::BAD_REQUEST, true);
    };
    let site: Arc<SiteRuntime> = {
        let table = state.table.load();
        match table.resolve(&host.name) {
            Some(HostTarget::Site(site)) => site.clone(),
            Some(HostTarget::Alias(site)) => {
                return redirect_to_canonical(site, &host, &parts, secure);
            }
            None => match &table.default {
                Some(site) => site.clone(),
                None => return plain_response(StatusCode::NOT_FOUND, false),
            },
        }
    };
    let declared_len = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared_len.is_some_and(|n| n > state.options.max_body_bytes) {
        return too_large(&site);
    }
    let Some(matched) = site.site.router.route(parts.uri.path()) else {
        return error_response(&site, StatusCode::NOT_FOUND, None);
    };
    let controller = site.controllers[matched.index].as_ref();
    let body =
        if controller.reads_body() && parts.method != Method::GET && parts.method != Method::HEAD {
            match Limited::new(body, state.options.max_body_bytes as usize)
                .collect()
                .await
            {
                Ok(collected) => collected.to_bytes(),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => return too_large(&site),
                Err(_) => return plain_response(StatusCode::BAD_REQUEST, true),
            }
        } else {
            Bytes::new()
        };
    // HTTP/2 header values are copies already (hpack decodes into new buffers).
    let body = if controller.waits_long() && parts.version < Version::HTTP_2 {
        detach_from_read_buffer(&mut parts, body)
    } else {
        body
    };
    let ctx = RequestCtx {
        parts: &parts,
        args: &matched.args,
        site: &site,
        body,
        upgrade: std::sync::Mutex::new(upgrade),
        language: std::sync::OnceLock::new(),
    };
    respond(controller, &ctx).await
}

/// hyper hands out header values, the URI and small bodies as slices of the
/// connection's read buffer, so while a request lives that buffer cannot be reused,
/// and hyper, which keeps reading while a request is in flight (to notice the peer
/// going away), reads into a second one. For a long-poll that waits 25 s that is
/// 8 KiB more for every waiting client. Copying the few bytes of the head lets the
/// first buffer be reused at once.
fn detach_from_read_buffer(parts: &mut http::request::Parts, body: Bytes) -> Bytes {
    let mut headers = http::HeaderMap::with_capacity(parts.headers.len());
    for (name, value) in &parts.headers {
        // `from_bytes` copies (the value was valid, so it still is; if not, the
        // original is kept rather than the request failed).
        let copy = match HeaderValue::from_bytes(value.as_bytes()) {
            Ok(mut copy) => {
                copy.set_sensitive(value.is_sensitive());
                copy
            }
            Err(_) => value.clone(),
        };
        headers.append(name.clone(), copy);
    }
    parts.headers = headers;
    if let Ok(uri) = http::Uri::from_maybe_shared(Bytes::from(parts.uri.to_string())) {
        parts.uri = uri;
    }
    if body.is_empty() {
        Bytes::new()
    } else {
        Bytes::copy_from_slice(&body)
    }
}

fn too_large(site: &SiteRuntime) -> Response<Body> {
    let mut resp = error_response(site, StatusCode::PAYLOAD_TOO_LARGE, None);
    // The unread body is still on the wire: this connection cannot be reused.
    resp.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    resp
}

fn plain_response(status: StatusCode, close: bool) -> Response<Body> {
    let mut resp = html_response(status, plain_error_page(status));
    if close {
        resp.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

struct RequestHost {
    name: String,
    port: Option<u16>,
}

/// The host a request is for: the URI authority (HTTP/2, absolute-form requests),
/// else the `Host` header. HTTP/1.1 requires one; HTTP/1.0 may omit it (default site).
fn request_host(parts: &http::request::Parts) -> Option<RequestHost> {
    let raw = match parts.uri.authority() {
        Some(a) => a.as_str().to_string(),
        None => match parts.headers.get(HOST) {
            Some(h) => h.to_str().ok()?.to_string(),
            None if parts.version <= Version::HTTP_10 => String::new(),
            None => return None,
        },
    };
    let raw = raw.rsplit('@').next().unwrap_or("");
    let (name, port) = if raw.starts_with('[') {
        let end = raw.find(']')?;
        let port = raw[end + 1..].strip_prefix(':');
        (&raw[..=end], port)
    } else {
        match raw.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (raw, None),
        }
    };
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok()?),
        None => None,
    };
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'[' | b']' | b':'))
    {
        return None;
    }
    Some(RequestHost {
        name: name.trim_end_matches('.').to_ascii_lowercase(),
        port,
    })
}

fn redirect_to_canonical(
    site: &SiteRuntime,
    host: &RequestHost,
    parts: &http::request::Parts,
    secure: bool,
) -> Response<Body> {
    let scheme = if secure { "https" } else { "http" };
    let port = host.port.map(|p| format!(":{p}")).unwrap_or_default();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let location = format!("{scheme}://{}{port}{path}", site.site.config.hostname);
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
    match HeaderValue::from_str(&location) {
        Ok(l) => {
            resp.headers_mut().insert(LOCATION, l);
            resp.headers_mut()
                .insert(CONTENT_LENGTH, HeaderValue::from(0));
            resp
        }
        Err(_) => plain_response(StatusCode::BAD_REQUEST, true),
    }
}

/// Development mode: rebuilds the site table when a `site.toml` changes or a site
/// folder appears or goes, and swaps it in. A broken config is reported and the
/// running sites stay as they were.
async fn reload_on_change(sites_dir: PathBuf, state: Arc<ServerState>, stop: CancellationToken) {
    let mut seen = config_fingerprint(&sites_dir);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
        let now = config_fingerprint(&sites_dir);
        if now == seen {
            continue;
        }
        seen = now;
        let options = template_options(&state.options);
        let limits = state.options.render_limits;
        match SiteTable::load(&sites_dir, &options, &state.hubs, &state.stores, limits).await {
            Ok(table) => {
                state.table.store(Arc::new(table));
                tracing::info!("site configuration reloaded");
            }
            Err(errors) => {
                for e in errors {
                    tracing::error!("not reloaded: {e}");
                }
            }
        }
    }
}

fn config_fingerprint(sites_dir: &Path) -> Vec<(PathBuf, Option<SystemTime>)> {
    let mut out: Vec<_> = std::fs::read_dir(sites_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let toml = e.path().join("site.toml");
            let modified = toml.metadata().and_then(|m| m.modified()).ok();
            (toml, modified)
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_detached_request_keeps_every_header_the_uri_and_the_body() {
        let req = Request::post("/push/poll?client=abc&x=1")
            .header("cookie", "a=1")
            .header("cookie", "b=2")
            .header("authorization", "Bearer t")
            .body(())
            .unwrap();
        let (mut parts, ()) = req.into_parts();
        let mut secret = HeaderValue::from_static("Bearer t");
        secret.set_sensitive(true);
        parts.headers.insert("authorization", secret);
        let body = detach_from_read_buffer(&mut parts, Bytes::from_static(b"{\"op\":1}"));
        let cookies: Vec<_> = parts.headers.get_all("cookie").iter().collect();
        assert_eq!(cookies, ["a=1", "b=2"]);
        assert!(parts.headers["authorization"].is_sensitive());
        assert_eq!(parts.uri.query(), Some("client=abc&x=1"));
        assert_eq!(parts.method, Method::POST);
        assert_eq!(&body[..], b"{\"op\":1}");
    }
}
