//! `redirect`: to a path, a URL, or another rule by name.

use futures_util::future::BoxFuture;
use http::header::LOCATION;
use http::{HeaderValue, Method, Response, StatusCode};

use bulwark_http::Body;
use bulwark_template::RenderError;

use crate::controllers::{Controller, GET_HEAD};
use crate::representation::Outcome;
use crate::request::RequestCtx;

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
                req.site.site().router.url_for(&self.to, &[], req.args)
            };
            let location = match location.map(|l| HeaderValue::from_str(&l)) {
                Ok(Ok(l)) => l,
                Ok(Err(e)) => {
                    return Outcome::Failed(RenderError::other(format!("redirect target: {e}")));
                }
                Err(e) => return Outcome::Failed(RenderError::other(e.to_string())),
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
