//! `controller = "sitemap"`: `sitemap.xml` for search engines, listing the pages of
//! the resources anonymous visitors may see, newest change first.
//!
//! The document is built once and kept until a resource changes (the module's
//! [`ResourceChanged`](bulwark_web::events::ResourceChanged) observer drops it),
//! so a crawler's visits cost one read of the store per change, not per visit.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode};
use serde::Deserialize;

use bulwark_acl::AccessPolicy;
use bulwark_acl::Principal;
use bulwark_store::{ResourceId, SearchQuery, SortKey};
use bulwark_web::{
    Content, Controller, ModuleError, Outcome, Representation, RequestCtx, read_settings,
};

/// The built document, shared by a site's sitemap rules and its change observer.
#[derive(Default)]
pub(crate) struct SitemapCache(Mutex<Option<Bytes>>);

impl SitemapCache {
    pub(crate) fn forget(&self) {
        *self.0.lock().expect("sitemap") = None;
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SitemapOptions {
    /// The most URLs listed (the sitemap protocol allows 50,000).
    #[serde(default = "default_limit")]
    limit: u64,
}

fn default_limit() -> u64 {
    1000
}

pub(crate) struct SitemapController {
    limit: u64,
    cache: Arc<SitemapCache>,
}

impl SitemapController {
    pub(crate) fn new(
        options: &toml::Table,
        cache: Arc<SitemapCache>,
    ) -> Result<SitemapController, ModuleError> {
        let options: SitemapOptions = read_settings(options)?;
        if !(1..=50_000).contains(&options.limit) {
            return Err(ModuleError::new("limit", "must be from 1 to 50000"));
        }
        Ok(SitemapController {
            limit: options.limit,
            cache,
        })
    }

    async fn build(&self, req: &RequestCtx<'_>) -> Result<Bytes, Outcome> {
        // Search engines are anonymous visitors, and the document is shared by all.
        let visitor = Principal::anonymous();
        let store = req.site.models().store.clone();
        let query = SearchQuery {
            published_only: true,
            visibility: req.site.policy().search_filter(&visitor),
            sort: SortKey::Modified,
            descending: true,
            limit: self.limit,
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
        let site = &req.site.site();
        let scheme = if site.config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let mut xml = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for r in resources
            .iter()
            .filter(|r| req.site.policy().may_see(&visitor, r))
        {
            let Some(path) = page_path(req, r.id) else {
                continue;
            };
            xml.push_str(&format!(
                "<url><loc>{}</loc><lastmod>{}</lastmod></url>\n",
                bulwark_template::escape_html(&format!(
                    "{scheme}://{}{path}",
                    site.config.hostname
                )),
                r.modified.format("%Y-%m-%dT%H:%M:%SZ"),
            ));
        }
        xml.push_str("</urlset>\n");
        Ok(Bytes::from(xml))
    }
}

/// A resource's page path by the site's `page_id` rule (`/page/{id}`).
fn page_path(req: &RequestCtx<'_>, id: ResourceId) -> Option<String> {
    req.site
        .site()
        .router
        .url_for("page_id", &[id.0.to_string()], &[])
        .ok()
}

impl Controller for SitemapController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let cached = self.cache.0.lock().expect("sitemap").clone();
            let body = match cached {
                Some(body) => body,
                None => match self.build(req).await {
                    Ok(body) => {
                        *self.cache.0.lock().expect("sitemap") = Some(body.clone());
                        body
                    }
                    Err(outcome) => return outcome,
                },
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
