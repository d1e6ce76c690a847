//! A real server on a loopback port, sites written to a temporary folder, and a raw
//! HTTP/1.1 client (raw so that malformed and unnormalised requests reach the server
//! exactly as written).

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bulwark_http::{AccessLogTarget, Server, ServerOptions};
use bulwark_web::{RenderLimits, Sites, SitesOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct TestServer {
    pub addr: SocketAddr,
    pub models: HashMap<String, std::sync::Arc<bulwark_template::SiteModels>>,
    pub tls_addr: Option<SocketAddr>,
    pub dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    sites: std::sync::Arc<Sites>,
}

impl TestServer {
    pub fn sites(&self) -> PathBuf {
        self.dir.path().join("sites")
    }

    /// Loads every site again from its folder, as `bulwark serve` does on
    /// SIGHUP.
    pub async fn reload(&self) {
        self.sites.reload().await.expect("the sites load again");
    }

    /// Stops the server and waits until it has shut down.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
        // As `bulwark serve` does when it stops: the stores close.
        self.sites.close().await;
    }
}

/// What a test may change about the server and its sites.
pub struct Options {
    pub listen_tls: Option<SocketAddr>,
    pub max_body_bytes: u64,
    pub body_timeout: Duration,
    pub header_read_timeout: Duration,
    pub shutdown_grace: Duration,
    pub access_log: AccessLogTarget,
    pub dev: bool,
    pub fuel: u64,
    pub render_limits: RenderLimits,
    pub lib_limits: bulwark_web::LibLimits,
    pub file_memory_bytes: u64,
    pub trusted_proxies: bulwark_http::TrustedProxies,
    pub max_connections_per_address: Option<usize>,
}

/// The modules the binary ships.
pub fn modules() -> Vec<std::sync::Arc<dyn bulwark_web::Module>> {
    vec![
        bulwark_module_core::module(),
        bulwark_module_seo::module(),
        bulwark_module_push::module(),
        bulwark_module_auth::module(None).expect("the accounts module"),
        bulwark_module_mail::module(),
        bulwark_module_admin::module(),
        bulwark_module_media::module(),
        bulwark_module_menu::module(),
        bulwark_module_redirects::module(),
        bulwark_module_comments::module(),
        bulwark_module_forms::module(),
        bulwark_module_webhooks::module(),
        bulwark_module_import::module(),
        bulwark_module_metrics::module(),
        bulwark_module_backup::module(),
        bulwark_module_cdn::module(),
        bulwark_module_acme::module(),
    ]
}

/// Loads the sites in `sites` as the binary does.
pub async fn load_sites(
    sites: &Path,
    options: SitesOptions,
) -> Result<std::sync::Arc<Sites>, Vec<bulwark_web::LoadError>> {
    Sites::load(sites, options, modules()).await
}

/// Writes `files` (path relative to the sites folder, contents) and starts a server.
pub async fn start(files: &[(&str, &str)], tweak: impl FnOnce(&mut Options)) -> TestServer {
    start_with_modules(files, tweak, modules()).await
}

/// [`start`] with other modules than the binary's.
pub async fn start_with_modules(
    files: &[(&str, &str)],
    tweak: impl FnOnce(&mut Options),
    modules: Vec<std::sync::Arc<dyn bulwark_web::Module>>,
) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites");
    for (path, text) in files {
        write(&sites.join(path), text);
    }
    let server_defaults = ServerOptions::default();
    let site_defaults = SitesOptions::default();
    let mut options = Options {
        listen_tls: None,
        max_body_bytes: site_defaults.max_body_bytes,
        body_timeout: site_defaults.body_timeout,
        header_read_timeout: server_defaults.header_read_timeout,
        shutdown_grace: Duration::from_secs(2),
        access_log: AccessLogTarget::Off,
        dev: false,
        fuel: site_defaults.fuel,
        render_limits: site_defaults.render_limits,
        lib_limits: site_defaults.lib_limits,
        file_memory_bytes: site_defaults.file_memory_bytes,
        trusted_proxies: bulwark_http::TrustedProxies::default(),
        max_connections_per_address: None,
    };
    tweak(&mut options);
    let site_options = SitesOptions {
        dev: options.dev,
        fuel: options.fuel,
        render_limits: options.render_limits,
        lib_limits: options.lib_limits,
        file_memory_bytes: options.file_memory_bytes,
        max_body_bytes: options.max_body_bytes,
        body_timeout: options.body_timeout,
    };
    let server_options = ServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        listen_tls: options.listen_tls,
        header_read_timeout: options.header_read_timeout,
        shutdown_grace: options.shutdown_grace,
        access_log: options.access_log,
        trusted_proxies: options.trusted_proxies,
        max_connections_per_address: options.max_connections_per_address,
        ..server_defaults
    };
    let sites_handler = Sites::load(&sites, site_options, modules)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "{}",
                e.iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        });
    let tls = sites_handler.tls_config().unwrap_or_else(|e| panic!("{e}"));
    let models = ["a", "b", "p", "news", "slow", "default"]
        .iter()
        .filter_map(|name| Some((name.to_string(), sites_handler.site_models(name)?)))
        .collect();
    let server = Server::bind(server_options, tls, sites_handler.clone())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = server.local_addr();
    let tls_addr = server.tls_local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    TestServer {
        addr,
        models,
        tls_addr,
        dir,
        stop: Some(stop),
        task: Some(task),
        sites: sites_handler,
    }
}

/// Waits until the site has applied every change committed so far, so that a
/// late cache flush does not disturb what a test counts next (renders, hits).
/// The pivot's change comes last, so first the pivot has indexed everything
/// queued; then a marker change announced after that has come through the
/// site's change task, which applies changes in order.
pub async fn changes_applied(models: &bulwark_template::SiteModels) {
    let within = Duration::from_secs(10);
    bulwark_testkit::eventually("the pivot indexed every queued resource", within, || {
        let store = models.store.clone();
        async move { (store.run(|s| s.pivot_pending()).await.unwrap() == 0).then_some(()) }
    })
    .await;
    let marker = bulwark_store::dependency::config("changes_applied marker");
    let (serial, generation) = (models.cache.serial(&marker), models.cache.generation());
    models.store.announce(bulwark_store::ChangeEvent {
        keys: vec![marker.clone()],
        resources: Vec::new(),
        everything: false,
    });
    bulwark_testkit::eventually("the site applied a marker change", within, || async {
        let cache = &models.cache;
        (cache.serial(&marker) != serial || cache.generation() != generation).then_some(())
    })
    .await;
}

/// Whether the server has read everything sent so far on `conn`: the kernel
/// holds no unread bytes at the server's end of it (Linux's `/proc/net/tcp`,
/// whose addresses are the IPv4 address as a host-order word and the port).
pub fn server_read_all(conn: &TcpStream) -> bool {
    let hex = |addr: SocketAddr| match addr {
        SocketAddr::V4(a) => format!(
            "{:08X}:{:04X}",
            u32::from_ne_bytes(a.ip().octets()),
            a.port()
        ),
        SocketAddr::V6(_) => panic!("the test server listens on IPv4"),
    };
    let (server, client) = (
        hex(conn.peer_addr().unwrap()),
        hex(conn.local_addr().unwrap()),
    );
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let unread = fields[4].split_once(':').map(|(_, rx)| rx);
        fields[1] == server && fields[2] == client && unread == Some("00000000")
    })
}

/// A gzip body, decompressed.
pub fn gunzip(body: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut out)
        .unwrap();
    out
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: HashMap<String, String>,
    /// The header lines as sent (`headers` keeps one of a repeated name).
    pub header_lines: Vec<String>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `request` as written and reads the response until the server closes the
/// connection (callers send `Connection: close`), or `None` if it closed without one.
pub async fn raw(addr: SocketAddr, request: &[u8]) -> Option<RawResponse> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.ok()?;
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buf))
        .await
        .expect("response within 10 s")
        .ok()?;
    parse_response(&buf)
}

pub fn parse_response(buf: &[u8]) -> Option<RawResponse> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let header_lines: Vec<String> = lines.map(str::to_string).collect();
    let headers = header_lines
        .iter()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(RawResponse {
        status,
        headers,
        header_lines,
        body: buf[end + 4..].to_vec(),
    })
}

/// A GET for `path` on `host`, closing the connection after the response.
pub async fn get(addr: SocketAddr, host: &str, path: &str) -> RawResponse {
    get_with(addr, host, path, "").await
}

pub async fn get_with(
    addr: SocketAddr,
    host: &str,
    path: &str,
    extra_headers: &str,
) -> RawResponse {
    let req =
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra_headers}Connection: close\r\n\r\n");
    raw(addr, req.as_bytes()).await.expect("a response")
}

pub const SITE_A: &str = r#"
hostname = "a.test"
aliases = ["www.a.test"]
default = true
modules = ["seo"]

[settings]
title = "Site A"

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"

[[dispatch]]
name = "page"
path = "/page/{slug}"
controller = "template"
template = "page.tpl"

[[dispatch]]
name = "broken"
path = "/broken"
controller = "template"
template = "broken.tpl"

[[dispatch]]
name = "runaway"
path = "/runaway"
controller = "template"
template = "runaway.tpl"

[[dispatch]]
name = "old"
path = "/old/{slug}"
controller = "redirect"
to = "page"
"#;

pub const SITE_B: &str = r#"
hostname = "b.test"
modules = ["seo"]

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
"#;

/// Two sites with distinct templates, static files and routes.
pub fn two_sites() -> Vec<(&'static str, &'static str)> {
    vec![
        ("a/site.toml", SITE_A),
        (
            "a/templates/base.tpl",
            "<html><body>{% block body %}{% endblock %}</body></html>",
        ),
        (
            "a/templates/home.tpl",
            "{% extends \"base.tpl\" %}{% block body %}site A home {{ url('page', 'hello') }} {{ lib('css/a.css', 'css/b.css') }}{% endblock %}",
        ),
        ("a/templates/page.tpl", "page {{ slug }} q={{ q.x }}"),
        ("a/templates/robots.txt", "site A robots"),
        (
            "a/templates/404.tpl",
            "site A has no {{ status }} page here",
        ),
        ("a/templates/500.tpl", "site A is sorry ({{ status }})"),
        ("a/templates/broken.tpl", "line one\n{% if %}\n"),
        (
            "a/templates/runaway.tpl",
            "{% for i in range(100000000) %}{{ i }}{% endfor %}",
        ),
        ("a/lib/css/a.css", "body { color: red; }\n"),
        ("a/lib/css/b.css", "p { margin: 0 }"),
        ("a/files/doc.txt", "0123456789abcdefghij"),
        ("b/site.toml", SITE_B),
        ("b/templates/home.tpl", "site B home"),
        ("b/lib/css/a.css", "/* site B */"),
    ]
}

/// The starter site (`sites/default`, as `bulwark serve` writes it), its files as
/// `(path under sites/, contents)` for [`start`].
pub fn starter_site() -> Vec<(String, String)> {
    site_folder("default", "default")
}

/// A site of the repository's `sites/` folder (`sites/{folder}`), its files as
/// `(path under sites/, contents)` for [`start`], as site folder `as_site`.
pub fn site_folder(folder: &str, as_site: &str) -> Vec<(String, String)> {
    fn walk(dir: &Path, under: &str, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = format!("{under}/{}", entry.file_name().to_string_lossy());
            if entry.file_type().unwrap().is_dir() {
                // A database a local run left behind is not part of the site.
                if entry.file_name() != "data" {
                    walk(&entry.path(), &name, out);
                }
            } else {
                out.push((name, std::fs::read_to_string(entry.path()).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../sites")
        .join(folder);
    walk(&dir, as_site, &mut files);
    files
}

/// [`start`] with the starter site (host `localhost`), once its seeded pages
/// are indexed: the pivot indexes them in the background, so a search sent
/// at once could otherwise find nothing.
pub async fn start_starter_site(tweak: impl FnOnce(&mut Options)) -> TestServer {
    let files = starter_site();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let server = start(&files, tweak).await;
    changes_applied(&server.models["default"]).await;
    server
}

/// Starts site `news` (`news.test`, the default) with `settings` (the
/// `[database]` table and whatever else a test needs) and two rules that show a
/// resource's title through `show.tpl`: `/show/{id}` rendered every time and
/// `/cached/{id}` through the page cache.
pub async fn start_news_site(settings: &str) -> TestServer {
    let site = format!(
        r#"
hostname = "news.test"
default = true

{settings}

[[dispatch]]
name = "show"
path = "/show/{{id}}"
controller = "template"
template = "show.tpl"
cache = false

[[dispatch]]
name = "cached"
path = "/cached/{{id}}"
controller = "template"
template = "show.tpl"
"#
    );
    start(
        &[
            ("news/site.toml", site.as_str()),
            ("news/templates/show.tpl", "[{{ m.rsc[id].title }}]"),
        ],
        |_| {},
    )
    .await
}

/// A connection to `addr` that has had one request answered and is now idle.
pub async fn kept_alive(addr: SocketAddr) -> TcpStream {
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(b"GET /page/a HTTP/1.1\r\nHost: a.test\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 4096];
    let n = conn.read(&mut buf).await.unwrap();
    assert_eq!(parse_response(&buf[..n]).unwrap().status, 200);
    conn
}

/// Sends `request` on `conn` and reads what comes back until the server
/// closes, which must be within 5 s (not left hanging).
pub async fn answered_at_once(conn: &mut TcpStream, request: &[u8]) -> String {
    conn.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), conn.read_to_end(&mut answer))
        .await
        .expect("answered at once, not left hanging")
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}
