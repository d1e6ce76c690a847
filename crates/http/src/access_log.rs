//! The access log: one line per request in the combined log format plus the
//! duration, written by a background task. Requests hand their entry to a bounded
//! channel and never wait: when the writer falls behind, entries are dropped and
//! counted rather than slowing the site down.
//!
//! Every field that comes from the client is written quoted and escaped as nginx's
//! `escape=default` does: `"`, `\\` and any byte outside printable ASCII become
//! `\\xHH`. A `Host`, path or `User-Agent` then cannot end its field, start a
//! second line or pass for another request's fields, whatever bytes it holds.

use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use tokio::sync::mpsc;

/// One request as logged. The client's fields are kept as the bytes it sent (a
/// header value need not be UTF-8) and escaped only when the line is written, off
/// the request path.
pub struct AccessEntry {
    pub time: SystemTime,
    pub peer: IpAddr,
    pub host: Vec<u8>,
    pub request_line: Vec<u8>,
    pub status: u16,
    pub bytes: u64,
    pub referer: Vec<u8>,
    pub user_agent: Vec<u8>,
    pub duration: Duration,
}

#[derive(Debug, Clone)]
pub enum AccessLogTarget {
    Off,
    Stdout,
    File(PathBuf),
}

#[derive(Clone)]
pub struct AccessLog {
    sender: Option<mpsc::Sender<AccessEntry>>,
    dropped: Arc<AtomicU64>,
}

const QUEUE: usize = 16 * 1024;

impl AccessLog {
    pub fn start(target: AccessLogTarget) -> std::io::Result<AccessLog> {
        let writer: Box<dyn Write + Send> = match target {
            AccessLogTarget::Off => {
                return Ok(AccessLog {
                    sender: None,
                    dropped: Arc::default(),
                });
            }
            AccessLogTarget::Stdout => Box::new(std::io::stdout()),
            AccessLogTarget::File(path) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            ),
        };
        let (sender, receiver) = mpsc::channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        // A dedicated thread: the writes are blocking file I/O.
        std::thread::Builder::new()
            .name("access-log".into())
            .spawn(move || write_entries(receiver, writer))?;
        Ok(AccessLog {
            sender: Some(sender),
            dropped,
        })
    }

    pub fn enabled(&self) -> bool {
        self.sender.is_some()
    }

    pub fn record(&self, entry: AccessEntry) {
        if let Some(sender) = &self.sender
            && sender.try_send(entry).is_err()
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

fn write_entries(mut receiver: mpsc::Receiver<AccessEntry>, writer: Box<dyn Write + Send>) {
    let mut out = std::io::BufWriter::new(writer);
    while let Some(entry) = receiver.blocking_recv() {
        let _ = writeln!(out, "{}", format_entry(&entry));
        // Flush when the queue is drained, so lines appear promptly when idle.
        if receiver.is_empty() {
            let _ = out.flush();
        }
    }
    let _ = out.flush();
}

pub fn format_entry(e: &AccessEntry) -> String {
    let time: chrono::DateTime<chrono::Utc> = e.time.into();
    format!(
        "{} - - [{}] \"{}\" {} {} \"{}\" \"{}\" \"{}\" {}us",
        e.peer,
        time.format("%d/%b/%Y:%H:%M:%S %z"),
        Escaped(&e.request_line),
        e.status,
        e.bytes,
        Escaped(&e.referer),
        Escaped(&e.user_agent),
        Escaped(&e.host),
        e.duration.as_micros()
    )
}

/// A client's bytes as they may appear inside a quoted log field.
struct Escaped<'a>(&'a [u8]);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write as _;
        for &byte in self.0 {
            if byte == b'"' || byte == b'\\' || !(0x20..0x7f).contains(&byte) {
                write!(f, "\\x{byte:02X}")?;
            } else {
                f.write_char(byte as char)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(host: &[u8], request_line: &[u8], user_agent: &[u8]) -> AccessEntry {
        AccessEntry {
            time: SystemTime::UNIX_EPOCH + Duration::from_secs(971_186_136),
            peer: "127.0.0.1".parse().unwrap(),
            host: host.into(),
            request_line: request_line.into(),
            status: 200,
            bytes: 2326,
            referer: b"-".into(),
            user_agent: user_agent.into(),
            duration: Duration::from_micros(1234),
        }
    }

    #[test]
    fn entries_use_the_combined_format_plus_host_and_duration() {
        let line = format_entry(&entry(b"example.com", b"GET /a?b=c HTTP/1.1", b"curl/8"));
        assert_eq!(
            line,
            "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a?b=c HTTP/1.1\" 200 2326 \"-\" \"curl/8\" \"example.com\" 1234us"
        );
    }

    #[test]
    fn quotes_backslashes_and_control_bytes_cannot_forge_a_line_or_a_field() {
        let forged = b"x\" 200 1 \"-\" \"-\" \"a.test\" 1us\r\n10.0.0.1 - - [01/Jan/2000:00:00:00 +0000] \"GET /admin";
        let line = format_entry(&entry(forged, b"GET /\\\x1b[31m\xc3\xa9 HTTP/1.1", forged));
        assert!(!line.contains(['\r', '\n', '\x1b']), "{line}");
        assert_eq!(
            line,
            format!(
                "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /\\x5C\\x1B[31m\\xC3\\xA9 HTTP/1.1\" 200 2326 \"-\" \"{0}\" \"{0}\" 1234us",
                "x\\x22 200 1 \\x22-\\x22 \\x22-\\x22 \\x22a.test\\x22 1us\\x0D\\x0A10.0.0.1 - - [01/Jan/2000:00:00:00 +0000] \\x22GET /admin"
            )
        );
        // Exactly the four quoted fields: none was ended early.
        assert_eq!(line.matches('"').count(), 8);
    }
}
