use std::fmt;
use std::path::{Path, PathBuf};

/// Why a site could not be loaded. Every variant names the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {key}: {problem}", file.display())]
    Invalid {
        file: PathBuf,
        key: String,
        problem: String,
    },
}

impl SiteError {
    /// The one way a problem with a value (a typed error of this crate's parsers,
    /// or a sentence) becomes a site error: its message is what the user reads.
    pub fn invalid(file: &Path, key: &str, problem: impl fmt::Display) -> SiteError {
        SiteError::Invalid {
            file: file.to_path_buf(),
            key: if key.is_empty() {
                "(top level)".into()
            } else {
                key.to_string()
            },
            problem: problem.to_string(),
        }
    }
}
