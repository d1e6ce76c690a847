//! Which of a site's languages a visitor gets: from the URL's prefix
//! (`/nl/...`) on a site that puts languages in its URLs, else from
//! `Accept-Language`; and in which languages texts are read (the wanted one,
//! then the site's fallbacks).

use std::sync::Arc;

use bulwark_site::{LanguageUrls, SiteConfig};
use bulwark_template::RenderLanguage;
use http::HeaderMap;
use http::header::ACCEPT_LANGUAGE;

/// A site's languages as requests use them, worked out once per site load.
pub(crate) struct SiteLanguages {
    /// Whether URLs carry the language (`/nl/...`).
    prefixed: bool,
    /// By language index: the order texts are read in, and the prefix.
    by_index: Vec<(Arc<[String]>, Arc<str>)>,
}

impl SiteLanguages {
    pub(crate) fn new(config: &SiteConfig) -> SiteLanguages {
        let by_index = config
            .languages
            .iter()
            .map(|wanted| {
                let mut order = vec![wanted.clone()];
                order.extend(
                    config
                        .language
                        .fallback
                        .iter()
                        .filter(|l| *l != wanted)
                        .cloned(),
                );
                (Arc::from(order), Arc::from(format!("/{wanted}")))
            })
            .collect();
        SiteLanguages {
            prefixed: config.language.urls == LanguageUrls::Prefix,
            by_index,
        }
    }

    /// Whether the site's URLs carry the language.
    pub(crate) fn prefixed(&self) -> bool {
        self.prefixed
    }

    /// The language a path starts with (`/nl/about`, `/nl`): its index and
    /// the rest of the path (`/about`, `/`). `None` on a site without
    /// language URLs, or for a path without one.
    pub(crate) fn split<'p>(&self, path: &'p str) -> Option<(usize, &'p str)> {
        if !self.prefixed {
            return None;
        }
        self.by_index
            .iter()
            .enumerate()
            .find_map(|(index, (_, prefix))| {
                let rest = path.strip_prefix(prefix.as_ref())?;
                match rest {
                    "" => Some((index, "/")),
                    rest if rest.starts_with('/') => Some((index, rest)),
                    _ => None,
                }
            })
    }

    /// The prefix of a language (`/nl`).
    pub(crate) fn prefix(&self, index: usize) -> &str {
        self.by_index.get(index).map_or("", |(_, p)| p)
    }

    /// How a render in language `index` reads texts; with the language's
    /// prefix on its links when the URL had it.
    pub(crate) fn render(&self, index: usize, in_url: bool) -> RenderLanguage {
        let (order, prefix) = &self.by_index[index.min(self.by_index.len() - 1)];
        RenderLanguage {
            order: order.clone(),
            prefix: if in_url {
                prefix.clone()
            } else {
                Arc::from("")
            },
        }
    }
}

/// `request.alternates` in templates: the page being rendered in each of the
/// site's languages, as `{language, url}` (the path with the other language's
/// prefix, the query kept; without language URLs, the same path for all).
/// Made when a template asks.
#[derive(Debug)]
pub(crate) struct Alternates {
    languages: Vec<String>,
    prefixes: Vec<String>,
    /// The path without its language prefix, and `?query` or "".
    rest: String,
    prefixed: bool,
}

impl Alternates {
    pub(crate) fn of(req: &crate::RequestCtx<'_>) -> Alternates {
        let site = req.site;
        let languages = site.languages();
        let path = req.parts.uri.path();
        let bare = languages.split(path).map_or(path, |(_, rest)| rest);
        let query = req
            .parts
            .uri
            .query()
            .filter(|q| !q.is_empty())
            .map_or(String::new(), |q| format!("?{q}"));
        Alternates {
            languages: site.config().languages.clone(),
            prefixes: (0..site.config().languages.len())
                .map(|i| languages.prefix(i).to_owned())
                .collect(),
            rest: format!("{bare}{query}"),
            prefixed: languages.prefixed(),
        }
    }

    fn list(&self) -> Vec<minijinja::Value> {
        self.languages
            .iter()
            .zip(&self.prefixes)
            .map(|(language, prefix)| {
                let url = if self.prefixed {
                    // `/nl` + `/` is `/nl/`, the language's front page.
                    format!("{prefix}{}", self.rest)
                } else {
                    self.rest.clone()
                };
                // Plain paths go out as they are (`/` needs no escaping); one
                // with characters HTML gives meaning to is left to autoescape.
                let url = if url.contains(['&', '"', '\'', '<', '>']) {
                    minijinja::Value::from(url)
                } else {
                    minijinja::Value::from_safe_string(url)
                };
                minijinja::context! { language => language, url => url }
            })
            .collect()
    }
}

impl minijinja::value::Object for Alternates {
    fn repr(self: &Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &minijinja::Value) -> Option<minijinja::Value> {
        self.list().get(key.as_usize()?).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::Values(self.list())
    }
}

/// The index (in `languages`) of the first of the visitor's `Accept-Language`
/// preferences that the site has (`nl-BE` matches `nl`), else 0, the site's first.
/// `q=0` means "not this one".
pub fn pick_language(languages: &[String], headers: &HeaderMap) -> usize {
    if languages.len() < 2 {
        return 0;
    }
    let Some(header) = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()) else {
        return 0;
    };
    for (wanted, quality) in accept_language::parse_with_quality(header) {
        if quality <= 0.0 {
            continue;
        }
        let wanted = wanted.to_ascii_lowercase();
        let primary = wanted.split('-').next().unwrap_or("");
        if let Some(index) = languages
            .iter()
            .position(|l| *l == wanted)
            .or_else(|| languages.iter().position(|l| l == primary))
        {
            return index;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn pick(languages: &[&str], header: &str) -> usize {
        let languages: Vec<String> = languages.iter().map(|l| l.to_string()).collect();
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT_LANGUAGE, HeaderValue::from_str(header).unwrap());
        pick_language(&languages, &headers)
    }

    #[test]
    fn a_regional_preference_matches_its_language_and_q_zero_refuses() {
        assert_eq!(pick(&["en", "nl"], "nl-BE, en;q=0.5"), 1);
        assert_eq!(pick(&["en", "nl"], "nl;q=0, en"), 0);
        assert_eq!(pick(&["en", "nl"], "fr"), 0);
    }
}
