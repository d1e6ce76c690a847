//! `page`: a resource's page.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode};

use bulwark_template::RenderScope;

use crate::bottleneck::RenderCost;
use crate::controllers::Controller;
use crate::error_page::error_response_for;
use crate::page_cache;
use crate::render::{limited, render_scope, render_template};
use crate::representation::Outcome;
use crate::request::RequestCtx;

/// A resource's page: `page.<category>.tpl`, falling back up the category tree to
/// `page.tpl`. Missing and not-visible resources are both a 404; a deleted one
/// that the visitor could see before is a 410.
pub struct PageController {
    /// Serve anonymous visitors from the page cache.
    cache: bool,
    cost: RenderCost,
}

impl PageController {
    pub fn new(cache: bool) -> PageController {
        PageController {
            cache,
            cost: RenderCost::default(),
        }
    }
}

impl Controller for PageController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        let cached = self.cache && page_cache::cacheable(req);
        let render = limited(req, &self.cost, move || {
            let scope = render_scope(req, cached);
            (render_resource_page(req, &scope), scope)
        });
        page_cache::serve_or_render(req, cached, render)
    }
}

fn render_resource_page(req: &RequestCtx<'_>, scope: &Arc<RenderScope>) -> Outcome {
    let Some(key) = req
        .args
        .iter()
        .find(|(k, _)| k == "id")
        .map(|(_, v)| v.as_str())
    else {
        return Outcome::NotFound;
    };
    let rsc = match scope.rsc(key) {
        Ok(Some(rsc)) => rsc,
        Ok(None) => {
            return match scope.is_gone(key) {
                Ok(true) => Outcome::Response(error_response_for(req, StatusCode::GONE, None)),
                Ok(false) => Outcome::NotFound,
                Err(e) => Outcome::Failed(e.into()),
            };
        }
        Err(e) => return Outcome::Failed(e.into()),
    };
    // Not published in the visitor's language: the site's rule says whether
    // it is shown in a fallback language or is not there.
    if req.site.config().language.missing == bulwark_site::MissingTranslation::NotFound
        && rsc
            .downcast_object_ref::<bulwark_template::RscObject>()
            .is_some_and(|r| !r.is_published_in(req.language()))
    {
        return Outcome::NotFound;
    }
    // `/page/{id}/{slug}` with a slug that is not the resource's (an old one,
    // a typo, a link cut short): 301 to the page's own URL, so a changed
    // slug breaks no link and search engines move to the new one.
    if let Some(asked) = req.arg("slug")
        && let Ok(slug) = rsc.get_attr("slug")
        && slug.as_str().is_some_and(|slug| slug != asked)
        && let Some(url) = rsc
            .get_attr("page_url")
            .ok()
            .and_then(|u| u.as_str().map(str::to_owned))
        && url != req.parts.uri.path()
    {
        return Outcome::Response(moved_permanently(&url, req.parts.uri.query()));
    }
    let category = rsc
        .get_attr("category")
        .ok()
        .map(|c| c.to_string())
        .unwrap_or_default();
    let chain = match scope.category_chain(&category) {
        Ok(chain) => chain,
        Err(e) => return Outcome::Failed(e.into()),
    };
    let template = chain
        .iter()
        .map(|c| format!("page.{c}.tpl"))
        .find(|t| req.site.templates().exists(t))
        .unwrap_or_else(|| "page.tpl".to_string());
    let mut vars = BTreeMap::new();
    vars.insert("id".to_string(), rsc.get_attr("id").unwrap_or_default());
    vars.insert("rsc".to_string(), rsc);
    let html = HeaderValue::from_static("text/html; charset=utf-8");
    render_template(req, scope, &template, &html, vars)
}

/// `301 Moved Permanently` to `path` (and the request's query string).
fn moved_permanently(path: &str, query: Option<&str>) -> http::Response<bulwark_http::Body> {
    let location = match query {
        Some(q) if !q.is_empty() => format!("{path}?{q}"),
        _ => path.to_owned(),
    };
    let mut resp = http::Response::new(bulwark_http::Body::empty());
    *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
    if let Ok(location) = HeaderValue::from_str(&location) {
        resp.headers_mut().insert(http::header::LOCATION, location);
    }
    resp
}
