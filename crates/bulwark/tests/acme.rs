//! Certificates over ACME against a real ACME server: Debian's `pebble`,
//! with `pebble-challtestsrv` answering its DNS questions (every name is
//! 127.0.0.1), on loopback. A site with `[tls] acme = true` gets a
//! certificate by HTTP-01 and answers over HTTPS with it (checked with
//! `openssl s_client`); it is renewed without a restart; a restart serves it
//! without asking (pebble is stopped by then); a certificate file that
//! changes is served without a restart; plain HTTP redirects to HTTPS.

use crate::common;
use common::{SIGHUP, SIGTERM, collect, free_port, pg_url, signal, starter_site, wait_for};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bulwark_testkit::eventually_blocking;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A self-signed certificate for `name` (and 127.0.0.1) in `dir`:
/// (certificate, key).
fn self_signed(dir: &Path, stem: &str, name: &str) -> (PathBuf, PathBuf) {
    let (cert, key) = (
        dir.join(format!("{stem}.pem")),
        dir.join(format!("{stem}-key.pem")),
    );
    run(Command::new("openssl").args([
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        &format!("/CN={name}"),
        "-addext",
        &format!("subjectAltName=DNS:{name},IP:127.0.0.1"),
        "-keyout",
        key.to_str().unwrap(),
        "-out",
        cert.to_str().unwrap(),
    ]));
    (cert, key)
}

/// A test CA and a certificate for `localhost` and 127.0.0.1 it signed:
/// (CA, certificate, key). (A self-signed certificate cannot be both the
/// root a client trusts and the server's own: webpki refuses a CA as an end
/// entity.)
fn signed_by_a_test_ca(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let (ca, ca_key) = (dir.join("ca.pem"), dir.join("ca-key.pem"));
    let (cert, key, csr) = (
        dir.join("leaf.pem"),
        dir.join("leaf-key.pem"),
        dir.join("leaf.csr"),
    );
    let ext = dir.join("leaf.ext");
    std::fs::write(
        &ext,
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    run(Command::new("openssl")
        .args(["req", "-x509"])
        .args(ec)
        .args([
            "-days",
            "2",
            "-subj",
            "/CN=bulwark test CA",
            "-keyout",
            ca_key.to_str().unwrap(),
            "-out",
            ca.to_str().unwrap(),
        ]));
    run(Command::new("openssl").args(["req"]).args(ec).args([
        "-subj",
        "/CN=localhost",
        "-keyout",
        key.to_str().unwrap(),
        "-out",
        csr.to_str().unwrap(),
    ]));
    run(Command::new("openssl").args([
        "x509",
        "-req",
        "-days",
        "2",
        "-in",
        csr.to_str().unwrap(),
        "-CA",
        ca.to_str().unwrap(),
        "-CAkey",
        ca_key.to_str().unwrap(),
        "-CAcreateserial",
        "-extfile",
        ext.to_str().unwrap(),
        "-out",
        cert.to_str().unwrap(),
    ]));
    (ca, cert, key)
}

/// Pebble, validating HTTP-01 on `http_port`, with its DNS answered by
/// pebble-challtestsrv. Returns the servers and the directory URL.
fn start_pebble(dir: &Path, http_port: u16) -> (Killed, Killed, String) {
    let (dns, port, management) = (free_port(), free_port(), free_port());
    let challenges = Command::new("pebble-challtestsrv")
        .args(["-defaultIPv4", "127.0.0.1", "-defaultIPv6", ""])
        .args(["-dns01", &format!("127.0.0.1:{dns}")])
        .args(["-http01", "", "-https01", "", "-tlsalpn01", ""])
        .args(["-management", &format!("127.0.0.1:{}", free_port())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pebble-challtestsrv is installed (scripts/ensure-ops-tools.sh)");
    let (_, cert, key) = signed_by_a_test_ca(dir);
    let config = dir.join("pebble.json");
    std::fs::write(
        &config,
        serde_json::json!({"pebble": {
            "listenAddress": format!("127.0.0.1:{port}"),
            "managementListenAddress": format!("127.0.0.1:{management}"),
            "certificate": cert, "privateKey": key,
            "httpPort": http_port, "tlsPort": free_port(),
            "ocspResponderURL": "", "externalAccountBindingRequired": false
        }})
        .to_string(),
    )
    .unwrap();
    let pebble = Command::new("pebble")
        .arg("-config")
        .arg(&config)
        .args(["-dnsserver", &format!("127.0.0.1:{dns}")])
        .env("PEBBLE_VA_NOSLEEP", "1")
        .env("PEBBLE_WFE_NONCEREJECT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pebble is installed (scripts/ensure-ops-tools.sh)");
    let directory = format!("https://127.0.0.1:{port}/dir");
    let client = reqwest::blocking::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    eventually_blocking("pebble answers", Duration::from_secs(30), || {
        client
            .get(&directory)
            .send()
            .ok()
            .filter(|r| r.status() == 200)
    });
    (Killed(challenges), Killed(pebble), directory)
}

/// What `openssl s_client` sees at `port` for `name`: the served
/// certificate's subject, issuer and serial, if a handshake works.
fn served_certificate(port: u16, name: &str) -> Option<String> {
    let mut client = Command::new("openssl")
        .args([
            "s_client",
            "-connect",
            &format!("127.0.0.1:{port}"),
            "-servername",
            name,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let pem = {
        use std::io::Read;
        let mut out = String::new();
        client.stdout.take()?.read_to_string(&mut out).ok()?;
        let _ = client.wait();
        out
    };
    let start = pem.find("-----BEGIN CERTIFICATE-----")?;
    let end = pem.find("-----END CERTIFICATE-----")? + "-----END CERTIFICATE-----".len();
    let mut x509 = Command::new("openssl")
        .args([
            "x509",
            "-noout",
            "-subject",
            "-issuer",
            "-serial",
            "-ext",
            "subjectAltName",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    {
        use std::io::Write;
        x509.stdin
            .take()?
            .write_all(&pem.as_bytes()[start..end])
            .ok()?;
    }
    let out = x509.wait_with_output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn serial(description: &str) -> String {
    description
        .lines()
        .find_map(|l| l.strip_prefix("serial="))
        .unwrap()
        .to_owned()
}

struct Bulwark {
    child: Killed,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

fn start_bulwark(dir: &Path, http: u16, tls: u16) -> Bulwark {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .current_dir(dir)
        .env("BULWARK_ADMIN_PASSWORD", "acme-test-admin-password")
        .env("BULWARK_LOG", "info")
        .args(["serve", "--access-log", "off"])
        .args(["--listen", &format!("127.0.0.1:{http}")])
        .args(["--listen-tls", &format!("127.0.0.1:{tls}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = collect(child.stderr.take().unwrap());
    Bulwark {
        child: Killed(child),
        log,
    }
}

fn site_toml(dir: &Path) -> PathBuf {
    dir.join("sites/default/site.toml")
}

/// The starter site in `dir` as `shop.test` with the `acme` module, its
/// `site.toml` without a `[tls]` section yet (the test adds its own).
fn shop_site(dir: &Path) -> String {
    starter_site(&dir.join("sites"));
    std::fs::read_to_string(site_toml(dir))
        .unwrap()
        .replace("hostname = \"localhost\"", "hostname = \"shop.test\"")
        .replace("aliases = [\"www.localhost\"]", "aliases = []")
        .replace("\"backup\"]", "\"backup\", \"acme\"]")
}

#[test]
fn a_site_gets_its_certificate_over_acme_renews_it_and_keeps_it_across_a_restart() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let (http, tls) = (free_port(), free_port());
    let (_challenges, pebble, directory) = start_pebble(dir, http);
    let text = shop_site(dir);
    let acme = |renew_days: u64| {
        format!(
            "\n[tls]\nacme = true\nredirect_http = true\n\n[acme]\ndirectory = \"{directory}\"\n\
             root = \"{}\"\ncheck_seconds = 1\nrenew_days = {renew_days}\n",
            dir.join("ca.pem").display()
        )
    };
    std::fs::write(site_toml(dir), format!("{text}{}", acme(30))).unwrap();
    let server = start_bulwark(dir, http, tls);

    // Issued: the site answers over HTTPS with pebble's certificate.
    let first = std::panic::catch_unwind(|| {
        eventually_blocking("a certificate from pebble", Duration::from_secs(60), || {
            served_certificate(tls, "shop.test").filter(|c| c.contains("Pebble"))
        })
    })
    .unwrap_or_else(|e| {
        eprintln!("{}", server.log.lock().unwrap());
        std::panic::resume_unwind(e)
    });
    assert!(first.contains("DNS:shop.test"), "{first}");
    let https = reqwest::blocking::Client::builder()
        .danger_accept_invalid_certs(true)
        .resolve("shop.test", format!("127.0.0.1:{tls}").parse().unwrap())
        .build()
        .unwrap();
    let answer = https
        .get(format!("https://shop.test:{tls}/"))
        .send()
        .unwrap();
    assert_eq!(answer.status(), 200);
    // /metrics says when it ends, for an alert long before it does.
    let metrics = https
        .get(format!("https://shop.test:{tls}/metrics"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let expiry: f64 = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix("bulwark_certificate_expiry_timestamp_seconds{site=\"default\"} ")
        })
        .unwrap_or_else(|| panic!("{metrics}"))
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(expiry > now + 86_400.0, "{expiry} is in more than a day");
    // Plain HTTP goes to HTTPS; the challenge path does not.
    let plain = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let moved = plain
        .get(format!("http://127.0.0.1:{http}/about?x=1"))
        .header("Host", "shop.test")
        .send()
        .unwrap();
    assert_eq!(moved.status(), 301);
    assert_eq!(moved.headers()["location"], "https://shop.test/about?x=1");
    let challenge = plain
        .get(format!(
            "http://127.0.0.1:{http}/.well-known/acme-challenge/nosuch"
        ))
        .header("Host", "shop.test")
        .send()
        .unwrap();
    assert_eq!(challenge.status(), 404, "not redirected, and no such token");

    // Renewed without a restart when what it must cover changes: a new
    // alias. (A `renew_days` longer than the certificate's life no longer
    // forces one: that would order again at every look.)
    let text = text.replace("aliases = []", "aliases = [\"www.shop.test\"]");
    std::fs::write(site_toml(dir), format!("{text}{}", acme(100_000))).unwrap();
    signal(server.child.0.id(), SIGHUP);
    let renewed = eventually_blocking("a renewed certificate", Duration::from_secs(60), || {
        served_certificate(tls, "shop.test").filter(|c| serial(c) != serial(&first))
    });
    assert!(renewed.contains("DNS:www.shop.test"), "{renewed}");
    wait_for(&server.log, "sites reloaded");

    // A restart serves the certificate it has, asking nobody: pebble is gone.
    drop(pebble);
    let last = served_certificate(tls, "shop.test").unwrap();
    signal(server.child.0.id(), SIGTERM);
    let mut server = server;
    assert!(server.child.0.wait().unwrap().success());
    let again = start_bulwark(dir, http, tls);
    let served = eventually_blocking("the kept certificate", Duration::from_secs(30), || {
        served_certificate(tls, "shop.test").filter(|c| c.contains("Pebble"))
    });
    assert_eq!(serial(&served), serial(&last), "the same certificate");
    assert_ne!(serial(&renewed), serial(&first));
    assert!(
        !again.log.lock().unwrap().contains("ordering a certificate"),
        "the restart asked for nothing"
    );
}

#[test]
fn a_changed_certificate_file_is_served_without_a_restart() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let (http, tls) = (free_port(), free_port());
    starter_site(&dir.join("sites"));
    let certs = dir.join("sites/default");
    let (cert, key) = self_signed(&certs, "first", "localhost");
    let text = std::fs::read_to_string(site_toml(dir)).unwrap();
    std::fs::write(
        site_toml(dir),
        format!("{text}\n[tls]\ncert = \"first.pem\"\nkey = \"first-key.pem\"\n"),
    )
    .unwrap();
    let _server = start_bulwark(dir, http, tls);
    let first = eventually_blocking("the first certificate", Duration::from_secs(30), || {
        served_certificate(tls, "localhost")
    });
    let (second, second_key) = self_signed(dir, "second", "localhost");
    std::fs::copy(&second_key, &key).unwrap();
    std::fs::copy(&second, &cert).unwrap();
    let changed = eventually_blocking("the changed certificate", Duration::from_secs(30), || {
        served_certificate(tls, "localhost").filter(|c| serial(c) != serial(&first))
    });
    let wanted = Command::new("openssl")
        .args(["x509", "-noout", "-serial", "-in", second.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        format!("serial={}", serial(&changed)),
        String::from_utf8_lossy(&wanted.stdout).trim()
    );
}

#[test]
fn two_nodes_on_one_database_place_one_order_and_serve_one_certificate() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let schema = format!("acme_{}", std::process::id());
    let ports: Vec<(u16, u16)> = (0..2).map(|_| (free_port(), free_port())).collect();
    // The ACME server asks node one for every challenge: whichever node
    // ordered, the answer is in the database.
    let (_challenges, _pebble, directory) = start_pebble(dir, ports[0].0);
    let nodes: Vec<Bulwark> = ports
        .iter()
        .enumerate()
        .map(|(i, (http, tls))| {
            let node = dir.join(format!("node{i}"));
            starter_site(&node.join("sites"));
            let text = std::fs::read_to_string(site_toml(&node))
                .unwrap()
                .replace("hostname = \"localhost\"", "hostname = \"shop.test\"")
                .replace("aliases = [\"www.localhost\"]", "aliases = []")
                .replace("\"backup\"]", "\"backup\", \"acme\", \"cluster\"]")
                .replace(
                    "[database]\n",
                    &format!(
                        "[database]\nurl = \"{}\"\nschema = \"{schema}\"\n",
                        pg_url()
                    ),
                );
            std::fs::write(
                site_toml(&node),
                format!(
                    "{text}\n[cluster]\nnode = \"node{i}\"\n\n[tls]\nacme = true\n\n[acme]\n\
                     directory = \"{directory}\"\nroot = \"{}\"\ncheck_seconds = 1\n",
                    dir.join("ca.pem").display()
                ),
            )
            .unwrap();
            start_bulwark(&node, *http, *tls)
        })
        .collect();
    // Started together on a schema neither has made: they take turns at
    // making it (and its first content), and both come up.
    for (http, _) in &ports {
        eventually_blocking("the node answers", Duration::from_secs(30), || {
            reqwest::blocking::get(format!("http://127.0.0.1:{http}/cluster/health"))
                .ok()
                .filter(|r| r.status() == 200)
        });
    }
    let served: Vec<String> = ports
        .iter()
        .zip(&nodes)
        .map(|((_, tls), node)| {
            let c = std::panic::catch_unwind(|| {
                eventually_blocking("a certificate", Duration::from_secs(60), || {
                    served_certificate(*tls, "shop.test").filter(|c| c.contains("Pebble"))
                })
            })
            .unwrap_or_else(|e| {
                eprintln!("{}", node.log.lock().unwrap());
                std::panic::resume_unwind(e)
            });
            serial(&c)
        })
        .collect();
    assert_eq!(served[0], served[1], "both nodes serve the one certificate");
    let orders = Command::new("psql")
        .args([
            &pg_url(),
            "-tAc",
            &format!("SELECT count(*) FROM {schema}.acme_order"),
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&orders.stdout).trim(),
        "1",
        "one order"
    );
    drop(nodes);
}

/// Orders that fail again and again (here the ACME server reaches no
/// answer to its challenge: it is told another port) are placed further and
/// further apart (each wait twice the one before), stop at five for the
/// same names in a week, what Let's Encrypt allows, and the log says why;
/// later looks place none.
#[test]
fn orders_that_keep_failing_stop_at_what_the_ca_allows() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let (http, tls) = (free_port(), free_port());
    let (_challenges, _pebble, directory) = start_pebble(dir, free_port());
    let text = shop_site(dir);
    std::fs::write(
        site_toml(dir),
        format!(
            "{text}\n[tls]\nacme = true\n\n[acme]\ndirectory = \"{directory}\"\nroot = \"{}\"\n\
             check_seconds = 1\n",
            dir.join("ca.pem").display()
        ),
    )
    .unwrap();
    let server = start_bulwark(dir, http, tls);
    let refusals = || {
        server
            .log
            .lock()
            .unwrap()
            .matches("5 orders for [\"shop.test\"] in the last seven days")
            .count()
    };
    // Looks every second; after failures 2, 4, 8 and 16 s apart.
    eventually_blocking("the orders stop", Duration::from_secs(120), || {
        (refusals() >= 1).then_some(())
    });
    let placed: Vec<i64> = {
        let db = rusqlite::Connection::open(dir.join("sites/default/data/site.db")).unwrap();
        let mut asked = db
            .prepare("SELECT placed FROM acme_order ORDER BY placed")
            .unwrap();
        asked
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(placed.len(), 5, "{}", server.log.lock().unwrap());
    let gaps: Vec<i64> = placed.windows(2).map(|w| w[1] - w[0]).collect();
    for (i, gap) in gaps.iter().enumerate() {
        // The wait after the n-th failure is 2^n s; the order itself takes
        // its own time on top.
        let least = 1000 << (i + 1);
        assert!(
            *gap >= least,
            "order {} came {gap} ms after the one before: {gaps:?}",
            i + 2
        );
    }
    let metrics = reqwest::blocking::Client::new()
        .get(format!("http://127.0.0.1:{http}/metrics"))
        .header("Host", "shop.test")
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(
        metrics.contains("bulwark_acme_orders_week{site=\"default\"} 5\n"),
        "{metrics}"
    );
}
