//! The control socket: how `bulwark reload`, `bulwark status` and `bulwark
//! purge` reach the server that runs a sites folder.
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

use bulwark_web::{Purge, SiteStatus, Sites};

/// The socket's name in the sites folder.
const SOCKET: &str = ".bulwark.sock";

/// The longest request line read.
const MAX_REQUEST: u64 = 64 * 1024;

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
    }
    let mut text = serde_json::to_string(&answer)?;
    text.push('\n');
    write.write_all(text.as_bytes()).await?;
    Ok(())
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
