//! The control socket: how `bulwark reload`, `bulwark status` and `bulwark
//! purge` reach the server that runs a sites folder, and how a command that
//! writes into a running site's database (an import, `bulwark user`) tells
//! it what changed ([`Hearing`]), so its pages, sitemap, feeds and redirects
//! follow at once, as they do for the server's own writes.
//!
//! A Unix socket in the sites folder (`.bulwark.sock`, mode 0600: the user the
//! server runs as, and root, may ask), one JSON request line and one JSON
//! answer line per connection. A socket rather than an HTTP endpoint: it needs
//! no token, no port and no site, and cannot be reached from the network. A
//! second server started on the same folder finds the first one answering
//! and refuses to start.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use bulwark_module_cluster::wire::WireChange;
use bulwark_store::{ChangeEvent, Store};
use bulwark_web::{Purge, SiteStatus, Sites};

/// The socket's name in the sites folder.
const SOCKET: &str = ".bulwark.sock";

/// The longest request line read (a [`Request::Changed`] of many keys).
const MAX_REQUEST: u64 = 4 * 1024 * 1024;

/// The most dependency keys a command tells the server one by one; past
/// them it says that anything may have changed (the whole site is flushed).
const MAX_KEYS: usize = 50_000;

pub fn socket_path(sites_dir: &Path) -> PathBuf {
    sites_dir.join(SOCKET)
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Request {
    Reload,
    Status,
    Purge {
        site: String,
        purge: Purge,
    },
    /// Put a backup back (`bulwark restore` while the server runs).
    Restore {
        site: String,
        file: PathBuf,
        identity: Option<PathBuf>,
    },
    /// Another process wrote into the site's database: what its writes
    /// changed, as the cluster's nodes tell each other.
    Changed {
        site: String,
        change: WireChange,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub version: String,
    /// What went wrong (a reload: the sites that kept their running version).
    #[serde(default)]
    pub errors: Vec<String>,
    #[serde(default)]
    pub sites: Vec<SiteStatus>,
}

/// Fails if a server already runs `sites_dir` (its socket answers): two
/// servers on one folder would write the same SQLite files.
pub fn refuse_second_server(sites_dir: &Path) -> anyhow::Result<()> {
    if server_runs(sites_dir) {
        bail!(
            "another Bulwark server is running on {} (its control socket {} answers): stop it first",
            sites_dir.display(),
            socket_path(sites_dir).display()
        );
    }
    Ok(())
}

/// Whether a server runs `sites_dir` (its socket takes a connection).
pub fn server_runs(sites_dir: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(socket_path(sites_dir)).is_ok()
}

/// Starts answering on the sites folder's socket, for as long as the sites
/// run.
pub fn listen(sites_dir: &Path, sites: &Arc<Sites>) -> anyhow::Result<ControlSocket> {
    let path = socket_path(sites_dir);
    // A socket left by a server that died.
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path)
        .with_context(|| format!("opening the control socket {}", path.display()))?;
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .with_context(|| format!("restricting {}", path.display()))?;
    let sites = Arc::downgrade(sites);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let sites = sites.clone();
            tokio::spawn(async move {
                if let Err(e) = answer(stream, sites).await {
                    tracing::warn!("control socket: {e}");
                }
            });
        }
    });
    Ok(ControlSocket(path))
}

/// Removes the socket when the server stops.
pub struct ControlSocket(PathBuf);

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

async fn answer(stream: tokio::net::UnixStream, sites: Weak<Sites>) -> anyhow::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    tokio::io::AsyncReadExt::take(tokio::io::BufReader::new(read), MAX_REQUEST)
        .read_line(&mut line)
        .await?;
    if line.is_empty() {
        // Only looked whether a server runs here.
        return Ok(());
    }
    let mut answer = Answer {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        ..Answer::default()
    };
    match (serde_json::from_str::<Request>(&line), sites.upgrade()) {
        (Err(e), _) => answer.errors.push(format!("not a request: {e}")),
        (Ok(_), None) => answer.errors.push("the server is stopping".to_owned()),
        (Ok(Request::Reload), Some(sites)) => {
            tracing::info!("reloading, as asked on the control socket");
            if let Err(errors) = sites.reload().await {
                answer.errors = errors.iter().map(ToString::to_string).collect();
                for e in &answer.errors {
                    tracing::error!("kept as it ran: {e}");
                }
            }
        }
        (Ok(Request::Status), Some(sites)) => {
            answer.sites = tokio::task::spawn_blocking(move || sites.status()).await?;
        }
        (
            Ok(Request::Restore {
                site,
                file,
                identity,
            }),
            Some(sites),
        ) => {
            if let Err(e) = restore(&sites, &site, &file, identity.as_deref()).await {
                answer.errors.push(e);
            }
        }
        (Ok(Request::Purge { site, purge }), Some(sites)) => {
            if !sites.purge(&site, &purge) {
                answer.errors.push(format!("no site is named {site:?}"));
            }
        }
        (Ok(Request::Changed { site, change }), Some(sites)) => match sites.runtime(&site) {
            Some(runtime) => {
                // A change of a kind this binary does not know: anything may
                // have changed.
                let event = change.into_event().unwrap_or(ChangeEvent {
                    everything: true,
                    ..ChangeEvent::nothing()
                });
                applied(runtime.models(), event).await;
            }
            None => answer.errors.push(format!("no site is named {site:?}")),
        },
    }
    let mut text = serde_json::to_string(&answer)?;
    text.push('\n');
    write.write_all(text.as_bytes()).await?;
    Ok(())
}

/// Hands `event` to the site's change task (which flushes what it names and
/// tells the observers, as for the server's own writes) and waits until it
/// has been applied, so that the command which told it returns once its
/// changes show: the change task applies changes in order, so when a marker
/// sent after `event` has been flushed, so has `event`.
async fn applied(models: &bulwark_template::SiteModels, event: ChangeEvent) {
    let marker = bulwark_store::dependency::config("control socket: applied");
    let (serial, generation) = (models.cache.serial(&marker), models.cache.generation());
    models.store.announce(event);
    models.store.announce(ChangeEvent {
        keys: vec![marker.clone()],
        ..ChangeEvent::nothing()
    });
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while models.cache.serial(&marker) == serial
        && models.cache.generation() == generation
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
}

/// Puts a backup back into a running site (the backup module's code, in
/// this process, so the caches hear of it).
async fn restore(
    sites: &Sites,
    site: &str,
    file: &Path,
    identity: Option<&Path>,
) -> Result<(), String> {
    use bulwark_module_backup::archive;
    let runtime = sites
        .runtime(site)
        .ok_or_else(|| format!("no site is named {site:?}"))?;
    let (file, identity) = (file.to_path_buf(), identity.map(Path::to_path_buf));
    tracing::info!(
        site,
        "restoring {}, as asked on the control socket",
        file.display()
    );
    tokio::task::spawn_blocking(move || {
        let identities = archive::identities(identity.as_deref())?;
        archive::restore(
            &runtime.site().dir,
            &runtime.models().store,
            &file,
            &identities,
            &archive::Quiet,
        )
    })
    .await
    .map_err(|e| e.to_string())?
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// Asks the server running `sites_dir`.
pub fn ask(sites_dir: &Path, request: &Request) -> anyhow::Result<Answer> {
    let path = socket_path(sites_dir);
    let mut stream = std::os::unix::net::UnixStream::connect(&path).with_context(|| {
        format!(
            "no Bulwark server answers on {} (is `bulwark serve --sites {}` running?)",
            path.display(),
            sites_dir.display()
        )
    })?;
    let mut line = serde_json::to_string(request)?;
    line.push('\n');
    stream.write_all(line.as_bytes())?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer)?;
    serde_json::from_str(&answer).context("the server's answer")
}

/// `bulwark status`: one line per site.
pub fn print_status(answer: &Answer) {
    println!("bulwark {}", answer.version);
    println!(
        "{:<14} {:<28} {:<9} {:>9} {:>8} {:>16} {:>8} {:>9} {:>8}",
        "site",
        "hosts",
        "database",
        "requests",
        "renders",
        "page cache hits",
        "entries",
        "cache MiB",
        "clients"
    );
    for site in &answer.sites {
        let hosts = std::iter::once(site.hostname.as_str())
            .chain(site.aliases.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(", ");
        let looked_up = site.page_cache.hits + site.page_cache.misses;
        let hits = if looked_up == 0 {
            "-".to_owned()
        } else {
            format!(
                "{:.0}% of {looked_up}",
                100.0 * site.page_cache.hits as f64 / looked_up as f64
            )
        };
        let clients = site
            .more
            .get("push_clients")
            .map_or("-".to_owned(), u64::to_string);
        println!(
            "{:<14} {:<28} {:<9} {:>9} {:>8} {:>16} {:>8} {:>9.1} {:>8}",
            site.name,
            hosts,
            site.database,
            site.requests,
            site.renders,
            hits,
            site.cache.entries,
            site.cache.bytes as f64 / (1024.0 * 1024.0),
            clients
        );
    }
}

/// What a command's writes change, heard from its own store while it runs
/// (the change events every committed write emits, kept by the store's
/// channel until read), and told to the server running the same sites
/// folder when the command is done: when this is dropped, so a command that
/// fails half way tells what it did write. Too many keys, or more events than
/// the channel keeps, and it tells the server that anything may have changed
/// (the whole site is read again).
pub struct Hearing {
    events: tokio::sync::broadcast::Receiver<ChangeEvent>,
    sites_dir: PathBuf,
    site: String,
}

impl Hearing {
    pub fn start(store: &Store, sites_dir: &Path, site: &str) -> Hearing {
        Hearing {
            events: store.subscribe(),
            sites_dir: sites_dir.to_owned(),
            site: site.to_owned(),
        }
    }

    /// Everything heard, merged into one change (past [`MAX_KEYS`], or
    /// with events missed: anything may have changed).
    fn heard(&mut self) -> ChangeEvent {
        use tokio::sync::broadcast::error::TryRecvError;
        let mut events = Vec::new();
        let mut missed = false;
        loop {
            match self.events.try_recv() {
                Ok(event) => events.push(event),
                Err(TryRecvError::Lagged(_)) => missed = true,
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        let heard = ChangeEvent::merged(events);
        match missed || heard.keys.len() > MAX_KEYS || heard.resources.len() > MAX_KEYS {
            true => ChangeEvent {
                everything: true,
                ..ChangeEvent::nothing()
            },
            false => heard,
        }
    }
}

impl Drop for Hearing {
    /// Tells the server running the sites folder (if one does) what the
    /// command changed. A server that cannot be told is a warning, not a
    /// failure of the command, whose writes are in.
    fn drop(&mut self) {
        let event = self.heard();
        if event.keys.is_empty() && event.resources.is_empty() && !event.everything {
            return;
        }
        if std::os::unix::net::UnixStream::connect(socket_path(&self.sites_dir)).is_err() {
            return; // No server runs here: it reads the database when it starts.
        }
        let site = &self.site;
        let request = Request::Changed {
            site: site.clone(),
            change: WireChange::from_event(&event),
        };
        let problem = match ask(&self.sites_dir, &request) {
            Ok(answer) if answer.errors.is_empty() => return,
            Ok(answer) => answer.errors.join("; "),
            Err(e) => format!("{e:#}"),
        };
        eprintln!(
            "warning: the running server was not told of the changes ({problem}); \
             `bulwark purge {site} --all` makes it read everything again"
        );
    }
}
