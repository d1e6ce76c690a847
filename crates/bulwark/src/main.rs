//! The `bulwark` command: wires the crates together. Everything it does is
//! configuration and start-up; the work happens in the library crates.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use include_dir::{Dir, include_dir};

use std::sync::Arc;

mod backup;
mod control;
mod import;
mod translations;
mod user;

use bulwark_http::{AccessLogTarget, Server, ServerOptions, TrustedProxies};
use bulwark_web::{LibLimits, Module, RenderLimits, Sites, SitesOptions};

// Many small, short-lived allocations per request: mimalloc handles them with less
// contention than the system allocator (measured in bench/RESULTS.md).
#[global_allocator]
static ALLOCATOR: MiMalloc = MiMalloc;

/// mimalloc, asked through its plain entry points where the alignment allows.
///
/// The `mimalloc` crate's own allocator calls `mi_malloc_aligned` for every
/// allocation; mimalloc 3 serves that from its fast path only when the size
/// class's free list happens to start at a suitable block, and otherwise
/// takes its generic aligned path. Counted with callgrind on `/json`: all 24
/// allocations of a request went that way, 2,150 instructions of the
/// request's 26,000 (bench/RESULTS.md, issue 28). `mi_malloc` returns blocks
/// aligned to 16 bytes, or to the size for smaller ones (the rule the
/// standard library's own allocator uses too).
struct MiMalloc;

/// What `mi_malloc` guarantees on every platform we build for.
const MI_MALLOC_ALIGN: usize = 16;

fn plain(layout: std::alloc::Layout) -> bool {
    layout.align() <= MI_MALLOC_ALIGN && layout.align() <= layout.size()
}

// SAFETY: every block comes from mimalloc and goes back to it (`mi_free`
// takes blocks from either entry point); alignment is honoured by the rule in
// `plain` or by the aligned calls.
unsafe impl std::alloc::GlobalAlloc for MiMalloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_malloc, mi_malloc_aligned};
        // SAFETY: plain C allocation calls with a size and a power-of-two alignment.
        unsafe {
            if plain(layout) {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_zalloc, mi_zalloc_aligned};
        // SAFETY: as in `alloc`.
        unsafe {
            if plain(layout) {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from this allocator.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys::{mi_realloc, mi_realloc_aligned};
        // SAFETY: `ptr` came from this allocator; the new size keeps the
        // layout's alignment (checked by `plain` for the plain call).
        unsafe {
            let new = std::alloc::Layout::from_size_align_unchecked(new_size, layout.align());
            if plain(layout) && plain(new) {
                mi_realloc(ptr.cast(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}

/// The starter site, written out when `bulwark serve` finds no site to serve.
static STARTER_SITE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../sites/default");

#[derive(Parser)]
#[command(
    name = "bulwark",
    version,
    about = "A CMS and web framework in one binary"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How log lines are written to standard error: `text` (coloured only
    /// on a terminal, and not with NO_COLOR set) or `json`, one object a
    /// line, for a log shipper.
    #[arg(
        long,
        global = true,
        value_enum,
        env = "BULWARK_LOG_FORMAT",
        default_value = "text"
    )]
    log_format: LogFormat,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// The log on standard error, at `level` unless `BULWARK_LOG` says
/// otherwise. Colour only for a person at a terminal: escape codes in a file
/// are noise to whoever reads or greps it (<https://no-color.org>).
fn start_log(format: LogFormat, level: &str) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("BULWARK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let log = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => log.json().init(),
        LogFormat::Text => {
            let coloured = std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            log.with_ansi(coloured).init()
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve every site in the sites folder (creates a starter site if there is none).
    Serve(ServeArgs),
    /// Validate every site's configuration and compile all its templates.
    Check {
        #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
        sites: PathBuf,
    },
    /// Site management.
    Site {
        #[command(subcommand)]
        command: SiteCommand,
    },
    /// Accounts of a site: add users, change passwords, list them, set up a
    /// second factor. Works on the site's database directly; the server need
    /// not run.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Bring content in: a Bulwark export, or a WordPress site
    /// (`import wordpress`) (docs/import.md).
    Import(import::ImportArgs),
    /// Write a site's data out as JSON lines (with --media, a tar with its
    /// files), for `bulwark import` here or elsewhere (docs/import.md).
    Export(import::ExportArgs),
    /// Make the running server load every site's configuration and templates
    /// again (as SIGHUP does). A site whose new configuration is broken keeps
    /// running as it was; its errors are printed and the exit status is 1.
    Reload {
        #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
        sites: PathBuf,
    },
    /// The running server: its sites, their hosts and database, requests,
    /// renders, cache sizes and hit ratios, push clients; and its version.
    Status {
        #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
        sites: PathBuf,
        /// Print the answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Drop cached pages of a site in the running server.
    Purge(PurgeArgs),
    /// Back a site up: its database (a consistent snapshot, while the site
    /// serves and writes) and its files in one archive (docs/operations.md).
    Backup(backup::BackupArgs),
    /// Texts to translate: the ones the templates pass to `_()` and `_n()`.
    Translations {
        #[command(subcommand)]
        command: TranslationsCommand,
    },
    /// List a site's backups in its data/backups/, newest first.
    Backups {
        site: String,
        #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
        sites: PathBuf,
    },
    /// Put a backup back: the site's files, then its database at once.
    Restore(backup::RestoreArgs),
    /// Make a key for encrypted backups: writes the secret identity to FILE
    /// and prints the public recipient for `[backup] encrypt_to`.
    BackupKey { file: PathBuf },
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true)))]
struct PurgeArgs {
    /// The site's name.
    site: String,
    /// The page at this path (with its query string, if any), in every language.
    #[arg(long, group = "what", value_name = "PATH")]
    url: Option<String>,
    /// Every page and fragment that showed this resource.
    #[arg(long, group = "what", value_name = "ID")]
    resource: Option<i64>,
    /// Everything the site's cache holds.
    #[arg(long, group = "what")]
    all: bool,
    #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
    sites: PathBuf,
}

#[derive(Subcommand)]
enum UserCommand {
    /// Add a user in a user group. The password is asked for (not echoed) on a
    /// terminal, or read as one line from standard input; never an argument.
    Add {
        name: String,
        /// The user group: anonymous, members, editors, managers, administrators.
        #[arg(long)]
        group: String,
        /// The user's e-mail address (where a password reset link goes).
        #[arg(long, value_name = "ADDR")]
        email: Option<String>,
        #[command(flatten)]
        site: SiteChoice,
    },
    /// Change a user's password (asked for, or one line from standard input).
    Passwd {
        name: String,
        #[command(flatten)]
        site: SiteChoice,
    },
    /// Set (or change) a user's e-mail address, where a password reset link goes.
    Email {
        name: String,
        address: String,
        #[command(flatten)]
        site: SiteChoice,
    },
    /// List the users: name, groups, when created.
    List {
        #[command(flatten)]
        site: SiteChoice,
    },
    /// Set up a second factor (TOTP) for a user: prints a new secret for an
    /// authenticator app, reads a code from it (a prompt, or one line of
    /// standard input) and then prints the recovery codes, once. With
    /// --disable, removes the user's second factor.
    Totp {
        name: String,
        /// Remove the second factor instead (secret and recovery codes).
        #[arg(long)]
        disable: bool,
        #[command(flatten)]
        site: SiteChoice,
    },
    /// Make new recovery codes for a user with a second factor, replacing the
    /// old ones; printed once.
    RecoveryCodes {
        name: String,
        #[command(flatten)]
        site: SiteChoice,
    },
}

/// Which site a `bulwark user` command works on.
#[derive(clap::Args)]
struct SiteChoice {
    /// The site's name; may be left out when there is only one site.
    #[arg(long)]
    site: Option<String>,
    #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
    sites: PathBuf,
}

#[derive(Subcommand)]
enum TranslationsCommand {
    /// Write the texts of a site's templates as a gettext template
    /// (`translations/<site>.pot`), or with --language merge them into that
    /// language's catalog (new texts untranslated, translations kept).
    Extract(translations::ExtractArgs),
}

#[derive(Subcommand)]
enum SiteCommand {
    /// Create a new site folder from the starter site.
    New {
        name: String,
        /// Host name the site answers to.
        #[arg(long)]
        hostname: Option<String>,
        #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
        sites: PathBuf,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Folder holding one folder per site.
    #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
    sites: PathBuf,
    /// Address for plain HTTP.
    #[arg(long, env = "BULWARK_LISTEN", default_value = "127.0.0.1:8000")]
    listen: SocketAddr,
    /// Address for HTTPS (HTTP/2 and HTTP/1.1), for sites that name a certificate.
    #[arg(long, env = "BULWARK_LISTEN_TLS")]
    listen_tls: Option<SocketAddr>,
    /// Development mode: reload templates and config on change, detailed error pages.
    #[arg(long, env = "BULWARK_DEV")]
    dev: bool,
    /// Access log: a file path, `-` for standard output, or `off`.
    #[arg(long, env = "BULWARK_ACCESS_LOG", default_value = "-")]
    access_log: String,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "BULWARK_MAX_BODY", default_value_t = 8 * 1024 * 1024)]
    max_body: u64,
    /// Largest accepted request head (request line and headers), in bytes.
    #[arg(long, env = "BULWARK_MAX_HEADER", default_value_t = 64 * 1024)]
    max_header: usize,
    /// Seconds a client has to send a request head; also the keep-alive idle limit.
    #[arg(long, env = "BULWARK_HEADER_TIMEOUT", default_value_t = 10.0)]
    header_timeout: f64,
    /// Seconds a client has to send a whole request body once its head is in.
    #[arg(long, env = "BULWARK_BODY_TIMEOUT", default_value_t = 30.0)]
    body_timeout: f64,
    /// Seconds in-flight requests get to finish on shutdown.
    #[arg(long, env = "BULWARK_SHUTDOWN_GRACE", default_value_t = 10.0)]
    shutdown_grace: f64,
    /// Renders that may run at once per site (default: two per core).
    #[arg(long, env = "BULWARK_RENDER_CONCURRENCY")]
    render_concurrency: Option<usize>,
    /// Seconds a render may wait for a turn before the request gets 503.
    #[arg(long, env = "BULWARK_RENDER_QUEUE_TIMEOUT", default_value_t = 2.0)]
    render_queue_timeout: f64,
    /// Memory that building combined `/lib/` bodies may take at once per site, in
    /// bytes (builds beyond it wait, then get 503).
    #[arg(long, env = "BULWARK_LIB_BUILD_MEMORY", default_value_t = LibLimits::default().memory_bytes)]
    lib_build_memory: u64,
    /// Bytes of hot files (files/, media, previews) each site holds in
    /// memory; files above a thirty-second of it are streamed from disk.
    #[arg(long, env = "BULWARK_FILE_MEMORY", default_value_t = SitesOptions::default().file_memory_bytes)]
    file_memory: u64,
    /// Worker threads (default: one per core).
    #[arg(long, env = "BULWARK_THREADS")]
    threads: Option<usize>,
    /// A proxy or balancer in front (an address or a network, such as
    /// 10.0.0.0/8; repeat it, or separate with commas): its
    /// `X-Forwarded-For` names the visitor, its `X-Forwarded-Proto` the scheme.
    #[arg(
        long = "trusted-proxy",
        env = "BULWARK_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    trusted_proxies: Vec<String>,
    /// The most connections one client address (IPv6: one /64) may hold open;
    /// more get 503 at once. Default: half the open-file limit (at least 16).
    /// Trusted proxies have no cap.
    #[arg(long, env = "BULWARK_MAX_CONNECTIONS_PER_ADDRESS")]
    max_connections_per_address: Option<usize>,
}

/// mimalloc's `arena_eager_commit` (option 4), turned off: memory
/// that finished requests freed then really leaves the process. Measured with
/// 3,000 idle keep-alive connections: 20 KiB each instead of 33 KiB, and 15 MiB
/// instead of 25 MiB at start (bench/RESULTS.md, push). mimalloc reserves its
/// first arena before `main` runs, so the option is set from a constructor that
/// runs before mimalloc's own (a lower `.init_array` priority runs first). An
/// explicit `MIMALLOC_ARENA_EAGER_COMMIT` in the environment still wins: then the
/// constructor leaves the option alone and mimalloc reads the environment.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array.00100")]
static LAZY_ARENAS: extern "C" fn() = {
    extern "C" fn lazy_arenas() {
        const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
        if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
            // SAFETY: sets a plain integer option before mimalloc reads it.
            unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
        }
    }
    lazy_arenas
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // An import's progress bar and summary are what a person reads; its
    // migrations and such are for the log of a server.
    let level = match cli.command {
        Command::Import(_)
        | Command::Export(_)
        | Command::Backup(_)
        | Command::Restore(_)
        | Command::Backups { .. }
        | Command::BackupKey { .. } => "warn",
        _ => "info",
    };
    start_log(cli.log_format, level);
    let result = match cli.command {
        Command::Serve(args) => serve(args),
        Command::Check { sites } => check(&sites),
        Command::Site {
            command:
                SiteCommand::New {
                    name,
                    hostname,
                    sites,
                },
        } => new_site(&sites, &name, hostname.as_deref()).map(|dir| {
            println!("created {}", dir.display());
        }),
        Command::User { command } => user::run(command),
        Command::Import(args) => import::run(args),
        Command::Export(args) => import::export(args),
        Command::Reload { sites } => reload(&sites),
        Command::Status { sites, json } => control::ask(&sites, &control::Request::Status)
            .and_then(|answer| {
                if json {
                    println!("{}", serde_json::to_string_pretty(&answer)?);
                } else {
                    control::print_status(&answer);
                }
                Ok(())
            }),
        Command::Purge(args) => purge(args),
        Command::Backup(args) => backup::backup(args),
        Command::Translations {
            command: TranslationsCommand::Extract(args),
        } => translations::extract(args),
        Command::Backups { site, sites } => backup::list(&site, &sites),
        Command::Restore(args) => backup::restore(args),
        Command::BackupKey { file } => backup::new_key(&file),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", said_once(&e));
            ExitCode::FAILURE
        }
    }
}

/// An error and its causes, each said once. Many errors name their cause in
/// their own message too (`listening on 127.0.0.1:8000: Address already in
/// use`), and printing the whole chain then said it twice.
fn said_once(error: &anyhow::Error) -> String {
    let mut said = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if said.ends_with(&text) {
            continue;
        }
        if !said.is_empty() {
            said.push_str(": ");
        }
        said.push_str(&text);
    }
    said
}

/// Raises the limit of open files to the most the system allows this process:
/// every connection is a file descriptor, and the default (often 1,024) is what
/// one visitor holding connections open would otherwise exhaust first.
#[cfg(unix)]
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return;
        }
        if limit.rlim_cur < limit.rlim_max {
            let before = limit.rlim_cur;
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                tracing::info!(
                    "open files: limit raised from {before} to {}",
                    limit.rlim_max
                );
            }
        }
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    #[cfg(unix)]
    raise_open_file_limit();
    control::refuse_second_server(&args.sites)?;
    if !has_sites(&args.sites) {
        let dir = write_starter_site(&args.sites.join("default"), None)?;
        tracing::info!(
            "no sites found: created the starter site in {}",
            dir.display()
        );
    }
    let options = ServerOptions {
        listen: args.listen,
        listen_tls: args.listen_tls,
        max_header_bytes: args.max_header,
        header_read_timeout: Duration::from_secs_f64(args.header_timeout),
        shutdown_grace: Duration::from_secs_f64(args.shutdown_grace),
        access_log: match args.access_log.as_str() {
            "off" => AccessLogTarget::Off,
            "-" => AccessLogTarget::Stdout,
            path => AccessLogTarget::File(path.into()),
        },
        trusted_proxies: TrustedProxies::parse(&args.trusted_proxies)
            .map_err(|e| anyhow::anyhow!("--trusted-proxy: {e}"))?,
        max_connections_per_address: args.max_connections_per_address,
    };
    let sites_options = SitesOptions {
        dev: args.dev,
        max_body_bytes: args.max_body,
        file_memory_bytes: args.file_memory,
        body_timeout: Duration::from_secs_f64(args.body_timeout),
        render_limits: RenderLimits {
            concurrency: args
                .render_concurrency
                .unwrap_or(RenderLimits::default().concurrency),
            queue_timeout: Duration::from_secs_f64(args.render_queue_timeout),
        },
        lib_limits: LibLimits {
            memory_bytes: args.lib_build_memory,
            queue_timeout: Duration::from_secs_f64(args.render_queue_timeout),
            ..LibLimits::default()
        },
        ..SitesOptions::default()
    };
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.threads {
        runtime.worker_threads(n);
    }
    let runtime = runtime
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        let sites = Sites::load(&args.sites, sites_options, modules()?)
            .await
            .map_err(|errors| anyhow::anyhow!("{}", lines(&errors)))?;
        let tls = sites.tls_config()?;
        tokio::spawn(reload_on_hangup(Arc::downgrade(&sites)));
        let _control = control::listen(&args.sites, &sites)?;
        // Installed before the port is open: a stop asked for as soon as the
        // server answers is a graceful one, not the signal's default (death).
        let shutdown = shutdown_signal()?;
        let server = Server::bind(options, tls, sites.clone()).await?;
        tracing::info!("serving on http://{}/", server.local_addr());
        if let Some(addr) = server.tls_local_addr() {
            tracing::info!("serving on https://{addr}/");
        }
        server.run(shutdown).await;
        sites.close().await;
        tracing::info!("stopped");
        Ok(())
    })
}

/// `SIGHUP` (`systemctl reload`) loads the sites again; a site whose
/// configuration is broken is logged and keeps running as it was.
async fn reload_on_hangup(sites: std::sync::Weak<Sites>) {
    let Ok(mut hangup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
    else {
        tracing::error!("cannot install the SIGHUP handler: reload by restarting");
        return;
    };
    while hangup.recv().await.is_some() {
        let Some(sites) = sites.upgrade() else {
            return;
        };
        match sites.reload().await {
            Ok(()) => tracing::info!("sites reloaded"),
            Err(errors) => {
                tracing::error!(
                    "reloaded, except where these errors are (those sites run as before):\n{}",
                    lines(&errors)
                );
            }
        }
    }
}

/// Ready when `SIGTERM` or `SIGINT` comes; both handlers are installed when
/// this is called, not when the future is first polled.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {},
            _ = term.recv() => {},
        }
        tracing::info!("shutting down: no new connections, finishing requests in flight");
    })
}

fn reload(sites: &Path) -> anyhow::Result<()> {
    let answer = control::ask(sites, &control::Request::Reload)?;
    if answer.errors.is_empty() {
        println!("reloaded");
        return Ok(());
    }
    for e in &answer.errors {
        eprintln!("{e}");
    }
    bail!("reloaded, except the sites above: they keep running as they were")
}

fn purge(args: PurgeArgs) -> anyhow::Result<()> {
    let purge = match (args.url, args.resource) {
        (Some(url), _) => {
            if !url.starts_with('/') {
                bail!("--url takes a path such as /news?page=2, not {url:?}");
            }
            bulwark_web::Purge::Url(url)
        }
        (None, Some(id)) => bulwark_web::Purge::Resource(id),
        (None, None) => bulwark_web::Purge::All,
    };
    let request = control::Request::Purge {
        site: args.site,
        purge,
    };
    let answer = control::ask(&args.sites, &request)?;
    if let Some(e) = answer.errors.first() {
        bail!("{e}");
    }
    println!("purged");
    Ok(())
}

fn has_sites(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.path().join("site.toml").is_file())
        })
        .unwrap_or(false)
}

/// The modules this binary ships; a site enables the ones it names (`core`
/// always). `BULWARK_ADMIN_PASSWORD` is the password of a site's first
/// administrator (see docs/accounts.md); a too short one stops here.
fn modules() -> anyhow::Result<Vec<Arc<dyn Module>>> {
    let admin_password = std::env::var("BULWARK_ADMIN_PASSWORD").ok();
    let auth = bulwark_module_auth::module(admin_password).context("BULWARK_ADMIN_PASSWORD")?;
    Ok(vec![
        bulwark_module_core::module(),
        bulwark_module_seo::module(),
        bulwark_module_push::module(),
        auth,
        bulwark_module_mail::module(),
        bulwark_module_admin::module(),
        bulwark_module_cluster::module(),
        bulwark_module_voting::module(),
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
    ])
}

fn lines(errors: &[impl std::fmt::Display]) -> String {
    errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn check(sites_dir: &Path) -> anyhow::Result<()> {
    let manifests: Vec<_> = modules()?.iter().map(|m| m.manifest().clone()).collect();
    let sites = bulwark_site::load_sites(sites_dir, false, &manifests)
        .map_err(|errors| anyhow::anyhow!("{}", lines(&errors)))?;
    let mut broken = 0;
    for site in sites {
        let name = site.name().to_string();
        let templates = bulwark_template::SiteTemplates::new(site.into(), Default::default());
        let errors = templates.check_all();
        for err in &errors {
            let at = err
                .location
                .as_ref()
                .map_or_else(|| "?".to_string(), ToString::to_string);
            eprintln!("site {name}: {at}: {}", err.message);
        }
        if errors.is_empty() {
            println!("site {name}: ok");
        } else {
            println!("site {name}: {} broken template(s)", errors.len());
        }
        broken += errors.len();
    }
    if broken > 0 {
        bail!("{broken} template(s) do not compile");
    }
    Ok(())
}

fn new_site(sites_dir: &Path, name: &str, hostname: Option<&str>) -> anyhow::Result<PathBuf> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!("{name:?} is not a valid site name (letters, digits, '-' and '_')");
    }
    let dir = sites_dir.join(name);
    if dir.exists() {
        bail!("{} already exists", dir.display());
    }
    let hostname = hostname
        .map(str::to_string)
        .unwrap_or(format!("{name}.localhost"));
    bulwark_site::normalize_host(&hostname).map_err(|e| anyhow::anyhow!("--hostname: {e}"))?;
    write_starter_site(&dir, Some((name, &hostname)))
}

/// Writes the starter site to `dir`; with `identity`, as a non-default site with
/// that name and host name.
fn write_starter_site(dir: &Path, identity: Option<(&str, &str)>) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    STARTER_SITE
        .extract(dir)
        .with_context(|| format!("writing the starter site to {}", dir.display()))?;
    for sub in ["files", "lib", "templates"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    // Every new site gets its own API token.
    let toml_path = dir.join("site.toml");
    let text = std::fs::read_to_string(&toml_path)?;
    let token = format!("{:032x}", rand::random::<u128>());
    std::fs::write(
        &toml_path,
        text.replace("# token = \"generated\"", &format!("token = \"{token}\"")),
    )?;
    if let Some((name, hostname)) = identity {
        let toml_path = dir.join("site.toml");
        let text = std::fs::read_to_string(&toml_path)?;
        let text = text
            .replace("name = \"default\"", &format!("name = \"{name}\""))
            .replace(
                "hostname = \"localhost\"",
                &format!("hostname = \"{hostname}\""),
            )
            .replace("default = true", "default = false")
            // The starter site's alias belongs to the starter site: a second
            // site claiming it too could not load next to it.
            .replace("aliases = [\"www.localhost\"]", "aliases = []");
        std::fs::write(&toml_path, text)?;
    }
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_an_error_names_itself_is_said_once() {
        let in_use = std::io::Error::new(std::io::ErrorKind::AddrInUse, "Address already in use");
        let error = anyhow::Error::new(bulwark_http::ServerError::Listen {
            addr: "127.0.0.1:8000".parse().unwrap(),
            source: in_use,
        });
        assert_eq!(
            said_once(&error),
            "listening on 127.0.0.1:8000: Address already in use"
        );
    }

    #[test]
    fn a_context_and_its_cause_are_both_said() {
        let error = anyhow::Error::new(std::io::Error::other("disk full")).context("writing x");
        assert_eq!(said_once(&error), "writing x: disk full");
    }
}
