//! The `auth` controller: logon, logoff and a user's sessions, as pages
//! (`logon.tpl`, `logoff.tpl`, `sessions.tpl`, which a site can override) and
//! as JSON for scripts (`/api/auth/...`). Which one a dispatch rule gets is its
//! `action` (`logon`, `logoff`, `sessions`, `me`) and `format` (`html`, the
//! default, or `json`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION, RETRY_AFTER, SET_COOKIE};
use http::{HeaderValue, Method, Response, StatusCode};
use minijinja::Value;
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::EDITORS;
use bulwark_http::Body;
use bulwark_store::{ResourceId, StoreError};
use bulwark_web::events::{Logoff, Logon};
use bulwark_web::{
    Controller, ModuleError, Outcome, Problem, RequestCtx, busy_response, json_response,
    parse_form, read_settings, render_page,
};

use crate::accounts;
use crate::api_tokens::ApiTokens;
use crate::logon_ticket;
use crate::password::{Password, PasswordError, Passwords};
use crate::second_factor::{self, SecondFactorCheck};
use crate::sessions::{Sessions, clear_cookie, clear_editor_hint, set_cookie, set_editor_hint};
use crate::throttle::{SLOW_DOWN, Throttle, ThrottleKey};
use crate::totp::unix_now;

/// What one site's logon pages share.
pub struct AuthSite {
    pub sessions: Arc<Sessions>,
    pub tokens: Arc<ApiTokens>,
    pub passwords: Arc<Passwords>,
    pub throttle: Arc<Throttle>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Action {
    Logon,
    Logoff,
    Sessions,
    Me,
    Tokens,
    Users,
    Account,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
enum Format {
    #[default]
    Html,
    Json,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    action: Action,
    #[serde(default)]
    format: Format,
}

pub struct AuthController {
    site: Arc<AuthSite>,
    action: Action,
    format: Format,
}

impl AuthController {
    /// The JSON form of an action, for the module's endpoints (`api.rs`).
    pub(crate) fn json(site: Arc<AuthSite>, action: Action) -> AuthController {
        AuthController {
            site,
            action,
            format: Format::Json,
        }
    }

    pub fn from_rule(site: Arc<AuthSite>, options: &toml::Table) -> Result<Self, ModuleError> {
        let options: Options = read_settings(options)?;
        Ok(AuthController {
            site,
            action: options.action,
            format: options.format,
        })
    }
}

/// What a logon form or JSON body gives.
#[derive(Debug, Default, Deserialize)]
struct Credentials {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    remember: bool,
    #[serde(default)]
    next: Option<String>,
    /// The second factor: a code from the authenticator app or a recovery code.
    #[serde(default)]
    code: Option<String>,
    /// Given with the code instead of the password: what the answer that
    /// asked for the code carried ([`logon_ticket`](crate::logon_ticket)).
    #[serde(default)]
    ticket: Option<String>,
}

fn form(body: &[u8]) -> BTreeMap<String, String> {
    parse_form(body).into_iter().collect()
}

/// Only a path on this site: no scheme, no `//host`, no backslash tricks.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if bulwark_site::is_site_path(n) && !n.contains('\\') => n.to_string(),
        _ => "/".to_string(),
    }
}

fn json(status: StatusCode, value: serde_json::Value) -> Response<Body> {
    let mut resp = json_response(status, &value);
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

pub(crate) fn see_other(location: &str) -> Response<Body> {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(l) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(LOCATION, l);
    }
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

impl Controller for AuthController {
    fn allowed_methods(&self) -> &'static [Method] {
        match (self.action, self.format) {
            (Action::Me, _) => &[Method::GET, Method::HEAD],
            (Action::Tokens, _) => &[Method::GET, Method::HEAD, Method::POST, Method::DELETE],
            (Action::Users, _) => &[Method::GET, Method::HEAD, Method::POST],
            (_, Format::Json) if self.action != Action::Sessions => &[Method::POST],
            _ => &[Method::GET, Method::HEAD, Method::POST],
        }
    }

    fn reads_body(&self) -> bool {
        true
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let post = req.parts.method == Method::POST;
            match (self.action, post) {
                (Action::Logon, false) => {
                    render_page(req, "logon.tpl", StatusCode::OK, BTreeMap::new()).await
                }
                (Action::Logon, true) => self.logon(req).await,
                (Action::Logoff, false) => {
                    render_page(req, "logoff.tpl", StatusCode::OK, BTreeMap::new()).await
                }
                (Action::Logoff, true) => self.logoff(req).await,
                (Action::Sessions, _) => self.sessions(req, post).await,
                (Action::Account, _) => crate::account::page(req, &self.site, post).await,
                (Action::Me, _) => Outcome::Response(json(StatusCode::OK, me(req))),
                (Action::Tokens, _) => Outcome::Response(self.tokens(req).await),
                (Action::Users, _) => {
                    Outcome::Response(crate::users::users(req, &self.site.passwords).await)
                }
            }
        })
    }
}

fn me(req: &RequestCtx<'_>) -> serde_json::Value {
    let who = req.principal();
    json!({
        "user": who.user_id().map(|id| id.0),
        "groups": who.user().map(|u| u.groups().to_vec()).unwrap_or_default(),
        "csrf_token": req.auth().csrf_token.as_deref(),
    })
}

impl AuthController {
    /// A refused logon: the same answer whatever was wrong.
    async fn refused(
        &self,
        req: &RequestCtx<'_>,
        status: StatusCode,
        message: &str,
        creds: &Credentials,
        retry_after: Option<Duration>,
    ) -> Outcome {
        match self.format {
            Format::Json => {
                let problem = Problem::with_status_of(status, message);
                match retry_after {
                    Some(wait) => problem.with_retry_after(wait.as_secs()).into(),
                    None => problem.into(),
                }
            }
            Format::Html => {
                let mut v = BTreeMap::new();
                v.insert("error".into(), Value::from(message));
                v.insert("username".into(), Value::from(creds.username.as_str()));
                v.insert("next".into(), Value::from(safe_next(creds.next.as_deref())));
                with_retry_after(render_page(req, "logon.tpl", status, v).await, retry_after)
            }
        }
    }

    async fn logon(&self, req: &RequestCtx<'_>) -> Outcome {
        let creds = match self.format {
            Format::Json => match serde_json::from_slice::<Credentials>(&req.body) {
                Ok(c) => c,
                Err(e) => {
                    return Problem::bad_request(format!(
                        "expected {{\"username\", \"password\", \"remember\"}}: {e}"
                    ))
                    .into();
                }
            },
            Format::Html => {
                let f = form(&req.body);
                Credentials {
                    username: f.get("username").cloned().unwrap_or_default(),
                    password: f.get("password").cloned().unwrap_or_default(),
                    remember: f.get("remember").is_some_and(|v| !v.is_empty() && v != "0"),
                    next: f.get("next").cloned(),
                    code: f.get("code").cloned().filter(|c| !c.trim().is_empty()),
                    ticket: f.get("ticket").cloned().filter(|t| !t.is_empty()),
                }
            }
        };
        // Counted before anything is checked: of many attempts at once, no
        // more than the limit get a check.
        let (address, account) = (
            ThrottleKey::address(req.peer().addr.ip()),
            ThrottleKey::account(&creds.username),
        );
        let counts = match self
            .site
            .throttle
            .count(&[address.clone(), account.clone()])
            .await
        {
            Ok(counts) => counts,
            Err(e) => return Problem::from(e).into(),
        };
        if let Some(wait) = self.site.throttle.over(counts[0]) {
            let minutes = wait.as_secs().div_ceil(60).max(1);
            let message = format!(
                "Too many failed attempts. Try again in {minutes} minute{}.",
                if minutes == 1 { "" } else { "s" }
            );
            return self
                .refused(
                    req,
                    StatusCode::TOO_MANY_REQUESTS,
                    &message,
                    &creds,
                    Some(wait),
                )
                .await;
        }
        if self.site.throttle.over(counts[1]).is_some() {
            // Not locked (the owner must still get in), slowed down: a wait
            // named as such, not a synchronisation.
            tokio::time::sleep(SLOW_DOWN).await;
        }
        let wrong = "Wrong username or password.";
        let username = creds.username.trim().to_string();
        let store = self.site.sessions.store().clone();
        let lookup = username.clone();
        let stored = match store.run(move |s| s.password_hash(&lookup)).await {
            Ok(stored) => stored,
            Err(e) => return Problem::from(e).into(),
        };
        let (person, hash) = match stored {
            Some((person, hash)) => (Some(person), Some(hash)),
            None => (None, None),
        };
        // The code step: the ticket the password step gave stands in for the
        // password.
        let ticketed = match (creds.ticket.as_deref(), person, hash.as_deref()) {
            (Some(ticket), Some(person), Some(hash)) => {
                self.ticket_holds(ticket, person, hash).await
            }
            _ => false,
        };
        // A password that cannot be one (empty, too long) is checked against
        // the dummy hash all the same: the answer takes as long.
        let password = Password::new(creds.password.clone())
            .unwrap_or_else(|_| Password::new("-".repeat(8)).expect("a valid password"));
        let verified = match ticketed {
            true => Ok(true),
            false => {
                let verified = self.site.passwords.verify_or_dummy(password, hash.clone());
                verified.await.map(|ok| ok && !creds.password.is_empty())
            }
        };
        let matches = match verified {
            Ok(ok) => ok,
            Err(PasswordError::Busy { .. }) if self.format == Format::Html => {
                return Outcome::Response(busy_response());
            }
            Err(PasswordError::Busy { .. }) => {
                return Problem::busy("too many logons at once: try again in a moment", 1).into();
            }
            Err(e) => return Problem::internal("checking the password", &e).into(),
        };
        let Some(person) = person.filter(|_| matches) else {
            let status = match self.format {
                Format::Json => StatusCode::UNAUTHORIZED,
                Format::Html => StatusCode::OK,
            };
            return self.refused(req, status, wrong, &creds, None).await;
        };
        match self.second_factor(person, creds.code.clone()).await {
            Ok(SecondStep::Passed) => {}
            Ok(SecondStep::CodeNeeded) => {
                let message = "Enter the code from your authenticator app (or a recovery code).";
                let ticket = match self
                    .ticket(person, hash.as_deref().unwrap_or_default())
                    .await
                {
                    Ok(ticket) => ticket,
                    Err(e) => return Problem::from(e).into(),
                };
                return match self.format {
                    Format::Json => Problem::unauthenticated(message)
                        .with("second_factor", json!(true))
                        .with("ticket", json!(ticket))
                        .into(),
                    Format::Html => self.code_step(req, message, &creds, &ticket).await,
                };
            }
            Ok(SecondStep::WrongCode) if ticketed => {
                // The password was right: only the code is asked again.
                let message = "That code is not right. Enter the current one from your app, or a recovery code.";
                return match self.format {
                    Format::Json => Problem::unauthenticated(message)
                        .with("second_factor", json!(true))
                        .into(),
                    Format::Html => {
                        let ticket = creds.ticket.as_deref().unwrap_or_default();
                        self.code_step(req, message, &creds, ticket).await
                    }
                };
            }
            Ok(SecondStep::WrongCode) => {
                let status = match self.format {
                    Format::Json => StatusCode::UNAUTHORIZED,
                    Format::Html => StatusCode::OK,
                };
                return self.refused(req, status, wrong, &creds, None).await;
            }
            Ok(SecondStep::NotEnrolled) => {
                let message = "Your user group requires a second factor, and your account has none: ask an administrator to enrol you.";
                return self
                    .refused(req, StatusCode::FORBIDDEN, message, &creds, None)
                    .await;
            }
            Err(e) => return Problem::from(e).into(),
        }
        // The owner is in: their attempt does not count against where they
        // are, and the account's count starts again.
        let given_back = self.site.throttle.give_back(&address).await;
        if let Err(e) = given_back.and(self.site.throttle.clear(&account).await) {
            tracing::warn!("the logon throttle after a logon: {e}");
        }
        let previous = req.auth().session.as_deref();
        let started = match self
            .site
            .sessions
            .start(person, creds.remember, previous, req.parts, req.peer())
            .await
        {
            Ok(s) => s,
            Err(e) => return Problem::from(e).into(),
        };
        req.site.notifier().notify(&Logon { user: person });
        let cookie = set_cookie(&started.token, req.peer().secure, started.max_age);
        let mut resp = match self.format {
            Format::Json => json(
                StatusCode::OK,
                json!({ "user": person.0, "csrf_token": started.csrf_token }),
            ),
            Format::Html => see_other(&safe_next(creds.next.as_deref())),
        };
        resp.headers_mut().append(SET_COOKIE, cookie);
        let secure = req.peer().secure;
        let store = self.site.sessions.store().clone();
        match store.run(move |s| accounts::principal_of(s, person)).await {
            Ok(who) if who.in_group(EDITORS) => {
                resp.headers_mut()
                    .append(SET_COOKIE, set_editor_hint(secure, started.max_age));
            }
            Ok(_) => {
                resp.headers_mut()
                    .append(SET_COOKIE, clear_editor_hint(secure));
            }
            // Only a hint is missing: the logon stands.
            Err(e) => tracing::warn!("the editor hint after a logon: {e}"),
        }
        Outcome::Response(resp)
    }

    /// The logon page's second step: the code alone, the password carried by
    /// `ticket`.
    async fn code_step(
        &self,
        req: &RequestCtx<'_>,
        message: &str,
        creds: &Credentials,
        ticket: &str,
    ) -> Outcome {
        let mut v = BTreeMap::new();
        v.insert("second_factor".into(), Value::from(true));
        v.insert("ticket".into(), Value::from(ticket));
        v.insert("remember".into(), Value::from(creds.remember));
        v.insert("error".into(), Value::from(message));
        v.insert("username".into(), Value::from(creds.username.as_str()));
        v.insert("next".into(), Value::from(safe_next(creds.next.as_deref())));
        render_page(req, "logon.tpl", StatusCode::OK, v).await
    }

    /// A ticket saying `person`'s password (stored as `hash`) was right now.
    async fn ticket(&self, person: ResourceId, hash: &str) -> Result<String, StoreError> {
        let key = self.site.sessions.store().run(logon_ticket::key).await?;
        Ok(logon_ticket::issue(&key, person, hash, unix_now()))
    }

    async fn ticket_holds(&self, ticket: &str, person: ResourceId, hash: &str) -> bool {
        match self.site.sessions.store().run(logon_ticket::key).await {
            Ok(key) => logon_ticket::holds(&key, ticket, person, hash, unix_now()),
            Err(e) => {
                tracing::warn!("the logon ticket key: {e}");
                false
            }
        }
    }

    /// After a right password: does the account need a code, and is the one
    /// given right? A wrong code counts like a wrong password.
    async fn second_factor(
        &self,
        person: bulwark_store::ResourceId,
        code: Option<String>,
    ) -> Result<SecondStep, bulwark_store::StoreError> {
        let settings = self.site.sessions.settings().clone();
        self.site
            .sessions
            .store()
            .run(move |s| {
                let has = second_factor::has_second_factor(s, person)?;
                let required = second_factor::second_factor_required(s, person, &settings)
                    .map_err(|e| match e {
                        crate::AccountError::Store(e) => e,
                        other => bulwark_store::StoreError::InvalidInput {
                            field: "auth.require_second_factor".into(),
                            reason: other.to_string(),
                        },
                    })?;
                Ok(match (has, required, code) {
                    (false, false, _) => SecondStep::Passed,
                    (false, true, _) => SecondStep::NotEnrolled,
                    (true, _, None) => SecondStep::CodeNeeded,
                    (true, _, Some(code)) => {
                        match second_factor::verify_second_factor(s, person, &code)? {
                            SecondFactorCheck::Refused => SecondStep::WrongCode,
                            _ => SecondStep::Passed,
                        }
                    }
                })
            })
            .await
    }

    async fn logoff(&self, req: &RequestCtx<'_>) -> Outcome {
        if let Some(session) = &req.auth().session {
            if let Err(e) = self.site.sessions.end(session).await {
                return Problem::from(e).into();
            }
            if let Some(user) = req.principal().user_id() {
                req.site.notifier().notify(&Logoff { user });
            }
        }
        let mut resp = match self.format {
            Format::Json => json(StatusCode::OK, json!({ "user": null })),
            Format::Html => see_other("/"),
        };
        resp.headers_mut()
            .append(SET_COOKIE, clear_cookie(req.peer().secure));
        resp.headers_mut()
            .append(SET_COOKIE, clear_editor_hint(req.peer().secure));
        Outcome::Response(resp)
    }

    /// The user's sessions; a POST with `end` (a session id) ends one, with
    /// `end=others` every other one.
    async fn sessions(&self, req: &RequestCtx<'_>, post: bool) -> Outcome {
        let (Some(person), Some(current)) = (req.principal().user_id(), &req.auth().session) else {
            return match self.format {
                Format::Json => Problem::unauthenticated("log on first").into(),
                Format::Html => Outcome::Response(see_other("/logon?next=/logon/sessions")),
            };
        };
        if post {
            let end = match self.format {
                Format::Json => {
                    #[derive(Deserialize)]
                    #[serde(deny_unknown_fields)]
                    struct End {
                        end: Option<String>,
                    }
                    match serde_json::from_slice::<End>(&req.body) {
                        Ok(End { end }) => end,
                        Err(e) => {
                            return Problem::bad_request(format!(
                                "expected {{\"end\": \"<session id>\" or \"others\"}}: {e}"
                            ))
                            .into();
                        }
                    }
                }
                Format::Html => form(&req.body).remove("end"),
            };
            let ended = match end.as_deref() {
                Some("others") => self
                    .site
                    .sessions
                    .end_all_of(person, Some(current))
                    .await
                    .map(|_| ()),
                Some(id) => self.end_own(person, id).await,
                None => Ok(()),
            };
            if let Err(e) = ended {
                return Problem::from(e).into();
            }
            if self.format == Format::Html {
                return Outcome::Response(see_other("/logon/sessions"));
            }
        }
        let sessions = match self.site.sessions.list(person).await {
            Ok(s) => s,
            Err(e) => return Problem::from(e).into(),
        };
        let list: Vec<serde_json::Value> = sessions
            .iter()
            .map(|s| {
                json!({
                    "id": s.id_hash,
                    "current": s.id_hash.as_str() == &**current,
                    "created": s.created.to_rfc3339(),
                    "last_seen": s.last_seen.to_rfc3339(),
                    "expires": s.expires.to_rfc3339(),
                    "remember": s.persistent,
                    "user_agent": s.user_agent,
                    "address": s.address,
                })
            })
            .collect();
        match self.format {
            Format::Json => Outcome::Response(json(StatusCode::OK, json!({ "sessions": list }))),
            Format::Html => {
                let mut v = BTreeMap::new();
                v.insert(
                    "sessions".into(),
                    Value::from(minijinja::value::Serde(&list)),
                );
                render_page(req, "sessions.tpl", StatusCode::OK, v).await
            }
        }
    }

    /// Ends one of the user's own sessions (another user's id does nothing).
    async fn end_own(
        &self,
        person: bulwark_store::ResourceId,
        id: &str,
    ) -> Result<(), bulwark_store::StoreError> {
        let own = self.site.sessions.list(person).await?;
        if own.iter().any(|s| s.id_hash == id) {
            self.site.sessions.end(id).await?;
        }
        Ok(())
    }
}

impl AuthController {
    /// `/api/auth/tokens[/{id}]`: the user's API tokens: `GET` lists them,
    /// `POST {"label"}` makes one (shown once, in the answer), `DELETE` with
    /// an id revokes one. Only with a session: a token cannot make tokens.
    async fn tokens(&self, req: &RequestCtx<'_>) -> Response<Body> {
        let (Some(person), Some(_)) = (req.principal().user_id(), &req.auth().session) else {
            return Problem::unauthenticated("log on (with a session) to manage API tokens")
                .into_response();
        };
        let store = self.site.sessions.store().clone();
        let info_json = |t: &crate::api_tokens::ApiTokenInfo| {
            json!({
                "id": t.id,
                "label": t.label,
                "created": t.created.to_rfc3339(),
                "last_used": t.last_used.map(|u| u.to_rfc3339()),
            })
        };
        match req.parts.method {
            Method::POST => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct NewToken {
                    label: String,
                }
                let new: NewToken = match serde_json::from_slice(&req.body) {
                    Ok(n) => n,
                    Err(e) => {
                        return Problem::bad_request(format!(
                            "expected {{\"label\": \"...\"}}: {e}"
                        ))
                        .into_response();
                    }
                };
                match store
                    .run(move |s| ApiTokens::create_blocking(s, person, &new.label))
                    .await
                {
                    Ok((info, token)) => {
                        let mut body = info_json(&info);
                        body["token"] = json!(token);
                        json(StatusCode::CREATED, body)
                    }
                    Err(e) => Problem::from(e).into_response(),
                }
            }
            Method::DELETE => {
                let Some(id) = req.arg("id").and_then(|id| id.parse::<i64>().ok()) else {
                    return Problem::not_found("no such token").into_response();
                };
                match self.site.tokens.revoke(person, id).await {
                    Ok(true) => {
                        let mut resp = Response::new(Body::empty());
                        *resp.status_mut() = StatusCode::NO_CONTENT;
                        resp
                    }
                    Ok(false) => Problem::not_found("no such token").into_response(),
                    Err(e) => Problem::from(e).into_response(),
                }
            }
            _ => match store
                .run(move |s| ApiTokens::list_blocking(s, person))
                .await
            {
                Ok(list) => json(
                    StatusCode::OK,
                    json!({ "tokens": list.iter().map(info_json).collect::<Vec<_>>() }),
                ),
                Err(e) => Problem::from(e).into_response(),
            },
        }
    }
}

/// Where a logon stands after the password.
enum SecondStep {
    Passed,
    CodeNeeded,
    WrongCode,
    NotEnrolled,
}

/// `outcome` with `Retry-After: <wait>` (a page or a JSON answer alike).
pub(crate) fn with_retry_after(outcome: Outcome, retry_after: Option<Duration>) -> Outcome {
    match (outcome, retry_after) {
        (Outcome::Response(mut resp), Some(wait)) => {
            resp.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(wait.as_secs().max(1)));
            Outcome::Response(resp)
        }
        (Outcome::Found(page), Some(wait)) => {
            // A rendered page cannot carry extra headers: answer it whole.
            let mut resp = Response::new(Body::from(match &page.content {
                bulwark_web::Content::Dynamic(bytes) => bytes.clone(),
                _ => bytes::Bytes::new(),
            }));
            *resp.status_mut() = page.status;
            resp.headers_mut()
                .insert(CONTENT_TYPE, page.content_type.clone());
            resp.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(wait.as_secs().max(1)));
            resp.headers_mut()
                .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            Outcome::Response(resp)
        }
        (outcome, _) => outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/members")), "/members");
        assert_eq!(safe_next(Some("//evil.example/")), "/");
        assert_eq!(safe_next(Some("https://evil.example/")), "/");
        assert_eq!(safe_next(Some("/\\evil.example")), "/");
        assert_eq!(safe_next(Some("/a\r\nSet-Cookie: x")), "/");
        assert_eq!(safe_next(None), "/");
    }
}
