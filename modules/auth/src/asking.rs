//! Who is asking, for the site: an API token in `Authorization: Bearer bwt_...`
//! ([`api_tokens`](crate::api_tokens)) if the request has one, else the session
//! cookie ([`sessions`](crate::sessions)). A token is sent on purpose by a
//! script, never by a browser on its own, so it needs no CSRF token.

use std::sync::Arc;

use bulwark_acl::Principal;
use bulwark_http::Peer;
use bulwark_web::{Authenticated, Authenticator};
use futures_util::future::BoxFuture;
use http::request::Parts;

use crate::api_tokens::{ApiTokens, bearer_token};
use crate::sessions::Sessions;
use crate::view_as;

pub struct Asking {
    pub sessions: Arc<Sessions>,
    pub tokens: Arc<ApiTokens>,
}

impl Authenticator for Asking {
    fn authenticate<'a>(
        &'a self,
        parts: &'a Parts,
        peer: Peer,
    ) -> Option<BoxFuture<'a, Authenticated>> {
        let Some(token) = bearer_token(parts) else {
            let session = self.sessions.authenticate(parts, peer)?;
            return Some(Box::pin(async move {
                let mut asking = session.await;
                if let Some(group) = view_as::requested(parts, &asking.principal) {
                    let store = self.sessions.store().clone();
                    let name: Arc<str> = Arc::from(group.as_str());
                    match store.run(move |s| view_as::principal_in(s, &group)).await {
                        Ok(principal) => {
                            asking.principal = principal;
                            asking.viewing_as = Some(name);
                        }
                        Err(e) => tracing::warn!("viewing the site as a group: {e}"),
                    }
                }
                asking
            }));
        };
        Some(Box::pin(async move {
            match self.tokens.principal(token).await {
                Ok(Some(principal)) => Authenticated {
                    principal,
                    ..Authenticated::anonymous()
                },
                // Not valid: anonymous, which the API answers with 401 for a
                // request that carries a token.
                Ok(None) => Authenticated::anonymous(),
                Err(e) => {
                    tracing::warn!("API token lookup failed: {e}");
                    Authenticated::anonymous()
                }
            }
        }))
    }

    fn recheck<'a>(&'a self, earlier: &'a Authenticated) -> BoxFuture<'a, Option<Principal>> {
        Box::pin(async move {
            let Some(session) = &earlier.session else {
                // Anonymous, or an API token (scripts; checked per request).
                return Some(earlier.principal.clone());
            };
            match self.sessions.recheck(session).await {
                Ok(now) => now,
                // The database is away: keep what was known rather than
                // closing every connection at once.
                Err(e) => {
                    tracing::debug!("rechecking a session: {e}");
                    Some(earlier.principal.clone())
                }
            }
        })
    }
}
