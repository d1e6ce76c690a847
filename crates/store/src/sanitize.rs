//! Property sanitising, done once on write so templates can print stored
//! values without escaping them (Zotonic's rule: sanitise when stored, never
//! when shown).
//!
//! - HTML properties (`body`, `summary`, and any key ending in `_html`) keep a
//!   fixed whitelist of tags and attributes; scripts, event handlers, styles and
//!   `javascript:`/`data:` URLs go.
//! - URL properties (`url`, `website`, keys ending in `_url`) must be http(s),
//!   mailto or relative; anything else is dropped to an empty string.
//! - Every other string is text: all markup is removed and `<`, `>`, `&`, quotes
//!   are escaped, so it is safe both as element text and inside a quoted
//!   attribute.
//!
//! All three are idempotent: sanitising a stored value again changes nothing,
//! so reading a resource and writing it back does not double-escape.

use std::collections::HashSet;
use std::sync::LazyLock;

use serde_json::Value;

use crate::error::{Result, StoreError};
use crate::model::Props;

const MAX_KEY_LEN: usize = 64;
const MAX_STRING_LEN: usize = 512 * 1024;
const MAX_DEPTH: usize = 16;

static HTML: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let tags: HashSet<&str> = [
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "caption",
        "cite",
        "code",
        "dd",
        "del",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "ins",
        "kbd",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "u",
        "ul",
    ]
    .into_iter()
    .collect();
    let mut b = ammonia::Builder::empty();
    b.tags(tags)
        .generic_attributes(["title", "lang", "class"].into_iter().collect())
        .tag_attributes(
            [
                ("a", ["href"].into_iter().collect()),
                (
                    "img",
                    ["src", "alt", "width", "height"].into_iter().collect(),
                ),
                ("td", ["colspan", "rowspan"].into_iter().collect()),
                ("th", ["colspan", "rowspan", "scope"].into_iter().collect()),
                ("blockquote", ["cite"].into_iter().collect()),
                ("q", ["cite"].into_iter().collect()),
            ]
            .into_iter()
            .collect(),
        )
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .url_relative(ammonia::UrlRelative::Custom(Box::new(relative_url)))
        .link_rel(Some("noopener noreferrer"))
        .strip_comments(true);
    b
});

/// A relative URL that looks like it has a scheme (`` `javascript:... ``,
/// `java\0script:`) is harmless to a modern browser but not worth the risk:
/// drop it. Real relative URLs have no ':' before the first '/', '?' or '#'.
fn relative_url(url: &str) -> Option<std::borrow::Cow<'_, str>> {
    if looks_like_scheme(url) {
        None
    } else {
        Some(std::borrow::Cow::Borrowed(url))
    }
}

fn looks_like_scheme(url: &str) -> bool {
    let compact: String = url
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect();
    match compact.find([':', '/', '?', '#']) {
        Some(i) => compact.as_bytes()[i] == b':',
        None => false,
    }
}

static TEXT: LazyLock<ammonia::Builder<'static>> = LazyLock::new(ammonia::Builder::empty);

fn is_html_key(key: &str) -> bool {
    matches!(key, "body" | "summary") || key.ends_with("_html")
}

fn is_url_key(key: &str) -> bool {
    matches!(key, "url" | "website") || key.ends_with("_url")
}

/// Text: no markup at all, everything escaped. ammonia with no tags strips
/// tags (keeping their text); we then escape quotes too, which ammonia leaves
/// alone in text nodes.
pub(crate) fn sanitize_text(s: &str) -> String {
    let cleaned = no_carriage_returns(TEXT.clean(s).to_string());
    cleaned.replace('"', "&quot;").replace('\'', "&#39;")
}

pub(crate) fn sanitize_html(s: &str) -> String {
    no_carriage_returns(HTML.clean(s).to_string())
}

/// The HTML parser turns a raw CR into LF but keeps one written as `&#13;`;
/// storing LF either way keeps sanitising idempotent.
fn no_carriage_returns(s: String) -> String {
    if s.contains('\r') {
        s.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        s
    }
}

/// The scheme is checked on what a browser will see, after entity decoding:
/// `&#106;avascript:` is `javascript:` inside an `href`.
fn sanitize_url(s: &str) -> String {
    let cleaned = sanitize_text(s.trim());
    let cleaned = cleaned.trim();
    let seen: String = html_to_plain(cleaned)
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    let safe = !looks_like_scheme(&seen)
        || ["http:", "https:", "mailto:"]
            .iter()
            .any(|p| seen.starts_with(p));
    if safe {
        cleaned.to_owned()
    } else {
        String::new()
    }
}

/// Sanitise and validate a whole property document in place.
pub(crate) fn sanitize_props(props: &mut Props) -> Result<()> {
    for (key, value) in props.0.iter_mut() {
        check_key(key)?;
        sanitize_value(key, value, 0)?;
    }
    Ok(())
}

fn check_key(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(StoreError::invalid(
            "props",
            format!("property names must be 1 to {MAX_KEY_LEN} characters"),
        ));
    }
    if !key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    {
        return Err(StoreError::invalid(
            "props",
            format!("property name {key:?} may only contain a-z, 0-9, '_', '-' and '.'"),
        ));
    }
    Ok(())
}

fn sanitize_value(key: &str, value: &mut Value, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(StoreError::invalid("props", "nested too deeply"));
    }
    match value {
        Value::String(s) => {
            if s.len() > MAX_STRING_LEN {
                return Err(StoreError::invalid(
                    key,
                    format!("longer than {MAX_STRING_LEN} bytes"),
                ));
            }
            *s = if is_html_key(key) {
                sanitize_html(s)
            } else if is_url_key(key) {
                sanitize_url(s)
            } else {
                sanitize_text(s)
            };
        }
        Value::Array(items) => {
            for item in items {
                sanitize_value(key, item, depth + 1)?;
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                check_key(k)?;
                sanitize_value(k, v, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Undo the text escaping, for indexing and sorting (the pivot wants words,
/// not entities).
pub(crate) fn html_to_plain(s: &str) -> String {
    let stripped = TEXT.clean(s).to_string();
    stripped
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_idempotent() {
        let once = sanitize_text("Tom & \"Jerry\" <b>x</b>");
        assert_eq!(once, "Tom &amp; &quot;Jerry&quot; x");
        assert_eq!(sanitize_text(&once), once);
    }

    #[test]
    fn html_keeps_whitelist_and_is_idempotent() {
        let once = sanitize_html(
            r#"<p onclick="x()">Hi <a href="javascript:alert(1)">a</a><script>alert(1)</script></p>"#,
        );
        assert!(!once.contains("onclick"));
        assert!(!once.contains("script"));
        assert!(!once.contains("javascript"));
        assert_eq!(sanitize_html(&once), once);
    }

    proptest::proptest! {
        /// Reading a property and writing it back never changes it.
        #[test]
        fn sanitising_is_idempotent(s in "(<[a-zA-Z/!]{0,8}|[ -~]|&[a-z#0-9]{0,6};?|\\PC){0,60}") {
            let text = sanitize_text(&s);
            proptest::prop_assert_eq!(sanitize_text(&text), text);
            let html = sanitize_html(&s);
            proptest::prop_assert_eq!(sanitize_html(&html), html);
            let url = sanitize_url(&s);
            proptest::prop_assert_eq!(sanitize_url(&url), url);
        }

        /// Text is safe both as element content and in a quoted attribute.
        #[test]
        fn text_never_contains_markup_or_quotes(s in "\\PC{0,80}|[<>\"'&a-z =/]{0,80}") {
            let text = sanitize_text(&s);
            proptest::prop_assert!(!text.contains(['<', '>', '"', '\'']), "{:?} -> {:?}", s, text);
        }
    }

    #[test]
    fn unsafe_url_schemes_are_dropped() {
        assert_eq!(sanitize_url("javascript:alert(1)"), "");
        assert_eq!(sanitize_url(" JaVa\tScRiPt:alert(1)"), "");
        assert_eq!(sanitize_url("https://example.com/"), "https://example.com/");
        assert_eq!(sanitize_url("/relative/path"), "/relative/path");
        assert_eq!(sanitize_url("&#106;avascript:alert(1)"), "");
        assert_eq!(sanitize_url("java&#x09;script:alert(1)"), "");
        assert_eq!(sanitize_url("&#9#"), "#");
    }
}
