//! The `bulwark` command as a user runs it: a real process on a real port.

mod common;
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
    let link = &articles[articles.find("href=\"/page/").unwrap() + 6..];
    let link = &link[..link.find('"').unwrap()];
    let article = shows(link, "href=\"/category/article\"");
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

#[test]
fn sighup_reloads_the_sites_and_a_broken_config_leaves_them_serving() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("sites/news");
    std::fs::create_dir_all(site.join("templates")).unwrap();
    let config = "hostname = \"news.test\"\ndefault = true\n\n[[dispatch]]\nname = \"home\"\npath = \"/\"\ncontroller = \"template\"\ntemplate = \"home.tpl\"\n";
    std::fs::write(site.join("site.toml"), config).unwrap();
    std::fs::write(site.join("templates/home.tpl"), "home").unwrap();
    std::fs::write(site.join("templates/new.tpl"), "new page").unwrap();
    let port = free_port();
    let mut child = bulwark(dir.path())
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
    let get = |path: &str| {
        client
            .get(format!("http://127.0.0.1:{port}{path}"))
            .send()
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    };
    eventually_blocking("the server comes up", Duration::from_secs(20), || {
        (get("/") == 200).then_some(())
    });
    assert_eq!(get("/new"), 404);
    let hangup = || signal(child.id(), SIGHUP);

    // A broken site.toml: the reload is refused and the site serves as before.
    std::fs::write(site.join("site.toml"), "hostname = [").unwrap();
    hangup();
    wait_for(&log, "not reloaded");
    assert_eq!(get("/"), 200);

    // A new rule: after SIGHUP it answers.
    let with_rule = format!(
        "{config}\n[[dispatch]]\nname = \"new\"\npath = \"/new\"\ncontroller = \"template\"\ntemplate = \"new.tpl\"\n"
    );
    std::fs::write(site.join("site.toml"), with_rule).unwrap();
    hangup();
    eventually_blocking("the reload takes effect", Duration::from_secs(10), || {
        (get("/new") == 200).then_some(())
    });
    assert_eq!(get("/"), 200);
    signal(child.id(), SIGTERM);
    assert!(child.wait().unwrap().success());
}
