//! Reading a WordPress export (WXR: RSS 2.0 with WordPress's own elements) as
//! a stream: each child of `<channel>` (an `<item>`, a `<wp:author>`, a
//! `<wp:category>`...) is read whole into a small tree and handed on, so a
//! file of any size takes the memory of its largest post.
//!
//! An error names its line and column; a file cut short says which element
//! it ends in.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// One element and what it holds: its text (CDATA included) and the
/// elements inside it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    /// As written, with its prefix: `wp:post_id`.
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub text: String,
    pub children: Vec<Node>,
}

impl Node {
    /// The first element named `name` inside this one.
    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The text of the first element named `name`, trimmed; empty when there
    /// is none.
    pub fn text_of(&self, name: &str) -> &str {
        self.child(name).map_or("", |c| c.text.trim())
    }

    /// The text of `name` as a number, if it is one.
    pub fn number(&self, name: &str) -> Option<i64> {
        self.text_of(name).parse().ok()
    }

    /// Every element named `name` inside this one.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// An attribute's value.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What is wrong with a file, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}, line {line}, column {column}: {message}")]
pub struct WxrError {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub message: String,
}

/// Reads a WXR file's entries one at a time.
pub struct WxrReader {
    path: PathBuf,
    reader: Reader<Bounded>,
    buf: Vec<u8>,
    /// The names of the elements we are in, outermost first.
    open: Vec<String>,
    /// Where each open element began (bytes into the file).
    opened_at: Vec<u64>,
    /// The child of `<channel>` being read, and the elements open inside it.
    reading: Vec<Node>,
    seen_rss: bool,
    done: bool,
}

const CHANNEL: [&str; 2] = ["rss", "channel"];

/// The most one piece of the file may hold (a tag, or the text between two
/// tags): a post's content is far smaller, and reading a larger one whole
/// would cost several times its size (a 100 MB element took 760 MiB).
pub const MAX_PIECE_BYTES: u64 = 32 << 20;
const TOO_LARGE: &str = "an element of more than 32 MiB";

/// The file as the XML reader reads it, counting the bytes of the piece
/// being read ([`WxrReader::next_entry`] starts each count): past
/// [`MAX_PIECE_BYTES`] the next read fails, so a huge element costs at most
/// that much before it is refused. Written here rather than found: it is
/// `BufRead` with one counter.
struct Bounded {
    inner: BufReader<File>,
    piece: u64,
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.fill_buf()?.len().min(buf.len());
        buf[..n].copy_from_slice(&self.inner.buffer()[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Bounded {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.piece > MAX_PIECE_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                TOO_LARGE,
            ));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.piece += n as u64;
        self.inner.consume(n);
    }
}

impl WxrReader {
    pub fn open(path: &Path) -> Result<WxrReader, WxrError> {
        let file = File::open(path).map_err(|e| WxrError {
            file: path.display().to_string(),
            line: 0,
            column: 0,
            message: e.to_string(),
        })?;
        let mut reader = Reader::from_reader(Bounded {
            inner: BufReader::with_capacity(256 * 1024, file),
            piece: 0,
        });
        reader.config_mut().trim_text(false);
        Ok(WxrReader {
            path: path.to_owned(),
            reader,
            buf: Vec::with_capacity(64 * 1024),
            open: Vec::new(),
            opened_at: Vec::new(),
            reading: Vec::new(),
            seen_rss: false,
            done: false,
        })
    }

    /// Bytes read so far: for a progress bar.
    pub fn position(&self) -> u64 {
        self.reader.buffer_position()
    }

    /// An error at byte `at` of the file, with its line and column.
    fn error_at(&self, at: u64, message: impl Into<String>) -> WxrError {
        let (line, column) = line_and_column(&self.path, at);
        WxrError {
            file: self.path.display().to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    /// The next child of `<channel>`, or `None` at the end of the file.
    pub fn next_entry(&mut self) -> Result<Option<Node>, WxrError> {
        if self.done {
            return Ok(None);
        }
        loop {
            self.buf.clear();
            if self.buf.capacity() > 1 << 20 {
                // A large piece is not kept for the rest of the file.
                self.buf = Vec::with_capacity(64 * 1024);
            }
            self.reader.get_mut().piece = 0;
            let before = self.reader.buffer_position();
            let event = match self.reader.read_event_into(&mut self.buf) {
                Ok(event) => event.into_owned(),
                Err(e) => {
                    let too_large =
                        matches!(&e, quick_xml::Error::Io(io) if io.to_string() == TOO_LARGE);
                    let at = if too_large {
                        before
                    } else {
                        self.reader.error_position()
                    };
                    let message = match e {
                        quick_xml::Error::Io(_) if too_large => format!(
                            "{TOO_LARGE} begins here: larger than any post a WordPress export \
                             holds, so it is not read"
                        ),
                        // The file ends inside a comment, a CDATA section or a tag.
                        quick_xml::Error::Syntax(s)
                            if !matches!(s, quick_xml::errors::SyntaxError::InvalidBangMarkup) =>
                        {
                            format!("{s}: the file ends there, it was cut short")
                        }
                        e => e.to_string(),
                    };
                    return Err(self.error_at(at, message));
                }
            };
            match event {
                Event::Start(start) => {
                    let node = self.node_of(&start, before)?;
                    self.begin(node, before)?;
                }
                Event::Empty(start) => {
                    let node = self.node_of(&start, before)?;
                    self.begin(node, before)?;
                    if let Some(entry) = self.end(before)? {
                        return Ok(Some(entry));
                    }
                }
                Event::End(_) => {
                    if let Some(entry) = self.end(before)? {
                        return Ok(Some(entry));
                    }
                }
                Event::Text(text) => {
                    if !self.reading.is_empty() {
                        let text = text
                            .unescape()
                            .map_err(|e| self.error_at(before, e.to_string()))?;
                        if let Some(node) = self.reading.last_mut() {
                            node.text.push_str(&text);
                        }
                    }
                }
                Event::CData(data) => {
                    if let Some(node) = self.reading.last_mut() {
                        match std::str::from_utf8(&data) {
                            Ok(text) => node.text.push_str(text),
                            Err(_) => return Err(self.error_at(before, "text that is not UTF-8")),
                        }
                    }
                }
                Event::Eof => {
                    self.done = true;
                    if let (Some(name), Some(&at)) = (self.open.last(), self.opened_at.last()) {
                        let (line, column) = line_and_column(&self.path, at);
                        let end = self.reader.buffer_position();
                        return Err(self.error_at(
                            end,
                            format!(
                                "the file ends inside <{name}> (opened at line {line}, column \
                                 {column}): it was cut short"
                            ),
                        ));
                    }
                    if !self.seen_rss {
                        return Err(self.error_at(end_of(&self.reader), NOT_WXR));
                    }
                    return Ok(None);
                }
                Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
            }
        }
    }

    fn node_of(&self, start: &BytesStart<'_>, at: u64) -> Result<Node, WxrError> {
        let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
        let mut attrs = Vec::new();
        if !self.reading.is_empty() {
            for attr in start.attributes() {
                let attr = attr.map_err(|e| self.error_at(at, e.to_string()))?;
                let value = attr
                    .unescape_value()
                    .map_err(|e| self.error_at(at, e.to_string()))?;
                attrs.push((
                    String::from_utf8_lossy(attr.key.as_ref()).into_owned(),
                    value.into_owned(),
                ));
            }
        }
        Ok(Node {
            name,
            attrs,
            ..Node::default()
        })
    }

    fn begin(&mut self, node: Node, at: u64) -> Result<(), WxrError> {
        if self.open.is_empty() {
            if node.name != "rss" {
                return Err(self.error_at(at, NOT_WXR));
            }
            self.seen_rss = true;
        }
        let in_channel = self.open.len() == 2 && self.open == CHANNEL;
        self.open.push(node.name.clone());
        self.opened_at.push(at);
        if in_channel || !self.reading.is_empty() {
            self.reading.push(node);
        }
        Ok(())
    }

    fn end(&mut self, at: u64) -> Result<Option<Node>, WxrError> {
        if self.open.pop().is_none() {
            return Err(self.error_at(at, "an end tag with no start"));
        }
        self.opened_at.pop();
        let Some(node) = self.reading.pop() else {
            return Ok(None);
        };
        match self.reading.last_mut() {
            Some(parent) => {
                parent.children.push(node);
                Ok(None)
            }
            None => Ok(Some(node)),
        }
    }
}

const NOT_WXR: &str = "this is not a WordPress export (WXR): it has no <rss><channel>";

fn end_of(reader: &Reader<Bounded>) -> u64 {
    reader.buffer_position()
}

/// Line and column (from 1, in characters) of byte `at` of the file at `path`:
/// read again, only when there is an error to report.
fn line_and_column(path: &Path, at: u64) -> (u64, u64) {
    let Ok(file) = File::open(path) else {
        return (0, 0);
    };
    let mut reader = BufReader::new(file).take(at);
    let (mut line, mut column) = (1u64, 1u64);
    let mut chunk = Vec::new();
    while reader.read_until(b'\n', &mut chunk).unwrap_or(0) > 0 {
        if chunk.last() == Some(&b'\n') {
            line += 1;
            column = 1;
        } else {
            column += String::from_utf8_lossy(&chunk).chars().count() as u64;
        }
        chunk.clear();
    }
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most memory the process has held (Linux's `VmHWM`), in bytes.
    fn peak_memory() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }

    #[test]
    fn an_element_of_a_hundred_megabytes_is_refused_before_it_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.xml");
        let mut file = std::io::BufWriter::new(File::create(&path).unwrap());
        use std::io::Write;
        file.write_all(b"<rss><channel>\n<item><title>Big</title>\n<content:encoded>")
            .unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..100 {
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b"</content:encoded></item></channel></rss>\n")
            .unwrap();
        drop(file);
        let before = peak_memory();
        let mut reader = WxrReader::open(&path).unwrap();
        let refused = reader.next_entry().unwrap_err();
        let grew = peak_memory().saturating_sub(before);
        assert!(
            refused.message.contains("more than 32 MiB"),
            "{}",
            refused.message
        );
        assert_eq!(refused.line, 3, "where the element's text begins");
        assert!(grew < 80 << 20, "reading it took {} MiB", grew >> 20);
    }

    fn entries(xml: &str) -> Result<Vec<Node>, WxrError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.xml");
        std::fs::write(&path, xml).unwrap();
        let mut reader = WxrReader::open(&path)?;
        let mut out = Vec::new();
        while let Some(entry) = reader.next_entry()? {
            out.push(entry);
        }
        Ok(out)
    }

    #[test]
    fn each_child_of_the_channel_comes_whole() {
        let got = entries(
            "<?xml version=\"1.0\"?>\n<rss><channel><title>Blog &amp; more</title>\
             <item><title><![CDATA[Hi]]></title><category domain=\"post_tag\" nicename=\"a\">\
             <![CDATA[A]]></category></item></channel></rss>",
        )
        .unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].text, "Blog & more");
        assert_eq!(got[1].text_of("title"), "Hi");
        assert_eq!(
            got[1].child("category").unwrap().attr("domain"),
            Some("post_tag")
        );
    }

    #[test]
    fn a_file_cut_short_names_the_element_it_ends_in() {
        let err = entries("<rss>\n<channel>\n<item>\n<title>Half").unwrap_err();
        assert!(err.message.contains("ends inside <title>"), "{err}");
        assert_eq!((err.line, err.column), (4, 12), "{err}");
    }

    #[test]
    fn a_wrong_end_tag_is_named_with_its_line_and_column() {
        let err = entries("<rss>\n<channel>\n  <item></title></item>").unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        assert!(err.message.contains("title"), "{err}");
    }

    #[test]
    fn something_else_is_not_a_wordpress_export() {
        let err = entries("<html><body></body></html>").unwrap_err();
        assert_eq!(err.message, NOT_WXR);
    }
}
