//! The site's own embed: a video from YouTube or Vimeo put into a text by
//! its address. The editor stores it as a link in a figure,
//! `<figure class="embed"><a href="https://youtu.be/ID">...</a></figure>`, so
//! the stored text stays plain HTML that every reader of it (a feed, an
//! export, a site without this module) shows as a link. `embeds(html)` in a
//! template writes each such figure's link as the provider's player: the
//! privacy-minded address (`youtube-nocookie.com`, Vimeo with `dnt=1`), in a
//! sandboxed, lazily loaded `<iframe>`, the link kept after it for those who
//! prefer the provider's own page. The site's default CSP lets exactly these
//! two players be framed (`frame-src`). A figure whose link is to anything
//! else stays a link.

use minijinja::{Environment, Value};

use bulwark_store::stored_tags;

use crate::preview::attribute;

/// A video player for `url`, if it is one of a provider the site embeds.
fn player(url: &str) -> Option<(&'static str, String)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.strip_prefix("www.").unwrap_or(host);
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let id_ok = |id: &str| {
        !id.is_empty()
            && id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    match host {
        "youtube.com" | "m.youtube.com" => {
            let id = match path {
                "watch" => query
                    .split('&')
                    .find_map(|pair| pair.strip_prefix("v="))
                    .unwrap_or(""),
                _ => path
                    .strip_prefix("shorts/")
                    .or_else(|| path.strip_prefix("embed/"))
                    .unwrap_or(""),
            };
            id_ok(id).then(|| {
                (
                    "YouTube",
                    format!("https://www.youtube-nocookie.com/embed/{id}"),
                )
            })
        }
        "youtu.be" => id_ok(path).then(|| {
            (
                "YouTube",
                format!("https://www.youtube-nocookie.com/embed/{path}"),
            )
        }),
        "vimeo.com" => (!path.is_empty() && path.chars().all(|c| c.is_ascii_digit())).then(|| {
            (
                "Vimeo",
                format!("https://player.vimeo.com/video/{path}?dnt=1"),
            )
        }),
        _ => None,
    }
}

/// `html` (a stored value) with each embed figure's link preceded by its
/// player.
fn embeds(html: &str) -> String {
    if !html.contains("embed") {
        return html.to_owned();
    }
    let mut out = String::with_capacity(html.len() + 512);
    let mut copied = 0;
    for figure in stored_tags(html, "figure") {
        let is_embed = figure
            .attr("class")
            .is_some_and(|c| c.split_whitespace().any(|c| c == "embed"));
        if !is_embed || figure.span.start < copied {
            continue;
        }
        // Its link: the first tag inside it.
        let Some(link) = stored_tags(&html[figure.span.end..], "a").next() else {
            continue;
        };
        if !html[figure.span.end..figure.span.end + link.span.start]
            .trim()
            .is_empty()
        {
            continue;
        }
        let Some((provider, src)) = link.attr("href").and_then(player) else {
            continue;
        };
        let at = figure.span.end;
        out.push_str(&html[copied..at]);
        copied = at;
        let title = format!("Video on {provider}");
        out.push_str(&format!(
            r#"<iframe src="{}" title="{}" width="640" height="360" loading="lazy" referrerpolicy="strict-origin-when-cross-origin" sandbox="allow-scripts allow-same-origin allow-presentation allow-popups" allow="fullscreen; picture-in-picture" allowfullscreen></iframe>"#,
            attribute(&src),
            attribute(&title)
        ));
    }
    out.push_str(&html[copied..]);
    out
}

/// `embeds(html)` for templates.
pub fn register(env: &mut Environment<'static>) {
    env.add_function("embeds", |html: Value| -> Value {
        match html.as_str() {
            Some(text) => Value::from_safe_string(embeds(text)),
            None => html,
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn videos_of_the_two_providers_are_found_by_their_addresses() {
        let yt = Some((
            "YouTube",
            "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ".to_owned(),
        ));
        assert_eq!(player("https://www.youtube.com/watch?v=dQw4w9WgXcQ"), yt);
        assert_eq!(
            player("https://www.youtube.com/watch?t=3&v=dQw4w9WgXcQ"),
            yt
        );
        assert_eq!(player("https://youtu.be/dQw4w9WgXcQ"), yt);
        assert_eq!(player("https://youtube.com/shorts/dQw4w9WgXcQ"), yt);
        assert_eq!(
            player("https://vimeo.com/76979871"),
            Some((
                "Vimeo",
                "https://player.vimeo.com/video/76979871?dnt=1".to_owned()
            ))
        );
        for other in [
            "https://example.org/watch?v=x",
            "https://youtu.be/a\"b",
            "https://vimeo.com/channels/x",
            "javascript:alert(1)",
            "https://www.youtube.com/watch?v=",
        ] {
            assert_eq!(player(other), None, "{other}");
        }
    }

    #[test]
    fn an_embed_figure_gets_its_player_before_its_link_and_anything_else_stays() {
        let stored = r#"<p>Before.</p><figure class=embed><a href=https://youtu.be/dQw4w9WgXcQ rel=noopener&#32;noreferrer>A song</a><figcaption>Our song</figcaption></figure><figure class=embed><a href=https://example.org/x>x</a></figure><p>After.</p>"#;
        let shown = embeds(stored);
        assert_eq!(shown.matches("<iframe").count(), 1, "{shown}");
        assert!(
            shown.contains(r#"<figure class=embed><iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" title="Video on YouTube""#),
            "{shown}"
        );
        assert!(shown.contains(
            r#"sandbox="allow-scripts allow-same-origin allow-presentation allow-popups""#
        ));
        assert!(
            shown.contains("</iframe><a href=https://youtu.be/dQw4w9WgXcQ"),
            "the link stays: {shown}"
        );
        assert!(shown.contains("<figure class=embed><a href=https://example.org/x>x</a></figure>"));
        assert_eq!(embeds("<p>No video.</p>"), "<p>No video.</p>");
    }
}
