//! Per-user API tokens: a script sends `Authorization: Bearer bwt_...` and
//! acts as the user who made the token, under the same access rules as their
//! session, without cookies and so without a CSRF token. A user makes,
//! lists and revokes their own tokens (`/api/auth/tokens`, logged on with a
//! session: a token cannot make more tokens). Only a SHA-256 of each token is
//! stored; the token itself is shown once, when it is made.

use std::sync::Arc;
use std::time::Duration;

use bulwark_acl::Principal;
use bulwark_store::{DependencyKey, ResourceId, Store, StoreError};
use chrono::{DateTime, SubsecRound, Utc};
use http::header::AUTHORIZATION;
use http::request::Parts;

use crate::accounts;
use crate::secret::{random_hex, sha256_hex};

/// What every token starts with, so that a token pasted in the wrong place is
/// recognisable (and secret scanners can find one committed by mistake).
pub const TOKEN_PREFIX: &str = "bwt_";

/// A lookup (found or not) is kept this long on each node. A revoked token
/// stops working at once everywhere: the revoking write's change event makes
/// every node forget what it knew ([`ApiTokens::forget`]).
const CACHE_TTL: Duration = Duration::from_secs(10);

/// Last use is written at most this often per token and node.
const TOUCH_EVERY: i64 = 60_000;

/// What a write that revokes tokens names in its change event, so that every
/// node forgets the tokens it knew at once ([`ApiTokens::forget`]).
pub fn revoked_key() -> DependencyKey {
    DependencyKey::from("api_tokens:revoked")
}

/// Revokes every token of `person` (their password changed); returns how
/// many there were.
pub fn revoke_all_blocking(store: &Store, person: ResourceId) -> Result<u64, StoreError> {
    store.module_write(|sql| {
        let gone = sql.execute(
            "DELETE FROM auth_api_token WHERE rsc_id = $1",
            &[person.0.into()],
        )?;
        if gone > 0 {
            sql.flush(revoked_key());
        }
        Ok(gone)
    })
}

/// A token as its owner sees it in the list (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTokenInfo {
    pub id: i64,
    pub label: String,
    pub created: DateTime<Utc>,
    pub last_used: Option<DateTime<Utc>>,
}

/// A bearer token the request carries, if it has our prefix.
pub fn bearer_token(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|t| t.starts_with(TOKEN_PREFIX))
}

#[derive(Debug)]
struct Known {
    id: i64,
    principal: Principal,
    touched: std::sync::atomic::AtomicI64,
}

/// A site's API tokens.
pub struct ApiTokens {
    store: Store,
    cache: moka::sync::Cache<String, Option<Arc<Known>>>,
}

impl std::fmt::Debug for ApiTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiTokens").finish_non_exhaustive()
    }
}

/// The longest label kept.
const MAX_LABEL: usize = 100;

impl ApiTokens {
    pub fn new(store: Store) -> ApiTokens {
        ApiTokens {
            store,
            cache: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(CACHE_TTL)
                .build(),
        }
    }

    /// Makes a token for `person`; the token is in the answer and nowhere else.
    pub fn create_blocking(
        store: &Store,
        person: ResourceId,
        label: &str,
    ) -> Result<(ApiTokenInfo, String), StoreError> {
        let label: String = label.trim().chars().take(MAX_LABEL).collect();
        if label.is_empty() {
            return Err(StoreError::InvalidInput {
                field: "label".into(),
                reason: "say what the token is for".into(),
            });
        }
        let token = format!("{TOKEN_PREFIX}{}", random_hex());
        let hash = sha256_hex(token.as_bytes());
        // As the list reads it back: to the millisecond.
        let created = Utc::now().trunc_subsecs(3);
        let now = created.timestamp_millis();
        let id = store.module_write(|sql| {
            let row = sql.query_one(
                "INSERT INTO auth_api_token (rsc_id, token_hash, label, created) \
                 VALUES ($1, $2, $3, $4) RETURNING id",
                &[
                    person.0.into(),
                    hash.into(),
                    label.clone().into(),
                    now.into(),
                ],
            )?;
            Ok(row.map(|r| r.int(0)).unwrap_or_default())
        })?;
        let info = ApiTokenInfo {
            id,
            label,
            created,
            last_used: None,
        };
        Ok((info, token))
    }

    /// `person`'s tokens, newest first.
    pub fn list_blocking(
        store: &Store,
        person: ResourceId,
    ) -> Result<Vec<ApiTokenInfo>, StoreError> {
        store.module_read(|sql| {
            Ok(sql
                .query(
                    "SELECT id, label, created, last_used FROM auth_api_token \
                     WHERE rsc_id = $1 ORDER BY id DESC",
                    &[person.0.into()],
                )?
                .iter()
                .map(|r| ApiTokenInfo {
                    id: r.int(0),
                    label: r.opt_text(1).unwrap_or_default(),
                    created: r.time(2),
                    last_used: r.opt_time(3),
                })
                .collect())
        })
    }

    /// Revokes one of `person`'s tokens; `false` when they have none with
    /// that id (another user's token is not theirs to revoke).
    pub async fn revoke(&self, person: ResourceId, id: i64) -> Result<bool, StoreError> {
        let gone = self
            .store
            .run(move |s| {
                s.module_write(|sql| {
                    let gone = sql.query(
                        "DELETE FROM auth_api_token WHERE id = $1 AND rsc_id = $2 \
                         RETURNING token_hash",
                        &[id.into(), person.0.into()],
                    )?;
                    if !gone.is_empty() {
                        sql.flush(revoked_key());
                    }
                    Ok(gone)
                })
            })
            .await?;
        for row in &gone {
            if let Some(hash) = row.opt_text(0) {
                self.cache.invalidate(&hash);
            }
        }
        Ok(!gone.is_empty())
    }

    /// Drops every token this node knows when a change revoked some (here
    /// or on another node), or when everything was flushed.
    pub fn forget(&self, flushed: &[DependencyKey], all: bool) {
        if all || flushed.contains(&revoked_key()) {
            self.cache.invalidate_all();
        }
    }

    /// Who `token` acts as; `None` for a token that is not (or no longer)
    /// valid. Answered from the node's cache when it can.
    pub async fn principal(&self, token: &str) -> Result<Option<Principal>, StoreError> {
        let hash = sha256_hex(token.as_bytes());
        let known = match self.cache.get(&hash) {
            Some(known) => known,
            None => {
                let key = hash.clone();
                let known = self
                    .store
                    .run(move |s| {
                        let found = s.module_read(|sql| {
                            sql.query_one(
                                "SELECT id, rsc_id FROM auth_api_token WHERE token_hash = $1",
                                &[key.into()],
                            )
                        })?;
                        found
                            .map(|row| {
                                Ok(Arc::new(Known {
                                    id: row.int(0),
                                    principal: accounts::principal_of(s, ResourceId(row.int(1)))?,
                                    touched: Default::default(),
                                }))
                            })
                            .transpose()
                    })
                    .await?;
                self.cache.insert(hash, known.clone());
                known
            }
        };
        Ok(known.map(|k| {
            self.touch(&k);
            k.principal.clone()
        }))
    }

    /// Records the use (best effort, at most once a minute per token and node).
    fn touch(&self, known: &Known) {
        use std::sync::atomic::Ordering;
        let now = Utc::now().timestamp_millis();
        let last = known.touched.load(Ordering::Relaxed);
        if now - last < TOUCH_EVERY
            || known
                .touched
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let (store, id) = (self.store.clone(), known.id);
        tokio::spawn(async move {
            let written = store
                .run(move |s| {
                    s.module_write(|sql| {
                        sql.execute(
                            "UPDATE auth_api_token SET last_used = $1 WHERE id = $2",
                            &[now.into(), id.into()],
                        )
                    })
                })
                .await;
            if let Err(e) = written {
                tracing::debug!("recording an API token's use: {e}");
            }
        });
    }
}
