//! Rendering a template for a request: through the site's render bottleneck, with
//! the models as this request may see them, the path arguments, the query string
//! and the request details as variables.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use minijinja::Value;

use bulwark_template::{ModelRoot, RenderError, RenderErrorKind, RenderScope};

use crate::bottleneck::{RenderCost, busy_response};
use crate::events::PageRendered;
use crate::form::parse_form;
use crate::representation::{Content, Outcome, Representation};
use crate::request::RequestCtx;

/// A render through the site's bottleneck: `503` when no slot frees up in time.
pub(crate) async fn limited(
    req: &RequestCtx<'_>,
    cost: &RenderCost,
    render: impl FnOnce() -> (Outcome, Arc<RenderScope>),
) -> (Outcome, Option<Arc<RenderScope>>) {
    match req.site.renders().run(cost, render).await {
        Ok((outcome, scope)) => (outcome, Some(scope)),
        Err(_) => (Outcome::Response(busy_response()), None),
    }
}

/// A module's own page answered with `status`: [`render_uncached`] with the
/// default render cost.
pub async fn render_page(
    req: &RequestCtx<'_>,
    template: &str,
    status: StatusCode,
    vars: BTreeMap<String, Value>,
) -> Outcome {
    match render_uncached(req, &RenderCost::default(), template, vars).await {
        Outcome::Found(mut page) => {
            page.status = status;
            Outcome::Found(page)
        }
        other => other,
    }
}

/// Renders `template` for a module's controller (a form page): through the
/// render bottleneck like any page, with `extra` added to the variables a
/// `template` rule gets (`q`, `request`, `m`, the path arguments), and never
/// from or into the page cache (the answer depends on what was posted). `cost`
/// is the controller's own measure of how long its renders take.
pub async fn render_uncached(
    req: &RequestCtx<'_>,
    cost: &RenderCost,
    template: &str,
    extra: BTreeMap<String, Value>,
) -> Outcome {
    let content_type = crate::content_type::content_type_for(template);
    limited(req, cost, || {
        let scope = render_scope(req, false);
        let outcome = render_template(req, &scope, template, &content_type, extra);
        (outcome, scope)
    })
    .await
    .0
}

/// The models as this request's principal may see them, for a page that
/// goes into the page cache (`cached`: what it reads is kept) or not.
pub(crate) fn render_scope(req: &RequestCtx<'_>, cached: bool) -> Arc<RenderScope> {
    let scope = RenderScope::for_site(
        req.site.models().clone(),
        req.principal().clone(),
        req.site.policy().clone(),
        req.site.page_urls().clone(),
        Some(req.render_language()),
    );
    if !cached {
        scope.forget_page_dependencies();
    }
    scope
}

/// Renders `template` with the path arguments, `q`, `request`, `m` and `extra`.
pub(crate) fn render_template(
    req: &RequestCtx<'_>,
    scope: &Arc<RenderScope>,
    template: &str,
    content_type: &HeaderValue,
    vars: BTreeMap<String, Value>,
) -> Outcome {
    let mut q: Vec<(String, String)> = parse_form(req.parts.uri.query().unwrap_or("").as_bytes());
    if req.parts.method == Method::POST {
        q.extend(parse_form(&req.body));
    }
    let q: BTreeMap<String, Value> = q.into_iter().map(|(k, v)| (k, Value::from(v))).collect();
    let alternates = if req.site.language_urls() {
        let resource = vars
            .get("rsc")
            .and_then(|r| r.downcast_object_ref::<bulwark_template::RscObject>())
            .map(|r| r.resource().as_ref());
        Value::from_object(crate::language::Alternates::of(req, resource))
    } else {
        Value::from(Vec::<Value>::new())
    };
    let request = Value::from_object(RequestVars([
        Value::from(req.parts.uri.path()),
        Value::from(req.parts.method.as_str()),
        Value::from(req.parts.uri.query().unwrap_or("")),
        Value::from(req.language()),
        Value::from(scope.url_prefix()),
        alternates,
        Value::from(req.auth().csrf_token.as_deref()),
        Value::from(req.principal().user_id().map(|id| id.0)),
        Value::from(req.auth().viewing_as.as_deref()),
    ]));
    scope.set_request(request.clone());
    // What is rendered from a template goes when a reload changes it.
    scope.depend_with(|| req.site.templates().dependency_key(template));
    let vars = PageVars {
        q: Value::from(q),
        request,
        m: Value::from_object(ModelRoot(scope.clone())),
        extra: vars,
        args: req
            .args
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect(),
    };
    req.site
        .models()
        .renders
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // The clock is read only for someone who listens.
    let observed = req.site.notifier().has_observers::<PageRendered>();
    let started = observed.then(std::time::Instant::now);
    let rendered = req
        .site
        .templates()
        .render(template, Value::from_object(vars));
    if let Some(started) = started {
        req.site.notifier().notify(&PageRendered {
            path: req.parts.uri.path().to_string(),
            template: template.to_string(),
            took: started.elapsed(),
            ok: rendered.is_ok() && scope.failure().is_none(),
        });
    }
    // A read that failed inside a lookup left the value out: the page is not
    // whole, so it is neither served nor cached.
    if let Some(failure) = scope.failure() {
        let err = match rendered {
            Err(mut err) => {
                err.kind = failure.kind;
                err
            }
            Ok(_) => RenderError::from(failure),
        };
        return Outcome::Failed(err);
    }
    match rendered {
        Err(err) if err.kind == RenderErrorKind::PageMissing => Outcome::NotFound,
        Ok(html) => Outcome::Found(Representation {
            status: StatusCode::OK,
            content_type: content_type.clone(),
            last_modified: None,
            // Pages may show per-visitor data: browsers must always ask again.
            cache_control: "no-cache",
            content: Content::Dynamic(Bytes::from(html)),
            per_language: true,
            stale: false,
            etag: None,
            attachment: false,
            surrogate_keys: None,
        }),
        Err(err) => Outcome::Failed(err),
    }
}

/// `request` (and `m.req`): the request's details, in the order of
/// [`REQUEST_FIELDS`]. Looked up by name like [`PageVars`], for the same
/// reason: a map of them built per render cost more than a small template.
#[derive(Debug)]
struct RequestVars([Value; REQUEST_FIELDS.len()]);

/// `prefix` is what the page's links start with (`/nl`); `alternates` the
/// page in each of the site's languages (for a language switch and hreflang
/// links).
const REQUEST_FIELDS: [&str; 9] = [
    "path",
    "method",
    "query",
    "language",
    "prefix",
    "alternates",
    "csrf_token",
    "user_id",
    "viewing_as",
];

impl minijinja::value::Object for RequestVars {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let at = REQUEST_FIELDS
            .iter()
            .position(|f| Some(*f) == key.as_str())?;
        Some(self.0[at].clone())
    }

    fn enumerate(self: &Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::Str(&REQUEST_FIELDS)
    }
}

/// A page's variables, looked up by name as the template asks: `q`,
/// `request` and `m`, then a module's extras, then the path arguments. (A map
/// of them built for every render, its keys and the conversion to the
/// engine's own map included, cost more than a small template's rendering.)
#[derive(Debug)]
struct PageVars {
    q: Value,
    request: Value,
    m: Value,
    extra: BTreeMap<String, Value>,
    args: Vec<(String, Value)>,
}

impl minijinja::value::Object for PageVars {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        match key {
            "q" => Some(self.q.clone()),
            "request" => Some(self.request.clone()),
            "m" => Some(self.m.clone()),
            _ => self.extra.get(key).cloned().or_else(|| {
                self.args
                    .iter()
                    .find(|(name, _)| name == key)
                    .map(|(_, value)| value.clone())
            }),
        }
    }

    fn enumerate(self: &Arc<Self>) -> minijinja::value::Enumerator {
        const OWN: [&str; 3] = ["q", "request", "m"];
        let extra = self.extra.keys().map(String::as_str);
        let args = self.args.iter().map(|(k, _)| k.as_str());
        let mut names: Vec<&str> = OWN.to_vec();
        for name in extra.chain(args) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        minijinja::value::Enumerator::Values(names.into_iter().map(Value::from).collect())
    }
}
