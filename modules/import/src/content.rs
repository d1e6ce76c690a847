//! A WordPress post's content made into the HTML Bulwark keeps: the block
//! editor's markup without its `<!-- wp:... -->` comments, the classic
//! editor's text with its paragraphs (what WordPress's `wpautop` does when it
//! shows it), `[caption]` and `[gallery]` as figures, a URL on a line of its
//! own (an embed) as a link, and pictures pointed at the imported media's
//! previews. Reusable blocks are put in place; embeds (the block editor's,
//! an `<iframe>` of a video or a map) become the site's own embed, a link in
//! `<figure class="embed">`, and `<video>`/`<audio>` a link to the file;
//! links to the old site become this site's paths (its redirects lead on).
//! Shortcodes nobody here knows stay as the text they are, and are named for
//! the report, as is every element the site keeps no trace of (a script, a
//! form). The store's sanitiser has the last word, as for everything written.

use std::collections::{BTreeSet, HashMap};

/// A picture the import brought in, as content shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// A preview's address, or the file's.
    pub src: String,
    pub alt: String,
    /// The file's own address (`/media/file/{id}`): where a link to it goes.
    pub file: String,
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
    /// Reusable blocks put in place, and those used that the export does
    /// not hold.
    pub blocks_used: Vec<i64>,
    pub missing_blocks: Vec<i64>,
    /// Elements the site keeps no trace of (`script`, `form`...), by name.
    pub left_out: BTreeSet<String>,
}

/// What else a conversion reads besides the pictures.
#[derive(Default)]
pub struct Around<'a> {
    /// The export's reusable blocks (`wp_block` items): content by id.
    pub blocks: Option<&'a HashMap<i64, String>>,
    /// The old site's address (`https://old.example.org`): links to it
    /// become paths of this site.
    pub old_site: &'a str,
}

pub fn convert(content: &str, pictures: &dyn Pictures) -> Converted {
    convert_in(content, pictures, &Around::default())
}

/// How deep reusable blocks may hold each other.
const MAX_BLOCK_DEPTH: usize = 4;

pub fn convert_in(content: &str, pictures: &dyn Pictures, around: &Around<'_>) -> Converted {
    let content = content.replace("\r\n", "\n");
    let blocks = content.contains("<!-- wp:");
    let mut out = Converted::default();
    let text = match blocks {
        true => {
            let placed = reusable_blocks(&content, around.blocks, &mut out, 0);
            without_block_comments(&embed_blocks(&placed))
        }
        false => content,
    };
    let text = shortcodes(&text, pictures, &mut out);
    let text = players_as_embeds(&text, pictures);
    let text = links_for_embeds(&text);
    let text = match blocks {
        true => text,
        false => paragraphs(&text),
    };
    let html = pictures_pointed_home(&text, pictures);
    let html = old_links_home(&html, around.old_site, pictures);
    out.left_out = left_out(&html);
    out.html = html;
    out
}

/// The block comment that starts `text` (`<!-- wp:block {"ref":7} /-->`):
/// its name, its JSON attributes, whether it closes itself, and its length.
fn block_comment(text: &str) -> Option<(&str, serde_json::Value, bool, usize)> {
    let body = text.strip_prefix("<!--")?;
    let end = body.find("-->")?;
    let inner = body[..end].trim();
    let inner = inner.strip_prefix("wp:")?;
    let (inner, closed) = match inner.strip_suffix('/') {
        Some(open) => (open.trim_end(), true),
        None => (inner, false),
    };
    let (name, json) = inner.split_once(char::is_whitespace).unwrap_or((inner, ""));
    let attrs = serde_json::from_str(json.trim()).unwrap_or(serde_json::Value::Null);
    Some((name, attrs, closed, 4 + end + 3))
}

/// Each reusable block used (`<!-- wp:block {"ref":7} /-->`) replaced by
/// its content, as WordPress shows it; one the export does not hold is
/// named for the report.
fn reusable_blocks(
    text: &str,
    blocks: Option<&HashMap<i64, String>>,
    out: &mut Converted,
    depth: usize,
) -> String {
    if !text.contains("<!-- wp:block") {
        return text.to_owned();
    }
    let mut html = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("<!-- wp:block") {
        html.push_str(&rest[..at]);
        rest = &rest[at..];
        match block_comment(rest) {
            Some(("block", attrs, true, len)) => {
                let id = attrs["ref"].as_i64().unwrap_or(0);
                match blocks.and_then(|b| b.get(&id)) {
                    Some(content) if depth < MAX_BLOCK_DEPTH => {
                        out.blocks_used.push(id);
                        let content = content.replace("\r\n", "\n");
                        html.push_str(&reusable_blocks(&content, blocks, out, depth + 1));
                    }
                    _ => out.missing_blocks.push(id),
                }
                rest = &rest[len..];
            }
            _ => {
                html.push_str("<!--");
                rest = &rest[4..];
            }
        }
    }
    html.push_str(rest);
    html
}

/// The block editor's embeds (`<!-- wp:embed {"url":...} -->` and the older
/// `wp:core-embed/youtube`) as the site's own: a link in
/// `<figure class="embed">`, which a template's `embeds()` shows as the
/// player (YouTube, Vimeo) and anything else shows as a link.
fn embed_blocks(text: &str) -> String {
    let mut html = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("<!-- wp:") {
        html.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some((name, attrs, closed, len)) = block_comment(rest) else {
            html.push_str("<!--");
            rest = &rest[4..];
            continue;
        };
        let is_embed = name == "embed" || name.starts_with("core-embed/");
        let url = attrs["url"].as_str().filter(|u| is_web(u));
        match (is_embed, url) {
            (true, Some(url)) => {
                let end = format!("<!-- /wp:{name} -->");
                let after = &rest[len..];
                let used = match closed {
                    true => 0,
                    false => after.find(&end).map_or(0, |e| e + end.len()),
                };
                html.push_str(&embed(url, ""));
                rest = &after[used..];
            }
            _ => {
                html.push_str(&rest[..len]);
                rest = &rest[len..];
            }
        }
    }
    html.push_str(rest);
    html
}

/// An http(s) address alone, nothing around it (as a line of text or an
/// embed block's `url` may be).
fn is_web(url: &str) -> bool {
    (url.starts_with("https://") || url.starts_with("http://"))
        && !url.contains(|c: char| c.is_whitespace() || c == '<' || c == '"')
}

/// The site's own embed of `url`: a link in a figure.
fn embed(url: &str, title: &str) -> String {
    let text = if title.is_empty() { url } else { title };
    format!(
        "<figure class=\"embed\"><a href=\"{}\">{}</a></figure>",
        attr_text(url),
        attr_text(text)
    )
}

/// A player's address in a frame as the page a visitor would open:
/// YouTube's and Vimeo's as their watch pages (the site's `embeds()`
/// knows those), anything else (a map) as it is.
fn watch_page(src: &str) -> String {
    let src = src
        .strip_prefix("//")
        .map_or(src.to_owned(), |s| format!("https://{s}"));
    let rest = src.split_once("://").map_or("", |(_, r)| r);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.strip_prefix("www.").unwrap_or(host);
    let id = |p: &str| {
        p.split(['?', '&', '#', '/'])
            .next()
            .unwrap_or("")
            .to_owned()
    };
    match host {
        "youtube.com" | "youtube-nocookie.com" => match path.strip_prefix("embed/") {
            Some(rest) if !id(rest).is_empty() => {
                format!("https://www.youtube.com/watch?v={}", id(rest))
            }
            _ => src,
        },
        "player.vimeo.com" => match path.strip_prefix("video/") {
            Some(rest) if !id(rest).is_empty() => format!("https://vimeo.com/{}", id(rest)),
            _ => src,
        },
        _ => src,
    }
}

/// `<iframe src=...>` (a video, a map: the sanitiser keeps no frames) as
/// the site's own embed; `<video>` and `<audio>` (their `src`, or their first
/// `<source>`) as a link to the file, the imported one where it was brought.
fn players_as_embeds(text: &str, pictures: &dyn Pictures) -> String {
    let mut html = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["<iframe", "<video", "<audio"]
            .iter()
            .filter_map(|t| rest.find(t).map(|at| (at, *t)))
            .min();
        let Some((at, open)) = next else {
            break;
        };
        html.push_str(&rest[..at]);
        let element = &rest[at..];
        let name = &open[1..];
        let close = format!("</{name}>");
        let tag_end = element.find('>').map_or(element.len(), |e| e + 1);
        let end = element.find(&close).map_or(tag_end, |e| e + close.len());
        let whole = &element[..end];
        let src = attr_span(&whole[..tag_end], "src")
            .map(|(_, _, v)| v)
            .or_else(|| {
                let source = whole.find("<source")?;
                attr_span(&whole[source..], "src").map(|(_, _, v)| v)
            })
            .map(|v| v.replace("&amp;", "&"));
        match (name, src) {
            ("iframe", Some(src)) => {
                let title = attr_span(&whole[..tag_end], "title").map_or("", |(_, _, t)| t);
                html.push_str(&embed(&watch_page(&src), title));
            }
            (_, Some(src)) => {
                let href = pictures.by_url(&src).map_or(src.clone(), |p| p.file);
                let file = src.rsplit('/').next().unwrap_or(&src).to_owned();
                html.push_str(&format!(
                    "<p><a href=\"{}\">{}</a></p>",
                    attr_text(&href),
                    attr_text(&file)
                ));
            }
            // Nothing to point at: left as it is, and named for the report.
            (_, None) => html.push_str(whole),
        }
        rest = &element[end..];
    }
    html.push_str(rest);
    html
}

/// Every link to the old site as this site's path: a file it served that
/// the import brought (`/wp-content/uploads/...`) at its new address, any
/// other page at its old path, which the import's redirects lead on from.
fn old_links_home(html: &str, old_site: &str, pictures: &dyn Pictures) -> String {
    if old_host(old_site).is_none_or(|host| !html.contains(host)) {
        return html.to_owned();
    }
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find("<a ") {
        out.push_str(&rest[..at]);
        let tag_end = rest[at..].find('>').map_or(rest.len(), |e| at + e + 1);
        let tag = &rest[at..tag_end];
        match attr_span(tag, "href") {
            Some((start, end, href)) if let Some(path) = local_path(href, old_site) => {
                let home = pictures.by_url(href).map_or(path, |p| p.file);
                out.push_str(&tag[..start]);
                out.push_str(&attr_text(&home.replace("&amp;", "&")));
                out.push_str(&tag[end..]);
            }
            _ => out.push_str(tag),
        }
        rest = &rest[tag_end..];
    }
    out.push_str(rest);
    out
}

/// `old.example.org` of `https://old.example.org`.
fn old_host(old_site: &str) -> Option<&str> {
    old_site
        .trim_end_matches('/')
        .split_once("://")
        .map(|(_, host)| host)
        .filter(|host| !host.is_empty())
}

/// `url` on the old site (by either scheme) as this site's path (`/` for
/// the old front page), or `None` for an address elsewhere.
pub(crate) fn local_path(url: &str, old_site: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .or_else(|| url.strip_prefix("//"))?;
    let path = rest.strip_prefix(old_host(old_site)?)?;
    match path.chars().next() {
        None => Some("/".to_owned()),
        Some('/') => Some(path.to_owned()),
        Some('?' | '#') => Some(format!("/{path}")),
        Some(_) => None,
    }
}

/// Elements whose content or purpose the site's text keeps no trace of.
const LEFT_OUT: [&str; 13] = [
    "script", "style", "form", "input", "button", "select", "textarea", "object", "embed",
    "canvas", "svg", "iframe", "noscript",
];

/// The names of [`LEFT_OUT`] elements in `html`.
fn left_out(html: &str) -> BTreeSet<String> {
    let lower = html.to_ascii_lowercase();
    LEFT_OUT
        .iter()
        .filter(|name| {
            lower.match_indices(&format!("<{name}")).any(|(at, m)| {
                lower[at + m.len()..]
                    .starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/')
            })
        })
        .map(|name| (*name).to_owned())
        .collect()
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
        match is_web(url) {
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
                file: "/media/file/40".into(),
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

    #[test]
    fn a_reusable_block_is_put_in_place_and_a_missing_one_named() {
        let blocks = HashMap::from([
            (
                7,
                "<!-- wp:paragraph --><p>Shared &amp; kept</p><!-- /wp:paragraph -->".to_owned(),
            ),
            // A block that uses itself stops where it began to repeat.
            (8, "<p>Loop</p><!-- wp:block {\"ref\":8} /-->".to_owned()),
        ]);
        let around = Around {
            blocks: Some(&blocks),
            old_site: "",
        };
        let got = convert_in(
            "<!-- wp:block {\"ref\":7} /--><!-- wp:block {\"ref\":9} /--><!-- wp:block {\"ref\":8} /-->",
            &Two,
            &around,
        );
        assert!(
            got.html.starts_with("<p>Shared &amp; kept</p>"),
            "{}",
            got.html
        );
        assert_eq!(
            got.html.matches("<p>Loop</p>").count(),
            MAX_BLOCK_DEPTH,
            "{}",
            got.html
        );
        assert!(got.missing_blocks.contains(&9), "{got:?}");
        assert!(got.blocks_used.contains(&7));
    }

    #[test]
    fn embeds_frames_and_players_become_the_sites_own_embed_or_a_link() {
        let got = convert(
            "<!-- wp:embed {\"url\":\"https://www.youtube.com/watch?v=abc_DEF-12\",\"type\":\"video\"} -->\n\
             <figure class=\"wp-block-embed\"><div class=\"wp-block-embed__wrapper\">\nhttps://www.youtube.com/watch?v=abc_DEF-12\n</div></figure>\n\
             <!-- /wp:embed -->\n\
             <!-- wp:html --><iframe title=\"Our shop\" src=\"https://www.google.com/maps/embed?pb=1&amp;x=2\"></iframe><!-- /wp:html -->\n\
             <!-- wp:html --><iframe src=\"https://player.vimeo.com/video/76979871?h=1\" width=\"640\"></iframe><!-- /wp:html -->\n\
             <!-- wp:video --><figure class=\"wp-block-video\"><video controls src=\"https://old.example.org/wp-content/uploads/2024/05/red-square.mp4\"></video></figure><!-- /wp:video -->",
            &Two,
        );
        for expected in [
            r#"<figure class="embed"><a href="https://www.youtube.com/watch?v=abc_DEF-12">https://www.youtube.com/watch?v=abc_DEF-12</a></figure>"#,
            r#"<figure class="embed"><a href="https://www.google.com/maps/embed?pb=1&amp;x=2">Our shop</a></figure>"#,
            r#"<figure class="embed"><a href="https://vimeo.com/76979871">https://vimeo.com/76979871</a></figure>"#,
            r#"<a href="/media/file/40">red-square.mp4</a>"#,
        ] {
            assert!(got.html.contains(expected), "{expected}\nin\n{}", got.html);
        }
        assert!(!got.html.contains("<iframe"), "{}", got.html);
        assert!(got.left_out.is_empty(), "{got:?}");
    }

    #[test]
    fn links_to_the_old_site_become_paths_here_and_its_files_the_imported_ones() {
        let around = Around {
            blocks: None,
            old_site: "https://old.example.org",
        };
        let got = convert_in(
            "<p><a href=\"https://old.example.org/2024/05/hello/\">a post</a>, \
             <a href=\"http://old.example.org/wp-content/uploads/2024/05/red-square.png\">the file</a>, \
             <a href=\"https://old.example.org\">home</a>, \
             <a href=\"https://old.example.org.evil.test/x\">not it</a>, \
             <a href=\"https://elsewhere.test/\">elsewhere</a></p>",
            &Two,
            &around,
        );
        for expected in [
            r#"<a href="/2024/05/hello/">a post</a>"#,
            r#"<a href="/media/file/40">the file</a>"#,
            r#"<a href="/">home</a>"#,
            r#"<a href="https://old.example.org.evil.test/x">not it</a>"#,
            r#"<a href="https://elsewhere.test/">elsewhere</a>"#,
        ] {
            assert!(got.html.contains(expected), "{expected}\nin\n{}", got.html);
        }
    }

    #[test]
    fn an_address_on_the_old_site_is_a_path_here() {
        let old = "https://old.example.org";
        for (url, path) in [
            ("https://old.example.org", Some("/")),
            ("https://old.example.org/", Some("/")),
            ("http://old.example.org/about/", Some("/about/")),
            ("//old.example.org/?p=4", Some("/?p=4")),
            ("https://old.example.org#top", Some("/#top")),
            ("https://old.example.org.evil.test/", None),
            ("https://shop.example.org/", None),
            ("/relative", None),
        ] {
            assert_eq!(local_path(url, old).as_deref(), path, "{url}");
        }
        assert_eq!(local_path("https://old.example.org/x", ""), None);
    }

    #[test]
    fn what_the_site_keeps_no_trace_of_is_named() {
        let got = convert(
            "<p>Hi</p><script>alert(1)</script><form action=/x><input name=q><button>Go</button></form><scripted>no</scripted>",
            &Two,
        );
        let names: Vec<&str> = got.left_out.iter().map(String::as_str).collect();
        assert_eq!(names, ["button", "form", "input", "script"]);
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
                file: String::new(),
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
        "<!-- wp:block {\"ref\":1} /-->",
        "<!-- wp:embed {\"url\":\"https://x\"} -->",
        "<!-- /wp:embed -->",
        "<!-- wp:",
        "-->",
        "<iframe",
        "</iframe>",
        "<video",
        "<source",
        "</video>",
        "https://old.example.org",
        "<a href=\"",
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
            // With reusable blocks (one that uses itself) and the old site.
            let blocks = HashMap::from([(1, text.clone())]);
            let around = Around { blocks: Some(&blocks), old_site: "https://old.example.org" };
            let _ = convert_in(&text, &None_, &around);
            let _ = crate::php::unserialize(&text);
        }
    }
}
