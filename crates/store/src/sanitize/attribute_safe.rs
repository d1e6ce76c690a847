//! Writing sanitised HTML without a single raw quote, so a template may print
//! it anywhere: as element content, or inside a double- or single-quoted
//! attribute (`alt="{{ r.summary }}"`), where it stays one inert value.
//!
//! ammonia's own output is right for element content but keeps `"` and `'` in
//! text and writes attributes in double quotes; printed inside `alt="..."` the
//! first quote of `<a href="x">` closes the `alt`. So its output is written
//! again, token by token:
//! - text: `&`, `<`, `>` as before, and `"` as `&quot;`, `'` as `&#39;`;
//! - attributes: in name order (ammonia's order is not stable from one
//!   sanitising to the next), unquoted, their value with every character that could end or
//!   confuse an unquoted value (whitespace, `"`, `'`, `=`, `<`, `>`, `` ` ``,
//!   `&`) written as a character reference. HTML decodes references in
//!   unquoted values, so `<a href=/x?a&#61;1&amp;b&#61;2 title=Tom&#32;&amp;&#32;Jerry>`
//!   means exactly what the quoted form meant; an empty value is the bare name.
//!
//! Re-tokenising ammonia's output with html5ever's tokenizer (rather than
//! patching its string) is what makes this safe to reason about: ammonia
//! serialised a tree, so its output has no comments, doctypes or raw-text
//! elements, the tokenizer hands back exactly the tags, attribute values and
//! text it wrote (references decoded), and everything written here is escaped
//! from those decoded values. A browser builds the same tree from either form,
//! and sanitising the result again gives the same string (ammonia parses it to
//! the same tree).

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// `html` (ammonia's output) with no raw `"` or `'` anywhere.
pub(crate) fn without_quotes(html: &str) -> String {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let writer = Writer(RefCell::new(String::with_capacity(
        html.len() + html.len() / 8,
    )));
    let tokenizer = Tokenizer::new(writer, TokenizerOpts::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.0.into_inner()
}

struct Writer(RefCell<String>);

impl TokenSink for Writer {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut out = self.0.borrow_mut();
        match token {
            Token::TagToken(tag) => {
                out.push('<');
                if tag.kind == TagKind::EndTag {
                    out.push('/');
                }
                out.push_str(&tag.name);
                // In name order: ammonia places the `rel` it adds to a link
                // differently when the link already has one, so its order
                // would make a second sanitising differ from the first.
                let mut attrs: Vec<_> = tag.attrs.iter().collect();
                attrs.sort_by_key(|a| &*a.name.local);
                for attr in attrs {
                    out.push(' ');
                    out.push_str(&attr.name.local);
                    if !attr.value.is_empty() {
                        out.push('=');
                        push_unquoted_value(&mut out, &attr.value);
                    }
                }
                out.push('>');
            }
            Token::CharacterTokens(text) => push_text(&mut out, &text),
            // ammonia's output holds none of these (comments are stripped, a
            // NUL cannot survive its parser), and dropping them is safe.
            Token::NullCharacterToken
            | Token::CommentToken(_)
            | Token::DoctypeToken(_)
            | Token::EOFToken
            | Token::ParseError(_) => {}
        }
        TokenSinkResult::Continue
    }
}

fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            c => out.push(c),
        }
    }
}

fn push_unquoted_value(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '=' => out.push_str("&#61;"),
            '`' => out.push_str("&#96;"),
            ' ' => out.push_str("&#32;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\u{c}' => out.push_str("&#12;"),
            '\r' => out.push_str("&#13;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            c => out.push(c),
        }
    }
}

/// A start tag of a stored HTML value, as [`stored_tags`] reads it: where it
/// is in the value and its attributes, their values decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTag {
    /// The tag's bytes in the value, `<` to `>` inclusive.
    pub span: std::ops::Range<usize>,
    pub attrs: Vec<(String, String)>,
}

impl StoredTag {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The start tags named `name` (lower case) in a stored HTML value, in order.
///
/// Written for what this module writes: text has `<` escaped, so every raw
/// `<` starts a tag, and an unquoted value holds no space or `>`. Values
/// stored before values lost their quotes are read too (a quoted value may
/// hold a space or `>`). This reads the sanitiser's own output back without
/// a second parser; it is not an HTML parser for input from elsewhere (that
/// is html5ever's job, as in `without_quotes`).
pub fn stored_tags<'a>(html: &'a str, name: &'a str) -> impl Iterator<Item = StoredTag> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let start = from + html.get(from..)?.find('<')?;
            let rest = &html[start + 1..];
            let name_end = rest
                .find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/')
                .unwrap_or(rest.len());
            if !rest[..name_end].eq_ignore_ascii_case(name) {
                // Another tag: only where it ends, nothing kept.
                from = skip_attributes(html, start + 1 + name_end);
                continue;
            }
            let (attrs, end) = read_attributes(html, start + 1 + name_end);
            from = end;
            return Some(StoredTag {
                span: start..end,
                attrs,
            });
        }
    })
}

/// Where the tag whose attributes start at `at` ends (just past its `>`,
/// or the end of the value), past quoted values.
fn skip_attributes(html: &str, mut at: usize) -> usize {
    let bytes = html.as_bytes();
    let mut quote = None;
    while at < bytes.len() {
        match (quote, bytes[at]) {
            (None, b'>') => return at + 1,
            (None, q @ (b'"' | b'\'')) if at > 0 && bytes[at - 1] == b'=' => quote = Some(q),
            (Some(q), b) if b == q => quote = None,
            _ => {}
        }
        at += 1;
    }
    at
}

/// The attributes from `at` to the end of the tag, and where the tag ends
/// (just past its `>`, or the end of the value).
fn read_attributes(html: &str, mut at: usize) -> (Vec<(String, String)>, usize) {
    let bytes = html.as_bytes();
    let mut attrs = Vec::new();
    loop {
        while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'/') {
            at += 1;
        }
        if at >= bytes.len() {
            return (attrs, at);
        }
        if bytes[at] == b'>' {
            return (attrs, at + 1);
        }
        let name_start = at;
        while at < bytes.len()
            && !matches!(bytes[at], b'=' | b'>' | b'/')
            && !bytes[at].is_ascii_whitespace()
        {
            at += 1;
        }
        let name = html[name_start..at].to_ascii_lowercase();
        let mut value = String::new();
        if bytes.get(at) == Some(&b'=') {
            at += 1;
            let (raw, next) = match bytes.get(at) {
                Some(&q @ (b'"' | b'\'')) => {
                    let close = html[at + 1..]
                        .find(q as char)
                        .map_or(html.len(), |i| at + 1 + i);
                    (&html[at + 1..close], (close + 1).min(html.len()))
                }
                _ => {
                    let end = html[at..]
                        .find(|c: char| c.is_ascii_whitespace() || c == '>')
                        .map_or(html.len(), |i| at + i);
                    (&html[at..end], end)
                }
            };
            value = decode_references(raw);
            at = next;
        }
        attrs.push((name, value));
    }
}

/// A value's character references decoded: the named ones this module and
/// ammonia write, and every numeric one.
fn decode_references(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let decoded = rest.find(';').filter(|&semi| semi <= 10).and_then(|semi| {
            let entity = &rest[1..semi];
            let c = match entity {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                _ => entity
                    .strip_prefix("#x")
                    .or_else(|| entity.strip_prefix("#X"))
                    .map(|hex| u32::from_str_radix(hex, 16))
                    .or_else(|| entity.strip_prefix('#').map(str::parse::<u32>))
                    .and_then(Result::ok)
                    .and_then(char::from_u32),
            }?;
            Some((c, semi + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_lose_their_quotes_and_keep_their_meaning() {
        assert_eq!(
            without_quotes(
                r#"<a href="/x?a=1&amp;b=2" title="Tom &amp; &quot;Jerry&quot;">it's</a>"#
            ),
            "<a href=/x?a&#61;1&amp;b&#61;2 title=Tom&#32;&amp;&#32;&quot;Jerry&quot;>it&#39;s</a>"
        );
    }

    #[test]
    fn an_empty_value_is_the_bare_name() {
        assert_eq!(
            without_quotes(r#"<img src="/a.png" alt="">"#),
            "<img alt src=/a.png>"
        );
    }

    #[test]
    fn a_value_meant_to_break_out_stays_one_value() {
        assert_eq!(
            without_quotes(r#"<a href=" onerror=alert(1) x">y</a>"#),
            "<a href=&#32;onerror&#61;alert(1)&#32;x>y</a>"
        );
    }

    #[test]
    fn stored_tags_are_read_back_with_their_values_decoded() {
        let stored = without_quotes(
            r#"<p>a &lt;img src="x"&gt; in text</p><figure><img src="/media/preview/3/medium/ab" alt="The fish market > 2" width="400"></figure><IMG SRC='/old.png'>"#,
        );
        let tags: Vec<StoredTag> = stored_tags(&stored, "img").collect();
        assert_eq!(tags.len(), 2, "two img tags in {stored}");
        assert_eq!(tags[0].attr("alt"), Some("The fish market > 2"));
        assert_eq!(tags[0].attr("src"), Some("/media/preview/3/medium/ab"));
        assert_eq!(tags[0].attr("width"), Some("400"));
        assert_eq!(&stored[tags[0].span.clone()][..5], "<img ");
        assert!(stored[tags[0].span.clone()].ends_with('>'));
        assert_eq!(tags[1].attr("src"), Some("/old.png"));
    }

    #[test]
    fn a_tag_inside_another_tags_quoted_value_is_not_one() {
        let old = r#"<p title="<img src=/b> & more">t</p><img src="/a">"#;
        let found: Vec<String> = stored_tags(old, "img")
            .map(|t| t.attr("src").unwrap_or_default().to_owned())
            .collect();
        assert_eq!(found, ["/a"]);
    }

    #[test]
    fn stored_tags_read_quoted_values_written_before_values_lost_their_quotes() {
        let old = r#"<p><img alt="a > b &amp; &quot;c&quot;" src="/media/file/7"> after</p>"#;
        let tags: Vec<StoredTag> = stored_tags(old, "img").collect();
        assert_eq!(tags.len(), 1);
        assert_eq!(tags[0].attr("alt"), Some(r#"a > b & "c""#));
        assert_eq!(&old[tags[0].span.end..], " after</p>");
    }
}
