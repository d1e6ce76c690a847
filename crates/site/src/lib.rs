//! Sites: what Bulwark serves, read from folders.
//!
//! A site is a folder holding `site.toml` (host name, aliases, enabled modules,
//! settings, dispatch rules, TLS files), `templates/`, `lib/` (static files) and
//! `files/` (uploads). This crate reads and validates those folders, compiles each
//! site's dispatch rules together with the rules of its enabled modules into a
//! router, and finds static files without ever leaving the folders they belong to.
//! The modules a site may enable are handed in as [`ModuleManifest`]s (the binary
//! registers them).
//!
//! It deliberately knows nothing about HTTP, templates or module code: the `web`
//! crate turns a matched [`DispatchRule`] into a controller, the `template` crate
//! renders, and a module reads its own section of `site.toml`.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let site_dir = dir.path().join("blog");
//! std::fs::create_dir(&site_dir).unwrap();
//! std::fs::write(site_dir.join("site.toml"), r#"
//!     hostname = "blog.example"
//!     [[dispatch]]
//!     name = "home"
//!     path = "/"
//!     controller = "template"
//!     template = "home.tpl"
//! "#).unwrap();
//! let sites = bulwark_site::load_sites(dir.path(), false, &[]).unwrap();
//! let matched = sites[0].router.route("/").unwrap();
//! assert_eq!(matched.rule.name, "home");
//! assert_eq!(sites[0].router.url_for("home", &[], &[]).unwrap(), "/");
//! ```

mod config;
mod dispatch;
mod error;
mod files;
mod module;
mod site_path;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use config::{
    AccessRuleSettings, AccessSettings, ApiSettings, DatabaseSettings, HostError, LanguageSettings,
    LanguageUrls, MissingTranslation, PageCacheSettings, SecurityHeader, SecurityHeaderSettings,
    SiteConfig, SiteName, TlsFiles, TlsSettings, load_site_config, normalize_host,
    parse_site_config, toml_error_key,
};
pub use dispatch::{
    Controller, DispatchRule, PatternError, RouteMatch, RuleConflict, RulePattern, SiteRouter,
    UrlError, UrlErrorKind,
};
pub use error::SiteError;
pub use files::{
    LibError, LibFile, LibIndex, LibSource, private_folder, relative_path_is_safe, resolve_inside,
    split_lib_path,
};
pub use module::{ManifestError, ModuleManifest, embedded_file};
pub use site_path::is_site_path;

/// A loaded, validated site.
#[derive(Debug)]
pub struct Site {
    pub config: SiteConfig,
    /// The site folder, canonical.
    pub dir: PathBuf,
    /// Enabled modules in lookup order (`core` last).
    pub modules: Vec<Arc<ModuleManifest>>,
    pub router: SiteRouter,
    pub lib: LibIndex,
    pub dev: bool,
}

/// The room on a disk, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskSpace {
    /// What an unprivileged writer may still use.
    pub free: u64,
    pub total: u64,
}

/// How long a production lookup of a static file's metadata is trusted.
const LIB_RECHECK: Duration = Duration::from_secs(2);

impl Site {
    /// Loads the site in `dir`, which may enable any of the `available` modules. In
    /// `dev` mode nothing is cached that would hide an edit (file metadata is
    /// looked up on every use).
    pub fn load(
        dir: &Path,
        dev: bool,
        available: &[Arc<ModuleManifest>],
    ) -> Result<Site, SiteError> {
        let dir = dir.canonicalize().map_err(|e| SiteError::Io {
            path: dir.to_path_buf(),
            source: e,
        })?;
        let names: Vec<&str> = available.iter().map(|m| m.name).collect();
        let config = load_site_config(&dir, &names)?;
        let modules = module::enabled_modules(available, &config.modules);
        for module in &modules {
            for needed in module.depends {
                if !modules.iter().any(|m| m.name == *needed) {
                    return Err(SiteError::invalid(
                        &dir.join("site.toml"),
                        "modules",
                        format!(
                            "module {:?} needs module {needed:?}: enable it too",
                            module.name
                        ),
                    ));
                }
            }
        }
        let module_rules: Vec<DispatchRule> = modules
            .iter()
            .flat_map(|m| m.rules.iter().cloned())
            .collect();
        let router = SiteRouter::build(&config.rules, &module_rules)
            .map_err(|e| SiteError::invalid(&dir.join("site.toml"), "dispatch", e))?;
        let site_lib = dir.join("lib").canonicalize().ok();
        let lib = LibIndex::new(
            site_lib,
            modules.iter().filter_map(|m| m.lib).collect(),
            if dev { Duration::ZERO } else { LIB_RECHECK },
        );
        Ok(Site {
            config,
            dir,
            modules,
            router,
            lib,
            dev,
        })
    }

    pub fn name(&self) -> &SiteName {
        &self.config.name
    }

    /// How much room the disk holding the site's data (`data/`, or the
    /// site's folder before there is one) has.
    pub fn disk_space(&self) -> std::io::Result<DiskSpace> {
        let data = self.dir.join("data");
        let on = if data.is_dir() { &data } else { &self.dir };
        let fs = rustix::fs::statvfs(on.as_path())?;
        Ok(DiskSpace {
            free: fs.f_bavail.saturating_mul(fs.f_frsize),
            total: fs.f_blocks.saturating_mul(fs.f_frsize),
        })
    }

    /// The folder a `file` controller serves, canonical, if it exists.
    pub fn folder(&self, rel: &str) -> Option<PathBuf> {
        if !relative_path_is_safe(rel.trim_end_matches('/')) {
            return None;
        }
        let path = self.dir.join(rel).canonicalize().ok()?;
        (path.starts_with(&self.dir) && path.is_dir()).then_some(path)
    }

    /// Where the site's own templates live (they override every module's).
    pub fn templates_dir(&self) -> PathBuf {
        self.dir.join("templates")
    }
}

/// Loads every site folder (a folder holding `site.toml`) in `sites_dir`, and checks
/// what no single site can: host names used twice, more than one default site.
/// All problems are reported, not just the first.
pub fn load_sites(
    sites_dir: &Path,
    dev: bool,
    available: &[Arc<ModuleManifest>],
) -> Result<Vec<Site>, Vec<SiteError>> {
    let mut sites = Vec::new();
    let mut errors = Vec::new();
    for folder in load_site_folders(sites_dir, dev, available)? {
        match folder.site {
            Ok(site) => sites.push(site),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(sites)
    } else {
        Err(errors)
    }
}

/// One site folder and what loading it gave.
#[derive(Debug)]
pub struct SiteFolder {
    pub dir: PathBuf,
    /// The site, or everything wrong with it (its own file, or a clash with a
    /// site before it in name order: a host name or the default taken).
    pub site: Result<Site, Vec<SiteError>>,
}

/// Loads every site folder in `sites_dir`, each on its own: a reload keeps a
/// broken site's running version and takes the others' new ones. A clash
/// between two sites (a host name, the site name, the default) is the later
/// folder's error, by folder name. Only a `sites_dir` that cannot be read
/// fails as a whole.
pub fn load_site_folders(
    sites_dir: &Path,
    dev: bool,
    available: &[Arc<ModuleManifest>],
) -> Result<Vec<SiteFolder>, Vec<SiteError>> {
    let entries = std::fs::read_dir(sites_dir).map_err(|e| {
        vec![SiteError::Io {
            path: sites_dir.to_path_buf(),
            source: e,
        }]
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("site.toml").is_file())
        .collect();
    dirs.sort();
    let mut folders: Vec<SiteFolder> = Vec::new();
    for dir in dirs {
        let site = Site::load(&dir, dev, available)
            .map_err(|e| vec![e])
            .and_then(|site| match clashes(&site, &folders) {
                clashes if clashes.is_empty() => Ok(site),
                clashes => Err(clashes),
            });
        folders.push(SiteFolder { dir, site });
    }
    Ok(folders)
}

/// What `site` claims that a site loaded before it already has.
fn clashes(site: &Site, before: &[SiteFolder]) -> Vec<SiteError> {
    let file = site.dir.join("site.toml");
    let loaded = || before.iter().filter_map(|f| f.site.as_ref().ok());
    let mut errors = Vec::new();
    for host in site.config.host_names() {
        let other = loaded().find(|other| other.config.host_names().any(|h| h == host));
        if let Some(other) = other {
            errors.push(SiteError::invalid(
                &file,
                "hostname",
                format!("{host:?} is also used by site {:?}", other.name().as_str()),
            ));
        }
    }
    if loaded().any(|other| other.name() == site.name()) {
        errors.push(SiteError::invalid(
            &file,
            "name",
            format!("{:?} is used by two sites", site.name().as_str()),
        ));
    }
    if site.config.is_default
        && let Some(other) = loaded().find(|other| other.config.is_default)
    {
        errors.push(SiteError::invalid(
            &file,
            "default",
            format!(
                "site {:?} is already the default site",
                other.name().as_str()
            ),
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_site(root: &Path, name: &str, toml: &str) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("site.toml"), toml).unwrap();
    }

    #[test]
    fn host_used_by_two_sites_is_reported_with_both_names() {
        let tmp = tempfile::tempdir().unwrap();
        write_site(
            tmp.path(),
            "a",
            "hostname = \"a.test\"\naliases = [\"shared.test\"]",
        );
        write_site(tmp.path(), "b", "hostname = \"shared.test\"");
        let errors = load_sites(tmp.path(), false, &[]).unwrap_err();
        let text = errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            text.contains("shared.test") && text.contains("\"a\""),
            "{text}"
        );
    }

    #[test]
    fn two_default_sites_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        write_site(tmp.path(), "a", "hostname = \"a.test\"\ndefault = true");
        write_site(tmp.path(), "b", "hostname = \"b.test\"\ndefault = true");
        let errors = load_sites(tmp.path(), false, &[]).unwrap_err();
        assert!(errors[0].to_string().contains("default"), "{}", errors[0]);
    }

    #[test]
    fn a_module_that_needs_another_is_refused_without_it() {
        let manifest = |name: &'static str, depends: &'static [&'static str]| {
            Arc::new(ModuleManifest::new(name, 10, depends, None, None, "").unwrap())
        };
        let available = [manifest("auth", &[]), manifest("admin", &["auth"])];
        let tmp = tempfile::tempdir().unwrap();
        write_site(
            tmp.path(),
            "a",
            "hostname = \"a.test\"\nmodules = [\"admin\"]",
        );
        let errors = load_sites(tmp.path(), false, &available).unwrap_err();
        let text = errors[0].to_string();
        assert!(text.contains("\"admin\" needs module \"auth\""), "{text}");
        write_site(
            tmp.path(),
            "a",
            "hostname = \"a.test\"\nmodules = [\"admin\", \"auth\"]",
        );
        assert!(load_sites(tmp.path(), false, &available).is_ok());
    }

    #[test]
    fn every_broken_site_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        write_site(tmp.path(), "a", "hostname = 5");
        write_site(
            tmp.path(),
            "b",
            "hostname = \"b.test\"\nmodules = [\"nope\"]",
        );
        let errors = load_sites(tmp.path(), false, &[]).unwrap_err();
        assert_eq!(errors.len(), 2);
    }
}
