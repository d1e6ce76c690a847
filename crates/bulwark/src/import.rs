//! `bulwark import wordpress SITE FILE`, `bulwark import SITE FILE` and
//! `bulwark export SITE`: a WordPress site brought in from its export, a
//! Bulwark site's own data out and in again, with a progress bar on a
//! terminal and a summary at the end. The import module does the work, on the
//! site's database and media directly; the server may be running or not.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};

use std::io::Write as _;
use std::path::Path;

use bulwark_module_import::csv_rows::{self, CsvOptions};
use bulwark_module_import::site_data::{self, ExportOptions};
use bulwark_module_import::wordpress::{self, Options};
use bulwark_module_import::{Enabled, Progress, Quiet, Report, SiteUrls};
use bulwark_module_media::MediaImport;
use bulwark_site::Site;
use bulwark_store::Store;
use bulwark_web::{enabled_modules, open_site_store};

use crate::control::Hearing;
use crate::user::choose_site;
use crate::{SiteChoice, modules};

/// `bulwark import SITE FILE`, or `bulwark import wordpress ...`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ImportArgs {
    #[command(subcommand)]
    command: Option<ImportCommand>,
    /// The site to import into.
    #[arg(required = true)]
    site: Option<String>,
    /// What `bulwark export` wrote: JSON lines, or a tar with the files.
    #[arg(required = true)]
    file: Option<PathBuf>,
    /// Print nothing but errors (for scripts).
    #[arg(long, short)]
    quiet: bool,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
    sites: PathBuf,
}

/// `bulwark export SITE`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// The site to export.
    site: String,
    /// Where to write (default: standard output).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Only what changed since then (RFC 3339: 2026-11-01T00:00:00Z).
    #[arg(long, value_name = "TIME")]
    since: Option<chrono::DateTime<chrono::Utc>>,
    /// Each resource's revisions too.
    #[arg(long)]
    revisions: bool,
    /// The media files too: the output is then a tar of `site.jsonl` and
    /// `media/<sha256>`.
    #[arg(long)]
    media: bool,
    /// Print nothing but errors (for scripts).
    #[arg(long, short)]
    quiet: bool,
    #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
    sites: PathBuf,
}

#[derive(clap::Subcommand)]
pub enum ImportCommand {
    /// Import resources from a CSV file: one per row, each column a
    /// property unless --map says otherwise (docs/import.md).
    Csv {
        /// The site to import into.
        site: String,
        /// The CSV file (a header line, then one resource per line).
        file: PathBuf,
        /// The category of rows without a `category` column.
        #[arg(long)]
        category: Option<String>,
        /// A column's place: HEADER=PROPERTY, HEADER=edge:PREDICATE,
        /// HEADER=name|category|published|publication_start|publication_end,
        /// or HEADER=- to leave it out. Repeat it.
        #[arg(long = "map", value_name = "HEADER=TARGET")]
        map: Vec<String>,
        /// The column that finds a row's resource again (so a second import
        /// updates instead of adding).
        #[arg(long, value_name = "COLUMN")]
        key: Option<String>,
        /// Publish the rows (unless a `published` column says otherwise).
        #[arg(long)]
        published: bool,
        /// Check the file and show the first rows as they would be stored;
        /// write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Rows written per transaction.
        #[arg(long, default_value_t = 500)]
        batch: usize,
        /// Print nothing but errors (for scripts).
        #[arg(long, short)]
        quiet: bool,
        #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
        sites: PathBuf,
    },
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
        /// Give each author an account, in `authors` (who write and change
        /// their own articles, and hear of comments on them only) or in the
        /// group named, without a password they know: they set theirs with a
        /// password reset.
        #[arg(long, value_name = "GROUP", num_args = 0..=1, default_missing_value = "authors")]
        users: Option<String>,
        /// Mail each account made a link to choose its password (it works
        /// for a week); the site's mail module sends it. Without it nobody
        /// is mailed: each author asks for a password reset when they come.
        #[arg(long, requires = "users")]
        invite: bool,
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

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")
}

pub fn run(args: ImportArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let command = match args.command {
            Some(command) => command,
            None => {
                let (Some(site), Some(file)) = (args.site, args.file) else {
                    bail!("name the site and the file: bulwark import SITE FILE");
                };
                let choice = SiteChoice {
                    site: Some(site),
                    sites: args.sites,
                };
                let done = import_site_data(&choice, &file, args.quiet).await?;
                return finish(&done, args.report.as_deref(), args.quiet);
            }
        };
        match command {
            ImportCommand::Csv {
                site,
                file,
                category,
                map,
                key,
                published,
                dry_run,
                batch,
                quiet,
                sites,
            } => {
                let mut mapping = std::collections::BTreeMap::new();
                for m in map {
                    let Some((header, target)) = m.split_once('=') else {
                        bail!("--map {m:?}: write HEADER=TARGET");
                    };
                    mapping.insert(header.to_owned(), target.to_owned());
                }
                let options = CsvOptions {
                    category,
                    map: mapping,
                    key,
                    published,
                    dry_run,
                    batch,
                };
                let choice = SiteChoice {
                    site: Some(site),
                    sites,
                };
                import_csv(&choice, &file, &options, quiet).await
            }
            ImportCommand::Wordpress {
                site,
                file,
                uploads,
                fetch_media,
                users,
                invite,
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
                    users,
                    invite,
                    site_urls: Default::default(),
                };
                let choice = SiteChoice {
                    site: Some(site),
                    sites,
                };
                let done = import_wordpress(&choice, &file, &options, quiet).await?;
                finish(&done, report.as_deref(), quiet)
            }
        }
    })
}

async fn import_csv(
    choice: &SiteChoice,
    file: &Path,
    options: &CsvOptions,
    quiet: bool,
) -> anyhow::Result<()> {
    let (site, store, _) = open(choice).await?;
    let _told = Hearing::start(&store, &choice.sites, site.name().as_str());
    let bar = Bar::new(quiet);
    let progress: &dyn Progress = match &bar {
        Some(bar) => bar,
        None => &Quiet,
    };
    let done = csv_rows::import(&store, file, options, progress).await;
    if let Some(bar) = bar {
        bar.0.finish_and_clear();
    }
    let done = done?;
    if !done.errors.is_empty() {
        for e in &done.errors {
            eprintln!(
                "{}, line {}, column {:?}: {}",
                file.display(),
                e.line,
                e.column,
                e.why
            );
        }
        bail!(
            "{} wrong cells in {} rows: nothing was written",
            done.errors.len(),
            done.rows
        );
    }
    if options.dry_run {
        println!(
            "{} rows, all well; the first as they would be stored:\n{}",
            done.rows,
            serde_json::to_string_pretty(&done.preview)?
        );
        return Ok(());
    }
    if !quiet {
        print!("{}", done.report);
    }
    Ok(())
}

/// The report: as JSON to `file` when asked, and on the terminal.
fn finish(done: &Report, file: Option<&Path>, quiet: bool) -> anyhow::Result<()> {
    if let Some(path) = file {
        let json = serde_json::to_vec_pretty(done)?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    if !quiet {
        print!("{done}");
    }
    Ok(())
}

/// A site's store and media, opened as serving opens them.
pub(crate) async fn open(
    choice: &SiteChoice,
) -> anyhow::Result<(Arc<Site>, Store, Option<MediaImport>)> {
    let modules = modules()?;
    let site = Arc::new(choose_site(choice, &modules)?);
    let store = open_site_store(&site, &enabled_modules(&site, &modules))
        .await
        .with_context(|| format!("site {}", site.name()))?;
    let media = match site.modules.iter().any(|m| m.name == "media") {
        true => Some(MediaImport::open(&site, &store).map_err(|e| anyhow::anyhow!("{e}"))?),
        false => None,
    };
    Ok((site, store, media))
}

fn enabled(site: &Site) -> Enabled {
    Enabled::of(site.modules.iter().map(|m| m.name))
}

async fn import_site_data(choice: &SiteChoice, file: &Path, quiet: bool) -> anyhow::Result<Report> {
    let (site, store, media) = open(choice).await?;
    let _told = Hearing::start(&store, &choice.sites, site.name().as_str());
    // A tar (an export with --media) is unpacked beside the site's media.
    let mut head = [0u8; 512];
    let is_tar = {
        use std::io::Read;
        let mut f = std::fs::File::open(file).with_context(|| format!("{}", file.display()))?;
        f.read(&mut head).unwrap_or(0) == 512 && &head[257..262] == b"ustar"
    };
    let unpacked = match is_tar {
        true => {
            bulwark_site::private_folder(&site.dir.join("data"))?;
            let dir = tempfile::Builder::new()
                .prefix("import-")
                .tempdir_in(site.dir.join("data"))
                .context("a folder to unpack into")?;
            let mut archive = tar::Archive::new(std::fs::File::open(file)?);
            archive
                .unpack(dir.path())
                .with_context(|| format!("unpacking {}", file.display()))?;
            Some(dir)
        }
        false => None,
    };
    let (data, files) = match &unpacked {
        Some(dir) => (dir.path().join(SITE_DATA), Some(dir.path().join("media"))),
        None => (file.to_owned(), None),
    };
    if !data.is_file() {
        bail!("{}: there is no {SITE_DATA} in it", file.display());
    }
    let bar = Bar::new(quiet);
    let progress: &dyn Progress = match &bar {
        Some(bar) => bar,
        None => &Quiet,
    };
    let done = site_data::import(
        &store,
        media.as_ref(),
        enabled(&site),
        &data,
        files.as_deref(),
        progress,
    )
    .await;
    if let Some(bar) = bar {
        bar.0.finish_and_clear();
    }
    Ok(done?)
}

/// The data's name in an export's tar.
const SITE_DATA: &str = "site.jsonl";

pub fn export(args: ExportArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let choice = SiteChoice {
            site: Some(args.site),
            sites: args.sites,
        };
        let (site, store, media) = open(&choice).await?;
        let options = ExportOptions {
            since: args.since,
            revisions: args.revisions,
        };
        let quiet = args.quiet || args.output.is_none();
        let bar = Bar::new(quiet);
        let enabled = enabled(&site);
        let write_data = move |out: Box<dyn std::io::Write + Send>| {
            let store = store.clone();
            let options = options.clone();
            tokio::task::spawn_blocking(move || {
                let mut out = std::io::BufWriter::with_capacity(256 * 1024, out);
                site_data::export(&store, enabled, &options, &mut out, &Quiet)
            })
        };
        let exported = match (&args.output, args.media) {
            (None, false) => write_data(Box::new(std::io::stdout())).await??,
            (Some(path), false) => {
                let file = std::fs::File::create(path)
                    .with_context(|| format!("writing {}", path.display()))?;
                write_data(Box::new(file)).await??
            }
            (output, true) => {
                let Some(media) = media else {
                    bail!(
                        "site {} does not enable the media module: there are no files",
                        site.name()
                    );
                };
                bulwark_site::private_folder(&site.dir.join("data"))?;
                let data = tempfile::NamedTempFile::new_in(site.dir.join("data"))?;
                let exported = write_data(Box::new(data.reopen()?)).await??;
                let out: Box<dyn std::io::Write> = match output {
                    Some(path) => Box::new(
                        std::fs::File::create(path)
                            .with_context(|| format!("writing {}", path.display()))?,
                    ),
                    None => Box::new(std::io::stdout()),
                };
                let mut tar = tar::Builder::new(std::io::BufWriter::new(out));
                tar.append_path_with_name(data.path(), SITE_DATA)?;
                if let Some(bar) = &bar {
                    bar.stage("files", exported.files.len() as u64);
                }
                for sha256 in &exported.files {
                    let path = media
                        .local_file(sha256)
                        .await
                        .map_err(|p| anyhow::anyhow!("{}", p.detail()))?;
                    tar.append_path_with_name(&path, format!("media/{sha256}"))?;
                    if let Some(bar) = &bar {
                        bar.advance(1);
                    }
                }
                tar.into_inner()?.flush()?;
                exported
            }
        };
        if let Some(bar) = bar {
            bar.0.finish_and_clear();
        }
        if !args.quiet && args.output.is_some() {
            println!(
                "{} lines: {} resources, {} files",
                exported.lines,
                exported.resources,
                exported.files.len()
            );
        }
        Ok(())
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
    let _told = Hearing::start(&store, &choice.sites, site.name().as_str());
    let enabled = Enabled::of(site.modules.iter().map(|m| m.name));
    let bar = Bar::new(quiet);
    let progress: &dyn Progress = match &bar {
        Some(bar) => bar,
        None => &Quiet,
    };
    let options = Options {
        site_urls: SiteUrls::of(&site),
        ..options.clone()
    };
    let report = wordpress::import(&store, &media, enabled, file, &options, progress).await;
    if let Some(bar) = bar {
        bar.0.finish_and_clear();
    }
    Ok(report?)
}

/// A progress bar on standard error (drawn only on a terminal).
pub(crate) struct Bar(ProgressBar);

impl Bar {
    pub(crate) fn new(quiet: bool) -> Option<Bar> {
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
