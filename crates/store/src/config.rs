//! Per-site key/value settings, editable at run time.

use chrono::Utc;

use crate::db::params;
use crate::dependency;
use crate::error::{Result, StoreError};
use crate::store::Store;

const MAX_KEY_LEN: usize = 120;
const MAX_VALUE_LEN: usize = 64 * 1024;

fn check_key(key: &str) -> Result<()> {
    if key.is_empty()
        || key.len() > MAX_KEY_LEN
        || !key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-'))
    {
        return Err(StoreError::invalid(
            "config key",
            format!("{key:?}: 1 to {MAX_KEY_LEN} characters of a-z, 0-9, '_', '.', '-'"),
        ));
    }
    Ok(())
}

/// What the key of a setting that is a secret starts with (`secret.media.preview_key`):
/// kept like any setting, never listed ([`Store::config_values`]) nor shown to
/// templates or the API; only the code that made it reads it, by its key.
pub const SECRET_CONFIG_PREFIX: &str = "secret.";

/// Whether `key` names a secret setting ([`SECRET_CONFIG_PREFIX`]).
pub fn is_secret_config_key(key: &str) -> bool {
    key.starts_with(SECRET_CONFIG_PREFIX)
}

impl Store {
    pub fn config_value(&self, key: &str) -> Result<Option<String>> {
        check_key(key)?;
        self.read(|c| {
            Ok(
                c.query_one("SELECT value FROM config WHERE key = $1", &params![key])?
                    .map(|r| r.text(0)),
            )
        })
    }

    pub fn set_config_value(&self, key: &str, value: &str) -> Result<()> {
        check_key(key)?;
        if value.contains('\0') {
            return Err(StoreError::invalid(
                "config value",
                "may not contain NUL characters",
            ));
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(StoreError::invalid(
                "config value",
                format!("longer than {MAX_VALUE_LEN} bytes"),
            ));
        }
        self.write(|c, ch| {
            c.execute(
                "INSERT INTO config (key, value, modified) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value, modified = excluded.modified",
                &params![key, value, Utc::now().timestamp_millis()],
            )?;
            ch.add(dependency::config(key));
            Ok(())
        })
    }

    /// The value of `key`, stored as `value` first if it has none: what the
    /// first caller stores is what every caller gets, on every node (a secret
    /// key made the first time it is needed).
    pub fn config_value_or_insert(&self, key: &str, value: &str) -> Result<String> {
        // Read first: once it is there (nearly always), no write transaction.
        if let Some(stored) = self.config_value(key)? {
            return Ok(stored);
        }
        self.write(|c, ch| {
            let made = c.execute(
                "INSERT INTO config (key, value, modified) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO NOTHING",
                &params![key, value, Utc::now().timestamp_millis()],
            )?;
            if made > 0 {
                ch.add(dependency::config(key));
            }
            Ok(())
        })?;
        Ok(self.config_value(key)?.unwrap_or_else(|| value.to_owned()))
    }

    pub fn delete_config_value(&self, key: &str) -> Result<()> {
        check_key(key)?;
        self.write(|c, ch| {
            c.execute("DELETE FROM config WHERE key = $1", &params![key])?;
            ch.add(dependency::config(key));
            Ok(())
        })
    }

    /// Every setting but the secrets, sorted by key.
    pub fn config_values(&self) -> Result<Vec<(String, String)>> {
        let mut all: Vec<(String, String)> = self.read(|c| {
            Ok(c.query("SELECT key, value FROM config", &[])?
                .iter()
                .map(|r| (r.text(0), r.text(1)))
                .filter(|(key, _)| !is_secret_config_key(key))
                .collect())
        })?;
        all.sort();
        Ok(all)
    }
}
