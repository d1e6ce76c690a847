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
        Prometheus::with_rules(dir, target, None)
    }

    /// Scraping `target` every second and evaluating the rules of `rules`
    /// every second.
    fn with_rules(dir: &Path, target: &str, rules: Option<&Path>) -> Prometheus {
        let config = dir.join("prometheus.yml");
        let rule_files = rules.map_or(String::new(), |r| {
            format!("rule_files:\n  - '{}'\n", r.display())
        });
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 {rule_files}\
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
        self.ask(query).ok()?["data"]["result"][0]["value"][1]
            .as_str()?
            .parse()
            .ok()
    }

    /// An instant query's whole answer; `Err` with Prometheus's complaint
    /// when it refuses the query (a syntax error).
    fn ask(&self, query: &str) -> Result<serde_json::Value, String> {
        let answer: serde_json::Value = reqwest::blocking::Client::new()
            .get(format!("http://127.0.0.1:{}/api/v1/query", self.port))
            .query(&[("query", query)])
            .send()
            .map_err(|e| e.to_string())?
            .json()
            .map_err(|e| e.to_string())?;
        match answer["status"].as_str() {
            Some("success") => Ok(answer),
            _ => Err(answer.to_string()),
        }
    }

    /// The names of the alerts firing now (not those pending).
    fn firing(&self) -> Vec<String> {
        let answer: serde_json::Value = reqwest::blocking::Client::new()
            .get(format!("http://127.0.0.1:{}/api/v1/alerts", self.port))
            .send()
            .and_then(|r| r.json())
            .unwrap_or_default();
        let mut names: Vec<String> = answer["data"]["alerts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| a["state"] == "firing")
            .filter_map(|a| a["labels"]["alertname"].as_str().map(str::to_owned))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// A file of the repository's `contrib/`.
fn contrib(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../contrib")
        .join(path)
}

/// The `bulwark_...` metric names an expression text names (a histogram's
/// `_bucket` taken as its metric's).
fn metric_names(text: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("bulwark_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        let name = name.strip_suffix("_bucket").unwrap_or(&name).to_owned();
        // `bulwark_http_requests_total{job="bulwark"...}`: a label value,
        // not a name.
        if name != "bulwark_" {
            names.insert(name);
        }
    }
    names
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
        "bulwark_not_found counter",
        "bulwark_comments gauge",
        "bulwark_backups gauge",
        "bulwark_database_bytes gauge",
        "bulwark_disk_free_bytes gauge",
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

/// The shipped alerting rules load (`promtool check rules`) and pass their
/// own unit tests (`promtool test rules`: series in, alerts out, for every
/// alert).
#[test]
fn alert_rules_load_and_pass_their_unit_tests() {
    for (command, file) in [("check", "alerts.yml"), ("test", "alerts.test.yml")] {
        let out = Command::new("promtool")
            .args([command, "rules"])
            .arg(contrib("prometheus").join(file))
            .current_dir(contrib("prometheus"))
            .output()
            .expect("promtool is installed (scripts/ensure-ops-tools.sh)");
        assert!(
            out.status.success(),
            "promtool {command} rules {file}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// What a person on call is woken for, end to end: the starter with a mail
/// server that is down (nothing listens where `[mail] smtp` points) and a
/// newest backup three days old, scraped by a real Prometheus that loads the
/// shipped `contrib/prometheus/alerts.yml`. Nothing fires before the facts;
/// after them exactly the mail and backup alerts fire. The Grafana
/// dashboard's every query is valid PromQL over this scrape, and every metric
/// the rules and the dashboard name is one the documentation lists and the
/// starter serves.
#[test]
fn alerts_fire_when_the_mail_server_is_down_and_the_newest_backup_is_old() {
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites");
    let toml = common::starter_site(&sites);
    let down = free_port();
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str(&format!(
        "\n[mail]\nsmtp = \"smtp://127.0.0.1:{down}\"\nfrom = \"site@example.org\"\nmax_attempts = 1\n"
    ));
    std::fs::write(&toml, text).unwrap();
    let port = free_port();
    let _server = serve(dir.path(), port);
    let bulwark = |args: &[&str], stdin: &str| {
        let out = common::run(dir.path(), args, stdin);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    bulwark(
        &[
            "user",
            "add",
            "ann",
            "--group",
            "editors",
            "--email",
            "ann@example.org",
        ],
        "a-long-password-for-ann\n",
    );
    // A backup, made now and then dated three days back (its name says when).
    let backups = sites.join("default/data/backups");
    bulwark(&["backup", "-q", "default"], "");
    let made = std::fs::read_dir(&backups)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let old = chrono::Utc::now() - chrono::Duration::days(3);
    std::fs::rename(
        &made,
        backups.join(format!(
            "default-{}-auto.tar.gz",
            old.format("%Y%m%d-%H%M%S")
        )),
    )
    .unwrap();
    // A redirect rule that was hit, a webhook endpoint (written by another
    // process: the metrics read the tables), and a path that finds nothing.
    rusqlite::Connection::open(sites.join("default/data/site.db"))
        .unwrap()
        .execute_batch(
            "INSERT INTO redirect (from_path, to_path, status, hits, created) \
             VALUES ('/old', '/en/', 301, 3, 0); \
             INSERT INTO webhook_endpoint (url, secret, events, categories, created) \
             VALUES ('http://127.0.0.1:9/', 'whsec_AAAA', '[]', '[]', 0);",
        )
        .unwrap();
    let client = reqwest::blocking::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    assert_eq!(
        client
            .get(format!("{base}/no-such-page"))
            .send()
            .unwrap()
            .status(),
        404
    );

    let prometheus = Prometheus::with_rules(
        dir.path(),
        &format!("127.0.0.1:{port}"),
        Some(&contrib("prometheus/alerts.yml")),
    );
    eventually_blocking("the outbox is scraped", Duration::from_secs(60), || {
        prometheus.query(r#"bulwark_mail_outbox{state="failed"}"#)
    });
    let before = prometheus.firing();
    assert!(
        !before.contains(&"BulwarkMailGivenUp".to_owned()),
        "{before:?}"
    );

    // A reset link mailed to ann: the send is refused, and with
    // max_attempts = 1 the mail is given up on at once.
    let asked = client
        .post(format!("{base}/api/auth/reset"))
        .json(&serde_json::json!({"email": "ann@example.org"}))
        .send()
        .unwrap();
    assert_eq!(asked.status(), 202);
    let firing = eventually_blocking("the alerts fire", Duration::from_secs(60), || {
        let firing = prometheus.firing();
        firing
            .contains(&"BulwarkMailGivenUp".to_owned())
            .then_some(firing)
    });
    assert_eq!(firing, ["BulwarkBackupTooOld", "BulwarkMailGivenUp"]);

    // The dashboard's queries, and the names the rules and it use.
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(contrib("grafana/bulwark.json")).unwrap())
            .unwrap();
    let mut exprs = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            exprs.push(target["expr"].as_str().unwrap().to_owned());
        }
    }
    assert!(exprs.len() >= 20, "{exprs:?}");
    for expr in &exprs {
        let asked = expr
            .replace("$site", ".*")
            .replace("$__rate_interval", "1m");
        if let Err(e) = prometheus.ask(&asked) {
            panic!("the dashboard's {expr}: {e}");
        }
    }
    let rules = std::fs::read_to_string(contrib("prometheus/alerts.yml")).unwrap();
    let named = metric_names(&(rules + &exprs.join("\n")));
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/operations.md"),
    )
    .unwrap();
    let documented = metric_names(&docs);
    let scraped = client
        .get(format!("{base}/metrics"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let served = metric_names(&scraped);
    for name in &named {
        assert!(
            documented.contains(name),
            "{name} is not in docs/operations.md"
        );
        // The starter is not on ACME.
        if !name.contains("acme") && !name.contains("certificate") {
            assert!(
                served.contains(name),
                "{name} is not in the starter's /metrics"
            );
        }
    }
}
