//! `[cluster]` in `site.toml`: whether this site's nodes share their changes,
//! this node's name, and how often the connection is proven alive.

use std::time::Duration;

use serde::Deserialize;

use bulwark_web::{ModuleError, read_settings};

/// `[cluster]` as written (see docs/cluster.md).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterSection {
    enabled: Option<bool>,
    node: Option<String>,
    heartbeat_ms: Option<u64>,
    health_detail: Option<bool>,
}

/// The environment variable that names this node, over `[cluster] node`: every
/// node usually runs the same `sites/` folder.
pub const NODE_ENV: &str = "BULWARK_NODE";

/// How often a listening node proves its connection alive by default.
pub const HEARTBEAT: Duration = Duration::from_millis(500);

/// A site's cluster settings, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSettings {
    pub enabled: bool,
    /// For logs and the health answer; need not be unique (each running node
    /// also has a random id of its own).
    pub node: String,
    /// The listener sends itself a notification this often; one that does not
    /// come back within three of these counts as a lost connection.
    pub heartbeat: Duration,
    /// Whether `/cluster/health` shows the node's name and counters to
    /// anyone who asks (off: only whether it hears the others).
    pub health_detail: bool,
}

impl ClusterSettings {
    pub fn parse(section: Option<&toml::Table>) -> Result<ClusterSettings, ModuleError> {
        let raw: ClusterSection = match section {
            Some(table) => read_settings(table)?,
            None => ClusterSection::default(),
        };
        let node = std::env::var(NODE_ENV)
            .ok()
            .filter(|n| !n.is_empty())
            .or(raw.node)
            .unwrap_or_else(default_node_name);
        if node.is_empty()
            || node.len() > 64
            || !node
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(ModuleError::new(
                "node",
                format!("{node:?}: use 1 to 64 letters, digits, '-', '_' or '.'"),
            ));
        }
        let heartbeat =
            Duration::from_millis(raw.heartbeat_ms.unwrap_or(HEARTBEAT.as_millis() as u64));
        if heartbeat < Duration::from_millis(50) || heartbeat > Duration::from_secs(60) {
            return Err(ModuleError::new(
                "heartbeat_ms",
                "must be between 50 and 60000",
            ));
        }
        Ok(ClusterSettings {
            enabled: raw.enabled.unwrap_or(true),
            node,
            heartbeat,
            health_detail: raw.health_detail.unwrap_or(false),
        })
    }
}

/// The host's name and the process id: distinct for nodes on one machine.
fn default_node_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "node".to_owned());
    let host: String = host
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    format!("{host}-{}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ClusterSettings, ModuleError> {
        let table: toml::Table = text.parse().unwrap();
        ClusterSettings::parse(Some(&table))
    }

    #[test]
    fn a_bad_node_name_or_heartbeat_names_its_key() {
        assert_eq!(parse("node = \"a b\"").unwrap_err().key, "node");
        assert_eq!(parse("heartbeat_ms = 1").unwrap_err().key, "heartbeat_ms");
        assert_eq!(parse("nodes = \"a\"").unwrap_err().key, "nodes");
    }

    #[test]
    fn settings_default_to_on_with_a_named_node() {
        let s = ClusterSettings::parse(None).unwrap();
        assert!(s.enabled);
        assert!(!s.node.is_empty());
        assert_eq!(s.heartbeat, HEARTBEAT);
    }
}
