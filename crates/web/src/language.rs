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

/// The index (in `languages`) of the site's language the visitor's
/// `Accept-Language` wants most (`nl-BE` matches `nl`; of equal weights the
/// first named wins), else 0, the site's first. `q=0` means "not this one", and
/// an entry whose weight is not a number from 0 to 1 counts for nothing.
///
/// Our own reading of the header rather than the `accept-language` crate's:
/// its newest release (3.1) sorts by an order that is not total when a weight
/// reads as NaN (`q=NaN`), and the standard sort panics on such an order, so one
/// request header could end the request (found by the `accept_language` fuzz
/// target). This one also allocates nothing: one pass keeps the best match.
pub fn pick_language(languages: &[String], headers: &HeaderMap) -> usize {
    if languages.len() < 2 {
        return 0;
    }
    let Some(header) = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()) else {
        return 0;
    };
    let mut best: Option<(usize, f32)> = None;
    for (wanted, weights) in bulwark_http::weighted_choices(header) {
        let Some(quality) = weight(weights) else {
            continue;
        };
        if quality <= best.map_or(0.0, |(_, q)| q) {
            continue;
        }
        let primary = wanted.split('-').next().unwrap_or("");
        if let Some(index) = languages
            .iter()
            .position(|l| l.eq_ignore_ascii_case(wanted))
            .or_else(|| {
                languages
                    .iter()
                    .position(|l| l.eq_ignore_ascii_case(primary))
            })
        {
            best = Some((index, quality));
        }
    }
    best.map_or(0, |(index, _)| index)
}

/// A language's weight from its `q` values as written: 1 when none is given,
/// `None` (the language counts for nothing) for one that is not a number from
/// 0 to 1.
fn weight<'a>(written: impl Iterator<Item = &'a str>) -> Option<f32> {
    let mut quality = 1.0;
    for q in written {
        quality = q.parse::<f32>().ok().filter(|q| (0.0..=1.0).contains(q))?;
    }
    Some(quality)
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

    #[test]
    fn the_heaviest_weight_wins_and_of_equal_weights_the_first_named() {
        assert_eq!(pick(&["en", "nl", "de"], "de;q=0.4, nl;q=0.8, en;q=0.2"), 1);
        assert_eq!(pick(&["en", "nl", "de"], "de, nl"), 2);
        assert_eq!(pick(&["en", "nl", "de"], "fr, de;q=0.5, NL ; Q=0.5"), 2);
        assert_eq!(pick(&["en", "pt-br"], "pt-BR"), 1);
    }

    #[test]
    fn a_weight_that_is_not_a_number_from_0_to_1_counts_for_nothing() {
        assert_eq!(pick(&["en", "nl"], "nl;q=NaN"), 0);
        assert_eq!(pick(&["en", "nl"], "nl;q=2, en;q=0.1"), 0);
        assert_eq!(pick(&["en", "nl"], "nl;q=-0.5"), 0);
        assert_eq!(pick(&["en", "nl"], "nl;q=inf"), 0);
        // The fuzz target's input that made the `accept-language` crate's sort
        // panic: many elements, some weighing NaN.
        let header = "n=-NAn;;;;3;,;n=-NAn;;;;3;,;:;,A,;;A,;,n4.;;;3;,;:;,,,n(,,:;,A,;;A,;,n4.;;;3;,;:;,,,n(,,,,";
        assert_eq!(pick(&["en", "nl", "pt-br", "de"], header), 0);
        assert_eq!(
            pick(
                &["en", "nl"],
                &format!("{},nl;q=0.1", "x;q=nan,".repeat(40))
            ),
            1
        );
    }
}
