//! Varnish in front of Bulwark (Debian's `varnish` with `varnish-modules`
//! for xkey, installed by scripts/ensure-ops-tools.sh), with the VCL that
//! contrib/varnish/bulwark.vcl gives users: a change to a resource purges
//! exactly the pages that showed it from Varnish; the other pages stay
//! cached there.

use crate::common;
use common::{free_port, run_ok, serve, starter_site};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bulwark_testkit::eventually_blocking;
use serde_json::json;

const TOKEN: &str = "varnish-test-token-0123456789abcdef";

struct Varnish(Child);

impl Drop for Varnish {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn varnishd() -> PathBuf {
    ["/usr/sbin/varnishd", "/usr/bin/varnishd"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("varnishd is installed (scripts/ensure-ops-tools.sh)")
}

fn start_varnish(work: &Path, port: u16, backend: u16) -> Varnish {
    let vcl = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/varnish/bulwark.vcl"),
    )
    .unwrap()
    .replace(".port = \"8000\";", &format!(".port = \"{backend}\";"));
    let file = work.join("bulwark.vcl");
    std::fs::write(&file, vcl).unwrap();
    let child = Command::new(varnishd())
        .args(["-F", "-j", "none", "-s", "malloc,32m"])
        .arg("-n")
        .arg(work.join("varnish"))
        .arg("-a")
        .arg(format!("127.0.0.1:{port}"))
        .arg("-f")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Varnish(child)
}

/// A page through Varnish: its body and whether Varnish had it.
fn through(port: u16, path: &str) -> Option<(String, bool)> {
    let answer = reqwest::blocking::Client::new()
        .get(format!("http://127.0.0.1:{port}{path}"))
        .header("Host", "localhost")
        .send()
        .ok()?;
    if answer.status() != 200 {
        return None;
    }
    let hit = answer.headers().get("x-cache")? == "hit";
    Some((answer.text().ok()?, hit))
}

#[test]
fn a_change_purges_exactly_the_pages_that_showed_it_from_varnish() {
    let dir = tempfile::tempdir().unwrap();
    let (port, vport) = (free_port(), free_port());
    let toml = starter_site(&dir.path().join("sites"));
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("# token = \"generated\"", &format!("token = \"{TOKEN}\""))
        .replace("\"backup\"]", "\"backup\", \"cdn\"]");
    std::fs::write(
        &toml,
        format!("{text}\n[cdn]\npurge = [\"http://127.0.0.1:{vport}/\"]\n"),
    )
    .unwrap();
    let _varnish = start_varnish(dir.path(), vport, port);
    let client = reqwest::blocking::Client::new();
    eventually_blocking("Varnish answers", Duration::from_secs(30), || {
        client
            .request(
                reqwest::Method::from_bytes(b"PURGE").unwrap(),
                format!("http://127.0.0.1:{vport}/"),
            )
            .header("xkey-purge", "none")
            .send()
            .ok()
            .filter(|r| r.status() == 200)
    });
    let _server = serve(dir.path(), port);
    let api = format!("http://127.0.0.1:{port}/api/rsc");
    let make = |title: &str| {
        let made: serde_json::Value = client
            .post(&api)
            .bearer_auth(TOKEN)
            .json(&json!({"category": "article", "published": true, "props": {"title": title}}))
            .send()
            .unwrap()
            .json()
            .unwrap();
        made["id"].as_i64().unwrap()
    };
    let (alpha, beta) = (make("Alpha"), make("Beta"));
    let (alpha_page, beta_page) = (format!("/page/{alpha}"), format!("/page/{beta}"));

    // Bulwark marks its cached pages for a shared cache.
    let direct = client
        .get(format!("http://127.0.0.1:{port}{alpha_page}"))
        .send()
        .unwrap();
    assert!(
        direct.headers().contains_key("xkey"),
        "{:?}",
        direct.headers()
    );
    assert_eq!(direct.headers()["surrogate-control"], "max-age=3600");

    // The pages end up in Varnish.
    let pages = [
        alpha_page.as_str(),
        beta_page.as_str(),
        "/en/about",
        "/nl/about",
    ];
    for page in pages {
        eventually_blocking("Varnish keeps the page", Duration::from_secs(30), || {
            through(vport, page).filter(|(_, hit)| *hit)
        });
    }

    // A change to Alpha: its page leaves Varnish, Beta's and /about stay.
    let version = client
        .get(format!("{api}/{alpha}"))
        .bearer_auth(TOKEN)
        .send()
        .unwrap()
        .json::<serde_json::Value>()
        .unwrap()["version"]
        .clone();
    let changed = client
        .patch(format!("{api}/{alpha}"))
        .bearer_auth(TOKEN)
        .header("If-Match", format!("\"{version}\""))
        .json(&json!({"props": {"title": "Alpha, changed"}}))
        .send()
        .unwrap();
    assert!(changed.status().is_success(), "{}", changed.text().unwrap());
    let since = Instant::now();
    let (body, hit) =
        eventually_blocking("Varnish shows the change", Duration::from_secs(10), || {
            through(vport, &alpha_page).filter(|(body, _)| body.contains("Alpha, changed"))
        });
    let purged_in = since.elapsed();
    eprintln!("the changed page left Varnish in {purged_in:?}");
    assert!(!hit, "rendered again, not kept: {body:.80}");
    let (body, hit) = through(vport, &beta_page).unwrap();
    assert!(hit && body.contains("Beta"), "Beta's page stays in Varnish");
    assert!(
        through(vport, "/en/about").unwrap().1,
        "/en/about stays in Varnish"
    );

    // `bulwark purge --url /about` takes the page in both languages from
    // Varnish (each in every encoding Varnish keeps: it purges by key), and
    // nothing else.
    for page in ["/nl/about", "/en/features"] {
        eventually_blocking("Varnish keeps the page", Duration::from_secs(30), || {
            through(vport, page).filter(|(_, hit)| *hit)
        });
    }
    run_ok(dir.path(), &["purge", "default", "--url", "/about"]);
    for page in ["/en/about", "/nl/about"] {
        eventually_blocking("the page leaves Varnish", Duration::from_secs(10), || {
            through(vport, page).filter(|(_, hit)| !hit)
        });
    }
    for page in [beta_page.as_str(), "/en/features"] {
        assert!(through(vport, page).unwrap().1, "{page} stays in Varnish");
    }

    // A reload whose site.toml changed what pages show (the site's title)
    // takes the site's pages from Varnish: they come back with the new title.
    eventually_blocking("Varnish keeps the page", Duration::from_secs(30), || {
        through(vport, "/en/about").filter(|(_, hit)| *hit)
    });
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replacen("title = \"Bulwark\"", "title = \"Bulwark, renamed\"", 1),
    )
    .unwrap();
    run_ok(dir.path(), &["reload"]);
    for page in [beta_page.as_str(), "/en/about", "/nl/about"] {
        let (body, hit) = eventually_blocking(
            "the renamed site leaves Varnish",
            Duration::from_secs(10),
            || through(vport, page).filter(|(body, _)| body.contains("Bulwark, renamed")),
        );
        assert!(!hit, "{page} rendered again, not kept: {body:.80}");
    }

    // `bulwark purge --all` reaches Varnish too.
    run_ok(dir.path(), &["purge", "default", "--all"]);
    eventually_blocking("everything leaves Varnish", Duration::from_secs(10), || {
        through(vport, &beta_page).filter(|(_, hit)| !hit)
    });
}
