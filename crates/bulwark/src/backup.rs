//! `bulwark backup`, `bulwark backups`, `bulwark restore` and `bulwark
//! backup-key`: the backup module's archives from a shell, with a progress
//! bar on a terminal. A backup is made from the site's database directly,
//! whether the server runs or not; a restore goes through the running server
//! when there is one (so its caches, and with the cluster module every
//! node's, drop what they hold), and straight into the database otherwise.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, bail};

use bulwark_module_backup::archive;
use bulwark_module_backup::{Progress, Settings, SiteBackups};

use crate::import::{Bar, open, runtime};
use crate::{SiteChoice, control};

#[derive(clap::Args)]
pub struct BackupArgs {
    /// The site to back up.
    site: String,
    /// Where to write the archive (default: the site's data/backups/, named
    /// by the time).
    file: Option<PathBuf>,
    /// Print nothing but errors (for scripts).
    #[arg(long, short)]
    quiet: bool,
    #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
    sites: PathBuf,
}

#[derive(clap::Args)]
pub struct RestoreArgs {
    /// The site to restore.
    site: String,
    /// The archive (`bulwark backups SITE` lists the site's own; any path
    /// works).
    file: PathBuf,
    /// The age identity (secret key) file, for an encrypted backup.
    #[arg(long, value_name = "FILE")]
    identity: Option<PathBuf>,
    /// Do not ask: replace the site's data.
    #[arg(long)]
    yes: bool,
    /// Print nothing but errors (for scripts).
    #[arg(long, short)]
    quiet: bool,
    #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
    sites: PathBuf,
}

impl Progress for Bar {
    fn stage(&self, what: &'static str, bytes: u64) {
        bulwark_module_import::Progress::stage(self, what, bytes);
    }

    fn advance(&self, bytes: u64) {
        bulwark_module_import::Progress::advance(self, bytes);
    }
}

fn choice(site: &str, sites: &std::path::Path) -> SiteChoice {
    SiteChoice {
        site: Some(site.to_owned()),
        sites: sites.to_path_buf(),
    }
}

pub fn backup(args: BackupArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let (site, store, _) = open(&choice(&args.site, &args.sites)).await?;
        let settings = Settings::read(site.config.module_settings.get("backup")).map_err(|e| {
            anyhow::anyhow!("{}: [backup] {e}", site.dir.join("site.toml").display())
        })?;
        let backups = SiteBackups::new(&site, &settings)?;
        let quiet = args.quiet;
        let file = args.file;
        let made = tokio::task::spawn_blocking(move || {
            let bar = Bar::new(quiet);
            let progress: &dyn Progress = match &bar {
                Some(bar) => bar,
                None => &archive::Quiet,
            };
            match file {
                Some(file) => backups
                    .make_at(&store, &file, progress)
                    .map(|m| (file.display().to_string(), m.files)),
                None => backups
                    .make(&store, false, progress)
                    .map(|b| (b.path.display().to_string(), 0)),
            }
        })
        .await??;
        if !args.quiet {
            println!("{}", made.0);
        }
        Ok(())
    })
}

pub fn list(site: &str, sites: &std::path::Path) -> anyhow::Result<()> {
    let modules = crate::modules()?;
    let site = crate::user::choose_site(&choice(site, sites), &modules)?;
    let found = archive::list(&archive::folder(&site.dir))?;
    if found.is_empty() {
        println!("no backups in {}", archive::folder(&site.dir).display());
        return Ok(());
    }
    println!("{:<48} {:>12} {:<25}", "name", "bytes", "made");
    for b in found {
        let mut notes = Vec::new();
        if b.scheduled {
            notes.push("scheduled");
        }
        if b.encrypted {
            notes.push("encrypted");
        }
        println!(
            "{:<48} {:>12} {:<25} {}",
            b.name,
            b.size,
            b.created.format("%Y-%m-%d %H:%M:%S UTC"),
            notes.join(", ")
        );
    }
    Ok(())
}

pub fn restore(args: RestoreArgs) -> anyhow::Result<()> {
    let file =
        std::fs::canonicalize(&args.file).with_context(|| format!("{}", args.file.display()))?;
    let identity = match &args.identity {
        Some(path) => {
            Some(std::fs::canonicalize(path).with_context(|| format!("{}", path.display()))?)
        }
        None => None,
    };
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            bail!(
                "a restore replaces everything in site {}: say --yes",
                args.site
            );
        }
        eprint!(
            "This replaces everything in site {} with {}. Type the site's name to go on: ",
            args.site,
            file.display()
        );
        let mut typed = String::new();
        std::io::stdin().read_line(&mut typed)?;
        if typed.trim() != args.site {
            bail!("not restored");
        }
    }
    // A running server restores it itself: its caches must hear of it.
    if control::server_runs(&args.sites) {
        let answer = control::ask(
            &args.sites,
            &control::Request::Restore {
                site: args.site.clone(),
                file,
                identity,
            },
        )?;
        if let Some(e) = answer.errors.first() {
            bail!("{e}");
        }
        if !args.quiet {
            println!("restored (by the running server)");
        }
        return Ok(());
    }
    runtime()?.block_on(async {
        let (site, store, _) = open(&choice(&args.site, &args.sites)).await?;
        let quiet = args.quiet;
        let site_dir = site.dir.clone();
        tokio::task::spawn_blocking(move || {
            let identities = archive::identities(identity.as_deref())?;
            let bar = Bar::new(quiet);
            let progress: &dyn Progress = match &bar {
                Some(bar) => bar,
                None => &archive::Quiet,
            };
            archive::restore(&site_dir, &store, &file, &identities, progress)
        })
        .await??;
        if !args.quiet {
            println!("restored");
        }
        Ok(())
    })
}

/// `bulwark backup-key FILE`: a new age identity in FILE (readable by its
/// owner only); prints the recipient that `[backup] encrypt_to` takes.
pub fn new_key(file: &std::path::Path) -> anyhow::Result<()> {
    use age::secrecy::ExposeSecret;
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let identity = age::x25519::Identity::generate();
    let recipient = identity.to_public();
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
        .with_context(|| format!("{}", file.display()))?;
    writeln!(
        out,
        "# created: {}\n# public key: {recipient}\n{}",
        chrono::Utc::now().to_rfc3339(),
        identity.to_string().expose_secret()
    )?;
    println!("{recipient}");
    Ok(())
}
