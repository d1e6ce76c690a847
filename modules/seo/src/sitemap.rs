//! `controller = "sitemap"`: `sitemap.xml` for search engines, listing the
//! pages of the content anonymous visitors may see, at their canonical URLs,
//! newest change first, with `lastmod`; on a site with language URLs, one URL
//! per language a resource is published in, each naming the others
//! (`xhtml:link rel="alternate" hreflang`). The site's machinery (categories,
//! predicates, user groups: everything under `meta`) is left out.
//!
//! Past `per_file` URLs (at most the protocol's 50,000) the sitemap is split:
//! `/sitemap.xml` becomes an index of `/sitemap/1.xml`, `/sitemap/2.xml`...
//! (the `sitemap_part` rule).
//!
//! The documents are built once and kept until a resource changes (the
//! module's [`ResourceChanged`](bulwark_web::events::ResourceChanged)
//! observer drops them), so a crawler's visits cost one read of the store per
//! change, not per visit.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode};
use serde::Deserialize;

use bulwark_acl::AccessPolicy;
use bulwark_acl::Principal;
use bulwark_store::{Resource, SearchQuery, SortKey};
use bulwark_web::{
    Content, Controller, ModuleError, Outcome, Representation, RequestCtx, read_settings,
};

/// The built documents, shared by a site's sitemap rules and its change observer.
#[derive(Default)]
pub(crate) struct SitemapCache(Mutex<Option<Arc<Sitemap>>>);

impl SitemapCache {
    pub(crate) fn forget(&self) {
        *self.0.lock().expect("sitemap") = None;
    }
}

/// What `/sitemap.xml` and its parts answer.
pub(crate) struct Sitemap {
    /// The URL set, or the index of the parts.
    main: Bytes,
    /// The parts, when there is more than one.
    parts: Vec<Bytes>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SitemapOptions {
    /// The most resources listed.
    #[serde(default = "default_limit")]
    limit: u64,
    /// The most URLs in one file (the sitemap protocol allows 50,000).
    #[serde(default = "default_per_file")]
    per_file: usize,
    /// Categories left out, with everything below them.
    #[serde(default = "default_exclude")]
    exclude: Vec<String>,
}

fn default_limit() -> u64 {
    200_000
}

fn default_per_file() -> usize {
    50_000
}

fn default_exclude() -> Vec<String> {
    vec!["meta".to_owned()]
}

pub(crate) struct SitemapController {
    options: SitemapOptions,
    cache: Arc<SitemapCache>,
    /// Pages that are not resources, listed too (`[seo] sitemap_pages`).
    pages: Arc<[String]>,
}

/// The module's own table in `site.toml`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct SeoSettings {
    /// The names of rules without parameters whose pages the sitemap lists
    /// (the front page, the list pages), in every language. In the module's
    /// table rather than the rule's, so a site that names them still loads
    /// with the module turned off.
    #[serde(default)]
    pub(crate) sitemap_pages: Vec<String>,
}

impl SeoSettings {
    pub(crate) fn parse(table: Option<&toml::Table>) -> Result<SeoSettings, ModuleError> {
        table.map_or_else(|| Ok(SeoSettings::default()), read_settings)
    }
}

/// One `<url>`: where, when last changed (not said for a page that is not a
/// resource), and the same page in each language.
struct Entry {
    loc: String,
    lastmod: Option<String>,
    alternates: Arc<[(String, String)]>,
}

impl SitemapController {
    pub(crate) fn new(
        options: &toml::Table,
        cache: Arc<SitemapCache>,
        pages: Arc<[String]>,
    ) -> Result<SitemapController, ModuleError> {
        let options: SitemapOptions = read_settings(options)?;
        if !(1..=1_000_000).contains(&options.limit) {
            return Err(ModuleError::new("limit", "must be from 1 to 1000000"));
        }
        if !(1..=50_000).contains(&options.per_file) {
            return Err(ModuleError::new("per_file", "must be from 1 to 50000"));
        }
        Ok(SitemapController {
            options,
            cache,
            pages,
        })
    }

    async fn build(&self, req: &RequestCtx<'_>) -> Result<Sitemap, Outcome> {
        // Search engines are anonymous visitors, and the document is shared by all.
        let visitor = Principal::anonymous();
        let store = req.site.models().store.clone();
        let query = SearchQuery {
            published_only: true,
            visibility: req.site.policy().search_filter(&visitor),
            exclude_categories: self.options.exclude.clone(),
            sort: SortKey::Modified,
            descending: true,
            limit: self.options.limit,
            count_total: false,
            ..SearchQuery::default()
        };
        let resources = store
            .run(move |s| {
                let page = s.search(&query)?;
                let mut found = Vec::with_capacity(page.ids.len());
                for id in page.ids {
                    found.extend(s.resource(id)?);
                }
                Ok(found)
            })
            .await
            .map_err(|e| Outcome::from(bulwark_web::Problem::from(e)))?;
        let origin = req.site.config().origin();
        let mut entries = pages_of(req, &origin, &self.pages);
        for r in resources
            .iter()
            .filter(|r| req.site.policy().may_see(&visitor, r))
        {
            entries.extend(entries_of(req, &origin, r));
        }
        let per_file = self.options.per_file;
        if entries.len() <= per_file {
            return Ok(Sitemap {
                main: urlset(&entries),
                parts: Vec::new(),
            });
        }
        let parts: Vec<Bytes> = entries.chunks(per_file).map(urlset).collect();
        let mut index = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for n in 1..=parts.len() {
            let loc = part_url(req, &origin, n);
            index.push_str(&format!("<sitemap><loc>{}</loc></sitemap>\n", xml(&loc)));
        }
        index.push_str("</sitemapindex>\n");
        Ok(Sitemap {
            main: Bytes::from(index),
            parts,
        })
    }
}

/// A resource's URLs: one per language it is published in on a site with
/// language URLs, else its one page.
fn entries_of(req: &RequestCtx<'_>, origin: &str, r: &Resource) -> Vec<Entry> {
    let lastmod = Some(r.modified.format("%Y-%m-%dT%H:%M:%SZ").to_string());
    if !req.site.language_urls() {
        return req
            .site
            .page_url(r)
            .map(|path| Entry {
                loc: format!("{origin}{path}"),
                lastmod,
                alternates: Arc::from([]),
            })
            .into_iter()
            .collect();
    }
    let alternates: Arc<[(String, String)]> = req
        .site
        .config()
        .languages
        .iter()
        .filter(|lang| r.props.published_in(lang))
        .filter_map(|lang| {
            let path = req.site.page_url_in(r, lang)?;
            Some((lang.clone(), format!("{origin}{path}")))
        })
        .collect();
    alternates
        .iter()
        .map(|(_, loc)| Entry {
            loc: loc.clone(),
            lastmod: lastmod.clone(),
            alternates: alternates.clone(),
        })
        .collect()
}

/// The pages of the rules named in `pages`: each in every language on a
/// site with language URLs (`/en/articles`, `/nl/articles`), else its one
/// path. A name that is not a rule without parameters is left out, said in
/// the log.
fn pages_of(req: &RequestCtx<'_>, origin: &str, pages: &[String]) -> Vec<Entry> {
    let mut entries = Vec::new();
    for name in pages {
        let path = match req.site.site().router.url_for(name, &[], &[]) {
            Ok(path) => path,
            Err(e) => {
                tracing::warn!(site = %req.site.site().name(), "sitemap page {name:?}: {e}");
                continue;
            }
        };
        if !req.site.language_urls() {
            entries.push(Entry {
                loc: format!("{origin}{path}"),
                lastmod: None,
                alternates: Arc::from([]),
            });
            continue;
        }
        let alternates: Arc<[(String, String)]> = req
            .site
            .config()
            .languages
            .iter()
            .map(|lang| {
                let loc = format!("{origin}{}", req.site.path_in(&path, lang));
                (lang.clone(), loc)
            })
            .collect();
        entries.extend(alternates.iter().map(|(_, loc)| Entry {
            loc: loc.clone(),
            lastmod: None,
            alternates: alternates.clone(),
        }));
    }
    entries
}

fn urlset(entries: &[Entry]) -> Bytes {
    let with_languages = entries.iter().any(|e| !e.alternates.is_empty());
    let mut xml_text = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"",
    );
    if with_languages {
        xml_text.push_str(" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\"");
    }
    xml_text.push_str(">\n");
    for e in entries {
        xml_text.push_str(&format!("<url><loc>{}</loc>", xml(&e.loc)));
        if let Some(lastmod) = &e.lastmod {
            xml_text.push_str(&format!("<lastmod>{lastmod}</lastmod>"));
        }
        for (lang, href) in e.alternates.iter() {
            xml_text.push_str(&format!(
                "<xhtml:link rel=\"alternate\" hreflang=\"{}\" href=\"{}\"/>",
                xml(lang),
                xml(href)
            ));
        }
        xml_text.push_str("</url>\n");
    }
    xml_text.push_str("</urlset>\n");
    Bytes::from(xml_text)
}

/// Part `n`'s URL, by the site's `sitemap_part` rule.
fn part_url(req: &RequestCtx<'_>, origin: &str, n: usize) -> String {
    let path = req
        .site
        .site()
        .router
        .url_for("sitemap_part", &[format!("{n}.xml")], &[])
        .unwrap_or_else(|_| format!("/sitemap/{n}.xml"));
    format!("{origin}{path}")
}

fn xml(text: &str) -> String {
    bulwark_template::escape_html(text).replace('\'', "&apos;")
}

impl Controller for SitemapController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let cached = self.cache.0.lock().expect("sitemap").clone();
            let sitemap = match cached {
                Some(sitemap) => sitemap,
                None => match self.build(req).await {
                    Ok(sitemap) => {
                        let sitemap = Arc::new(sitemap);
                        *self.cache.0.lock().expect("sitemap") = Some(sitemap.clone());
                        sitemap
                    }
                    Err(outcome) => return outcome,
                },
            };
            // `/sitemap/2.xml`: a part, if there is one.
            let body = match req.arg("part") {
                None => sitemap.main.clone(),
                Some(part) => {
                    let n = part
                        .strip_suffix(".xml")
                        .and_then(|n| n.parse::<usize>().ok())
                        .filter(|n| *n >= 1);
                    match n.and_then(|n| sitemap.parts.get(n - 1)) {
                        Some(body) => body.clone(),
                        None => return Outcome::NotFound,
                    }
                }
            };
            Outcome::Found(Representation {
                status: StatusCode::OK,
                content_type: HeaderValue::from_static("application/xml; charset=utf-8"),
                last_modified: None,
                cache_control: "no-cache",
                content: Content::Dynamic(body),
                per_language: false,
                stale: false,
                etag: None,
                attachment: false,
                surrogate_keys: None,
            })
        })
    }
}
