//! The `comment_post` controller kind: the comment form's `POST` from a
//! browser without script (with script, the page posts to `/api/comments`
//! and says what happened in place).
//!
//! An approved comment answers `303` to its place on the page
//! (`#comment-{id}`); one that waits (or a bot's) the page
//! `comment_posted.tpl` saying so; one without a ticket the same page with
//! the comment filled in and a ticket, to confirm; a wrong field the form
//! again with the field named (`400`); too many posts `429`.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::header::{CACHE_CONTROL, LOCATION};
use http::{HeaderValue, Method, Response, StatusCode};
use minijinja::Value;

use bulwark_acl::AccessPolicy;
use bulwark_module_auth::visitor_posts::{HONEYPOT_FIELD, TICKET_FIELD};
use bulwark_store::ResourceId;
use bulwark_web::{
    Controller, ModuleError, Outcome, RequestCtx, busy_response, parse_form, read_settings,
    render_page,
};

use crate::SiteComments;
use crate::posting::{self, Posted, Refused, Typed};
use crate::table::Status;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    /// The answer's template (default `comment_posted.tpl`).
    template: Option<String>,
}

pub(crate) struct PostController {
    comments: Arc<SiteComments>,
    template: String,
}

impl PostController {
    pub(crate) fn new(
        comments: Arc<SiteComments>,
        options: &toml::Table,
    ) -> Result<PostController, ModuleError> {
        let options: Options = read_settings(options)?;
        Ok(PostController {
            comments,
            template: options
                .template
                .unwrap_or_else(|| "comment_posted.tpl".to_owned()),
        })
    }
}

const POST: &[Method] = &[Method::POST];

impl Controller for PostController {
    fn allowed_methods(&self) -> &'static [Method] {
        POST
    }

    fn reads_body(&self) -> bool {
        true
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(self.post(req))
    }
}

/// `typed` from the form's fields.
pub(crate) fn typed_from_form(body: &[u8]) -> Typed {
    let fields = parse_form(body);
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    Typed {
        rsc: field("rsc"),
        parent: field("parent"),
        name: field("name"),
        email: field("email"),
        url: field("url"),
        body: field("body"),
        extra: field(HONEYPOT_FIELD),
        ticket: field(TICKET_FIELD),
    }
}

impl PostController {
    async fn post(&self, req: &RequestCtx<'_>) -> Outcome {
        let typed = typed_from_form(&req.body);
        let back = self.page_of(req, &typed).await;
        let mut vars = BTreeMap::new();
        vars.insert("back".to_owned(), Value::from(back.clone()));
        vars.insert("typed".to_owned(), typed_value(&typed));
        vars.insert("honeypot_field".to_owned(), Value::from(HONEYPOT_FIELD));
        vars.insert("ticket_field".to_owned(), Value::from(TICKET_FIELD));
        let (status, outcome) = match posting::post(req, &self.comments, &typed).await {
            Ok(Posted::Stored(c)) if c.status == Status::Approved => {
                let to = format!("{}#comment-{}", back.as_deref().unwrap_or("/"), c.id.0);
                return see_other(&to);
            }
            Ok(posted @ (Posted::Stored(_) | Posted::Dropped)) => {
                (StatusCode::OK, posted.told_status())
            }
            Ok(Posted::Confirm { ticket }) => {
                vars.insert("ticket".to_owned(), Value::from(ticket));
                (StatusCode::OK, "confirm")
            }
            Err(Refused::Invalid(field, why)) => {
                vars.insert("field".to_owned(), Value::from(field));
                vars.insert("problem".to_owned(), Value::from(why));
                (StatusCode::BAD_REQUEST, "invalid")
            }
            Err(Refused::Closed) => (StatusCode::NOT_FOUND, "closed"),
            Err(Refused::TooMany(wait)) => {
                vars.insert("retry_after".to_owned(), Value::from(wait.as_secs().max(1)));
                (StatusCode::TOO_MANY_REQUESTS, "too_many")
            }
            Err(Refused::Store(e)) if e.is_temporary() => {
                return Outcome::Response(busy_response());
            }
            Err(Refused::Store(e)) => {
                tracing::error!(error = %e, "storing a comment");
                vars.insert("problem".to_owned(), Value::from(e.to_string()));
                (StatusCode::INTERNAL_SERVER_ERROR, "failed")
            }
        };
        vars.insert("outcome".to_owned(), Value::from(outcome));
        match render_page(req, &self.template, status, vars).await {
            Outcome::Found(mut page) => {
                // What was posted comes back in it: no copy is kept anywhere.
                page.cache_control = "no-store";
                Outcome::Found(page)
            }
            other => other,
        }
    }

    /// The page of the resource the comment is on, if it has one.
    async fn page_of(&self, req: &RequestCtx<'_>, typed: &Typed) -> Option<String> {
        let id = ResourceId(typed.rsc.trim().parse().ok()?);
        let store = req.site.models().store.clone();
        let resource = store.run(move |s| s.resource(id)).await.ok()??;
        req.site
            .policy()
            .may_see(req.principal(), &resource)
            .then(|| req.site.page_url(&resource))?
    }
}

fn typed_value(typed: &Typed) -> Value {
    let mut map = BTreeMap::new();
    for (k, v) in [
        ("rsc", &typed.rsc),
        ("parent", &typed.parent),
        ("name", &typed.name),
        ("email", &typed.email),
        ("url", &typed.url),
        ("body", &typed.body),
    ] {
        map.insert(k, Value::from(v.as_str()));
    }
    Value::from(map)
}

fn see_other(location: &str) -> Outcome {
    let mut resp = Response::new(bulwark_http::Body::empty());
    *resp.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(location) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(LOCATION, location);
    }
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Outcome::Response(resp)
}
