//! `bulwark import wordpress SITE FILE`: a WordPress site brought in from its
//! export, with a progress bar on a terminal and a summary at the end. The
//! import module does the work, on the site's database and media directly;
//! the server may be running or not.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};

use bulwark_module_import::wordpress::{self, Options};
use bulwark_module_import::{Enabled, Progress, Quiet, Report};
use bulwark_module_media::MediaImport;
use bulwark_web::{enabled_modules, open_site_store};

use crate::user::choose_site;
use crate::{SiteChoice, modules};

#[derive(clap::Subcommand)]
pub enum ImportCommand {
    /// Import a WordPress site from its export file (Tools > Export > All
    /// content): posts, pages, authors, categories and tags, media,
    /// comments, menus, and a redirect from every old URL. Running it again
    /// updates what changed and duplicates nothing.
    Wordpress {
        /// The site to import into.
        site: String,
        /// The export file (WXR, `.xml`).
        file: PathBuf,
        /// A copy of the old site's `wp-content/uploads` folder, where the
        /// attachments' files are.
        #[arg(long, value_name = "DIR")]
        uploads: Option<PathBuf>,
        /// Fetch each attachment's file from the old site instead.
        #[arg(long, conflicts_with = "uploads")]
        fetch_media: bool,
        /// Posts and pages written per transaction.
        #[arg(long, default_value_t = 100)]
        batch: usize,
        /// Print nothing but errors (for scripts).
        #[arg(long, short)]
        quiet: bool,
        /// Also write the report as JSON to this file.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
        sites: PathBuf,
    },
}

pub fn run(command: ImportCommand) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        match command {
            ImportCommand::Wordpress {
                site,
                file,
                uploads,
                fetch_media,
                batch,
                quiet,
                report,
                sites,
            } => {
                if let Some(dir) = &uploads
                    && !dir.is_dir()
                {
                    bail!("--uploads {}: there is no such folder", dir.display());
                }
                let options = Options {
                    uploads,
                    fetch_media,
                    batch,
                };
                let choice = SiteChoice {
                    site: Some(site),
                    sites,
                };
                let done = import_wordpress(&choice, &file, &options, quiet).await?;
                if let Some(path) = report {
                    let json = serde_json::to_vec_pretty(&done)?;
                    std::fs::write(&path, json)
                        .with_context(|| format!("writing {}", path.display()))?;
                }
                if !quiet {
                    print!("{done}");
                }
                Ok(())
            }
        }
    })
}

async fn import_wordpress(
    choice: &SiteChoice,
    file: &std::path::Path,
    options: &Options,
    quiet: bool,
) -> anyhow::Result<Report> {
    let modules = modules()?;
    let site = Arc::new(choose_site(choice, &modules)?);
    if !site.modules.iter().any(|m| m.name == "media") {
        bail!(
            "site {} does not enable the media module, which keeps the attachments: add \
             \"media\" to `modules` in {}",
            site.name(),
            site.dir.join("site.toml").display()
        );
    }
    let store = open_site_store(&site, &enabled_modules(&site, &modules))
        .await
        .with_context(|| format!("site {}", site.name()))?;
    let media = MediaImport::open(&site, &store).map_err(|e| anyhow::anyhow!("{e}"))?;
    let enabled = Enabled::of(site.modules.iter().map(|m| m.name));
    let bar = Bar::new(quiet);
    let progress: &dyn Progress = match &bar {
        Some(bar) => bar,
        None => &Quiet,
    };
    let report = wordpress::import(&store, &media, enabled, file, options, progress).await;
    if let Some(bar) = bar {
        bar.0.finish_and_clear();
    }
    Ok(report?)
}

/// A progress bar on standard error (drawn only on a terminal).
struct Bar(ProgressBar);

impl Bar {
    fn new(quiet: bool) -> Option<Bar> {
        if quiet {
            return None;
        }
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{msg:>30} [{bar:40}] {pos}/{len} ({eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Some(Bar(bar))
    }
}

impl Progress for Bar {
    fn stage(&self, what: &str, total: u64) {
        self.0.set_message(what.to_owned());
        self.0.set_length(total);
        self.0.set_position(0);
    }

    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
}
