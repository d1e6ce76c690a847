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
}
