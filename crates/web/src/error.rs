//! This crate's errors: a module's about its configuration, a site's that
//! does not load or whose data cannot be opened.

use bulwark_site::{SiteError, toml_error_key};
use bulwark_store::StoreError;

/// Why a module cannot run on a site: a key of its `site.toml` section (or an
/// option of one of its dispatch rules) and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("{key}: {problem}")]
pub struct ModuleError {
    pub key: String,
    pub problem: String,
}

impl ModuleError {
    pub fn new(key: impl Into<String>, problem: impl Into<String>) -> ModuleError {
        ModuleError {
            key: key.into(),
            problem: problem.into(),
        }
    }
}

/// Reads a module's `site.toml` section or a rule's options into `T`: the one way
/// modules parse their settings, so every mistake is reported the same way (the
/// key, and what is wrong with it).
pub fn read_settings<T: serde::de::DeserializeOwned>(
    table: &toml::Table,
) -> Result<T, ModuleError> {
    toml::Value::Table(table.clone())
        .try_into()
        .map_err(|e: toml::de::Error| ModuleError::new(toml_error_key(&e), e.message().trim()))
}

/// Why a module's [`Module::start_serving`] failed: a store error or its own
/// (hashing a password), kept whole for the log.
pub type StartError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a site's data could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("creating {path}: {source}")]
    DataFolder {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("opening the database: {0}")]
    Database(#[source] StoreError),
    #[error("module {module}: {source}")]
    Module {
        module: &'static str,
        #[source]
        source: StoreError,
    },
    #[error(
        "another Bulwark server uses this PostgreSQL schema ({}) {}: the servers' caches would \
         serve each other's stale pages. Run the `cluster` module on every server that shares \
         the database (add \"cluster\" to `modules` and give each its [cluster] node name, \
         docs/cluster.md), or give this server a schema of its own ([database] schema)",
        others.join("; "),
        if *clustered { "without the cluster module" } else { "and this one runs without the cluster module" }
    )]
    SharedDatabase {
        others: Vec<String>,
        clustered: bool,
    },
    #[error("module {module}, starting: {source}")]
    Start {
        module: &'static str,
        #[source]
        source: StartError,
    },
}

/// Why a site does not run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Its folder or configuration is wrong (file, key, problem).
    #[error(transparent)]
    Site(#[from] SiteError),
    /// Its data cannot be opened: the database is unreachable, a migration failed.
    #[error("site {site}: {source}")]
    Data {
        site: String,
        #[source]
        source: OpenError,
    },
    /// At a reload, templates that do not compile (the site keeps the ones it
    /// ran with).
    #[error("site {site}: {} broken template(s), the site keeps its last good ones: {}", broken.len(), broken.join("; "))]
    Templates { site: String, broken: Vec<String> },
}

impl LoadError {
    /// Whether this is an error of `site` (its folder or its data).
    pub fn concerns(&self, site: &bulwark_site::Site) -> bool {
        match self {
            LoadError::Site(SiteError::Io { path, .. })
            | LoadError::Site(SiteError::Invalid { file: path, .. }) => {
                path.starts_with(&site.dir)
                    || path
                        .canonicalize()
                        .is_ok_and(|path| path.starts_with(&site.dir))
            }
            LoadError::Data { site: name, .. } | LoadError::Templates { site: name, .. } => {
                name == site.name().as_str()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Options {
        #[allow(dead_code)]
        limit: u32,
    }

    #[test]
    fn a_wrong_key_or_value_is_named() {
        let table: toml::Table = toml::from_str("limt = 3").unwrap();
        let e = read_settings::<Options>(&table).unwrap_err();
        assert_eq!(e.key, "limt");
        let table: toml::Table = toml::from_str("limit = \"x\"").unwrap();
        let e = read_settings::<Options>(&table).unwrap_err();
        assert!(e.problem.contains("invalid type"), "{e}");
    }
}
