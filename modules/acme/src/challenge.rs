//! `controller = "acme_challenge"`: the HTTP-01 answer for a token of an
//! open order, from the site's database (any node answers).

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode};

use bulwark_store::Store;
use bulwark_web::{Content, Controller, Outcome, Representation, RequestCtx};

pub(crate) struct ChallengeController {
    pub store: Store,
}

impl Controller for ChallengeController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(token) = req.arg("token").map(str::to_owned) else {
                return Outcome::NotFound;
            };
            let now = chrono::Utc::now().timestamp_millis();
            let answer = self
                .store
                .run(move |s| {
                    s.module_read(|sql| {
                        Ok(sql
                            .query(
                                "SELECT key_authorization FROM acme_challenge \
                                 WHERE token = $1 AND expires > $2",
                                &[token.as_str().into(), now.into()],
                            )?
                            .first()
                            .map(|r| r.text(0)))
                    })
                })
                .await;
            match answer {
                Ok(Some(key_authorization)) => Outcome::Found(Representation {
                    status: StatusCode::OK,
                    content_type: HeaderValue::from_static("text/plain"),
                    last_modified: None,
                    cache_control: "no-store",
                    content: Content::Dynamic(Bytes::from(key_authorization)),
                    per_language: false,
                    stale: false,
                    etag: None,
                    attachment: false,
                    surrogate_keys: None,
                }),
                Ok(None) => Outcome::NotFound,
                Err(e) => Outcome::from(bulwark_web::Problem::from(e)),
            }
        })
    }
}
