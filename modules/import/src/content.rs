//! A WordPress post's content made into the HTML Bulwark keeps: the block
//! editor's markup without its `<!-- wp:... -->` comments, the classic
//! editor's text with its paragraphs (what WordPress's `wpautop` does when it
//! shows it), `[caption]` and `[gallery]` as figures, a URL on a line of its
//! own (an embed) as a link, and pictures pointed at the imported media's
//! previews. Shortcodes nobody here knows stay as the text they are, and are
//! named for the report. The store's sanitiser has the last word, as for
//! everything written.

use std::collections::BTreeSet;

/// A picture the import brought in, as content shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// A preview's address, or the file's.
    pub src: String,
    pub alt: String,
}

/// Where the import's pictures are: by WordPress attachment id, and by one of
/// the addresses WordPress served it at (the file or one of its sizes).
pub trait Pictures {
    fn by_id(&self, wp_id: i64) -> Option<Picture>;
    fn by_url(&self, url: &str) -> Option<Picture>;
}

/// Content as Bulwark keeps it, and what the report should say of it.
#[derive(Debug, Default, PartialEq)]
pub struct Converted {
    pub html: String,
    /// Shortcodes kept as text.
    pub unknown_shortcodes: BTreeSet<String>,
    /// Attachments a gallery named that the import did not bring.
    pub missing_pictures: Vec<i64>,
}

pub fn convert(content: &str, pictures: &dyn Pictures) -> Converted {
    let content = content.replace("\r\n", "\n");
    let blocks = content.contains("<!-- wp:");
    let mut out = Converted::default();
    let text = match blocks {
        true => without_block_comments(&content),
        false => content,
    };
    let text = shortcodes(&text, pictures, &mut out);
    let text = links_for_embeds(&text);
    let text = match blocks {
        true => text,
        false => paragraphs(&text),
    };
    out.html = pictures_pointed_home(&text, pictures);
    out
}

/// `<!-- wp:paragraph -->` and `<!-- /wp:paragraph -->` out; the blocks'
/// HTML stays.
fn without_block_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("<!--") {
        let comment = &rest[at..];
        let is_block = comment[4..].trim_start().starts_with("wp:")
            || comment[4..].trim_start().starts_with("/wp:");
        match (is_block, comment.find("-->")) {
            (true, Some(end)) => {
                out.push_str(&rest[..at]);
                rest = &comment[end + 3..];
            }
            _ => {
                out.push_str(&rest[..at + 4]);
                rest = &comment[4..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A shortcode's opening tag: `[gallery ids="1,2"]`.
struct Tag<'a> {
    name: &'a str,
    attrs: Vec<(String, String)>,
    /// Bytes from the `[` to after the `]`.
    len: usize,
}

impl Tag<'_> {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The shortcode that starts `text` (with its `[`), if one does.
fn tag_at(text: &str) -> Option<Tag<'_>> {
    let body = text.strip_prefix('[')?;
    let name_len = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(body.len());
    let name = &body[..name_len];
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut rest = &body[name_len..];
    if !rest.starts_with([']', ' ', '/', '\t']) {
        return None;
    }
    let mut attrs = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("/]").or_else(|| rest.strip_prefix(']')) {
            return Some(Tag {
                name,
                attrs,
                len: text.len() - after.len(),
            });
        }
        let key_len = rest.find(['=', ' ', ']', '/']).unwrap_or(rest.len());
        if key_len == 0 {
            return None;
        }
        let key = rest[..key_len].to_ascii_lowercase();
        rest = &rest[key_len..];
        let value = match rest.strip_prefix('=') {
            Some(v) => {
                let (value, after) = match v.chars().next() {
                    Some(q @ ('"' | '\'')) => {
                        let end = v[1..].find(q)?;
                        (&v[1..1 + end], &v[end + 2..])
                    }
                    _ => {
                        let end = v.find([' ', ']']).unwrap_or(v.len());
                        (&v[..end], &v[end..])
                    }
                };
                rest = after;
                value.to_owned()
            }
            None => String::new(),
        };
        attrs.push((key, value));
    }
}

/// `[caption]`, `[gallery]`, `[embed]`, `[video]` and `[audio]` made into HTML;
/// `[[name]]` (WordPress's way to write a shortcode as text) into `[name]`;
/// other shortcodes kept and named.
fn shortcodes(text: &str, pictures: &dyn Pictures, out: &mut Converted) -> String {
    let mut html = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('[') {
        html.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(escaped) = rest.strip_prefix("[[")
            && let Some(end) = escaped.find("]]")
        {
            html.push('[');
            html.push_str(&escaped[..end]);
            html.push(']');
            rest = &escaped[end + 2..];
            continue;
        }
        let Some(tag) = tag_at(rest) else {
            html.push('[');
            rest = &rest[1..];
            continue;
        };
        let after = &rest[tag.len..];
        let close = format!("[/{}]", tag.name);
        let inner = after
            .find(&close)
            .map(|end| (&after[..end], end + close.len()));
        match (tag.name, inner) {
            ("caption" | "wp_caption", Some((inner, used))) => {
                html.push_str(&caption(inner));
                rest = &after[used..];
            }
            ("gallery", _) => {
                html.push_str(&gallery(&tag, pictures, out));
                rest = after;
            }
            ("embed", Some((url, used))) => {
                html.push_str(&link(url.trim()));
                rest = &after[used..];
            }
            ("video" | "audio", inner) => {
                let source = ["src", "mp4", "mp3", "webm", "ogg"]
                    .iter()
                    .find_map(|k| tag.attr(k));
                if let Some(src) = source {
                    html.push_str(&link(src));
                }
                rest = match inner {
                    Some((_, used)) => &after[used..],
                    None => after,
                };
            }
            (name, _) => {
                out.unknown_shortcodes.insert(name.to_owned());
                html.push_str(&rest[..tag.len]);
                rest = after;
            }
        }
    }
    html.push_str(rest);
    html
}

/// `<img ...> Caption text` (the picture perhaps in a link) as a figure.
fn caption(inner: &str) -> String {
    let inner = inner.trim();
    let picture_end = match inner.starts_with("<a") {
        true => inner.find("</a>").map(|e| e + 4),
        false => inner.find('>').map(|e| e + 1),
    };
    let (picture, text) = match picture_end {
        Some(end) if inner.starts_with('<') => (&inner[..end], inner[end..].trim()),
        _ => ("", inner),
    };
    match text.is_empty() {
        true => format!("<figure>{picture}</figure>"),
        false => format!("<figure>{picture}<figcaption>{text}</figcaption></figure>"),
    }
}

fn gallery(tag: &Tag<'_>, pictures: &dyn Pictures, out: &mut Converted) -> String {
    let mut html = String::from("<figure class=\"gallery\">");
    for id in tag
        .attr("ids")
        .unwrap_or_default()
        .split(',')
        .filter_map(|id| id.trim().parse::<i64>().ok())
    {
        match pictures.by_id(id) {
            Some(p) => html.push_str(&format!(
                "<img src=\"{}\" alt=\"{}\">",
                attr_text(&p.src),
                attr_text(&p.alt)
            )),
            None => out.missing_pictures.push(id),
        }
    }
    html.push_str("</figure>");
    html
}

fn link(url: &str) -> String {
    let url = attr_text(url);
    format!("<a href=\"{url}\">{url}</a>")
}

fn attr_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A URL alone on its line (what WordPress shows as an embedded video or
/// post) as a link to it.
fn links_for_embeds(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let url = line.trim();
        let is_url = (url.starts_with("http://") || url.starts_with("https://"))
            && !url.contains(|c: char| c.is_whitespace() || c == '<' || c == '"');
        match is_url {
            true => out.push_str(&link(url)),
            false => out.push_str(line),
        }
    }
    out
}

/// Elements that are a paragraph's equal, not inside one.
const BLOCK_TAGS: [&str; 19] = [
    "p",
    "div",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "li",
    "figure",
    "blockquote",
    "pre",
    "table",
    "hr",
    "section",
    "iframe",
    "dl",
];

/// The classic editor's text as WordPress shows it: a blank line between
/// paragraphs, a line break where a line ends.
fn paragraphs(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for chunk in text.split("\n\n").map(str::trim).filter(|c| !c.is_empty()) {
        let starts_block = chunk.strip_prefix('<').is_some_and(|tag| {
            BLOCK_TAGS.iter().any(|b| {
                tag.strip_prefix(b)
                    .is_some_and(|r| r.starts_with(['>', ' ', '/', '\n']))
            })
        });
        match starts_block {
            true => out.push_str(chunk),
            false => {
                out.push_str("<p>");
                out.push_str(&chunk.replace('\n', "<br>\n"));
                out.push_str("</p>");
            }
        }
        out.push('\n');
    }
    out
}

/// Every `<img>` whose address is one of the imported pictures' points at
/// its preview now; the old site's `srcset` goes.
fn pictures_pointed_home(html: &str, pictures: &dyn Pictures) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find("<img") {
        out.push_str(&rest[..at]);
        let tag_end = rest[at..].find('>').map_or(rest.len(), |e| at + e + 1);
        let tag = &rest[at..tag_end];
        out.push_str(&repoint(tag, pictures));
        rest = &rest[tag_end..];
    }
    out.push_str(rest);
    out
}

fn repoint(tag: &str, pictures: &dyn Pictures) -> String {
    let Some((start, end, url)) = attr_span(tag, "src") else {
        return tag.to_owned();
    };
    let Some(picture) = pictures.by_url(url) else {
        return tag.to_owned();
    };
    let mut tag = format!(
        "{}{}{}",
        &tag[..start],
        attr_text(&picture.src),
        &tag[end..]
    );
    for gone in ["srcset", "sizes"] {
        if let Some((start, end, _)) = attr_span(&tag, gone) {
            let name_start = tag[..start].rfind(gone).unwrap_or(start);
            tag = format!("{}{}", tag[..name_start].trim_end(), &tag[end + 1..]);
        }
    }
    tag
}

/// Where attribute `name`'s quoted value is in `tag`: its start and end bytes,
/// and the value.
fn attr_span<'a>(tag: &'a str, name: &str) -> Option<(usize, usize, &'a str)> {
    let mut from = 0;
    while let Some(found) = tag[from..].find(name) {
        let at = from + found;
        let before_ok = tag[..at].ends_with([' ', '\n', '\t']);
        let after = &tag[at + name.len()..];
        if before_ok && let Some(value) = after.trim_start().strip_prefix('=') {
            let value = value.trim_start();
            let quote = value.chars().next()?;
            if quote == '"' || quote == '\'' {
                let start = tag.len() - value.len() + 1;
                let end = start + value[1..].find(quote)?;
                return Some((start, end, &tag[start..end]));
            }
        }
        from = at + name.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Two;
    impl Pictures for Two {
        fn by_id(&self, wp_id: i64) -> Option<Picture> {
            (wp_id == 5).then(|| Picture {
                src: "/media/preview/40/medium/x".into(),
                alt: "Red".into(),
            })
        }
        fn by_url(&self, url: &str) -> Option<Picture> {
            url.contains("red-square").then(|| self.by_id(5).unwrap())
        }
    }

    #[test]
    fn block_markup_loses_its_comments_and_keeps_its_html() {
        let got = convert(
            "<!-- wp:paragraph -->\n<p>One</p>\n<!-- /wp:paragraph -->\n<!-- a note -->",
            &Two,
        );
        assert_eq!(got.html, "\n<p>One</p>\n\n<!-- a note -->");
    }

    #[test]
    fn classic_text_gets_paragraphs_and_line_breaks() {
        let got = convert("One\ntwo\n\n<h2>Head</h2>\n\nThree", &Two);
        assert_eq!(
            got.html,
            "<p>One<br>\ntwo</p>\n<h2>Head</h2>\n<p>Three</p>\n"
        );
    }

    #[test]
    fn a_caption_becomes_a_figure_pointed_at_the_preview() {
        let got = convert(
            "[caption id=\"attachment_5\" width=\"300\"]<img src=\"https://old/wp-content/uploads/red-square-300x225.png\" srcset=\"a 1x\" alt=\"A\" /> Red, captioned[/caption]",
            &Two,
        );
        assert_eq!(
            got.html,
            "<figure><img src=\"/media/preview/40/medium/x\" alt=\"A\" /><figcaption>Red, captioned</figcaption></figure>\n"
        );
    }

    #[test]
    fn a_gallery_shows_the_pictures_it_has_and_names_the_missing() {
        let got = convert("[gallery ids=\"5,9\"]", &Two);
        assert_eq!(
            got.html,
            "<figure class=\"gallery\"><img src=\"/media/preview/40/medium/x\" alt=\"Red\"></figure>\n"
        );
        assert_eq!(got.missing_pictures, vec![9]);
    }

    #[test]
    fn unknown_shortcodes_stay_as_text_and_are_named() {
        let got = convert(
            "Before [contact-form-7 id=\"12\"] after [[gallery]] [1]",
            &Two,
        );
        assert_eq!(
            got.html,
            "<p>Before [contact-form-7 id=\"12\"] after [gallery] [1]</p>\n"
        );
        assert_eq!(
            got.unknown_shortcodes.into_iter().collect::<Vec<_>>(),
            vec!["contact-form-7".to_owned()]
        );
    }

    #[test]
    fn a_url_on_its_own_line_becomes_a_link() {
        let got = convert(
            "Look:\n\nhttps://www.youtube.com/watch?v=x&t=1\n\nNice",
            &Two,
        );
        assert_eq!(
            got.html,
            "<p>Look:</p>\n<p><a href=\"https://www.youtube.com/watch?v=x&amp;t=1\">https://www.youtube.com/watch?v=x&amp;t=1</a></p>\n<p>Nice</p>\n"
        );
    }
}

/// Content from anywhere never panics the converter: made of the pieces its
/// parsing looks for, in any order, with characters of several bytes between.
#[cfg(test)]
mod any_content {
    use super::*;
    use proptest::prelude::*;

    struct None_;
    impl Pictures for None_ {
        fn by_id(&self, _: i64) -> Option<Picture> {
            None
        }
        fn by_url(&self, url: &str) -> Option<Picture> {
            (!url.is_empty()).then(|| Picture {
                src: "/p".into(),
                alt: "é".into(),
            })
        }
    }

    const PIECES: &[&str] = &[
        "[",
        "]",
        "[/",
        "[[",
        "]]",
        "caption",
        "gallery",
        "embed",
        "video",
        " ids=\"",
        "\"",
        "'",
        "=",
        "<img",
        " src=\"",
        " srcset='",
        ">",
        "/>",
        "<a href=x>",
        "</a>",
        "<!--",
        "-->",
        " wp:",
        "/wp:",
        "\n",
        "\n\n",
        "https://x.y/z",
        "é",
        "ß",
        "日本",
        "🦀",
        " ",
        "1,2",
        "<p>",
    ];

    proptest! {
        #[test]
        fn never_panics(pieces in proptest::collection::vec(0..PIECES.len(), 0..60)) {
            let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
            let _ = convert(&text, &None_);
            let _ = crate::php::unserialize(&text);
        }
    }
}
