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
    /// `""`, made once.
    none: Arc<str>,
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
            none: Arc::from(""),
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
        let none = &self.none;
        RenderLanguage {
            order: order.clone(),
            prefix: if in_url { prefix } else { none }.clone(),
            page_prefix: if self.prefixed { prefix } else { none }.clone(),
        }
    }
}

/// `request.alternates` in templates: the page being rendered in each of the
/// site's languages, as `{language, url}`. A resource's page lists the
/// languages it is published in, each at its own URL (that language's slug);
/// another page is the same path with the other language's prefix, the query
/// dropped (these are the pages' canonical URLs, for hreflang links and a
/// language switch). Without language URLs, empty: every language has the
/// same URL.
#[derive(Debug)]
pub(crate) struct Alternates(
    Vec<(String, String)>,
    std::sync::OnceLock<Vec<minijinja::Value>>,
);

impl Alternates {
    pub(crate) fn of(
        req: &crate::RequestCtx<'_>,
        resource: Option<&bulwark_store::Resource>,
    ) -> Alternates {
        let site = req.site;
        let languages = site.languages();
        if !languages.prefixed() {
            return Alternates(Vec::new(), Default::default());
        }
        let names = &site.config().languages;
        if let Some(r) = resource {
            return Alternates(
                names
                    .iter()
                    .filter(|lang| r.props.published_in(lang))
                    .filter_map(|lang| Some((lang.clone(), site.page_url_in(r, lang)?)))
                    .collect(),
                Default::default(),
            );
        }
        let path = req.parts.uri.path();
        let bare = languages.split(path).map_or(path, |(_, rest)| rest);
        Alternates(
            names
                .iter()
                .enumerate()
                // `/nl` + `/` is `/nl/`, the language's front page.
                .map(|(i, lang)| (lang.clone(), format!("{}{bare}", languages.prefix(i))))
                .collect(),
            Default::default(),
        )
    }

    /// The values templates see, made once per render (a page walks them
    /// for its hreflang links and again for its language switch).
    fn list(&self) -> &[minijinja::Value] {
        self.1.get_or_init(|| self.values())
    }

    fn values(&self) -> Vec<minijinja::Value> {
        self.0
            .iter()
            .map(|(language, url)| {
                let url = bulwark_template::url_value(url.clone());
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
        minijinja::value::Enumerator::Seq(self.list().len())
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
