//! The error a module reports about its configuration.

use bulwark_site::toml_error_key;

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
