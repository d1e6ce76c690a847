//! `[auth]` in `site.toml`: how long sessions last, how many wrong passwords
//! are tried before logon waits, and who must use a second factor.
//!
//! Read in two steps, because the groups live in the site's database: the
//! shape when the site loads ([`AuthSettings::parse`], from the module's
//! `setup`), and that every named group exists when the store opens
//! ([`AuthSettings::check_groups`], from `open_store`), so a misspelt group
//! stops the start instead of silently requiring nothing.

use std::time::Duration;

use serde::Deserialize;

use bulwark_store::{Store, StoreError};
use bulwark_web::{ModuleError, read_settings};

use crate::accounts::{self, GroupName};
use crate::reset::RESET_EXPIRY;

/// Where reset links point: the configured base, checked, or the site's own
/// hostname, never the request's `Host` (whoever asks for a reset could point
/// the victim's link at their own server).
fn reset_link_base(base: Option<String>, hostname: &str, tls: bool) -> Result<String, ModuleError> {
    match base {
        Some(base) => {
            let base = base.trim_end_matches('/').to_owned();
            let host = base
                .strip_prefix("https://")
                .or_else(|| base.strip_prefix("http://"));
            if !host.is_some_and(|h| !h.is_empty() && !h.contains(['/', '?', '#', ' '])) {
                return Err(ModuleError::new(
                    "reset_link_base",
                    format!("{base:?} is not a scheme and host such as \"https://example.org\""),
                ));
            }
            Ok(base)
        }
        None => Ok(format!(
            "{}://{hostname}",
            if tls { "https" } else { "http" }
        )),
    }
}

/// `[auth]`, as written (seconds and counts; absent keys take the defaults).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthToml {
    session_idle: Option<u64>,
    session_max: Option<u64>,
    remember_idle: Option<u64>,
    remember_max: Option<u64>,
    logon_attempts: Option<u32>,
    logon_window: Option<u64>,
    #[serde(default)]
    require_second_factor: Vec<String>,
    /// Seconds a password reset link works (default 3600).
    reset_expiry: Option<u64>,
    /// Reset requests per account, and per client address, in an hour.
    reset_requests: Option<u32>,
    /// What a reset link starts with, e.g. `https://example.org:8443`
    /// (default: `https://` or `http://` and the site's `hostname`).
    reset_link_base: Option<String>,
}

/// A site's `[auth]` settings (see docs/accounts.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSettings {
    /// A session without a request for this long ends (default 2 hours).
    pub session_idle: Duration,
    /// A session ends this long after logon, however active (default 12 hours).
    pub session_max: Duration,
    /// The same two with "keep me logged in" (defaults 30 and 90 days).
    pub remember_idle: Duration,
    pub remember_max: Duration,
    /// Wrong passwords per account, and per client address, within
    /// `logon_window` before further attempts get 429 (default 10 in 15 minutes).
    pub logon_attempts: u32,
    pub logon_window: Duration,
    /// User groups whose people must use a second factor to log on. A group
    /// counts for the groups that extend it: `["editors"]` takes in managers
    /// and administrators too.
    require_second_factor: Vec<String>,
    /// How long a password reset link works.
    pub reset_expiry: Duration,
    /// Reset requests per account, and per client address, within an hour
    /// before further requests get 429 (default 5): nobody can flood a
    /// mailbox, or the outbox, from one address or at one account.
    pub reset_requests: u32,
    /// Scheme, host and port reset links start with, without a trailing `/`.
    pub reset_link_base: String,
}

impl Default for AuthSettings {
    fn default() -> Self {
        AuthSettings {
            session_idle: Duration::from_secs(2 * 3600),
            session_max: Duration::from_secs(12 * 3600),
            remember_idle: Duration::from_secs(30 * 86400),
            remember_max: Duration::from_secs(90 * 86400),
            logon_attempts: 10,
            logon_window: Duration::from_secs(15 * 60),
            require_second_factor: Vec::new(),
            reset_expiry: RESET_EXPIRY,
            reset_requests: 5,
            reset_link_base: "http://localhost".to_string(),
        }
    }
}

impl AuthSettings {
    /// The `[auth]` settings of `site`'s `site.toml`, checked as [`parse`]
    /// does, with the default reset links on its host name.
    ///
    /// [`parse`]: AuthSettings::parse
    pub fn of_site(site: &bulwark_site::Site) -> Result<AuthSettings, ModuleError> {
        let config = &site.config;
        AuthSettings::parse(
            config.module_settings.get("auth"),
            &config.hostname,
            config.tls.is_some(),
        )
    }

    /// Reads and checks the shape of `[auth]` (absent: the defaults);
    /// `hostname` and `tls` give the default start of reset links.
    pub fn parse(
        table: Option<&toml::Table>,
        hostname: &str,
        tls: bool,
    ) -> Result<AuthSettings, ModuleError> {
        let raw: AuthToml = match table {
            Some(t) => read_settings(t)?,
            None => AuthToml::default(),
        };
        let d = AuthSettings::default();
        let secs = |key: &'static str, v: Option<u64>, default: Duration| match v {
            Some(0) => Err(ModuleError::new(key, "must be at least 1 second")),
            Some(s) => Ok(Duration::from_secs(s)),
            None => Ok(default),
        };
        let settings = AuthSettings {
            session_idle: secs("session_idle", raw.session_idle, d.session_idle)?,
            session_max: secs("session_max", raw.session_max, d.session_max)?,
            remember_idle: secs("remember_idle", raw.remember_idle, d.remember_idle)?,
            remember_max: secs("remember_max", raw.remember_max, d.remember_max)?,
            logon_attempts: match raw.logon_attempts {
                Some(0) => return Err(ModuleError::new("logon_attempts", "must be at least 1")),
                Some(n) => n,
                None => d.logon_attempts,
            },
            logon_window: secs("logon_window", raw.logon_window, d.logon_window)?,
            require_second_factor: raw.require_second_factor,
            reset_expiry: secs("reset_expiry", raw.reset_expiry, RESET_EXPIRY)?,
            reset_requests: match raw.reset_requests {
                Some(0) => return Err(ModuleError::new("reset_requests", "must be at least 1")),
                Some(n) => n,
                None => d.reset_requests,
            },
            reset_link_base: reset_link_base(raw.reset_link_base, hostname, tls)?,
        };
        for (i, name) in settings.require_second_factor.iter().enumerate() {
            if name.trim().is_empty() {
                return Err(ModuleError::new(
                    format!("require_second_factor[{i}]"),
                    "a user group's name may not be empty",
                ));
            }
        }
        Ok(settings)
    }

    /// The groups whose people must use a second factor.
    pub fn require_second_factor(&self) -> Vec<GroupName> {
        self.require_second_factor
            .iter()
            .map(|name| GroupName::new(name))
            .collect()
    }

    /// Whether every group named exists in the site's tree; an error names the
    /// key (as `auth.<key>`, like a load error) and lists the groups there are.
    pub fn check_groups(&self, store: &Store) -> Result<(), StoreError> {
        let known = accounts::user_groups(store)?;
        for (i, group) in self.require_second_factor().iter().enumerate() {
            if !known.contains(group) {
                let known: Vec<_> = known.iter().map(ToString::to_string).collect();
                return Err(StoreError::InvalidInput {
                    field: format!("auth.require_second_factor[{i}]"),
                    reason: format!(
                        "there is no user group {:?}; the groups are: {}",
                        group.as_str(),
                        known.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_start_at_the_canonical_host_unless_told_otherwise() {
        let s = AuthSettings::parse(None, "example.org", true).unwrap();
        assert_eq!(s.reset_link_base, "https://example.org");
        assert_eq!(s.reset_expiry, RESET_EXPIRY);
        let t: toml::Table =
            toml::from_str("reset_link_base = \"http://localhost:8000/\"\nreset_expiry = 600")
                .unwrap();
        let s = AuthSettings::parse(Some(&t), "example.org", true).unwrap();
        assert_eq!(s.reset_link_base, "http://localhost:8000");
        assert_eq!(s.reset_expiry, Duration::from_secs(600));
        let t: toml::Table = toml::from_str("reset_link_base = \"example.org\"").unwrap();
        let e = AuthSettings::parse(Some(&t), "example.org", true).unwrap_err();
        assert_eq!(e.key, "reset_link_base");
    }

    #[test]
    fn absent_keys_take_the_defaults_and_bad_ones_are_named() {
        let d = AuthSettings::parse(None, "localhost", false).unwrap();
        assert_eq!(d, AuthSettings::default());
        let t: toml::Table = toml::from_str("session_idle = 60\nlogon_attempts = 3").unwrap();
        let s = AuthSettings::parse(Some(&t), "example.org", true).unwrap();
        assert_eq!(s.session_idle, Duration::from_secs(60));
        assert_eq!(s.logon_attempts, 3);
        let t: toml::Table = toml::from_str("session_idle = 0").unwrap();
        assert_eq!(
            AuthSettings::parse(Some(&t), "example.org", true)
                .unwrap_err()
                .key,
            "session_idle"
        );
        let t: toml::Table = toml::from_str("sesion_idle = 5").unwrap();
        assert!(AuthSettings::parse(Some(&t), "example.org", true).is_err());
    }

    fn parse(text: &str) -> Result<AuthSettings, ModuleError> {
        let table: toml::Table = text.parse().unwrap();
        AuthSettings::parse(Some(&table), "example.org", true)
    }

    #[test]
    fn group_names_are_read_as_people_write_them() {
        let settings = parse(r#"require_second_factor = ["Editors", " administrators"]"#).unwrap();
        assert_eq!(
            settings.require_second_factor(),
            [GroupName::new("editors"), GroupName::new("administrators")]
        );
        assert_eq!(
            AuthSettings::parse(None, "example.org", true)
                .unwrap()
                .require_second_factor(),
            []
        );
    }

    #[test]
    fn a_wrong_shape_or_an_unknown_key_is_named() {
        let err = parse(r#"require_second_factor = "editors""#).unwrap_err();
        assert!(err.problem.contains("expected a sequence"), "{err}");
        let err = parse(r#"require_second_factor = ["editors", ""]"#).unwrap_err();
        assert_eq!(err.key, "require_second_factor[1]", "{err}");
        let err = parse(r#"require_2fa = ["editors"]"#).unwrap_err();
        assert!(err.to_string().contains("require_2fa"), "{err}");
    }
}
