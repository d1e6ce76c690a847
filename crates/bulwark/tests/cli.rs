//! The `bulwark` command as a user runs it: a real process on a real port.

use crate::common;
use bulwark_testkit::eventually_blocking;
use common::{SIGHUP, SIGTERM, collect, free_port, signal, wait_for};

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn bulwark(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bulwark"));
    cmd.current_dir(dir).env("BULWARK_LOG", "warn");
    cmd
}

/// `Max open files` of a process: (soft, hard).
fn open_file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap()
        .to_string();
    let mut fields = line["Max open files".len()..].split_whitespace();
    (
        fields.next().unwrap().to_string(),
        fields.next().unwrap().to_string(),
    )
}

#[repr(C)]
struct Rlimit {
    cur: u64,
    max: u64,
}

unsafe extern "C" {
    fn getrlimit(resource: i32, limit: *mut Rlimit) -> i32;
    fn setrlimit(resource: i32, limit: *const Rlimit) -> i32;
}

const RLIMIT_NOFILE: i32 = 7;

#[test]
fn serve_without_sites_creates_the_starter_site_and_stops_on_sigterm() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut command = bulwark(dir.path());
    // Started with a low limit of open files, it raises it to the hard limit.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let mut limit = Rlimit { cur: 0, max: 0 };
            getrlimit(RLIMIT_NOFILE, &mut limit);
            limit.cur = limit.max.min(256);
            setrlimit(RLIMIT_NOFILE, &limit);
            Ok(())
        });
    }
    let mut child = command
        .args([
            "serve",
            "--access-log",
            "off",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let client = reqwest::blocking::Client::new();
    let home = eventually_blocking("the server comes up", Duration::from_secs(20), || {
        client.get(format!("http://127.0.0.1:{port}/")).send().ok()
    });
    assert_eq!(home.status(), 200);
    let (soft, hard) = open_file_limits(child.id());
    assert_eq!(
        soft, hard,
        "the open-file limit is raised to the hard limit"
    );
    let html = home.text().unwrap();
    assert!(html.contains("<title>Bulwark</title>"), "{html}");
    let css = &html[html.find("/lib/css/").unwrap()..];
    let css = &css[..css.find('"').unwrap()];
    let css = client
        .get(format!("http://127.0.0.1:{port}{css}"))
        .send()
        .unwrap();
    assert_eq!(css.status(), 200);
    assert!(css.text().unwrap().contains(".hero"));
    for page in [
        "/features",
        "/about",
        "/contact",
        "/features/push",
        "/robots.txt",
    ] {
        let r = client
            .get(format!("http://127.0.0.1:{port}{page}"))
            .send()
            .unwrap();
        assert_eq!(r.status(), 200, "{page}");
    }
    assert!(dir.path().join("sites/default/site.toml").is_file());

    // The demo content through the category pages (search is indexed by a
    // background task, so the first answers may still be empty).
    let get = |path: &str| {
        let r = client
            .get(format!("http://127.0.0.1:{port}{path}"))
            .send()
            .unwrap();
        (r.status().as_u16(), r.text().unwrap())
    };
    let shows = |path: &str, needle: &str| {
        let what = format!("{path} shows {needle:?}");
        eventually_blocking(&what, Duration::from_secs(10), || {
            let (status, html) = get(path);
            assert_eq!(status, 200, "{path}");
            html.contains(needle).then_some(html)
        })
    };
    shows("/category/person", "Ada Lovelace");
    let articles = shows("/category/article", "Live pages");
    let text = shows("/category/text", "href=\"/category/article\"");
    assert!(
        text.contains("Live pages"),
        "text includes articles: {text}"
    );
    // Pages of resources carry the language (`/en/page/...`).
    let link = &articles[articles.find("href=\"/en/page/").unwrap() + 6..];
    let link = &link[..link.find('"').unwrap()];
    let article = shows(link, "href=\"/en/category/article\"");
    assert!(article.contains("Ada Lovelace") || article.contains("Alan Turing"));
    assert_eq!(get("/category/no_such_thing").0, 404);
    assert_eq!(get("/category/..%2f..%2fetc").0, 404);

    signal(child.id(), SIGTERM);
    let status = eventually_blocking("an exit after SIGTERM", Duration::from_secs(10), || {
        child.try_wait().unwrap()
    });
    assert!(status.success(), "{status}");
}

#[test]
fn check_accepts_the_starter_site_and_names_a_broken_template() {
    let dir = tempfile::tempdir().unwrap();
    let out = bulwark(dir.path())
        .args(["site", "new", "blog"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = std::fs::read_to_string(dir.path().join("sites/blog/site.toml")).unwrap();
    assert!(toml.contains("hostname = \"blog.localhost\"") && toml.contains("default = false"));

    let out = bulwark(dir.path()).arg("check").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("site blog: ok"));

    std::fs::write(
        dir.path().join("sites/blog/templates/bad.tpl"),
        "ok\n{% for %}\n",
    )
    .unwrap();
    let out = bulwark(dir.path()).arg("check").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.tpl:2"), "{err}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("site blog: 1 broken template(s)") && !said.contains("site blog: ok"),
        "{said}"
    );

    let out = bulwark(dir.path())
        .args(["site", "new", "blog"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "creating an existing site must fail");
}

#[test]
fn a_bad_config_stops_serve_with_a_message_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("sites/x");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("site.toml"),
        "hostname = \"x.test\"\nmodules = [\"nosuch\"]\n",
    )
    .unwrap();
    let out = bulwark(dir.path())
        .args(["serve", "--listen", &format!("127.0.0.1:{}", free_port())])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sites/x/site.toml") && err.contains("modules[0]"),
        "{err}"
    );
}

#[test]
fn a_trusted_proxy_that_is_no_address_stops_serve_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = bulwark(dir.path())
        .args(["serve", "--listen", &format!("127.0.0.1:{}", free_port())])
        .args(["--trusted-proxy", "10.0.0.0/8,balancer.internal"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--trusted-proxy") && err.contains("\"balancer.internal\" is not an address"),
        "{err}"
    );
}

fn write_site(dir: &Path, name: &str, default: bool, templates: &[(&str, &str)]) {
    let site = dir.join("sites").join(name);
    std::fs::create_dir_all(site.join("templates")).unwrap();
    std::fs::write(site.join("site.toml"), site_toml(name, default, "")).unwrap();
    for (file, text) in templates {
        std::fs::write(site.join("templates").join(file), text).unwrap();
    }
}

fn site_toml(name: &str, default: bool, more: &str) -> String {
    let page = |rule: &str, path: &str| {
        format!(
            "[[dispatch]]\nname = \"{rule}\"\npath = \"{path}\"\ncontroller = \"template\"\ntemplate = \"{rule}.tpl\"\n"
        )
    };
    format!(
        "hostname = \"{name}.test\"\ndefault = {default}\n\n{}{}{more}",
        page("home", "/"),
        page("about", "/about")
    )
}

#[test]
fn sighup_and_reload_swap_in_changed_templates_and_configs_and_a_broken_site_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    // Every page shows a random number: the same number twice is a page
    // from the cache.
    let base = "<main>{% block body %}{% endblock %} {{ random(1000000000) }}</main>";
    for (name, default) in [("news", true), ("shop", false)] {
        write_site(
            dir.path(),
            name,
            default,
            &[
                ("base.tpl", base),
                (
                    "home.tpl",
                    r#"{% extends "base.tpl" %}{% block body %}home {% include "teaser.tpl" %}{% endblock %}"#,
                ),
                ("teaser.tpl", "teaser one"),
                (
                    "about.tpl",
                    r#"{% extends "base.tpl" %}{% block body %}about{% endblock %}"#,
                ),
                ("new.tpl", "new page"),
            ],
        );
    }
    let news = dir.path().join("sites/news");
    let shop = dir.path().join("sites/shop");
    let port = free_port();
    let mut child = bulwark(dir.path())
        .env("BULWARK_LOG", "info")
        .args([
            "serve",
            "--access-log",
            "off",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = collect(child.stderr.take().unwrap());
    let client = reqwest::blocking::Client::new();
    let get = |host: &str, path: &str| {
        client
            .get(format!("http://127.0.0.1:{port}{path}"))
            .header("Host", format!("{host}.test"))
            .send()
            .ok()
            .filter(|r| r.status() == 200)
            .and_then(|r| r.text().ok())
            .unwrap_or_default()
    };
    eventually_blocking("the server comes up", Duration::from_secs(20), || {
        get("news", "/").contains("teaser one").then_some(())
    });
    let (home, about) = (get("news", "/"), get("news", "/about"));
    assert_eq!(get("news", "/"), home, "the home page is cached");
    assert_eq!(get("news", "/about"), about, "the about page is cached");
    let shop_about = get("shop", "/about");

    // An edited include, then SIGHUP: the page that includes it is new, the
    // other page is still the cached one.
    std::fs::write(news.join("templates/teaser.tpl"), "teaser two").unwrap();
    signal(child.id(), SIGHUP);
    wait_for(&log, "2 template(s) changed");
    assert!(get("news", "/").contains("teaser two"), "the new markup");
    assert_eq!(
        get("news", "/about"),
        about,
        "a page of another template stays cached"
    );
    assert_eq!(
        get("shop", "/about"),
        shop_about,
        "another site stays cached"
    );

    // The base template: every page that extends it is rendered again.
    std::fs::write(
        news.join("templates/base.tpl"),
        format!("<body>{base}</body>"),
    )
    .unwrap();
    let out = bulwark(dir.path()).arg("reload").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "reloaded");
    assert!(get("news", "/about").starts_with("<body>"), "the new base");
    assert_eq!(
        get("shop", "/about"),
        shop_about,
        "another site stays cached"
    );

    // A broken site.toml for the shop and a new rule for the news: the news
    // takes its new rule, the shop keeps serving what it served.
    std::fs::write(shop.join("site.toml"), "hostname = [").unwrap();
    let more = "[[dispatch]]\nname = \"new\"\npath = \"/new\"\ncontroller = \"template\"\ntemplate = \"new.tpl\"\n";
    std::fs::write(news.join("site.toml"), site_toml("news", true, more)).unwrap();
    let out = bulwark(dir.path()).arg("reload").output().unwrap();
    assert!(!out.status.success(), "a broken site is an error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("shop/site.toml"), "{stderr}");
    assert_eq!(get("news", "/new"), "new page");
    assert_eq!(
        get("shop", "/about"),
        shop_about,
        "the shop serves as before"
    );

    // A template broken at a reload: the site keeps the templates it ran
    // with, and a page rendered again (purged) is still the good one.
    let good_about = std::fs::read_to_string(news.join("templates/about.tpl")).unwrap();
    std::fs::write(
        news.join("templates/about.tpl"),
        r#"{% extends "base.tpl" %}{% block body %}about {{ %}{% endblock %}"#,
    )
    .unwrap();
    let out = bulwark(dir.path()).arg("reload").output().unwrap();
    assert!(!out.status.success(), "a broken template is an error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("site news: 1 broken template(s), the site keeps its last good ones"),
        "{stderr}"
    );
    let out = bulwark(dir.path())
        .args(["purge", "news", "--url", "/about"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let again = get("news", "/about");
    assert!(
        again.contains("about") && again != about,
        "rendered again, from the good template: {again:?}"
    );
    assert_eq!(
        get("news", "/new"),
        "new page",
        "the rest of the site as it ran"
    );
    std::fs::write(news.join("templates/about.tpl"), good_about).unwrap();

    // `bulwark status` names both sites; `bulwark purge` drops pages.
    let out = bulwark(dir.path())
        .args(["status", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = status["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["news", "shop"]);
    assert!(status["sites"][0]["page_cache"]["hits"].as_u64().unwrap() > 0);
    let out = bulwark(dir.path()).arg("status").output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("news.test"), "{table}");
    let about = get("news", "/about");
    let out = bulwark(dir.path())
        .args(["purge", "news", "--url", "/about"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(get("news", "/about"), about, "purged: rendered again");
    let out = bulwark(dir.path())
        .args(["purge", "nosuch", "--all"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no site is named \"nosuch\""));

    // A second server on the same folder refuses to start.
    let out = bulwark(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("another Bulwark server is running"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    signal(child.id(), SIGTERM);
    assert!(child.wait().unwrap().success());
    assert!(
        !dir.path().join("sites/.bulwark.sock").exists(),
        "the socket goes with the server"
    );
    let out = bulwark(dir.path()).arg("reload").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Bulwark server answers"));
}

/// The log written to a pipe or a file carries no colour codes; under a
/// terminal (`script` gives the command one) it is coloured, unless
/// `NO_COLOR` is set; `--log-format json` writes one JSON object a line.
#[test]
fn the_log_is_coloured_only_on_a_terminal_and_is_json_when_asked() {
    // Each run on a starter site of its own: the first look at a site (its
    // database made) is what logs.
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        common::starter_site(&dir.path().join("sites"));
        dir
    };
    let logged = |args: &[&str]| {
        let dir = fresh();
        let out = bulwark(dir.path())
            .env("BULWARK_LOG", "info")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stderr).unwrap()
    };
    let piped = logged(&["user", "list"]);
    assert!(piped.contains("INFO"), "something is logged: {piped}");
    assert!(
        !piped.contains('\x1b'),
        "no escape codes in a pipe: {piped:?}"
    );

    let json = logged(&["user", "list", "--log-format", "json"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    assert!(!lines.is_empty());
    for line in &lines {
        assert!(
            line["level"].is_string() && line["fields"]["message"].is_string(),
            "{line}"
        );
    }

    let on_a_terminal = |no_color: Option<&str>| {
        let command = format!("{} user list", env!("CARGO_BIN_EXE_bulwark"));
        let dir = fresh();
        let mut script = Command::new("script");
        script
            .args(["-qec", &command, "/dev/null"])
            .current_dir(dir.path())
            .env("BULWARK_LOG", "info")
            .env_remove("NO_COLOR");
        if let Some(value) = no_color {
            script.env("NO_COLOR", value);
        }
        let out = script.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let coloured = on_a_terminal(None);
    assert!(
        coloured.contains("\x1b["),
        "coloured for a person: {coloured:?}"
    );
    let plain = on_a_terminal(Some("1"));
    assert!(plain.contains("INFO"), "{plain:?}");
    assert!(!plain.contains("\x1b["), "NO_COLOR: {plain:?}");
}
