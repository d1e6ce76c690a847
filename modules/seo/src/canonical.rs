//! `canonical_url()` and `canonical_link()`: the one absolute URL of the page being
//! rendered, on the site's canonical host, so that aliases, `?utm_*` query strings
//! and the like count as one page for search engines; `alternate_links()`: the
//! same page in the site's other languages (`hreflang`), on a site with
//! language URLs; `absolute_links(html)`: a stored text with its links and
//! pictures on the canonical host, for a reader outside the site (a feed).

use std::sync::Arc;

use minijinja::value::Kwargs;
use minijinja::{Environment, Error, ErrorKind, State, Value};

/// Scheme and canonical host of a site.
#[derive(Clone)]
pub(crate) struct Origin(Arc<str>);

impl Origin {
    pub(crate) fn new(hostname: &str, tls: bool) -> Origin {
        let scheme = if tls { "https" } else { "http" };
        Origin(format!("{scheme}://{hostname}").into())
    }

    /// `url` on the canonical host when it is a path of this site (with
    /// what follows it: a query, a fragment, a srcset's width), else as it is.
    fn absolute(&self, url: &str) -> String {
        match bulwark_site::is_site_path(url) {
            true => format!("{}{url}", self.0),
            false => url.to_owned(),
        }
    }

    /// `path` (from the request, or given), without its query string.
    fn url(&self, path: &str) -> String {
        let path = path.split(['?', '#']).next().unwrap_or("/");
        let path = if path.starts_with('/') { path } else { "/" };
        format!("{}{path}", self.0)
    }
}

pub(crate) fn register(env: &mut Environment<'static>, origin: Origin) {
    let for_link = origin.clone();
    let for_alternates = origin.clone();
    let for_text = origin.clone();
    env.add_function("absolute_links", move |html: Value| -> Value {
        match html.as_str() {
            Some(text) => Value::from_safe_string(absolute_links(text, &for_text)),
            None => html,
        }
    });
    env.add_function(
        "canonical_url",
        move |state: &State, kwargs: Kwargs| -> Result<Value, Error> {
            Ok(bulwark_template::url_value(
                origin.url(&path(state, &kwargs)?),
            ))
        },
    );
    env.add_function(
        "alternate_links",
        move |state: &State| -> Result<Value, Error> {
            Ok(Value::from_safe_string(alternate_links(
                state,
                &for_alternates,
            )))
        },
    );
    env.add_function(
        "canonical_link",
        move |state: &State, kwargs: Kwargs| -> Result<Value, Error> {
            let url = for_link.url(&path(state, &kwargs)?);
            let escaped = bulwark_template::escape_html(&url);
            Ok(Value::from_safe_string(format!(
                r#"<link rel="canonical" href="{escaped}">"#
            )))
        },
    );
}

/// The tags whose attributes hold a link, and those attributes.
const LINKING: [(&str, &[&str]); 2] = [("a", &["href"]), ("img", &["src", "srcset"])];

/// `html` (a stored value) with each link and picture that is a path of
/// this site (`/page/7`, `/media/...`) written on its canonical host, as a
/// feed reader or a mail needs it: they read the text away from the site.
fn absolute_links(html: &str, origin: &Origin) -> String {
    let mut out = html.to_owned();
    for (tag, attributes) in LINKING {
        let mut written = String::with_capacity(out.len());
        let mut copied = 0;
        for found in bulwark_store::stored_tags(&out, tag) {
            let local = |name: &str, value: &str| {
                attributes.contains(&name)
                    && value
                        .split(',')
                        .any(|v| bulwark_site::is_site_path(v.trim()))
            };
            if !found.attrs.iter().any(|(n, v)| local(n, v)) {
                continue;
            }
            written.push_str(&out[copied..found.span.start]);
            written.push('<');
            written.push_str(tag);
            for (name, value) in &found.attrs {
                let value = match local(name, value) {
                    true if name == "srcset" => value
                        .split(',')
                        .map(|candidate| origin.absolute(candidate.trim()))
                        .collect::<Vec<_>>()
                        .join(", "),
                    true => origin.absolute(value),
                    false => value.clone(),
                };
                written.push_str(&format!(
                    r#" {name}="{}""#,
                    bulwark_template::escape_html(&value)
                ));
            }
            written.push('>');
            copied = found.span.end;
        }
        if copied > 0 {
            written.push_str(&out[copied..]);
            out = written;
        }
    }
    out
}

/// `<link rel="alternate" hreflang="..">` for each language the page is in
/// (`request.alternates`), and `x-default`: the front page's for `/`, which
/// picks the visitor's language, else the site's first language's.
fn alternate_links(state: &State, origin: &Origin) -> String {
    let Some(request) = state.lookup("request") else {
        return String::new();
    };
    let Ok(alternates) = request.get_attr("alternates") else {
        return String::new();
    };
    let Ok(list) = alternates.try_iter() else {
        return String::new();
    };
    let mut links = String::new();
    let mut first = None;
    for alternate in list {
        let (Ok(language), Ok(url)) = (alternate.get_attr("language"), alternate.get_attr("url"))
        else {
            continue;
        };
        let (Some(language), Some(url)) = (language.as_str(), url.as_str()) else {
            continue;
        };
        let href = origin.url(url);
        // `/en/`, a language's front page: `/` picks the visitor's language.
        let front = url.trim_matches('/') == language;
        first.get_or_insert_with(|| if front { origin.url("/") } else { href.clone() });
        links.push_str(&format!(
            r#"<link rel="alternate" hreflang="{}" href="{}">"#,
            bulwark_template::escape_html(language),
            bulwark_template::escape_html(&href)
        ));
    }
    if let Some(default) = first {
        links.push_str(&format!(
            r#"<link rel="alternate" hreflang="x-default" href="{}">"#,
            bulwark_template::escape_html(&default)
        ));
    }
    links
}

/// `path="..."` if given, else the path of the request being rendered; on a
/// site with language URLs, the request's path with its language
/// (`/articles` asked without one is `/en/articles`).
fn path(state: &State, kwargs: &Kwargs) -> Result<String, Error> {
    let given: Option<String> = kwargs.get("path")?;
    kwargs.assert_all_used()?;
    let request = state.lookup("request");
    let attr = |name: &str| {
        request
            .as_ref()
            .and_then(|r| r.get_attr(name).ok())
            .filter(|v| !v.is_undefined())
    };
    let path = match given {
        // A path given is the one meant (`url("sitemap")` has no language).
        Some(path) => return Ok(path),
        None => attr("path")
            .and_then(|p| p.as_str().map(str::to_string))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    "canonical_url(): no request here; pass path=\"/...\"",
                )
            })?,
    };
    let languages: Vec<String> = attr("alternates")
        .and_then(|a| a.try_iter().ok())
        .map(|list| {
            list.filter_map(|a| a.get_attr("language").ok()?.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let language = attr("language").and_then(|l| l.as_str().map(str::to_owned));
    Ok(match language {
        Some(language) if !languages.is_empty() && !has_language(&path, &languages) => {
            format!("/{language}{path}")
        }
        _ => path,
    })
}

/// Whether `path` starts with one of `languages` (`/nl/...`, `/nl`).
fn has_language(path: &str, languages: &[String]) -> bool {
    languages.iter().any(|l| {
        path.strip_prefix('/')
            .and_then(|p| p.strip_prefix(l.as_str()))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_url_drops_the_query_and_uses_the_canonical_host() {
        let origin = Origin::new("example.com", true);
        assert_eq!(
            origin.url("/about?utm_source=x"),
            "https://example.com/about"
        );
        assert_eq!(origin.url("nonsense"), "https://example.com/");
    }

    #[test]
    fn absolute_links_puts_the_sites_own_links_and_pictures_on_its_host() {
        let origin = Origin::new("example.com", true);
        let html = r#"<p>See <a href=/page/7>this</a>, <a href="https://x.test/a">that</a> and <a href=#top>up</a>.</p><img src=/media/a.jpg srcset="/media/a.jpg 400w, /media/b.jpg 800w" alt="A &amp; B">"#;
        assert_eq!(
            absolute_links(html, &origin),
            r#"<p>See <a href="https://example.com/page/7">this</a>, <a href="https://x.test/a">that</a> and <a href=#top>up</a>.</p><img src="https://example.com/media/a.jpg" srcset="https://example.com/media/a.jpg 400w, https://example.com/media/b.jpg 800w" alt="A &amp; B">"#
        );
        let plain = "<p>No links, <b>bold</b> &amp; //not/a/path</p>";
        assert_eq!(absolute_links(plain, &origin), plain);
    }

    #[test]
    fn canonical_link_escapes_and_reads_the_request_path() {
        let mut env = Environment::new();
        register(&mut env, Origin::new("a.test", false));
        env.add_template("t", "{{ canonical_link() }}|{{ canonical_url(path='/x') }}")
            .unwrap();
        let out = env
            .get_template("t")
            .unwrap()
            .render(minijinja::context! { request => minijinja::context! { path => "/p/\"q\"" } })
            .unwrap();
        assert_eq!(
            out,
            r#"<link rel="canonical" href="http://a.test/p/&quot;q&quot;">|http://a.test/x"#
        );
    }
}
