//! What the binary's tests share (each test file uses part of it).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub const SIGHUP: i32 = 1;
pub const SIGTERM: i32 = 15;
pub const SIGCONT: i32 = 18;
pub const SIGSTOP: i32 = 19;

/// Sends `sig` to the process `pid` (a child the test started).
pub fn signal(pid: u32, sig: i32) {
    unsafe extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    // SAFETY: sends a signal to a child process of the test; no memory is shared.
    assert_eq!(unsafe { kill(pid as i32, sig) }, 0);
}

/// Collects what `source` produces (a child's output) on a thread, for
/// [`wait_for`].
pub fn collect(mut source: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let seen = Arc::new(Mutex::new(String::new()));
    let into = seen.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        // A terminal's end reads EIO once the other side is gone.
        while let Ok(n @ 1..) = source.read(&mut buf) {
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    seen
}

/// Waits until what [`collect`] gathered shows `text`.
pub fn wait_for(seen: &Mutex<String>, text: &str) {
    let what = format!("the output shows {text:?}");
    bulwark_testkit::eventually_blocking(&what, Duration::from_secs(20), || {
        seen.lock().unwrap().contains(text).then_some(())
    });
}

/// A running server, killed when dropped (a failed test leaves none behind).
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `bulwark serve` in `dir` on `port`, once it answers.
pub fn serve(dir: &Path, port: u16) -> Server {
    let child = Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .current_dir(dir)
        .env("BULWARK_ADMIN_PASSWORD", "bulwark-cli-test-admin-password")
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
    bulwark_testkit::eventually_blocking("the server comes up", Duration::from_secs(30), || {
        client.get(format!("http://127.0.0.1:{port}/")).send().ok()
    });
    Server(child)
}

/// The starter site copied into `sites/default` (without its data); the
/// path of its `site.toml`, for a test to change.
pub fn starter_site(sites: &Path) -> std::path::PathBuf {
    let starter = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sites/default");
    copy(&starter, &sites.join("default"));
    sites.join("default/site.toml")
}

/// A site folder copied (without its data): the starter, for a test's own sites.
pub fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == "data" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The PostgreSQL the tests use (`BULWARK_TEST_PG_URL`, or this machine's).
pub fn pg_url() -> String {
    std::env::var("BULWARK_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// `bulwark` run as an operator runs it, in `dir` (the folder holding
/// `sites/`), with warnings only in its log.
pub fn bulwark(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bulwark"));
    cmd.current_dir(dir)
        .env("BULWARK_LOG", "warn")
        .env_remove("BULWARK_ADMIN_PASSWORD")
        .env_remove("BULWARK_SITES");
    cmd
}

/// Runs `bulwark args...` in `dir` with `stdin` as its standard input.
pub fn run(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = bulwark(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `bulwark args...` in `dir` and asserts it succeeded (its error
/// output otherwise).
pub fn run_ok(dir: &Path, args: &[&str]) {
    let out = run(dir, args, "");
    assert!(
        out.status.success(),
        "bulwark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
