//! A real SMTP server for tests: Python's aiosmtpd (`scripts/ensure-smtp.sh`
//! installs it) on a loopback port, storing every message it accepts in a
//! maildir that the test reads.

#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running aiosmtpd; stopped when dropped.
pub struct SmtpSink {
    pub port: u16,
    child: Child,
    dir: tempfile::TempDir,
}

/// A message the server accepted.
#[derive(Debug, Clone)]
pub struct Received {
    pub raw: String,
}

impl Received {
    /// A header's value (the first one of that name).
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.raw.split("\n\n").next().unwrap_or("");
        head.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    /// The body, decoded from quoted-printable when it was sent so (lettre
    /// does for lines longer than 76 characters, such as a long link).
    pub fn body(&self) -> String {
        let body = self
            .raw
            .split_once("\n\n")
            .map(|(_, body)| body.to_owned())
            .unwrap_or_default();
        let encoding = self.header("Content-Transfer-Encoding").unwrap_or_default();
        if encoding.eq_ignore_ascii_case("quoted-printable") {
            decode_quoted_printable(&body)
        } else {
            body
        }
    }

    /// The first `http(s)://` link of the body.
    pub fn link(&self) -> Option<String> {
        let body = self.body();
        let start = body.find("http://").or_else(|| body.find("https://"))?;
        Some(
            body[start..]
                .split(|c: char| c.is_whitespace())
                .next()?
                .to_owned(),
        )
    }
}

/// RFC 2045 quoted-printable: `=` at a line's end joins it to the next,
/// `=XX` is a byte.
fn decode_quoted_printable(text: &str) -> String {
    let joined = text.replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'=', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The first of `python3` and `/usr/bin/python3` that has aiosmtpd.
fn python() -> &'static str {
    for python in ["python3", "/usr/bin/python3"] {
        let ok = Command::new(python)
            .args(["-c", "import aiosmtpd"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return python;
        }
    }
    panic!("no python3 with aiosmtpd: run scripts/ensure-smtp.sh");
}

impl SmtpSink {
    /// On a free port.
    pub fn start() -> SmtpSink {
        SmtpSink::start_on(free_port())
    }

    /// On `port`; returns once it accepts connections.
    pub fn start_on(port: u16) -> SmtpSink {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new(python())
            .args(["-m", "aiosmtpd", "-n", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(dir.path().join("maildir"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting aiosmtpd");
        let sink = SmtpSink { port, child, dir };
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        bulwark_testkit::eventually_blocking(
            &format!("aiosmtpd accepts connections on {port}"),
            Duration::from_secs(15),
            || TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok(),
        );
        sink
    }

    /// What a site's `[mail] smtp` says to reach it.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message received so far, oldest first.
    pub fn messages(&self) -> Vec<Received> {
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = ["new", "cur"]
            .iter()
            .filter_map(|sub| std::fs::read_dir(self.dir.path().join("maildir").join(sub)).ok())
            .flatten()
            .flatten()
            .map(|e| (e.metadata().unwrap().modified().unwrap(), e.path()))
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|(_, path)| Received {
                raw: std::fs::read_to_string(path).unwrap().replace("\r\n", "\n"),
            })
            .collect()
    }

    /// Waits until `n` messages arrived (panics after `timeout`).
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let what = format!("{n} mail(s) arrived");
        bulwark_testkit::eventually(&what, timeout, || async {
            let messages = self.messages();
            (messages.len() >= n).then_some(messages)
        })
        .await
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
