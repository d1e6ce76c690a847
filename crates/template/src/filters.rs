//! Filters of the project's own.

use std::fmt::Write;

use chrono::{DateTime, Utc};
use minijinja::{Error, ErrorKind, HtmlEscape, Value};

/// How `date` writes a moment when no format is given: `26 November 2026`.
const DATE_FORMAT: &str = "%-d %B %Y";

/// `{{ r.created|date }}`, `{{ r.modified|date("%-d %b %Y, %H:%M") }}`: an RFC 3339
/// moment (as the models give `created`, `modified`, `publication_start`...)
/// written with a chrono `strftime` format, in UTC. Nothing (none or undefined)
/// gives an empty string; text that is not a moment, or a format chrono does
/// not know, is an error that says so.
pub(crate) fn date(value: Value, format: Option<String>) -> Result<Value, Error> {
    if value.is_undefined() || value.is_none() {
        return Ok(Value::from(""));
    }
    let text = value.as_str().ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "date: expected a moment as text (RFC 3339), got {}",
                value.kind()
            ),
        )
    })?;
    let moment = DateTime::parse_from_rfc3339(text)
        .map_err(|e| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!("date: {text:?} is not an RFC 3339 moment: {e}"),
            )
        })?
        .with_timezone(&Utc);
    let format = format.as_deref().unwrap_or(DATE_FORMAT);
    let mut out = String::new();
    // `write!` reports a format chrono cannot read (`to_string` would panic).
    write!(out, "{}", moment.format(format)).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("date: {format:?} is not a strftime format chrono knows"),
        )
    })?;
    Ok(Value::from(out))
}

/// `<textarea>{{ r.body|source }}</textarea>`, `value="{{ r.title|source }}"`:
/// a value's characters as text, escaped even when the value is marked safe.
///
/// Stored strings are sanitised HTML and templates print them as they are. A
/// form field must show the stored source itself instead, and the browser
/// decodes character references inside a `<textarea>` and an attribute:
/// printed as they are, `&lt;b&gt;` would come back as a real `<b>` and
/// `alt=The&#32;fish&#32;market` as `alt=The fish market` (three attributes),
/// and the next save would store the damage. Through `source` the field holds
/// the stored string byte for byte. (A `<textarea>` also drops one newline
/// right after its start tag: write one there, so a value's own first newline
/// stays.) None and undefined are the empty string.
pub(crate) fn source(value: &Value) -> Value {
    if value.is_undefined() || value.is_none() {
        return Value::from_safe_string(String::new());
    }
    let escaped = match value.as_str() {
        Some(text) => HtmlEscape(text).to_string(),
        None => HtmlEscape(&value.to_string()).to_string(),
    };
    Value::from_safe_string(escaped)
}

/// `{{ r.title|plain }}`: a stored value (sanitised HTML) as the text a
/// person reads: tags out, character references decoded; printed, it is
/// escaped again. For places that take text and not HTML: a feed's title, a
/// `mailto:` subject. Control characters (which XML may not hold) are left
/// out. None and undefined are the empty string.
pub(crate) fn plain(value: &Value) -> Value {
    if value.is_undefined() || value.is_none() {
        return Value::from("");
    }
    let text = match value.as_str() {
        Some(text) => bulwark_store::html_to_plain(text),
        None => value.to_string(),
    };
    Value::from(
        text.chars()
            .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
            .collect::<String>(),
    )
}

/// `{% if year is digits %}`: a whole number from 0 up, or text of ASCII
/// digits only (a path's `{year}`), so a template can test what `|int`
/// would fail on before it asks.
pub(crate) fn is_digits(value: &Value) -> bool {
    match value.as_str() {
        Some(text) => !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()),
        None => u64::try_from(value.clone()).is_ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::cell::RefCell;

    #[test]
    fn digits_are_a_whole_number_or_text_of_digits_only() {
        for yes in [Value::from("2024"), Value::from("03"), Value::from(7)] {
            assert!(is_digits(&yes), "{yes:?}");
        }
        for no in [
            Value::from(""),
            Value::from("abc"),
            Value::from("-1"),
            Value::from("٣"),
            Value::from(-1),
            Value::from(2.5),
            Value::from(()),
        ] {
            assert!(!is_digits(&no), "{no:?}");
        }
    }

    #[test]
    fn plain_is_the_text_a_person_reads_escaped_again_when_printed() {
        let stored = Value::from_safe_string("Fish &amp; chips&nbsp;<b>now</b>\u{1}".to_owned());
        let text = plain(&stored);
        assert_eq!(text.as_str(), Some("Fish & chips now"));
        let mut env = minijinja::Environment::new();
        env.add_filter("plain", plain);
        env.add_template("t.xml", "{{ t|plain }}").unwrap();
        let out = env
            .get_template("t.xml")
            .unwrap()
            .render(minijinja::context! { t => stored })
            .unwrap();
        assert_eq!(out, "Fish &amp; chips now");
    }

    use html5ever::tendril::StrTendril;
    use html5ever::tokenizer::states::{RawKind, State};
    use html5ever::tokenizer::{
        BufferQueue, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
    };

    /// What a browser's form field holds after reading `html` (the markup
    /// between a field's start tag and its end): the text a tokenizer in the
    /// given state hands on, character references decoded.
    struct FieldText(RefCell<String>);

    impl TokenSink for FieldText {
        type Handle = ();
        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            match token {
                Token::CharacterTokens(text) => self.0.borrow_mut().push_str(&text),
                Token::NullCharacterToken => self.0.borrow_mut().push('\0'),
                Token::TagToken(tag) => {
                    for attr in tag.attrs.iter().filter(|a| &*a.name.local == "value") {
                        self.0.borrow_mut().push_str(&attr.value);
                    }
                }
                _ => {}
            }
            TokenSinkResult::Continue
        }
    }

    fn tokenized(html: &str, opts: TokenizerOpts) -> String {
        let input = BufferQueue::default();
        input.push_back(StrTendril::from_slice(html));
        let tokenizer = Tokenizer::new(FieldText(RefCell::new(String::new())), opts);
        let _ = tokenizer.feed(&input);
        tokenizer.end();
        tokenizer.sink.0.into_inner()
    }

    /// The value of `<textarea>` + `rendered` + `</textarea>`, as a browser
    /// reads it: raw text up to the end tag, references decoded, the one
    /// newline right after the start tag dropped (the tree builder's rule).
    fn textarea_value(rendered: &str) -> String {
        let text = tokenized(
            &format!("{rendered}</textarea>"),
            TokenizerOpts {
                initial_state: Some(State::RawData(RawKind::Rcdata)),
                last_start_tag_name: Some("textarea".into()),
                ..TokenizerOpts::default()
            },
        );
        text.strip_prefix('\n').map(str::to_owned).unwrap_or(text)
    }

    fn input_value(rendered: &str) -> String {
        tokenized(
            &format!("<input value=\"{rendered}\">"),
            TokenizerOpts::default(),
        )
    }

    fn render(template: &str, value: Value) -> String {
        let mut env = minijinja::Environment::new();
        env.add_filter("source", source);
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
        env.render_str(template, minijinja::context! { v => value })
            .expect("renders")
    }

    #[test]
    fn a_stored_body_comes_back_from_its_field_byte_for_byte() {
        // As the sanitiser stores them: escaped markup, an unquoted
        // attribute with its spaces as references, a first newline.
        let stored = "\n<p>&lt;b&gt;word&lt;/b&gt; <img alt=The&#32;fish&#32;market src=/f.jpg> Tom &amp; Jerry</p>";
        let safe = Value::from_safe_string(stored.to_owned());
        assert_eq!(
            textarea_value(&render("\n{{ v|source }}", safe.clone())),
            stored
        );
        assert_eq!(input_value(&render("{{ v|source }}", safe.clone())), stored);
        // Printed as it is, the field would hold other markup (today's bug).
        assert_ne!(textarea_value(&render("\n{{ v }}", safe)), stored);
    }

    #[test]
    fn nothing_is_an_empty_field() {
        assert_eq!(render("{{ v|source }}", Value::UNDEFINED), "");
        assert_eq!(render("{{ v|source }}", Value::from(())), "");
        assert_eq!(render("{{ v|source }}", Value::from(3)), "3");
    }

    proptest::proptest! {
        /// Every shape the sanitiser stores (text and HTML properties, from
        /// markup, references, quotes, whitespace and any character) comes
        /// back unchanged from a textarea and from an input's value.
        #[test]
        fn every_stored_value_round_trips_through_a_form_field(
            s in "(<[a-zA-Z/!]{0,8}( [a-z]{1,5}(=[\"']?[ -~]{0,6}[\"']?)?)?>?|[ -~]|&[a-z#0-9]{0,6};?|[\n\t\u{a0}]|\\PC){0,60}"
        ) {
            for stored in [
                bulwark_store::sanitize_html_value(&s).expect("within limits"),
                bulwark_store::sanitize_text_value(&s).expect("within limits"),
            ] {
                let safe = Value::from_safe_string(stored.clone());
                proptest::prop_assert_eq!(
                    textarea_value(&render("\n{{ v|source }}", safe.clone())),
                    stored.clone()
                );
                proptest::prop_assert_eq!(input_value(&render("{{ v|source }}", safe)), stored);
            }
        }
    }

    #[test]
    fn a_moment_is_written_as_people_read_it() {
        let at = Value::from("2026-11-26T09:05:00.123+00:00");
        assert_eq!(
            date(at.clone(), None).unwrap().as_str(),
            Some("26 November 2026")
        );
        assert_eq!(
            date(at, Some("%Y-%m-%d %H:%M".into())).unwrap().as_str(),
            Some("2026-11-26 09:05")
        );
        assert_eq!(
            date(
                Value::from("2026-11-26T10:05:00+01:00"),
                Some("%H:%M".into())
            )
            .unwrap()
            .as_str(),
            Some("09:05"),
            "in UTC"
        );
    }

    #[test]
    fn nothing_is_empty_and_nonsense_is_an_error_that_says_so() {
        assert_eq!(date(Value::UNDEFINED, None).unwrap().as_str(), Some(""));
        assert_eq!(date(Value::from(()), None).unwrap().as_str(), Some(""));
        let wrong = date(Value::from("yesterday"), None).unwrap_err();
        assert!(
            wrong.to_string().contains("not an RFC 3339 moment"),
            "{wrong}"
        );
        let format = date(Value::from("2026-11-26T09:05:00Z"), Some("%Q".into())).unwrap_err();
        assert!(
            format.to_string().contains("not a strftime format"),
            "{format}"
        );
        assert!(date(Value::from(3), None).is_err());
    }
}
