//! The HTTP server: accepting connections, limits, TLS, HTTP/1.1 and HTTP/2,
//! graceful shutdown, panics and the access log. What a request means is the
//! [`Handler`]'s business (the `web` crate's running sites).
//!
//! hyper is used directly rather than through axum: the routing that matters here is
//! per host and per site (compiled from `site.toml`), and the measured cost of a
//! general-purpose router and middleware stack on the hot path is 20-40% of the
//! request rate (`../shared/STACK.md`).
//!
//! Limits come from hyper where hyper has them: the head size (a larger head gets
//! `431`, however slowly it arrives), the header count (more than hyper's 100 gets
//! `431`), a malformed head (`400`), each answered by hyper itself (no body,
//! `Connection: close`) before the connection closes; and the header read timeout
//! (slowloris; in hyper 1.12 it also bounds how long an idle keep-alive connection
//! may wait for its next request). Bodies are read by the handler, within its
//! limit, with [`read_body`].
//!
//! There is deliberately no parsing of our own in front of hyper: to find where
//! each head starts on a keep-alive connection it would have to frame bodies too
//! (`Content-Length`, chunked), a second reading of the same bytes, which is
//! where request smuggling comes from.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use futures_util::FutureExt;
use http::header::CONTENT_LENGTH;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::TrustedProxies;
use crate::access_log::{AccessEntry, AccessLog, AccessLogTarget};
use crate::body::Body;
use crate::response::{html_response, plain_error_page};

#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub listen: SocketAddr,
    /// Where HTTPS is served, when a TLS configuration is given.
    pub listen_tls: Option<SocketAddr>,
    /// The most a request head (request line and headers) may take.
    pub max_header_bytes: usize,
    /// Time allowed for a request head to arrive, and for an idle keep-alive
    /// connection to send its next request.
    pub header_read_timeout: Duration,
    /// How long in-flight requests may finish after a shutdown signal.
    pub shutdown_grace: Duration,
    pub access_log: AccessLogTarget,
    /// Proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed.
    pub trusted_proxies: TrustedProxies,
    /// The most connections one client address (IPv6: one /64) may hold
    /// open; more are answered `503` at once. `None`: half the process's
    /// open-file limit, at least 16. Trusted proxies have none.
    pub max_connections_per_address: Option<usize>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8000)),
            listen_tls: None,
            max_header_bytes: 64 * 1024,
            header_read_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
            access_log: AccessLogTarget::Off,
            trusted_proxies: TrustedProxies::default(),
            max_connections_per_address: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("listening on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("opening the access log: {0}")]
    AccessLog(#[source] std::io::Error),
}

/// Where a request came from.
#[derive(Debug, Clone, Copy)]
pub struct Peer {
    pub addr: SocketAddr,
    /// The connection is TLS.
    pub secure: bool,
}

/// What the server hands every request to. A panic inside `handle` answers 500
/// for that request only.
pub trait Handler: Send + Sync + 'static {
    fn handle(
        &self,
        req: Request<Incoming>,
        peer: Peer,
    ) -> impl Future<Output = Response<Body>> + Send;
}

struct ServerState<H> {
    handler: Arc<H>,
    options: ServerOptions,
    log: AccessLog,
}

pub struct Server<H> {
    state: Arc<ServerState<H>>,
    listener: TcpListener,
    tls: Option<(TcpListener, tokio_rustls::TlsAcceptor)>,
}

impl<H: Handler> Server<H> {
    /// Binds the listeners; nothing is served until [`run`](Self::run). `tls` is
    /// served on `listen_tls` (ALPN picks HTTP/2 or HTTP/1.1).
    pub async fn bind(
        options: ServerOptions,
        tls: Option<Arc<rustls::ServerConfig>>,
        handler: Arc<H>,
    ) -> Result<Server<H>, ServerError> {
        let bind = |addr: SocketAddr| async move {
            TcpListener::bind(addr)
                .await
                .map_err(|source| ServerError::Listen { addr, source })
        };
        let listener = bind(options.listen).await?;
        let tls = match (tls, options.listen_tls) {
            (Some(config), Some(addr)) => {
                Some((bind(addr).await?, tokio_rustls::TlsAcceptor::from(config)))
            }
            (Some(_), None) => {
                tracing::warn!(
                    "sites name TLS certificates, but no TLS address is set (--listen-tls)"
                );
                None
            }
            _ => None,
        };
        let log = AccessLog::start(options.access_log.clone()).map_err(ServerError::AccessLog)?;
        Ok(Server {
            state: Arc::new(ServerState {
                handler,
                options,
                log,
            }),
            listener,
            tls,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("bound listener has an address")
    }

    pub fn tls_local_addr(&self) -> Option<SocketAddr> {
        self.tls.as_ref().and_then(|(l, _)| l.local_addr().ok())
    }

    /// Serves until `shutdown` completes, then stops accepting and gives in-flight
    /// requests up to the grace period to finish.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let stop = CancellationToken::new();
        let cap = self
            .state
            .options
            .max_connections_per_address
            .unwrap_or_else(default_per_address_cap);
        let connections = Connections {
            tasks: Default::default(),
            book: Arc::new(Book::new(cap)),
        };
        let builder = Arc::new(Protocols::new(&self.state.options));
        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(sweep_head_deadlines(
            connections.book.clone(),
            builder.epoch,
            stop.clone(),
        )));
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
        connections.book.close_all();
        connections.tasks.close();
        tokio::select! {
            _ = connections.tasks.wait() => tracing::info!("all connections closed"),
            _ = tokio::time::sleep(self.state.options.shutdown_grace) => {
                tracing::warn!("shutdown grace period over; closing remaining connections");
            }
        }
        let log = self.state.log.clone();
        let _ = tokio::task::spawn_blocking(move || log.finish()).await;
    }
}

/// HTTP/1.1 and HTTP/2 set up once for every connection. Plain connections speak
/// HTTP/1.1 only and TLS ones what ALPN chose. (hyper-util's `auto` builder, which
/// sniffs the protocol, hands hyper the sniffed bytes first; hyper's read buffer
/// then doubles to 16 KiB on every connection, the largest part of what an idle
/// keep-alive or a waiting long-poll costs. Browsers never speak HTTP/2 without
/// TLS, so nothing is lost.)
struct Protocols {
    /// Without a timer: each connection gets its own ([`HeadClock`]).
    http1: hyper::server::conn::http1::Builder,
    /// What head deadlines are counted from.
    epoch: Instant,
    http2: hyper::server::conn::http2::Builder<TokioExecutor>,
}

impl Protocols {
    fn new(options: &ServerOptions) -> Protocols {
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1
            .header_read_timeout(options.header_read_timeout)
            // The head limit itself. The read buffer's limit alone does not bound the
            // head: hyper reads into whatever capacity the buffer grew to, so a head of
            // 70-110 KB sent at once passed a 64 KiB `max_buf_size`.
            .max_header_size(options.max_header_bytes)
            .max_buf_size(options.max_header_bytes.max(8192))
            // Head and body go out in one writev() as they are: copying the body
            // into one buffer first cost a 20 KB file 15-18% of its rate (the
            // copy was an eighth of the profile), and small answers lost nothing
            // measurable (A/B in one run, bench/RESULTS.md "Files from files/").
            .writev(true)
            // Not `pipeline_flush`: it skips flushing while unparsed bytes wait in the
            // read buffer, and after a parse error they always do, so hyper's own
            // 400 and 431 answers were never sent (the connection just closed). It
            // also lifts the cap on the write buffer, so a slow reader of a large
            // body had all of it copied into memory. Only pipelining clients, which
            // browsers are not, lose a batched flush.
            .keep_alive(true);
        let mut http2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
        http2
            .timer(TokioTimer::new())
            .max_header_list_size(options.max_header_bytes.min(u32::MAX as usize) as u32)
            .keep_alive_interval(Some(Duration::from_secs(30)))
            .max_concurrent_streams(256);
        Protocols {
            http1,
            http2,
            epoch: Instant::now(),
        }
    }
}

/// HTTP/1's header-read deadline (slowloris, and an idle keep-alive
/// connection's wait for its next request), kept in the connection's own
/// [`Control`] instead of tokio's timer wheel. hyper arms a new deadline for
/// every request head it waits for and drops it once the head is in; through
/// tokio's timer that was an entry put into a shared wheel under its lock
/// and taken out again, on every request. Here it is an atomic store, and one
/// task ([`sweep_head_deadlines`]) wakes the connections whose deadline has
/// passed: a late head is cut off at most [`SWEEP_EVERY`] after it.
struct HeadClock {
    control: Arc<Control>,
    epoch: Instant,
}

impl hyper::rt::Timer for HeadClock {
    fn sleep(&self, duration: Duration) -> std::pin::Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> std::pin::Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HeadDeadline {
            control: self.control.clone(),
            epoch: self.epoch,
            at: millis_since(self.epoch, deadline),
        })
    }
}

/// A [`HeadClock`] deadline. Polled, it is ready once passed; until then it
/// stands in its connection's `Control` with the waker to wake when it passes.
struct HeadDeadline {
    control: Arc<Control>,
    epoch: Instant,
    /// [`millis_since`] the epoch.
    at: u64,
}

impl Future for HeadDeadline {
    type Output = ();

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if millis_since(self.epoch, Instant::now()) >= self.at {
            return std::task::Poll::Ready(());
        }
        self.control.head_waker.register(cx.waker());
        self.control.head_deadline.store(self.at, Ordering::Release);
        std::task::Poll::Pending
    }
}

impl hyper::rt::Sleep for HeadDeadline {}

impl Drop for HeadDeadline {
    fn drop(&mut self) {
        // Only its own: a newer deadline may stand already.
        let _ = self.control.head_deadline.compare_exchange(
            self.at,
            0,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }
}

/// Milliseconds from `epoch` to `t`, plus one: 0 means no deadline in
/// `Control::head_deadline`.
fn millis_since(epoch: Instant, t: Instant) -> u64 {
    t.saturating_duration_since(epoch).as_millis() as u64 + 1
}

/// How often passed head deadlines are looked for.
const SWEEP_EVERY: Duration = Duration::from_millis(250);

/// Wakes every connection whose head deadline has passed, so that hyper
/// polls the deadline, finds it passed and ends the connection.
async fn sweep_head_deadlines(book: Arc<Book>, epoch: Instant, stop: CancellationToken) {
    let mut every = tokio::time::interval(SWEEP_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = every.tick() => {}
        }
        let now = millis_since(epoch, Instant::now());
        let open = book.lock();
        for (_, control) in &open.connections {
            let at = control.head_deadline.load(Ordering::Acquire);
            if at != 0 && at <= now {
                control.head_waker.wake();
            }
        }
    }
}

/// The open connections, so that the server can ask them to close (every one
/// at shutdown, the idle ones when file descriptors run out) and count them per
/// client address; `tasks` tells when they have all ended.
#[derive(Clone)]
struct Connections {
    tasks: tokio_util::task::TaskTracker,
    book: Arc<Book>,
}

/// The book of open connections. One mutex, taken when a connection opens and
/// when it ends, never per request.
struct Book {
    /// The most connections one address may hold (trusted proxies aside).
    cap: usize,
    open: std::sync::Mutex<Open>,
    /// Woken when a connection ends while an accept loop waits for
    /// descriptors (`waiting`: only then, sparing every close the lock).
    ended: tokio::sync::Notify,
    waiting: std::sync::atomic::AtomicUsize,
}

#[derive(Default)]
struct Open {
    connections: slab::Slab<Arc<Control>>,
    per_address: std::collections::HashMap<IpAddr, usize>,
    /// Set at shutdown: a connection opened since is asked to close at once.
    closing: bool,
    /// How many times idle connections have been shed ([`Book::shed_idle`]).
    sheddings: u32,
}

/// Why a connection is asked to close; the larger wins.
const SHED: u8 = 1;
const SHUTDOWN: u8 = 2;

/// Between the server and one connection: whether it is busy, and whether it
/// should close. Each connection waits on its own waker, so asking it costs no
/// shared lock while it serves (a shared `Notify` or `CancellationToken` takes
/// one mutex on every wake-up of every connection).
#[derive(Default)]
struct Control {
    /// Requests being handled on the connection now.
    busy: std::sync::atomic::AtomicUsize,
    /// Whether a request has come at all.
    used: std::sync::atomic::AtomicBool,
    /// [`SHED`] or [`SHUTDOWN`] when asked to close, else 0.
    close: std::sync::atomic::AtomicU8,
    /// [`Open::sheddings`] when the connection was admitted.
    admitted_after: u32,
    /// When the head hyper waits for is due ([`HeadClock`], [`millis_since`]
    /// the server's epoch), 0 when it waits for none.
    head_deadline: std::sync::atomic::AtomicU64,
    head_waker: futures_util::task::AtomicWaker,
    waker: futures_util::task::AtomicWaker,
}

impl Control {
    fn ask(&self, why: u8) {
        self.close.fetch_max(why, Ordering::AcqRel);
        self.waker.wake();
    }

    /// Ready with the reason once the connection is asked to close.
    fn asked(&self) -> impl Future<Output = u8> + '_ {
        std::future::poll_fn(|cx| {
            let why = self.close.load(Ordering::Acquire);
            if why != 0 {
                return std::task::Poll::Ready(why);
            }
            self.waker.register(cx.waker());
            match self.close.load(Ordering::Acquire) {
                0 => std::task::Poll::Pending,
                why => std::task::Poll::Ready(why),
            }
        })
    }

    /// A request starts; the guard says when it has been answered.
    fn start(self: &Arc<Self>) -> Busy {
        self.used.store(true, Ordering::Relaxed);
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    fn is_idle(&self) -> bool {
        self.busy.load(Ordering::Acquire) == 0
    }
}

/// One request being handled ([`Control::start`]).
struct Busy(Arc<Control>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Book {
    fn new(cap: usize) -> Book {
        Book {
            cap: cap.max(1),
            open: Default::default(),
            ended: tokio::sync::Notify::new(),
            waiting: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Enters a connection from `ip`; `None` when the address holds its cap
    /// already. `counted: false` for a trusted proxy, which has no cap.
    fn admit(self: &Arc<Self>, ip: IpAddr, counted: bool) -> Option<Entry> {
        let key = counted.then(|| crate::forwarded::visitor_network(ip));
        let mut open = self.lock();
        if let Some(key) = key {
            let n = open.per_address.entry(key).or_insert(0);
            if *n >= self.cap {
                return None;
            }
            *n += 1;
        }
        let control = Arc::new(Control {
            admitted_after: open.sheddings,
            ..Control::default()
        });
        if open.closing {
            control.ask(SHUTDOWN);
        }
        let index = open.connections.insert(control.clone());
        Some(Entry {
            book: self.clone(),
            index,
            address: key,
            control,
        })
    }

    fn len(&self) -> usize {
        self.lock().connections.len()
    }

    /// Asks every connection to finish what is in flight and close.
    fn close_all(&self) {
        let mut open = self.lock();
        open.closing = true;
        for (_, control) in &open.connections {
            control.ask(SHUTDOWN);
        }
    }

    /// Asks every idle connection (no request being handled) to close, and
    /// says how many there were. What nginx does when its connections run out:
    /// a keep-alive connection waiting for a next request, or one that never
    /// sent any, is the cheapest thing to give up; a browser opens a new one.
    ///
    /// Spared once: a connection admitted since the last shedding that has not
    /// sent its request yet. It is most likely the visitor that shedding made
    /// room for, and `accept` fails for lack of a descriptor even with nobody
    /// waiting (Linux takes the descriptor before it looks at the queue), so a
    /// second shedding can follow the first at once. Shed the next time.
    fn shed_idle(&self) -> usize {
        let mut open = self.lock();
        let last = open.sheddings;
        open.sheddings = last.wrapping_add(1);
        let mut asked = 0;
        for (_, control) in &open.connections {
            let newcomer =
                last > 0 && control.admitted_after == last && !control.used.load(Ordering::Acquire);
            if control.is_idle() && !newcomer {
                control.ask(SHED);
                asked += 1;
            }
        }
        asked
    }

    /// After [`shed_idle`](Self::shed_idle): waits (briefly) until fewer than
    /// `before` connections are open; whether any has ended.
    async fn some_ended(&self, before: usize) -> bool {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        let waited = tokio::time::timeout(Duration::from_millis(200), async {
            loop {
                let ended = self.ended.notified();
                tokio::pin!(ended);
                ended.as_mut().enable();
                if self.len() < before {
                    return;
                }
                ended.await;
            }
        });
        let ended = waited.await.is_ok();
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        ended
    }
}

/// One open connection in the [`Book`], taken out when dropped.
struct Entry {
    book: Arc<Book>,
    index: usize,
    address: Option<IpAddr>,
    control: Arc<Control>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        let mut open = self.book.lock();
        open.connections.try_remove(self.index);
        if let Some(key) = self.address
            && let Some(n) = open.per_address.get_mut(&key)
        {
            *n -= 1;
            if *n == 0 {
                open.per_address.remove(&key);
            }
        }
        drop(open);
        if self.book.waiting.load(Ordering::Acquire) > 0 {
            self.book.ended.notify_waiters();
        }
    }
}

/// The per-address cap when none is set: half the open-file limit (read from
/// `/proc/self/limits`; elsewhere 4,096), at least 16. Half, not less: a load
/// test or a busy office behind one address must still get its connections,
/// and the other half is left for everyone else.
fn default_per_address_cap() -> usize {
    let limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            limits
                .lines()
                .find(|l| l.starts_with("Max open files"))?
                .split_whitespace()
                .nth(3)?
                .parse::<usize>()
                .ok()
        });
    limit.map_or(4096, |n| (n / 2).max(16))
}

/// Serves one HTTP/1.1 connection (upgrades included) until it ends or the server
/// closes it gracefully.
async fn serve_http1<I, S>(protocols: &Protocols, io: I, service: S, control: &Arc<Control>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Body>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut http1 = protocols.http1.clone();
    http1.timer(HeadClock {
        control: control.clone(),
        epoch: protocols.epoch,
    });
    let conn = http1.serve_connection(io, service).with_upgrades();
    tokio::pin!(conn);
    if let Some(Err(e)) = until_closed(conn, control, |c| c.graceful_shutdown()).await
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

async fn serve_http2<I, S>(protocols: &Protocols, io: I, service: S, control: &Control)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Body> + Send,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let conn = protocols.http2.serve_connection(io, service);
    tokio::pin!(conn);
    let _ = until_closed(conn, control, |c| c.graceful_shutdown()).await;
}

/// Drives a connection to its end. Asked to close, it finishes what is in
/// flight (`shutdown`) and ends; asked to shed, an idle connection does the
/// same, one that has never had a request is dropped at once (hyper would wait
/// for its first head), and a busy one carries on. `None`: dropped.
async fn until_closed<C: Future>(
    mut conn: std::pin::Pin<&mut C>,
    control: &Control,
    shutdown: impl FnOnce(std::pin::Pin<&mut C>),
) -> Option<C::Output> {
    loop {
        let why = tokio::select! {
            ended = conn.as_mut() => return Some(ended),
            why = control.asked() => why,
        };
        if why == SHUTDOWN || control.is_idle() {
            if !control.used.load(Ordering::Acquire) {
                return None;
            }
            break;
        }
        // Busy: not shed this time.
        let _ = control
            .close
            .compare_exchange(SHED, 0, Ordering::AcqRel, Ordering::Acquire);
    }
    shutdown(conn.as_mut());
    Some(conn.await)
}

async fn accept_loop<H: Handler>(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    state: Arc<ServerState<H>>,
    builder: Arc<Protocols>,
    connections: Connections,
    stop: CancellationToken,
) {
    // When the process runs out of descriptors, idle connections are closed
    // first (`Book::shed_idle`) and the waiting visitor is then accepted. Only
    // when nothing is idle is the one descriptor held in reserve given up for a
    // moment, to accept the visitor and answer 503 instead of leaving every new
    // visitor hanging while `accept` fails.
    let mut spare = std::fs::File::open("/dev/null").ok();
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) if is_out_of_descriptors(&e) => {
                    let before = connections.book.len();
                    if connections.book.shed_idle() > 0
                        && connections.book.some_ended(before).await
                    {
                        tell_shedding();
                        if spare.is_none() {
                            spare = std::fs::File::open("/dev/null").ok();
                        }
                        continue;
                    }
                    if spare.take().is_some()
                        && let Ok((stream, _)) = listener.accept().await
                    {
                        refuse(stream, tls.is_some(), RefuseReason::Descriptors).await;
                    } else {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    spare = std::fs::File::open("/dev/null").ok();
                    continue;
                }
                Err(e) => {
                    // Another failure of one connection: back off, keep serving.
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        // Past its cap, an address is answered 503 (a trusted proxy carries
        // many visitors and has none).
        let counted = !state.options.trusted_proxies.trusts(peer.ip());
        let Some(entry) = connections.book.admit(peer.ip(), counted) else {
            let tls = tls.is_some();
            connections
                .tasks
                .spawn(refuse(stream, tls, RefuseReason::Address));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let secure = tls.is_some();
        let control = entry.control.clone();
        let service = service_fn(move |req| {
            let state = state.clone();
            let busy = control.start();
            // Boxed: hyper keeps a request's future in a slot of its
            // connection, so unboxed it was copied into that connection's
            // memory, cold among thousands of connections, every request.
            Box::pin(async move {
                let resp = handle(state, req, Peer { addr: peer, secure }).await;
                drop(busy);
                Ok::<_, Infallible>(resp)
            })
        });
        let builder = builder.clone();
        match &tls {
            None => {
                connections.tasks.spawn(async move {
                    serve_http1(&builder, TokioIo::new(stream), service, &entry.control).await;
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
                        _ = entry.control.asked() => return,
                    };
                    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                        serve_http2(&builder, TokioIo::new(stream), service, &entry.control).await;
                    } else {
                        serve_http1(&builder, TokioIo::new(stream), service, &entry.control).await;
                    }
                });
            }
        }
    }
}

/// Said once: idle connections were closed to accept new ones.
fn tell_shedding() {
    static TOLD: std::sync::Once = std::sync::Once::new();
    TOLD.call_once(|| {
        tracing::warn!(
            "out of file descriptors: idle connections were closed to accept new ones \
             (raise LimitNOFILE; logged once)"
        )
    });
}

fn is_out_of_descriptors(e: &std::io::Error) -> bool {
    // EMFILE (this process) and ENFILE (the system), on Linux.
    matches!(e.raw_os_error(), Some(23 | 24))
}

/// Why a connection is refused at accept.
#[derive(Clone, Copy)]
enum RefuseReason {
    /// The process has no file descriptor left.
    Descriptors,
    /// Its address holds as many connections as it may.
    Address,
}

/// A connection not served: a quick `503` on a plain connection (on a TLS port
/// bytes mean nothing before a handshake, so that one is only closed), then the
/// socket closes at once, giving its descriptor back.
async fn refuse(stream: tokio::net::TcpStream, tls: bool, reason: RefuseReason) {
    static TOLD: std::sync::Once = std::sync::Once::new();
    static TOLD_ADDRESS: std::sync::Once = std::sync::Once::new();
    match reason {
        RefuseReason::Descriptors => TOLD.call_once(|| {
            tracing::warn!(
                "out of file descriptors: new connections get 503 (raise LimitNOFILE; logged once)"
            )
        }),
        RefuseReason::Address => TOLD_ADDRESS.call_once(|| {
            tracing::warn!(
                "an address holds its share of connections: its new ones get 503 (logged once)"
            )
        }),
    }
    if !tls {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = stream;
        let answer = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        // Answer, then read what the client sent before closing: closing a socket
        // with unread data resets the connection, and a reset can destroy the
        // answer before the client reads it. Bounded in time and bytes.
        let _ = tokio::time::timeout(Duration::from_millis(200), async {
            stream.write_all(answer).await?;
            stream.shutdown().await?;
            let mut sink = [0u8; 4096];
            while stream.read(&mut sink).await? > 0 {}
            Ok::<_, std::io::Error>(())
        })
        .await;
    }
}

/// How long a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

async fn handle<H: Handler>(
    state: Arc<ServerState<H>>,
    req: Request<Incoming>,
    peer: Peer,
) -> Response<Body> {
    let peer = state.options.trusted_proxies.resolve(peer, req.headers());
    // The clock is read only for the log.
    let logged = state
        .log
        .enabled()
        .then(|| (AccessEntry::of(&req), Instant::now()));
    let resp = match AssertUnwindSafe(state.handler.handle(req, peer))
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
    if let Some((mut entry, start)) = logged {
        entry.bytes = resp
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .unwrap_or(0);
        entry.time = SystemTime::now();
        entry.peer = peer.addr.ip();
        entry.status = resp.status().as_u16();
        entry.duration = start.elapsed();
        state.log.record(entry);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use hyper::rt::Timer;

    #[test]
    fn a_head_deadline_stands_while_pending_and_only_its_own_goes_with_it() {
        let control = Arc::new(Control::default());
        let clock = HeadClock {
            control: control.clone(),
            epoch: Instant::now(),
        };
        let deadline = |c: &Control| c.head_deadline.load(Ordering::Acquire);
        let mut first = clock.sleep(Duration::from_secs(3600));
        assert!(first.as_mut().now_or_never().is_none(), "an hour away");
        let standing = deadline(&control);
        assert!(standing >= 3_600_000, "{standing}");
        // hyper's `reset`: the new one is made before the old one goes.
        let mut second = clock.sleep(Duration::from_secs(7200));
        assert!(second.as_mut().now_or_never().is_none());
        drop(first);
        assert!(deadline(&control) >= 7_200_000, "the newer one stands");
        drop(second);
        assert_eq!(deadline(&control), 0, "none once the head is in");
        let passed = clock.sleep_until(Instant::now());
        assert!(
            passed.now_or_never().is_some(),
            "a passed deadline is ready"
        );
    }
}
