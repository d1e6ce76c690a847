//! Logon sessions: a random token in a cookie, the session in the site's
//! database (so any node can serve any request), the [`Principal`] per request.
//!
//! - The cookie (`__Host-bulwark_session` over TLS, `bulwark_session` over
//!   plain HTTP, where browsers refuse the prefix) holds 256 random bits and
//!   nothing else: HttpOnly, SameSite=Lax, Path=/, Secure under TLS. Only the
//!   token's SHA-256 is stored.
//! - A session ends after `session_idle` without a request or `session_max`
//!   after logon; with "keep me logged in" after `remember_idle` /
//!   `remember_max`, and its cookie outlives the browser.
//! - Each request with a cookie looks its session up in a small in-process
//!   cache (at most [`CACHE_TTL`] old), and records activity at most once per
//!   [`TOUCH_EVERY`]. A session that ends leaves the cache at once: on this
//!   node directly, on the other nodes of a cluster through the change event
//!   that ending it sends (its [`session_key`] key, see [`Sessions::forget`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bulwark_acl::Principal;
use bulwark_http::Peer;
use bulwark_store::{DependencyKey, ResourceId, Store, StoreError};

use crate::session_table::{self, Session, session_key};
use bulwark_web::{Authenticated, Authenticator, SESSION_COOKIE};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use http::HeaderValue;
use http::header::{COOKIE, USER_AGENT};
use http::request::Parts;

use crate::accounts;
use crate::secret::{random_hex, sha256_hex};
use crate::settings::AuthSettings;

/// How long a looked-up session is trusted without asking the database.
pub const CACHE_TTL: Duration = Duration::from_secs(10);
/// Activity is written to the database at most this often per session.
pub const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// A session's token as the cookie carries it (64 hex digits).
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    pub fn random() -> Token {
        Token(random_hex())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What the database keeps: SHA-256, hex.
    pub fn hash(&self) -> String {
        sha256_hex(self.0.as_bytes())
    }
}

/// The session cookie's name: with the `__Host-` prefix over TLS.
pub fn cookie_name(secure: bool) -> String {
    if secure {
        format!("__Host-{SESSION_COOKIE}")
    } else {
        SESSION_COOKIE.to_string()
    }
}

/// The token of the request's session cookie, if it has one shaped like ours.
pub fn session_token(parts: &Parts, secure: bool) -> Option<Token> {
    cookie(parts, &cookie_name(secure))
        .filter(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|v| Token(v.to_ascii_lowercase()))
}

/// The value of the request's first cookie called `name`, if any.
pub fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// `Set-Cookie` for a new session (a persistent one outlives the browser).
pub fn set_cookie(token: &Token, secure: bool, max_age: Option<Duration>) -> HeaderValue {
    let mut cookie = format!(
        "{}={}; Path=/; HttpOnly; SameSite=Lax",
        cookie_name(secure),
        token.as_str()
    );
    if secure {
        cookie.push_str("; Secure");
    }
    if let Some(age) = max_age {
        cookie.push_str(&format!("; Max-Age={}", age.as_secs()));
    }
    HeaderValue::from_str(&cookie).expect("hex and ASCII")
}

/// The hint that tells a public page's script to show "Edit this page"
/// (`bulwark_editor=1`): no secret and no right, readable by scripts, set at
/// logon for editors and dropped at logoff. The page itself is the same for
/// everyone, so it stays in the page cache; the admin decides, when the link
/// is followed, whether this person may edit what it points to.
pub const EDITOR_HINT_COOKIE: &str = "bulwark_editor";

/// `Set-Cookie` for the editor hint, living as long as the session cookie.
pub fn set_editor_hint(secure: bool, max_age: Option<Duration>) -> HeaderValue {
    let mut cookie = format!("{EDITOR_HINT_COOKIE}=1; Path=/; SameSite=Lax");
    if secure {
        cookie.push_str("; Secure");
    }
    if let Some(age) = max_age {
        cookie.push_str(&format!("; Max-Age={}", age.as_secs()));
    }
    HeaderValue::from_str(&cookie).expect("ASCII")
}

/// `Set-Cookie` that drops the editor hint.
pub fn clear_editor_hint(secure: bool) -> HeaderValue {
    let secure_attr = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{EDITOR_HINT_COOKIE}=; Path=/; SameSite=Lax; Max-Age=0{secure_attr}"
    ))
    .expect("ASCII")
}

/// `Set-Cookie` that makes the browser drop its session cookie.
pub fn clear_cookie(secure: bool) -> HeaderValue {
    let secure_attr = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure_attr}",
        cookie_name(secure)
    ))
    .expect("ASCII")
}

/// A session as the cache keeps it.
#[derive(Debug)]
struct Live {
    principal: Principal,
    csrf_token: Arc<str>,
    session: Session,
    /// Millisecond time activity was last recorded (by this node).
    touched: AtomicI64,
}

/// A site's sessions: what logon makes and every request asks.
pub struct Sessions {
    store: Store,
    settings: AuthSettings,
    /// By [`session_key`] of the token's hash: what a change event names.
    cache: moka::sync::Cache<DependencyKey, Arc<Live>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

/// A new session, for the logon answer.
#[derive(Debug)]
pub struct Started {
    pub token: Token,
    pub id_hash: String,
    pub csrf_token: String,
    pub max_age: Option<Duration>,
}

impl Sessions {
    pub fn new(store: Store, settings: AuthSettings) -> Sessions {
        Sessions {
            store,
            settings,
            cache: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(CACHE_TTL)
                .build(),
        }
    }

    pub fn settings(&self) -> &AuthSettings {
        &self.settings
    }

    /// Drops the cached sessions a committed change ended (here or on another
    /// node), or all of them when the whole cache was flushed.
    pub fn forget(&self, flushed: &[DependencyKey], all: bool) {
        if all {
            self.cache.invalidate_all();
        } else {
            for key in flushed {
                self.cache.invalidate(key);
            }
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Starts a session for `person`, ending `previous` (the session the
    /// browser had before logging on, so its id never outlives the logon).
    pub async fn start(
        &self,
        person: ResourceId,
        remember: bool,
        previous: Option<&str>,
        parts: &Parts,
        peer: Peer,
    ) -> Result<Started, StoreError> {
        let token = Token::random();
        let now = Utc::now();
        let (max, max_age) = if remember {
            (self.settings.remember_max, Some(self.settings.remember_max))
        } else {
            (self.settings.session_max, None)
        };
        let session = Session {
            id_hash: token.hash(),
            person,
            csrf_token: random_hex(),
            created: now,
            last_seen: now,
            expires: now + chrono::Duration::from_std(max).unwrap_or(chrono::Duration::days(1)),
            persistent: remember,
            user_agent: parts
                .headers
                .get(USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            address: Some(peer.addr.ip().to_string()),
        };
        let started = Started {
            token,
            id_hash: session.id_hash.clone(),
            csrf_token: session.csrf_token.clone(),
            max_age,
        };
        let previous = previous.map(str::to_string);
        if let Some(old) = &previous {
            self.cache.invalidate(&session_key(old));
        }
        self.store
            .run(move |s| session_table::create(s, &session, previous.as_deref()))
            .await?;
        Ok(started)
    }

    /// Ends one session (logoff).
    pub async fn end(&self, id_hash: &str) -> Result<bool, StoreError> {
        self.cache.invalidate(&session_key(id_hash));
        let id = id_hash.to_string();
        self.store.run(move |s| session_table::delete(s, &id)).await
    }

    /// Ends every session of `person` but `keep` (a new password, "log off
    /// everywhere else").
    pub async fn end_all_of(
        &self,
        person: ResourceId,
        keep: Option<&str>,
    ) -> Result<usize, StoreError> {
        let keep = keep.map(str::to_string);
        let ended = self
            .store
            .run(move |s| session_table::delete_all_of(s, person, keep.as_deref()))
            .await?;
        for id in &ended {
            self.cache.invalidate(&session_key(id));
        }
        Ok(ended.len())
    }

    /// A person's sessions that have not ended, newest first.
    pub async fn list(&self, person: ResourceId) -> Result<Vec<Session>, StoreError> {
        let now = Utc::now();
        let sessions = self
            .store
            .run(move |s| session_table::of_person(s, person))
            .await?;
        Ok(sessions
            .into_iter()
            .filter(|s| !self.has_ended(s, now))
            .collect())
    }

    fn has_ended(&self, s: &Session, now: DateTime<Utc>) -> bool {
        let idle = if s.persistent {
            self.settings.remember_idle
        } else {
            self.settings.session_idle
        };
        let idle = chrono::Duration::from_std(idle).unwrap_or(chrono::Duration::hours(1));
        now >= s.expires || now >= s.last_seen + idle
    }

    /// Who session `id_hash` stands for now, if it has not ended (from the
    /// cache when it can; records no activity).
    pub async fn recheck(&self, id_hash: &str) -> Result<Option<Principal>, StoreError> {
        let live = match self.cache.get(&session_key(id_hash)) {
            Some(live) => Some(live),
            None => self.load(id_hash).await?,
        };
        Ok(live
            .filter(|l| !self.has_ended(&l.session, Utc::now()))
            .map(|l| l.principal.clone()))
    }

    /// Removes ended sessions from the database (run now and then).
    pub fn sweep_blocking(&self) -> Result<u64, StoreError> {
        let now = Utc::now();
        let ago = |d: Duration| now - chrono::Duration::from_std(d).unwrap_or_default();
        session_table::delete_ended(
            &self.store,
            now,
            ago(self.settings.session_idle),
            ago(self.settings.remember_idle),
        )
    }

    /// Who the request's session cookie says is asking.
    async fn lookup(&self, token: Token, peer: Peer) -> Authenticated {
        let id_hash = token.hash();
        let now = Utc::now();
        let live = match self.cache.get(&session_key(&id_hash)) {
            Some(live) => Some(live),
            None => match self.load(&id_hash).await {
                Ok(found) => found,
                Err(e) => {
                    // The database is away: the visitor is served as anonymous
                    // (cached pages keep working) and their cookie is kept.
                    tracing::warn!("session lookup failed: {e}");
                    return Authenticated::anonymous();
                }
            },
        };
        let Some(live) = live.filter(|l| !self.has_ended(&l.session, now)) else {
            self.cache.invalidate(&session_key(&id_hash));
            return Authenticated {
                set_cookie: Some(clear_cookie(peer.secure)),
                ..Authenticated::anonymous()
            };
        };
        let now_ms = now.timestamp_millis();
        let touched = live.touched.load(Ordering::Relaxed);
        if now_ms - touched >= TOUCH_EVERY.as_millis() as i64
            && live
                .touched
                .compare_exchange(touched, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let id = id_hash.clone();
            let store = self.store.clone();
            // Activity is best effort: a failed write only shortens the idle time.
            tokio::spawn(async move {
                if let Err(e) = store.run(move |s| session_table::touch(s, &id, now)).await {
                    tracing::debug!("recording session activity: {e}");
                }
            });
        }
        Authenticated {
            principal: live.principal.clone(),
            csrf_token: Some(live.csrf_token.clone()),
            session: Some(id_hash.into()),
            set_cookie: None,
            viewing_as: None,
        }
    }

    async fn load(&self, id_hash: &str) -> Result<Option<Arc<Live>>, StoreError> {
        let id = id_hash.to_string();
        let found = self
            .store
            .run(move |s| {
                let Some(session) = session_table::find(s, &id)? else {
                    return Ok(None);
                };
                let principal = accounts::principal_of(s, session.person)?;
                Ok(Some((session, principal)))
            })
            .await?;
        let Some((session, principal)) = found else {
            return Ok(None);
        };
        let live = Arc::new(Live {
            principal,
            csrf_token: session.csrf_token.as_str().into(),
            touched: AtomicI64::new(session.last_seen.timestamp_millis()),
            session,
        });
        self.cache.insert(session_key(id_hash), live.clone());
        Ok(Some(live))
    }
}

impl Authenticator for Sessions {
    fn authenticate<'a>(
        &'a self,
        parts: &'a Parts,
        peer: Peer,
    ) -> Option<BoxFuture<'a, Authenticated>> {
        let token = session_token(parts, peer.secure)?;
        Some(Box::pin(self.lookup(token, peer)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_read_only_under_its_own_name_and_shape() {
        let token = "ab".repeat(32);
        let parts = |cookie: &str| {
            http::Request::get("/")
                .header("cookie", cookie)
                .body(())
                .unwrap()
                .into_parts()
                .0
        };
        let plain = parts(&format!("a=1; bulwark_session={token}; b=2"));
        assert_eq!(session_token(&plain, false).unwrap().as_str(), token);
        assert!(session_token(&plain, true).is_none(), "TLS wants __Host-");
        let tls = parts(&format!("__Host-bulwark_session={token}"));
        assert!(session_token(&tls, true).is_some());
        assert!(session_token(&parts("bulwark_session=short"), false).is_none());
        assert!(session_token(&parts("xbulwark_session=ab"), false).is_none());
    }

    #[test]
    fn cookies_carry_the_attributes_browsers_need() {
        let token = Token::random();
        let plain = set_cookie(&token, false, None);
        let plain = plain.to_str().unwrap();
        assert!(plain.starts_with("bulwark_session="));
        assert!(plain.contains("HttpOnly") && plain.contains("SameSite=Lax"));
        assert!(!plain.contains("Secure") && !plain.contains("Max-Age"));
        let tls = set_cookie(&token, true, Some(Duration::from_secs(60)));
        let tls = tls.to_str().unwrap();
        assert!(tls.starts_with("__Host-bulwark_session=") && tls.contains("; Secure"));
        assert!(tls.contains("Max-Age=60") && tls.contains("Path=/"));
        assert_eq!(token.hash().len(), 64);
        assert_ne!(token.hash(), token.as_str());
    }
}
