//! `page`: a resource's page.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode};

use bulwark_template::RenderScope;

use crate::bottleneck::RenderCost;
use crate::controllers::Controller;
use crate::error_page::error_response;
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
        Box::pin(async move {
            let render = limited(req, &self.cost, || {
                let scope = render_scope(req);
                (render_resource_page(req, &scope), scope)
            });
            if self.cache && page_cache::cacheable(req) {
                page_cache::serve(req, render).await
            } else {
                render.await.0
            }
        })
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
                Ok(true) => Outcome::Response(error_response(req.site, StatusCode::GONE, None)),
                Ok(false) => Outcome::NotFound,
                Err(e) => Outcome::Failed(e.into()),
            };
        }
        Err(e) => return Outcome::Failed(e.into()),
    };
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
