//! `template`: renders a named template.

use std::collections::BTreeMap;

use futures_util::future::BoxFuture;
use http::{HeaderValue, Method};

use crate::bottleneck::RenderCost;
use crate::content_type::content_type_for;
use crate::controllers::Controller;
use crate::page_cache;
use crate::render::{limited, render_scope, render_template};
use crate::representation::Outcome;
use crate::request::RequestCtx;

/// Renders a named template. Path arguments become template variables, the query
/// string (and a urlencoded POST body) is `q`, request details are `request`.
pub struct TemplateController {
    pub template: String,
    pub content_type: HeaderValue,
    /// Serve anonymous visitors from the page cache.
    pub cache: bool,
    pub cost: RenderCost,
    /// The rule's own variables (`vars`), given to every render.
    vars: BTreeMap<String, minijinja::Value>,
}

impl TemplateController {
    pub fn new(template: &str, content_type: Option<&str>, cache: bool) -> TemplateController {
        let content_type = content_type
            .and_then(|c| HeaderValue::from_str(c).ok())
            .unwrap_or_else(|| content_type_for(template));
        TemplateController {
            template: template.to_string(),
            content_type,
            cache,
            cost: RenderCost::default(),
            vars: BTreeMap::new(),
        }
    }

    /// With the rule's own variables.
    pub fn with_vars(mut self, vars: &BTreeMap<String, String>) -> TemplateController {
        self.vars = vars
            .iter()
            .map(|(k, v)| (k.clone(), minijinja::Value::from(v.as_str())))
            .collect();
        self
    }
}

impl Controller for TemplateController {
    fn allowed_methods(&self) -> &'static [Method] {
        &[Method::GET, Method::HEAD, Method::POST]
    }

    fn reads_body(&self) -> bool {
        true
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        let cached = self.cache && page_cache::cacheable(req);
        let render = limited(req, &self.cost, move || {
            let scope = render_scope(req, cached);
            let outcome = render_template(
                req,
                &scope,
                &self.template,
                &self.content_type,
                self.vars.clone(),
            );
            (outcome, scope)
        });
        page_cache::serve_or_render(req, cached, render)
    }
}
