//! The access log: one line per request in the combined log format plus the
//! duration, written by a thread of its own. A request hands its entry to a
//! bounded queue and never waits; when the writer falls behind, entries are
//! dropped and counted rather than slowing the site down.
//!
//! What a request pays is one allocation (its client fields copied into one
//! buffer) and one push onto the queue. The writer is not woken per entry: it
//! drains the queue every [`FLUSH_EVERY`] and writes in large blocks, as nginx's
//! `access_log ... buffer= flush=` does. (Woken per entry, it took a futex call
//! and a context switch from every request, and the 20 KB file lost 28% of its
//! rate with the log on.)
//!
//! Every field that comes from the client is written quoted and escaped as nginx's
//! `escape=default` does: `"`, `\\` and any byte outside printable ASCII become
//! `\\xHH`. A `Host`, path or `User-Agent` then cannot end its field, start a
//! second line or pass for another request's fields, whatever bytes it holds.

use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::mpsc;

/// One request as logged. The client's fields are kept as the bytes it sent (a
/// header value need not be UTF-8) and escaped only when the line is written, off
/// the request path.
pub struct AccessEntry {
    pub time: SystemTime,
    pub peer: IpAddr,
    /// The request line, `Host`, `Referer` and `User-Agent`, one after the other.
    fields: Vec<u8>,
    /// Where the first three of `fields` end.
    ends: [usize; 3],
    pub status: u16,
    pub bytes: u64,
    pub duration: Duration,
}

impl AccessEntry {
    /// An entry for a request, with the fields taken from it; the rest is filled
    /// in when it has been answered.
    pub fn of<B>(req: &http::Request<B>) -> AccessEntry {
        let header = |name| {
            req.headers()
                .get(name)
                .map_or(&b"-"[..], http::HeaderValue::as_bytes)
        };
        let (host, referer, user_agent) = (
            header(http::header::HOST),
            header(http::header::REFERER),
            header(http::header::USER_AGENT),
        );
        let uri = req.uri();
        let target = uri.path_and_query().map_or("/", |p| p.as_str());
        let method = req.method().as_str();
        let version = match req.version() {
            http::Version::HTTP_09 => "HTTP/0.9",
            http::Version::HTTP_10 => "HTTP/1.0",
            http::Version::HTTP_11 => "HTTP/1.1",
            http::Version::HTTP_2 => "HTTP/2.0",
            http::Version::HTTP_3 => "HTTP/3.0",
            _ => "HTTP/?",
        };
        let mut fields = Vec::with_capacity(
            method.len()
                + target.len()
                + version.len()
                + 2
                + host.len()
                + referer.len()
                + user_agent.len()
                + 64,
        );
        fields.extend_from_slice(method.as_bytes());
        fields.push(b' ');
        if uri.scheme().is_some() {
            // The absolute form a proxy request uses: logged as sent.
            let _ = write!(fields, "{uri}");
        } else {
            fields.extend_from_slice(target.as_bytes());
        }
        fields.push(b' ');
        fields.extend_from_slice(version.as_bytes());
        let mut ends = [fields.len(), 0, 0];
        fields.extend_from_slice(host);
        ends[1] = fields.len();
        fields.extend_from_slice(referer);
        ends[2] = fields.len();
        fields.extend_from_slice(user_agent);
        AccessEntry {
            time: SystemTime::UNIX_EPOCH,
            peer: IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            fields,
            ends,
            status: 0,
            bytes: 0,
            duration: Duration::ZERO,
        }
    }

    fn request_line(&self) -> &[u8] {
        &self.fields[..self.ends[0]]
    }

    fn host(&self) -> &[u8] {
        &self.fields[self.ends[0]..self.ends[1]]
    }

    fn referer(&self) -> &[u8] {
        &self.fields[self.ends[1]..self.ends[2]]
    }

    fn user_agent(&self) -> &[u8] {
        &self.fields[self.ends[2]..]
    }
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
    writer: Option<Arc<Writer>>,
}

/// The writing thread, and the word that it should write what is queued and end.
struct Writer {
    finished: AtomicBool,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// Room for this many entries between two drains: at 100,000 requests a
/// second, 50 ms make 5,000.
const QUEUE: usize = 32 * 1024;

/// How often the writer drains the queue (and so how late a line may appear).
const FLUSH_EVERY: Duration = Duration::from_millis(50);

impl AccessLog {
    pub fn start(target: AccessLogTarget) -> std::io::Result<AccessLog> {
        let writer: Box<dyn Write + Send> = match target {
            AccessLogTarget::Off => {
                return Ok(AccessLog {
                    sender: None,
                    dropped: Arc::default(),
                    writer: None,
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
        let control = Arc::new(Writer {
            finished: AtomicBool::new(false),
            thread: Mutex::new(None),
        });
        // A thread of its own: the writes are blocking file I/O.
        let thread = std::thread::Builder::new()
            .name("access-log".into())
            .spawn({
                let control = control.clone();
                move || write_entries(receiver, writer, &control.finished)
            })?;
        *control.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread);
        Ok(AccessLog {
            sender: Some(sender),
            dropped: Arc::default(),
            writer: Some(control),
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

    /// Writes what is queued and stops the writer; returns once it is written.
    /// An entry recorded after it is not written.
    pub fn finish(&self) {
        let Some(writer) = &self.writer else { return };
        writer.finished.store(true, Ordering::Release);
        let thread = writer
            .thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(thread) = thread {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

fn write_entries(
    mut receiver: mpsc::Receiver<AccessEntry>,
    writer: Box<dyn Write + Send>,
    finished: &AtomicBool,
) {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, writer);
    let mut line = Vec::with_capacity(512);
    let mut clock = Clock::default();
    loop {
        // Read before draining: whatever was recorded before `finish` is written.
        let last = finished.load(Ordering::Acquire);
        let mut wrote = false;
        loop {
            match receiver.try_recv() {
                Ok(entry) => {
                    line.clear();
                    write_entry(&mut line, &entry, &mut clock);
                    let _ = out.write_all(&line);
                    wrote = true;
                }
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    let _ = out.flush();
                    return;
                }
            }
        }
        if wrote {
            let _ = out.flush();
        }
        if last {
            return;
        }
        std::thread::park_timeout(FLUSH_EVERY);
    }
}

/// The log's timestamp, formatted once a second rather than once a line.
#[derive(Default)]
struct Clock {
    second: u64,
    text: String,
}

impl Clock {
    fn format(&mut self, time: SystemTime) -> &str {
        let second = time
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if self.text.is_empty() || second != self.second {
            let time: chrono::DateTime<chrono::Utc> = time.into();
            self.second = second;
            self.text = time.format("%d/%b/%Y:%H:%M:%S %z").to_string();
        }
        &self.text
    }
}

/// Appends the entry's line, ending in a newline.
fn write_entry(line: &mut Vec<u8>, e: &AccessEntry, clock: &mut Clock) {
    let _ = writeln!(
        line,
        "{} - - [{}] \"{}\" {} {} \"{}\" \"{}\" \"{}\" {}us",
        e.peer,
        clock.format(e.time),
        Escaped(e.request_line()),
        e.status,
        e.bytes,
        Escaped(e.referer()),
        Escaped(e.user_agent()),
        Escaped(e.host()),
        e.duration.as_micros()
    );
}

/// The entry's line, without its newline.
#[cfg(test)]
fn format_entry(e: &AccessEntry) -> String {
    let mut line = Vec::new();
    write_entry(&mut line, e, &mut Clock::default());
    line.pop();
    String::from_utf8(line).expect("every client byte is escaped to ASCII")
}

/// A client's bytes as they may appear inside a quoted log field.
struct Escaped<'a>(&'a [u8]);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plain = |byte: &u8| *byte != b'"' && *byte != b'\\' && (0x20..0x7f).contains(byte);
        let mut rest = self.0;
        while !rest.is_empty() {
            let run = rest.iter().take_while(|b| plain(b)).count();
            let (text, after) = rest.split_at(run);
            // Printable ASCII only: always UTF-8.
            f.write_str(std::str::from_utf8(text).unwrap_or_default())?;
            if let Some((byte, after)) = after.split_first() {
                write!(f, "\\x{byte:02X}")?;
                rest = after;
            } else {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(host: &[u8], request_line: &[u8], user_agent: &[u8]) -> AccessEntry {
        let mut fields = request_line.to_vec();
        let mut ends = [fields.len(), 0, 0];
        fields.extend_from_slice(host);
        ends[1] = fields.len();
        fields.extend_from_slice(b"-");
        ends[2] = fields.len();
        fields.extend_from_slice(user_agent);
        AccessEntry {
            time: SystemTime::UNIX_EPOCH + Duration::from_secs(971_186_136),
            peer: "127.0.0.1".parse().unwrap(),
            fields,
            ends,
            status: 200,
            bytes: 2326,
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
