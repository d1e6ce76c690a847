//! Moving a site in (docs/import.md): a WordPress site from its export file
//! ([`wordpress`]), with its media, comments, menus and every old URL
//! redirected.
//!
//! The import works on a site's store and media directly, so the command line
//! (`bulwark import wordpress`) runs it with or without the server running;
//! the module (`import`) adds the admin's Import screen, which runs the same
//! code in the server ([`admin`]).

pub mod admin;
pub mod content;
pub mod csv_rows;
pub mod php;
pub mod report;
pub mod site_data;
pub mod wordpress;
pub mod wxr;

pub use report::{Counts, Remark, Report};
pub use wxr::WxrError;

use std::sync::{Arc, OnceLock};

use include_dir::{Dir, include_dir};

use bulwark_site::ModuleManifest;
use bulwark_store::StoreError;
use bulwark_web::events::{GatherMetrics, MenuItem};
use bulwark_web::{Api, Module, ModuleError, SiteSetup};

/// Which of the modules an import feeds the site enables: what their tables
/// would hold is left out (and said so) when one is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enabled {
    pub comments: bool,
    pub mail: bool,
    pub menus: bool,
    pub redirects: bool,
}

impl Enabled {
    /// From the names of a site's modules.
    pub fn of<'a>(modules: impl IntoIterator<Item = &'a str>) -> Enabled {
        let mut enabled = Enabled {
            comments: false,
            mail: false,
            menus: false,
            redirects: false,
        };
        for name in modules {
            match name {
                "comments" => enabled.comments = true,
                "mail" => enabled.mail = true,
                "menu" => enabled.menus = true,
                "redirects" => enabled.redirects = true,
                _ => {}
            }
        }
        enabled
    }
}

/// The new site's own addresses, where an old site's archives, feeds and
/// list pages go: a rule's URL by name, in the language an import writes in
/// (the site's first, with its prefix on a site with language URLs).
#[derive(Clone, Default)]
pub struct SiteUrls(Option<Arc<bulwark_site::Site>>);

impl SiteUrls {
    pub fn of(site: &Arc<bulwark_site::Site>) -> SiteUrls {
        SiteUrls(Some(site.clone()))
    }

    /// The site itself (none: an import without one, a test's).
    pub fn site(&self) -> Option<&Arc<bulwark_site::Site>> {
        self.0.as_ref()
    }

    /// The URL of the site's rule `name` with `args`, or `None` when the
    /// site has no such rule (its module is off, its site named it
    /// otherwise).
    pub fn rule(&self, name: &str, args: &[(&str, String)]) -> Option<String> {
        let site = self.0.as_ref()?;
        let named: Vec<(String, String)> = args
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let url = site.router.url_for(name, &[], &named).ok()?;
        let prefixed = site.config.language.urls == bulwark_site::LanguageUrls::Prefix;
        Some(match site.config.languages.first() {
            Some(language) if prefixed => format!("/{language}{url}"),
            _ => url,
        })
    }
}

impl SiteUrls {
    /// The site's language that the old site wrote in (`en` for an export's
    /// `en-US`), on a site of several languages that has it: an imported
    /// slug is that language's, so a translation gets its own from its title.
    pub fn language_of(&self, written_in: &str) -> Option<String> {
        let site = self.0.as_ref()?;
        let primary = written_in
            .split(['-', '_'])
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let languages = &site.config.languages;
        (languages.len() > 1 && languages.contains(&primary)).then_some(primary)
    }
}

impl std::fmt::Debug for SiteUrls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SiteUrls")
            .field(&self.0.as_ref().map(|s| s.name()))
            .finish()
    }
}

/// How far an import has come: a progress bar on a terminal, nothing in a
/// script.
pub trait Progress: Send + Sync {
    /// A new stage begins, of `total` steps (bytes, items).
    fn stage(&self, _what: &str, _total: u64) {}
    /// `n` more steps are done.
    fn advance(&self, _n: u64) {}
}

/// Progress that nobody watches.
pub struct Quiet;

impl Progress for Quiet {}

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file is broken; nothing was written.
    #[error(transparent)]
    File(#[from] WxrError),
    /// A file could not be read or written.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// Items the site would refuse, each with why, found in the check pass:
    /// nothing was written.
    #[error("{file}: {} would be refused, so nothing was imported:\n  {}", plural_items(.items.len()), .items.join("\n  "))]
    Refused { file: String, items: Vec<String> },
    /// A line of an export is not one.
    #[error("{file}, line {line}")]
    Line {
        file: String,
        line: u64,
        #[source]
        source: serde_json::Error,
    },
    /// A CSV file is not well formed.
    #[error("{file}{}", .line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Csv {
        file: String,
        line: Option<u64>,
        #[source]
        source: csv::Error,
    },
    #[error("writing the export")]
    Json(#[source] serde_json::Error),
    #[error("this export is of version {0}; this Bulwark reads up to {max}", max = site_data::VERSION)]
    Version(u32),
    #[error("the password hasher")]
    Password(#[from] bulwark_module_auth::PasswordError),
    #[error("the import's worker")]
    Task(#[from] tokio::task::JoinError),
    #[error("the site's database")]
    Store(#[from] StoreError),
    /// What an import was asked cannot be done on this site; nothing was
    /// written.
    #[error("{0}")]
    Asked(String),
}

fn plural_items(n: usize) -> String {
    if n == 1 {
        "1 item".to_owned()
    } else {
        format!("{n} items")
    }
}

/// The module (`import`): the admin's Import screen and its endpoints
/// ([`admin`]); the command line uses the rest of the crate without it.
pub struct ImportModule;

pub const PRIORITY: i32 = 600;

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(ImportModule)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "import",
            PRIORITY,
            &[],
            Some(&TEMPLATES),
            Some(&LIB),
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(admin::api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for ImportModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static Api> {
        Some(admin::api())
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let jobs = Arc::new(admin::Jobs::default());
        let counted = jobs.clone();
        site.observers().on_fold(
            PRIORITY,
            move |_: &GatherMetrics, mut metrics: Vec<bulwark_web::Metric>| {
                metrics.extend(counted.metrics());
                metrics
            },
        );
        site.provide(jobs);
        site.add_admin_menu_item(
            PRIORITY,
            MenuItem::screen("Import", "/admin/import", "admin_import.tpl"),
        );
        Ok(())
    }
}
