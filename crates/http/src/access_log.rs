//! The access log: one line per request in the combined log format plus the
//! duration, written by a background task. Requests hand their entry to a bounded
//! channel and never wait: when the writer falls behind, entries are dropped and
//! counted rather than slowing the site down.

use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use tokio::sync::mpsc;

pub struct AccessEntry {
    pub time: SystemTime,
    pub peer: IpAddr,
    pub host: String,
    pub request_line: String,
    pub status: u16,
    pub bytes: u64,
    pub referer: String,
    pub user_agent: String,
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
        "{} - - [{}] \"{}\" {} {} \"{}\" \"{}\" {} {}us",
        e.peer,
        time.format("%d/%b/%Y:%H:%M:%S %z"),
        e.request_line.escape_default(),
        e.status,
        e.bytes,
        e.referer.escape_default(),
        e.user_agent.escape_default(),
        e.host,
        e.duration.as_micros()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_use_the_combined_format_plus_host_and_duration() {
        let line = format_entry(&AccessEntry {
            time: SystemTime::UNIX_EPOCH + Duration::from_secs(971_186_136),
            peer: "127.0.0.1".parse().unwrap(),
            host: "example.com".into(),
            request_line: "GET /a?b=\"c\" HTTP/1.1".into(),
            status: 200,
            bytes: 2326,
            referer: "-".into(),
            user_agent: "curl/8".into(),
            duration: Duration::from_micros(1234),
        });
        assert_eq!(
            line,
            "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a?b=\\\"c\\\" HTTP/1.1\" 200 2326 \"-\" \"curl/8\" example.com 1234us"
        );
    }
}
