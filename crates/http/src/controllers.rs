//! The built-in controllers: `template`, `lib`, `file` and `redirect`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::header::LOCATION;
use http::{HeaderValue, Method, Response, StatusCode};
use minijinja::Value;

use bulwark_template::{ModelRoot, RenderScope, Requester};

use bulwark_site::{LibSource, resolve_inside, split_lib_path};

use crate::body::Body;
use crate::bottleneck::RenderCost;
use crate::controller::{
    Content, Controller, EncodedBody, GET_HEAD, Outcome, Representation, RequestCtx,
};
use crate::page_cache;

/// Renders a named template. Path arguments become template variables, the query
/// string (and a urlencoded POST body) is `q`, request details are `request`.
pub struct TemplateController {
    pub template: String,
    pub content_type: HeaderValue,
    /// Serve anonymous visitors from the page cache.
    pub cache: bool,
    pub cost: RenderCost,
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
        }
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
        Box::pin(async move {
            let render = limited(req, &self.cost, || {
                let scope = render_scope(req);
                let outcome = render_template(
                    req,
                    &scope,
                    &self.template,
                    &self.content_type,
                    BTreeMap::new(),
                );
                (outcome, scope)
            });
            if self.cache && page_cache::cacheable(req) {
                page_cache::serve(req, render).await
            } else {
                render.await.0
            }
        })
    }
}

/// A render through the site's bottleneck: `503` when no slot frees up in time.
async fn limited(
    req: &RequestCtx<'_>,
    cost: &RenderCost,
    render: impl FnOnce() -> (Outcome, Arc<RenderScope>),
) -> (Outcome, Option<Arc<RenderScope>>) {
    match req.site.renders.run(cost, render).await {
        Ok((outcome, scope)) => (outcome, Some(scope)),
        Err(_) => (Outcome::Response(crate::bottleneck::busy_response()), None),
    }
}

/// The models as this request may see them (anonymous until sessions exist).
fn render_scope(req: &RequestCtx<'_>) -> Arc<RenderScope> {
    let site = req.site.site.clone();
    RenderScope::for_site(
        req.site.models.clone(),
        Requester::Anonymous,
        req.site.policy.clone(),
        Arc::new(move |id, slug| {
            let id = id.0.to_string();
            site.router
                .url_for("page", &[id.clone(), slug.to_string()], &[])
                .or_else(|_| site.router.url_for("page_id", &[id], &[]))
                .ok()
        }),
    )
}

/// Renders `template` with the path arguments, `q`, `request`, `m` and `extra`.
fn render_template(
    req: &RequestCtx<'_>,
    scope: &Arc<RenderScope>,
    template: &str,
    content_type: &HeaderValue,
    mut vars: BTreeMap<String, Value>,
) -> Outcome {
    let mut q: Vec<(String, String)> = parse_form(req.parts.uri.query().unwrap_or("").as_bytes());
    if req.parts.method == Method::POST {
        q.extend(parse_form(&req.body));
    }
    for (k, v) in req.args {
        vars.entry(k.clone())
            .or_insert_with(|| Value::from(v.as_str()));
    }
    let q: BTreeMap<String, Value> = q.into_iter().map(|(k, v)| (k, Value::from(v))).collect();
    vars.insert("q".into(), Value::from(q));
    let request = minijinja::context! {
        path => req.parts.uri.path(),
        method => req.parts.method.as_str(),
        query => req.parts.uri.query().unwrap_or(""),
        language => req.language(),
    };
    scope.set_request(request.clone());
    vars.insert("request".into(), request);
    vars.insert("m".into(), Value::from_object(ModelRoot(scope.clone())));
    req.site
        .models
        .renders
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let rendered = req.site.templates.render(template, Value::from(vars));
    // A read that failed inside a lookup left the value out: the page is not
    // whole, so it is neither served nor cached.
    if let Some(failure) = scope.failure() {
        let mut err = rendered
            .err()
            .unwrap_or_else(|| failure_error(failure.message.clone()));
        err.busy |= failure.busy;
        return Outcome::Failed(err);
    }
    match rendered {
        Err(err) if err.page_missing => Outcome::NotFound,
        Ok(html) => Outcome::Found(Representation {
            status: StatusCode::OK,
            content_type: content_type.clone(),
            last_modified: None,
            // Pages may show per-visitor data: browsers must always ask again.
            cache_control: "no-cache",
            content: Content::Dynamic(Bytes::from(html)),
            per_language: true,
        }),
        Err(err) => Outcome::Failed(err),
    }
}

/// A resource's page: `page.<category>.tpl`, falling back up the category tree to
/// `page.tpl`. Missing and not-visible resources are both a 404; a deleted one
/// that the visitor could see before is a 410.
pub struct PageController {
    /// Serve anonymous visitors from the page cache.
    pub cache: bool,
    pub cost: RenderCost,
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
                Ok(true) => Outcome::Response(crate::error_page::error_response(
                    req.site,
                    StatusCode::GONE,
                    None,
                )),
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
        .find(|t| req.site.templates.exists(t))
        .unwrap_or_else(|| "page.tpl".to_string());
    let mut vars = BTreeMap::new();
    vars.insert("id".to_string(), rsc.get_attr("id").unwrap_or_default());
    vars.insert("rsc".to_string(), rsc);
    let html = HeaderValue::from_static("text/html; charset=utf-8");
    render_template(req, scope, &template, &html, vars)
}

fn parse_form(bytes: &[u8]) -> Vec<(String, String)> {
    bytes
        .split(|b| *b == b'&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = match pair.iter().position(|b| *b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            (form_decode(k), form_decode(v))
        })
        .collect()
}

fn form_decode(bytes: &[u8]) -> String {
    let plus_as_space: Vec<u8> = bytes
        .iter()
        .map(|b| if *b == b'+' { b' ' } else { *b })
        .collect();
    percent_encoding::percent_decode(&plus_as_space)
        .decode_utf8_lossy()
        .into_owned()
}

pub fn content_type_for(name: &str) -> HeaderValue {
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let mime = match ext {
        "tpl" | "html" | "htm" => "text/html; charset=utf-8".to_string(),
        "json" => "application/json".to_string(),
        _ => {
            let guess = mime_guess::from_ext(ext).first_or_octet_stream();
            if guess.type_() == "text"
                || guess.subtype() == "javascript"
                || guess.subtype() == "xml"
            {
                format!("{guess}; charset=utf-8")
            } else {
                guess.to_string()
            }
        }
    };
    HeaderValue::from_str(&mime).unwrap_or(HeaderValue::from_static("application/octet-stream"))
}

/// Single files above this size are streamed from disk rather than held in memory.
pub const STREAM_THRESHOLD: u64 = 512 * 1024;
/// A combined body larger than this is refused rather than held in memory.
const COMBINED_MAX: u64 = 16 * 1024 * 1024;

/// Serves (combined) static files from the `lib/` folders of the site and its modules.
pub struct LibController;

impl Controller for LibController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(tail) = req.args.iter().find(|(k, _)| k == "path").map(|(_, v)| v) else {
                return Outcome::NotFound;
            };
            let Some(names) = split_lib_path(tail) else {
                return Outcome::NotFound;
            };
            let mut files = Vec::with_capacity(names.len());
            for name in &names {
                match req.site.site.lib.lookup(name) {
                    Some(file) => files.push(file),
                    None => return Outcome::NotFound,
                }
            }
            let newest = files.iter().map(|f| f.modified).max().unwrap_or(UNIX_EPOCH);
            let content_type = content_type_for(&names[0]);
            let cache_control = "public, max-age=31536000, immutable";
            if let [single] = files.as_slice()
                && let LibSource::Disk(path) = &single.source
                && single.len > STREAM_THRESHOLD
            {
                return Outcome::Found(Representation {
                    status: StatusCode::OK,
                    content_type,
                    last_modified: Some(single.modified),
                    cache_control,
                    per_language: false,
                    content: Content::File {
                        path: path.clone(),
                        len: single.len,
                    },
                });
            }
            if files.iter().map(|f| f.len).sum::<u64>() > COMBINED_MAX {
                tracing::warn!(site = %req.site.site.name(), "lib: {tail:?} is too large to combine");
                return Outcome::NotFound;
            }
            let stamp = newest
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let key = format!("{}\n{stamp}", names.join("\n"));
            let built = req
                .site
                .lib_cache
                .try_get_with(key, async move {
                    tokio::task::spawn_blocking(move || combine(&files))
                        .await
                        .map_err(|e| std::io::Error::other(e.to_string()))?
                })
                .await;
            match built {
                Ok(encoded) => Outcome::Found(Representation {
                    status: StatusCode::OK,
                    content_type,
                    last_modified: Some(newest),
                    cache_control,
                    per_language: false,
                    content: Content::Encoded(encoded),
                }),
                Err(e) => {
                    tracing::warn!(site = %req.site.site.name(), "lib: {tail:?}: {e}");
                    Outcome::NotFound
                }
            }
        })
    }
}

/// Concatenates the files (a newline between text files that lack one) and encodes
/// the result once.
fn combine(files: &[bulwark_site::LibFile]) -> std::io::Result<Arc<EncodedBody>> {
    let mut out = Vec::new();
    for file in files {
        match &file.source {
            LibSource::Disk(path) => out.extend(std::fs::read(path)?),
            LibSource::Embedded(bytes) => out.extend_from_slice(bytes),
        }
        if files.len() > 1 && out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
    }
    Ok(Arc::new(EncodedBody::new(Bytes::from(out))))
}

/// Serves files from a folder of the site (uploads), streamed, with ranges.
pub struct FileController {
    pub root: String,
}

impl Controller for FileController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(rel) = req
                .args
                .iter()
                .find(|(k, _)| k == "path")
                .map(|(_, v)| v.clone())
            else {
                return Outcome::NotFound;
            };
            let Some(folder) = req.site.site.folder(&self.root) else {
                return Outcome::NotFound;
            };
            let found = tokio::task::spawn_blocking(move || {
                let path = resolve_inside(&folder, &rel)?;
                let meta = path.metadata().ok()?;
                Some((path, meta))
            })
            .await
            .ok()
            .flatten();
            let Some((path, meta)) = found else {
                return Outcome::NotFound;
            };
            Outcome::Found(Representation {
                status: StatusCode::OK,
                content_type: content_type_for(&path.to_string_lossy()),
                last_modified: Some(meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)),
                cache_control: "public, max-age=3600",
                per_language: false,
                content: Content::File {
                    path,
                    len: meta.len(),
                },
            })
        })
    }
}

/// Redirects to a path or URL, or to another rule by name (with this rule's path
/// arguments).
pub struct RedirectController {
    pub to: String,
    pub permanent: bool,
}

impl Controller for RedirectController {
    fn allowed_methods(&self) -> &'static [Method] {
        GET_HEAD
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let location = if self.to.starts_with('/') || self.to.contains("://") {
                Ok(self.to.clone())
            } else {
                req.site.site.router.url_for(&self.to, &[], req.args)
            };
            let location = match location.map(|l| HeaderValue::from_str(&l)) {
                Ok(Ok(l)) => l,
                Ok(Err(e)) => {
                    return Outcome::Failed(failure_error(format!("redirect target: {e}")));
                }
                Err(e) => return Outcome::Failed(failure_error(e)),
            };
            let status = if self.permanent {
                StatusCode::MOVED_PERMANENTLY
            } else {
                StatusCode::FOUND
            };
            let mut resp = Response::new(Body::empty());
            *resp.status_mut() = status;
            resp.headers_mut().insert(LOCATION, location);
            Outcome::Response(resp)
        })
    }
}

fn failure_error(message: String) -> bulwark_template::RenderError {
    bulwark_template::RenderError {
        not_found: false,
        busy: false,
        page_missing: false,
        template: None,
        line: None,
        message,
        detail: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_plus_and_percent() {
        assert_eq!(
            parse_form(b"a=1+2&b=%C3%A9&c"),
            vec![
                ("a".into(), "1 2".into()),
                ("b".into(), "é".into()),
                ("c".into(), "".into())
            ]
        );
    }

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type_for("home.tpl"), "text/html; charset=utf-8");
        assert_eq!(content_type_for("a.css"), "text/css; charset=utf-8");
        assert_eq!(content_type_for("x.json"), "application/json");
        assert_eq!(content_type_for("logo.png"), "image/png");
    }
}
