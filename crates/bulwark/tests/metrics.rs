//! `/metrics` as a monitoring system reads it: scraped by a real Prometheus
//! server (Debian's `prometheus`, installed by scripts/ensure-ops-tools.sh),
//! and parsed by PyPI's `prometheus-client`; closed to everyone the site does
//! not name.

use crate::common;
use common::{free_port, serve};

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use bulwark_testkit::eventually_blocking;

/// A Prometheus server scraping `target` every second, killed when dropped.
struct Prometheus {
    child: std::process::Child,
    port: u16,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(dir: &Path, target: &str) -> Prometheus {
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
                 scrape_configs:\n  - job_name: bulwark\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus is installed (scripts/ensure-ops-tools.sh)");
        Prometheus { child, port }
    }

    /// The value of an instant query with one result, if it has one yet.
    fn query(&self, query: &str) -> Option<f64> {
        let answer: serde_json::Value = reqwest::blocking::Client::new()
            .get(format!("http://127.0.0.1:{}/api/v1/query", self.port))
            .query(&[("query", query)])
            .send()
            .ok()?
            .json()
            .ok()?;
        answer["data"]["result"][0]["value"][1]
            .as_str()?
            .parse()
            .ok()
    }
}

/// Parses the text with PyPI's prometheus-client; returns the families'
/// names, or the parser's complaint.
fn parse_with_prometheus_client(text: &str) -> Result<Vec<String>, String> {
    let script = "import sys\n\
        from prometheus_client.parser import text_string_to_metric_families\n\
        for family in text_string_to_metric_families(sys.stdin.read()):\n\
        \x20   print(family.name, family.type, len(family.samples))\n";
    for python in ["python3", "/usr/bin/python3"] {
        let Ok(mut child) = Command::new(python)
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        else {
            continue;
        };
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("No module named") {
            continue;
        }
        if !out.status.success() {
            return Err(stderr.into_owned());
        }
        return Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect());
    }
    panic!("no python3 has prometheus_client (scripts/ensure-ops-tools.sh installs it)");
}

#[test]
fn prometheus_scrapes_metrics_whose_values_move_with_requests() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _server = serve(dir.path(), port);
    let client = reqwest::blocking::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..5 {
        assert_eq!(client.get(format!("{base}/")).send().unwrap().status(), 200);
    }
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let families = parse_with_prometheus_client(&text).unwrap();
    for family in [
        "bulwark_http_requests counter",
        "bulwark_http_request_duration_seconds histogram",
        "bulwark_page_cache_lookups counter",
        "bulwark_cache_reads counter",
        "bulwark_refused counter",
        "bulwark_database_connections gauge",
        "bulwark_push_clients gauge",
        "bulwark_push_encodings_computed counter",
        "bulwark_media_resizes counter",
        "bulwark_webhook_messages gauge",
        "process_resident_memory_bytes gauge",
        "process_open_fds gauge",
    ] {
        assert!(
            families
                .iter()
                .any(|f| f.starts_with(&format!("{family} "))),
            "{family} in {families:?}"
        );
    }

    let prometheus = Prometheus::start(dir.path(), &format!("127.0.0.1:{port}"));
    let home = r#"sum(bulwark_http_requests_total{job="bulwark",rule="home",status="2xx"})"#;
    let scraped = eventually_blocking(
        "Prometheus scrapes the site",
        Duration::from_secs(60),
        || prometheus.query(home).filter(|n| *n >= 5.0),
    );
    for _ in 0..7 {
        client.get(format!("{base}/")).send().unwrap();
    }
    let moved = eventually_blocking("the scraped count moves", Duration::from_secs(30), || {
        prometheus.query(home).filter(|n| *n >= scraped + 7.0)
    });
    assert!(moved >= scraped + 7.0);
    // A histogram Prometheus can take a quantile of.
    let p99 = r#"histogram_quantile(0.99, sum by (le) (bulwark_http_request_duration_seconds_bucket{rule="home"}))"#;
    let quantile = eventually_blocking("a latency quantile", Duration::from_secs(30), || {
        prometheus.query(p99).filter(|q| q.is_finite())
    });
    assert!(quantile > 0.0 && quantile <= 10.0, "{quantile}");
}

#[test]
fn metrics_are_closed_to_whom_the_site_does_not_name() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let server = serve(dir.path(), port);
    let client = reqwest::blocking::Client::new();
    let url = format!("http://127.0.0.1:{port}/metrics");
    let status = |req: reqwest::blocking::RequestBuilder| req.send().unwrap().status().as_u16();
    assert_eq!(
        status(client.get(&url)),
        200,
        "the starter allows this machine"
    );
    assert_eq!(
        status(client.get(&url).header("X-Forwarded-For", "203.0.113.9")),
        403,
        "through a proxy, this machine's address is the proxy's"
    );
    drop(server);

    // Nobody named: closed, with a message that says so.
    let toml = dir.path().join("sites/default/site.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let closed = text.replace("allow = [\"127.0.0.1\", \"::1\"]", "");
    std::fs::write(&toml, &closed).unwrap();
    let server = serve(dir.path(), port);
    let answer = client.get(&url).send().unwrap();
    assert_eq!(answer.status(), 403);
    assert!(
        answer
            .text()
            .unwrap()
            .contains("names no address (allow) and no token")
    );
    drop(server);

    // A token: from anywhere with it, a wrong one is 401.
    let token = "metrics-token-0123456789";
    std::fs::write(
        &toml,
        text.replace(
            "allow = [\"127.0.0.1\", \"::1\"]",
            &format!("allow = []\ntoken = \"{token}\""),
        ),
    )
    .unwrap();
    let _server = serve(dir.path(), port);
    assert_eq!(status(client.get(&url)), 403);
    assert_eq!(
        status(client.get(&url).bearer_auth("wrong-token-0123456789")),
        401
    );
    assert_eq!(
        status(
            client
                .get(&url)
                .bearer_auth(token)
                .header("X-Forwarded-For", "203.0.113.9")
        ),
        200
    );
}
