//! `canonical_url()` and `canonical_link()`: the one absolute URL of the page being
//! rendered, on the site's canonical host, so that aliases, `?utm_*` query strings
//! and the like count as one page for search engines.

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

    /// `path` (from the request, or given), without its query string.
    fn url(&self, path: &str) -> String {
        let path = path.split(['?', '#']).next().unwrap_or("/");
        let path = if path.starts_with('/') { path } else { "/" };
        format!("{}{path}", self.0)
    }
}

pub(crate) fn register(env: &mut Environment<'static>, origin: Origin) {
    let for_link = origin.clone();
    env.add_function(
        "canonical_url",
        move |state: &State, kwargs: Kwargs| -> Result<Value, Error> {
            let url = origin.url(&path(state, &kwargs)?);
            // Plain URLs go out as they are (`/` need not be escaped anywhere);
            // one with characters HTML gives meaning to is left to autoescape.
            Ok(if url.contains(['&', '"', '\'', '<', '>']) {
                Value::from(url)
            } else {
                Value::from_safe_string(url)
            })
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

/// `path="..."` if given, else the path of the request being rendered.
fn path(state: &State, kwargs: &Kwargs) -> Result<String, Error> {
    let given: Option<String> = kwargs.get("path")?;
    kwargs.assert_all_used()?;
    if let Some(path) = given {
        return Ok(path);
    }
    state
        .lookup("request")
        .and_then(|r| r.get_attr("path").ok())
        .and_then(|p| p.as_str().map(str::to_string))
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOperation,
                "canonical_url(): no request here; pass path=\"/...\"",
            )
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
