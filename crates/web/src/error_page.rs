//! Error responses: the site's own `404.tpl` / `500.tpl` (or `error.tpl` from core),
//! a detailed page in development mode, and a plain fallback when even the error
//! template fails.

use http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use minijinja::context;

use bulwark_http::{Body, html_response, plain_error_page};
use bulwark_template::{Location, RenderError};

use crate::request::RequestCtx;
use crate::site::SiteRuntime;

pub fn error_response(
    site: &SiteRuntime,
    status: StatusCode,
    error: Option<&RenderError>,
) -> Response<Body> {
    error_page(site, status, error, None, None)
}

/// [`error_response`] in the language of the request (its URL's, else its
/// browser's): the page's texts from the catalogs, as any page's.
pub fn error_response_for(
    req: &RequestCtx<'_>,
    status: StatusCode,
    error: Option<&RenderError>,
) -> Response<Body> {
    error_page(req.site, status, error, None, Some(req.language()))
}

/// The site's error page for `status`, saying `why` (words for the visitor:
/// what happened and what to do) instead of the status's usual sentence.
pub fn error_response_saying(site: &SiteRuntime, status: StatusCode, why: &str) -> Response<Body> {
    error_page(site, status, None, Some(why), None)
}

fn error_page(
    site: &SiteRuntime,
    status: StatusCode,
    error: Option<&RenderError>,
    why: Option<&str>,
    language: Option<&str>,
) -> Response<Body> {
    let html = match error {
        Some(err) if site.dev() => {
            let mut resp = html_response(status, dev_error_page(status, err));
            // Its own policy (kept by the site's security headers): the page's one
            // inline style, and nothing else.
            resp.headers_mut().insert(
                CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
            );
            return resp;
        }
        _ => {
            let reason = status.canonical_reason().unwrap_or("");
            let specific = format!("{}.tpl", status.as_u16());
            let name = if site.templates().exists(&specific) {
                specific.as_str()
            } else {
                "error.tpl"
            };
            match site.templates().render(
                name,
                context! {
                    status => status.as_u16(),
                    reason => reason,
                    why => why,
                    language => language.unwrap_or_else(|| {
                        site.config().languages.first().map_or("en", String::as_str)
                    }),
                },
            ) {
                Ok(html) => html,
                Err(e) => {
                    tracing::error!(site = %site.site().name(), "error page {name}: {e}");
                    plain_error_page(status)
                }
            }
        }
    };
    html_response(status, html)
}

/// An answer without a body (`204`, `304`), never stored by a cache.
pub fn empty_response(status: StatusCode) -> Response<Body> {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// A JSON answer for the API and push endpoints; never stored by browsers.
pub fn json_response(status: StatusCode, value: &serde_json::Value) -> Response<Body> {
    let mut resp = Response::new(Body::from(value.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn dev_error_page(status: StatusCode, err: &RenderError) -> String {
    let esc = bulwark_template::escape_html;
    let location = match &err.location {
        Some(Location {
            template,
            line: Some(line),
        }) => format!("{}, line {line}", esc(template)),
        Some(Location { template, .. }) => esc(template),
        None => "unknown template".to_string(),
    };
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{status} template error</title>\
         <style>body{{font:15px/1.5 system-ui,sans-serif;margin:2rem;color:#222}}\
         pre{{background:#f6f6f6;padding:1rem;overflow:auto}}.where{{color:#a00}}</style></head>\
         <body><h1>Template error</h1><p class=\"where\">{location}</p><pre>{}</pre><pre>{}</pre>\
         <p>This page is shown because the server runs with <code>--dev</code>.</p></body></html>",
        esc(&err.message),
        esc(&err.detail)
    )
}
