//! `[push]` in `site.toml`: who may do what with topics, and the hub's limits.

use std::time::Duration;

use serde::Deserialize;

use bulwark_push::{PushConfig, Rate, TopicFilter};
use bulwark_web::{ModuleError, read_settings};

/// `[push]`: who may do what with push topics (see docs/push.md).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushSettings {
    /// Topic filters browsers may publish on (none by default).
    #[serde(default)]
    pub browser_publish: Vec<String>,
    /// Topic filters browsers may neither subscribe to nor receive.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Topic filters only administrators may subscribe to and receive (a
    /// wildcard subscription of anyone else never brings their messages).
    #[serde(default)]
    pub administrators_only: Vec<String>,
    /// Bearer token for `POST /push/publish`; without one the endpoint is closed.
    pub publish_token: Option<String>,
    /// A client with no transport attached for this long is removed, with its
    /// subscriptions (default 60000).
    pub client_idle_timeout_ms: Option<u64>,
    /// How often a WebSocket or event stream with nothing to say sends a
    /// keep-alive, and checks that the session it was opened with still
    /// stands (default 15000).
    pub keepalive_ms: Option<u64>,
    /// How long to wait for more publications after one arrives before the
    /// batch goes out (default 0: none; what was published while the last
    /// batch went out goes together).
    pub batch_interval_ms: Option<u64>,
    /// Messages kept per topic for clients that reconnect (default 100).
    pub history_size: Option<usize>,
    /// Connected clients per site (default 100000).
    pub max_clients: Option<usize>,
    /// Subscriptions per client (default 64).
    pub max_subscriptions: Option<usize>,
    /// Largest payload, in bytes (default 65536).
    pub max_message_bytes: Option<usize>,
    /// Messages waiting for one client before the oldest are dropped (default 256).
    pub inbox_size: Option<usize>,
    /// A client no transport ever came back for (a `hello`, then nothing) is
    /// removed after this (default 10000).
    pub unclaimed_client_timeout_ms: Option<u64>,
    /// New clients one address may make a minute, sustained (default 60).
    pub new_clients_per_minute: Option<u32>,
    /// New clients one address may make at once, above that rate (default 30).
    pub new_clients_burst: Option<u32>,
    /// Messages one client may publish a second, sustained (default 20).
    pub publish_per_second: Option<u32>,
    /// Messages one client may publish at once, above that rate (default 40).
    pub publish_burst: Option<u32>,
    /// Commands in one `POST /push/command` (default 100).
    pub max_commands_per_request: Option<usize>,
}

/// Defaults of the limits the module itself applies (the hub's are in
/// [`PushConfig::default`]).
const NEW_CLIENTS_PER_MINUTE: u32 = 60;
const NEW_CLIENTS_BURST: u32 = 30;
const MAX_COMMANDS_PER_REQUEST: usize = 100;

impl PushSettings {
    /// Reads and checks a site's `[push]` section (absent: the defaults). Topic
    /// filters are checked with the hub's own grammar.
    pub fn parse(section: Option<&toml::Table>) -> Result<PushSettings, ModuleError> {
        let settings: PushSettings = match section {
            None => PushSettings::default(),
            Some(table) => read_settings(table)?,
        };
        for (key, filters) in [
            ("browser_publish", &settings.browser_publish),
            ("deny", &settings.deny),
            ("administrators_only", &settings.administrators_only),
        ] {
            for (i, f) in filters.iter().enumerate() {
                TopicFilter::parse(f)
                    .map_err(|e| ModuleError::new(format!("{key}[{i}]"), e.to_string()))?;
            }
        }
        let size = |n: Option<usize>| n.map(|n| n as u64);
        for (key, value) in [
            ("client_idle_timeout_ms", settings.client_idle_timeout_ms),
            ("keepalive_ms", settings.keepalive_ms),
            ("history_size", size(settings.history_size)),
            ("max_clients", size(settings.max_clients)),
            ("max_subscriptions", size(settings.max_subscriptions)),
            ("max_message_bytes", size(settings.max_message_bytes)),
            ("inbox_size", size(settings.inbox_size)),
            (
                "unclaimed_client_timeout_ms",
                settings.unclaimed_client_timeout_ms,
            ),
            (
                "new_clients_per_minute",
                settings.new_clients_per_minute.map(u64::from),
            ),
            (
                "new_clients_burst",
                settings.new_clients_burst.map(u64::from),
            ),
            (
                "publish_per_second",
                settings.publish_per_second.map(u64::from),
            ),
            ("publish_burst", settings.publish_burst.map(u64::from)),
            (
                "max_commands_per_request",
                size(settings.max_commands_per_request),
            ),
        ] {
            if value == Some(0) {
                return Err(ModuleError::new(key, "must be at least 1"));
            }
        }
        Ok(settings)
    }

    /// The hub's limits and timings: the defaults, with what `[push]` sets.
    pub fn hub_config(&self) -> PushConfig {
        let mut config = PushConfig::default();
        if let Some(ms) = self.client_idle_timeout_ms {
            config.client_idle_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.batch_interval_ms {
            config.batch_interval = Duration::from_millis(ms);
        }
        if let Some(ms) = self.unclaimed_client_timeout_ms {
            config.unclaimed_client_timeout = Duration::from_millis(ms);
        }
        if let Some(n) = self.publish_per_second {
            config.client_publish.per_second = f64::from(n);
        }
        if let Some(n) = self.publish_burst {
            config.client_publish.burst = n;
        }
        let sizes = [
            (self.history_size, &mut config.history_size),
            (self.max_clients, &mut config.max_clients),
            (self.max_subscriptions, &mut config.max_subscriptions),
            (self.max_message_bytes, &mut config.max_message_bytes),
            (self.inbox_size, &mut config.inbox_size),
        ];
        for (set, field) in sizes {
            if let Some(n) = set {
                *field = n;
            }
        }
        config
    }

    /// How fast one address may make new clients.
    pub fn new_clients_rate(&self) -> Rate {
        Rate {
            per_second: f64::from(
                self.new_clients_per_minute
                    .unwrap_or(NEW_CLIENTS_PER_MINUTE),
            ) / 60.0,
            burst: self.new_clients_burst.unwrap_or(NEW_CLIENTS_BURST),
        }
    }

    pub fn max_commands_per_request(&self) -> usize {
        self.max_commands_per_request
            .unwrap_or(MAX_COMMANDS_PER_REQUEST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PushSettings, ModuleError> {
        let table: toml::Table = toml::from_str(text).unwrap();
        PushSettings::parse(Some(&table))
    }

    #[test]
    fn limits_are_read_and_zero_is_refused() {
        let s = parse("client_idle_timeout_ms = 300\ninbox_size = 8").unwrap();
        assert_eq!(s.client_idle_timeout_ms, Some(300));
        assert_eq!(s.hub_config().inbox_size, 8);
        let e = parse("inbox_size = 0").unwrap_err();
        assert_eq!(e.key, "inbox_size");
        let s = parse("batch_interval_ms = 0").unwrap();
        assert_eq!(s.hub_config().batch_interval, Duration::ZERO, "no wait");
        let s = parse("new_clients_per_minute = 120\npublish_burst = 5").unwrap();
        assert_eq!(s.new_clients_rate().per_second, 2.0);
        assert_eq!(s.new_clients_rate().burst, 30);
        assert_eq!(s.hub_config().client_publish.burst, 5);
        assert_eq!(s.max_commands_per_request(), 100);
        let e = parse("max_commands_per_request = 0").unwrap_err();
        assert_eq!(e.key, "max_commands_per_request");
    }

    #[test]
    fn topic_filters_are_checked_with_the_hubs_grammar() {
        assert!(parse("deny = [\"site/+/secret\", \"admin/#\"]").is_ok());
        let e = parse("deny = [\"ok\", \"a/#/b\"]").unwrap_err();
        assert_eq!(e.key, "deny[1]");
        let e = parse("browser_publish = [\"a//b\"]").unwrap_err();
        assert_eq!(e.key, "browser_publish[0]");
    }

    #[test]
    fn an_unknown_key_is_named() {
        let e = parse("dney = []").unwrap_err();
        assert!(e.to_string().contains("dney"), "{e}");
    }
}
