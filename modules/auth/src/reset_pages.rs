//! The password reset pages and JSON endpoints (the `password_reset`
//! controller kind, with the rules in `module.toml`):
//!
//! - `/logon/reset` (`step = "request"`, a template): a form for a username or
//!   e-mail address. The answer is the same whether or not such an account
//!   exists, has an address, or the mail could be sent; the mail goes out in
//!   the background, so the answer's timing does not tell either.
//! - `/logon/reset/{token}` (`step = "confirm"`): a form for the new password,
//!   or what is wrong with the link (unknown, used, expired).
//! - `POST /api/auth/reset` `{"username"}` or `{"email"}` (202), and
//!   `POST /api/auth/reset/confirm` `{"token", "password"}`: the same for
//!   scripts (a rule without `template` answers JSON).
//!
//! The reset link starts with `[auth] reset_link_base` (by default the site's
//! own scheme and hostname, never the request's `Host`) and names the
//! `logon_reset_confirm` rule, so a site that moves the page moves the link.
//! The mail's text is the template `password_reset_mail.txt` (its first line
//! `Subject: ...`), which a site may override like any other.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use futures_util::future::BoxFuture;
use http::{Method, StatusCode};
use minijinja::Value;
use serde::Deserialize;
use serde_json::json;

use bulwark_module_mail::{Mail, MailError, SendMail};
use bulwark_store::{ResourceId, Store, StoreError};
use bulwark_web::{
    Controller, ModuleError, Outcome, Problem, ProblemKind, RenderCost, RequestCtx, SiteNotifier,
    busy_response, error_response, json_response, parse_form, read_settings, render_uncached,
};

use crate::accounts::{self, UserContact};
use crate::logon::with_retry_after;
use crate::password::{NewPassword, PasswordError, Passwords};
use crate::reset::{self, ResetToken, TokenProblem};
use crate::settings::AuthSettings;
use crate::throttle::{Throttle, ThrottleKey};

/// The rule whose path a reset link points at (`/logon/reset/{token}`).
pub const CONFIRM_RULE: &str = "logon_reset_confirm";
/// The address of the page where `token` sets a password: the site's
/// [`CONFIRM_RULE`] (`/logon/reset/{token}`) after `[auth] reset_link_base`.
pub(crate) fn reset_link(
    site: &bulwark_site::Site,
    settings: &AuthSettings,
    token: &ResetToken,
) -> Result<String, bulwark_site::UrlError> {
    let path = site
        .router
        .url_for(CONFIRM_RULE, &[token.as_str().to_owned()], &[])?;
    Ok(format!("{}{path}", settings.reset_link_base))
}

/// The template of the reset mail.
pub const MAIL_TEMPLATE: &str = "password_reset_mail.txt";
/// The one answer to a reset request, whoever was named.
pub const REQUEST_ANSWER: &str = "If an account with that name or address exists and has an e-mail address, \
     a link to choose a new password is on its way there.";

/// What one site's reset pages share.
pub(crate) struct SiteReset {
    pub site: String,
    pub store: Store,
    pub notifier: SiteNotifier,
    pub passwords: Arc<Passwords>,
    pub settings: AuthSettings,
    /// Requests per account and per address (`[auth] reset_requests` an hour).
    pub throttle: Arc<Throttle>,
}

/// The window of `[auth] reset_requests`.
pub(crate) const RESET_REQUEST_WINDOW: Duration = Duration::from_secs(3600);

/// Whom a reset is asked for.
#[derive(Debug, Clone)]
enum Who {
    Username(String),
    Email(String),
    /// A form's one field: a username, else (with an `@`) an address.
    Either(String),
}

fn find_user(store: &Store, who: &Who) -> Result<Option<UserContact>, StoreError> {
    match who {
        Who::Username(name) => accounts::find_by_username(store, name),
        Who::Email(address) => accounts::find_by_email(store, address),
        Who::Either(text) => match accounts::find_by_username(store, text)? {
            Some(user) => Ok(Some(user)),
            None if text.contains('@') => accounts::find_by_email(store, text),
            None => Ok(None),
        },
    }
}

/// Why a new password was not set.
enum ConfirmError {
    Token(TokenProblem),
    Password(PasswordError),
    Store(StoreError),
}

impl SiteReset {
    /// Looks the account up and, when it has an address, sends it a reset
    /// link in the background. Whatever happens, the caller answers the same.
    /// Counts the request against the address and the account as named;
    /// `Err(Some(retry_after))` when either has asked too often (unknown
    /// accounts count the same), `Err(None)` when the count cannot be kept.
    async fn admit(&self, req: &RequestCtx<'_>, who: &Who) -> Result<(), Option<Duration>> {
        let account = match who {
            Who::Username(a) | Who::Email(a) | Who::Either(a) => a,
        };
        let keys = [
            ThrottleKey::address(req.peer().addr.ip()),
            ThrottleKey::account(account),
        ];
        match self.throttle.count(&keys).await {
            Ok(counts) => match counts.iter().filter_map(|c| self.throttle.over(*c)).max() {
                Some(wait) => Err(Some(wait)),
                None => Ok(()),
            },
            Err(e) => {
                tracing::error!(site = %self.site, "counting a password reset request: {e}");
                Err(None)
            }
        }
    }

    async fn request(self: &Arc<Self>, req: &RequestCtx<'_>, who: Who) {
        let site = &self.site;
        let lookup = who.clone();
        let user = match self.store.run(move |s| find_user(s, &lookup)).await {
            Ok(Some(user)) => user,
            Ok(None) => {
                tracing::info!(%site, "password reset asked for an unknown account: {who:?}");
                return;
            }
            Err(e) => {
                tracing::error!(%site, "password reset for {who:?}: {e}");
                return;
            }
        };
        let Some(email) = user.email.clone() else {
            tracing::info!(
                %site,
                "password reset asked for {}, who has no e-mail address: no mail sent",
                user.username
            );
            return;
        };
        // However the account was named (username or address), its person
        // gets no more mails an hour than the limit.
        match self
            .throttle
            .count(&[ThrottleKey::person(user.person)])
            .await
        {
            Ok(counts) if self.throttle.over(counts[0]).is_none() => {}
            Ok(_) => {
                tracing::info!(%site, "password reset for {}: asked too often, no mail sent", user.username);
                return;
            }
            Err(e) => {
                tracing::error!(%site, "password reset for {}: {e}", user.username);
                return;
            }
        }
        let token = ResetToken::random();
        let mail = match self.mail(req, &user, &email, &token) {
            Ok(mail) => mail,
            Err(e) => {
                tracing::error!(%site, "password reset mail for {}: {e}", user.username);
                return;
            }
        };
        tokio::spawn(self.clone().deliver(user, token, mail));
    }

    /// The reset mail, rendered from the site's `password_reset_mail.txt`.
    fn mail(
        &self,
        req: &RequestCtx<'_>,
        user: &UserContact,
        email: &str,
        token: &ResetToken,
    ) -> Result<Mail, Box<dyn std::error::Error>> {
        let link = reset_link(req.site.site(), &self.settings, token)?;
        let text = req.site.templates().render(
            MAIL_TEMPLATE,
            minijinja::context! {
                username => &user.username,
                link => link,
                expires_minutes => self.settings.reset_expiry.as_secs().div_ceil(60),
                hostname => &req.site.config().hostname,
                site_title => req.site.config().settings.get("title").and_then(|t| t.as_str()),
                // Written in the language the reset was asked in.
                language => req.language(),
            },
        )?;
        let (subject, body) = split_subject(&text);
        Ok(Mail::new(email, subject, body)?)
    }

    /// Stores the token, then queues the mail through the mail module.
    async fn deliver(self: Arc<Self>, user: UserContact, token: ResetToken, mail: Mail) {
        let (site, username) = (&self.site, &user.username);
        let (person, expiry) = (user.person, self.settings.reset_expiry);
        let issued = self
            .store
            .run(move |s| reset::issue_token(s, person, &token, Utc::now(), expiry))
            .await;
        if let Err(e) = issued {
            tracing::error!(%site, "password reset for {username}: storing the token: {e}");
            return;
        }
        match self.notifier.current().first(&SendMail(mail)) {
            None => tracing::warn!(
                %site,
                "password reset for {username}: no mail sent, the site does not enable the `mail` module (docs/mail.md)"
            ),
            Some(queued) => match queued.stored().await {
                Ok(id) => {
                    tracing::info!(%site, "password reset mail for {username} queued (mail {id})")
                }
                // The mail module said why, at warn.
                Err(MailError::NotConfigured { .. }) => {}
                Err(e) => tracing::error!(%site, "password reset mail for {username}: {e}"),
            },
        }
    }

    /// Sets a new password with a token; the token is used up. Returns the
    /// username.
    async fn confirm(&self, token: String, password: String) -> Result<String, ConfirmError> {
        let check = token.clone();
        match self
            .store
            .run(move |s| reset::check_token(s, &check, Utc::now()))
            .await
        {
            Ok(Ok(_)) => {}
            Ok(Err(problem)) => return Err(ConfirmError::Token(problem)),
            Err(e) => return Err(ConfirmError::Store(e)),
        }
        let password = NewPassword::new(password).map_err(ConfirmError::Password)?;
        let hash = self
            .passwords
            .hash(password)
            .await
            .map_err(ConfirmError::Password)?;
        self.store
            .run(move |s| {
                let person = match reset::use_token(s, &token, Utc::now())? {
                    Ok(person) => person,
                    Err(problem) => return Ok(Err(problem)),
                };
                set_password(s, person, &hash).map(Ok)
            })
            .await
            .map_err(ConfirmError::Store)?
            .map_err(ConfirmError::Token)
    }
}

/// Stores the new password hash of `person` (whose token was just used) and
/// ends their sessions; returns the username.
fn set_password(store: &Store, person: ResourceId, hash: &str) -> Result<String, StoreError> {
    let user = accounts::contact(store, person)?
        .ok_or_else(|| StoreError::ResourceNotFound(format!("user {person}")))?;
    store.set_username_password_hash(person, &user.username, hash)?;
    accounts::end_logons(store, person)?;
    Ok(user.username)
}

/// `Subject: ...` on the first line, then the body (a blank line after the
/// subject is dropped).
fn split_subject(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.split_once('\n') {
        Some((first, rest)) if first.starts_with("Subject:") => (
            first["Subject:".len()..].trim(),
            rest.strip_prefix("\r\n")
                .or_else(|| rest.strip_prefix('\n'))
                .unwrap_or(rest),
        ),
        _ => ("Password reset", text),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Step {
    Request,
    Confirm,
}

/// A `password_reset` rule's options.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleOptions {
    step: Step,
    /// The page's template; without one the rule answers JSON.
    template: Option<String>,
}

impl ResetController {
    /// The JSON form of a step, for the module's endpoints (`api.rs`).
    pub(crate) fn json(reset: Arc<SiteReset>, step: Step) -> ResetController {
        ResetController {
            reset,
            step,
            template: None,
            cost: RenderCost::default(),
        }
    }
}

pub(crate) struct ResetController {
    reset: Arc<SiteReset>,
    step: Step,
    template: Option<String>,
    cost: RenderCost,
}

impl ResetController {
    pub(crate) fn new(
        options: &toml::Table,
        reset: Arc<SiteReset>,
    ) -> Result<ResetController, ModuleError> {
        let options: RuleOptions = read_settings(options)?;
        Ok(ResetController {
            reset,
            step: options.step,
            template: options.template,
            cost: RenderCost::default(),
        })
    }
}

impl Controller for ResetController {
    fn allowed_methods(&self) -> &'static [Method] {
        match self.template {
            Some(_) => &[Method::GET, Method::HEAD, Method::POST],
            None => &[Method::POST],
        }
    }

    fn reads_body(&self) -> bool {
        true
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match (&self.template, self.step) {
                (Some(template), Step::Request) => self.request_page(req, template).await,
                (Some(template), Step::Confirm) => self.confirm_page(req, template).await,
                (None, Step::Request) => self.request_json(req).await,
                (None, Step::Confirm) => self.confirm_json(req).await,
            }
        })
    }
}

fn form_field(req: &RequestCtx<'_>, name: &str) -> String {
    parse_form(&req.body)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_default()
}

/// A rendered page with another status than 200.
fn with_status(outcome: Outcome, status: StatusCode) -> Outcome {
    match outcome {
        Outcome::Found(mut page) => {
            page.status = status;
            Outcome::Found(page)
        }
        other => other,
    }
}

impl ResetController {
    async fn render(
        &self,
        req: &RequestCtx<'_>,
        template: &str,
        status: StatusCode,
        vars: impl IntoIterator<Item = (&'static str, Value)>,
    ) -> Outcome {
        let vars: BTreeMap<String, Value> =
            vars.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        with_status(
            render_uncached(req, &self.cost, template, vars).await,
            status,
        )
    }

    async fn request_page(&self, req: &RequestCtx<'_>, template: &str) -> Outcome {
        if req.parts.method != Method::POST {
            return self.render(req, template, StatusCode::OK, []).await;
        }
        let account = form_field(req, "account").trim().to_owned();
        if account.is_empty() {
            let error = "Type your username or e-mail address.";
            return self
                .render(
                    req,
                    template,
                    StatusCode::BAD_REQUEST,
                    [("error", Value::from(error))],
                )
                .await;
        }
        let who = Who::Either(account.clone());
        if let Err(refusal) = self.reset.admit(req, &who).await {
            let Some(wait) = refusal else {
                return Outcome::Response(busy_response());
            };
            let page = self
                .render(
                    req,
                    template,
                    StatusCode::TOO_MANY_REQUESTS,
                    [("error", Value::from(too_often(wait)))],
                )
                .await;
            return with_retry_after(page, Some(wait));
        }
        self.reset.request(req, who).await;
        let vars = [
            ("sent", Value::from(true)),
            ("account", Value::from(account)),
            ("message", Value::from(REQUEST_ANSWER)),
        ];
        self.render(req, template, StatusCode::OK, vars).await
    }

    async fn confirm_page(&self, req: &RequestCtx<'_>, template: &str) -> Outcome {
        let token = req.arg("token").unwrap_or_default().to_owned();
        let problem = |p: TokenProblem| {
            [
                ("problem", Value::from(p.code())),
                ("message", Value::from(p.message())),
            ]
        };
        if req.parts.method != Method::POST {
            let check = token.clone();
            return match self
                .reset
                .store
                .run(move |s| reset::check_token(s, &check, Utc::now()))
                .await
            {
                Ok(Ok(_)) => self.render(req, template, StatusCode::OK, []).await,
                Ok(Err(p)) => {
                    self.render(req, template, StatusCode::GONE, problem(p))
                        .await
                }
                Err(e) => store_failure_page(req, &e),
            };
        }
        let (password, again) = (
            form_field(req, "password"),
            form_field(req, "password_again"),
        );
        if password != again {
            let error = "The two passwords differ: type the same one twice.";
            return self
                .render(
                    req,
                    template,
                    StatusCode::BAD_REQUEST,
                    [("error", Value::from(error))],
                )
                .await;
        }
        match self.reset.confirm(token, password).await {
            Ok(username) => {
                let vars = [
                    ("done", Value::from(true)),
                    ("username", Value::from(username)),
                ];
                self.render(req, template, StatusCode::OK, vars).await
            }
            Err(ConfirmError::Token(p)) => {
                self.render(req, template, StatusCode::GONE, problem(p))
                    .await
            }
            Err(ConfirmError::Password(PasswordError::Busy { .. })) => {
                Outcome::Response(busy_response())
            }
            Err(ConfirmError::Password(e)) => {
                let vars = [("error", Value::from(e.to_string()))];
                self.render(req, template, StatusCode::BAD_REQUEST, vars)
                    .await
            }
            Err(ConfirmError::Store(e)) => store_failure_page(req, &e),
        }
    }

    async fn request_json(&self, req: &RequestCtx<'_>) -> Outcome {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Body {
            username: Option<String>,
            email: Option<String>,
        }
        let who = match serde_json::from_slice::<Body>(&req.body) {
            Ok(Body {
                username: Some(name),
                email: None,
            }) if !name.trim().is_empty() => Who::Username(name),
            Ok(Body {
                username: None,
                email: Some(address),
            }) if !address.trim().is_empty() => Who::Email(address),
            Ok(_) => {
                return json_error(
                    StatusCode::BAD_REQUEST,
                    "give either \"username\" or \"email\"",
                    "request",
                );
            }
            Err(e) => {
                return json_error(
                    StatusCode::BAD_REQUEST,
                    &format!("the body must be JSON: {e}"),
                    "request",
                );
            }
        };
        if let Err(refusal) = self.reset.admit(req, &who).await {
            let Some(wait) = refusal else {
                return Problem::busy(
                    "the request cannot be counted now: try again in a moment",
                    5,
                )
                .into();
            };
            let answer = json_error(StatusCode::TOO_MANY_REQUESTS, &too_often(wait), "throttled");
            return with_retry_after(answer, Some(wait));
        }
        self.reset.request(req, who).await;
        Outcome::Response(json_response(
            StatusCode::ACCEPTED,
            &json!({"status": "accepted", "message": REQUEST_ANSWER}),
        ))
    }

    async fn confirm_json(&self, req: &RequestCtx<'_>) -> Outcome {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Body {
            token: String,
            password: String,
        }
        let body = match serde_json::from_slice::<Body>(&req.body) {
            Ok(body) => body,
            Err(e) => {
                return json_error(
                    StatusCode::BAD_REQUEST,
                    &format!("the body must be JSON with \"token\" and \"password\": {e}"),
                    "request",
                );
            }
        };
        match self.reset.confirm(body.token, body.password).await {
            Ok(username) => Outcome::Response(json_response(
                StatusCode::OK,
                &json!({"status": "changed", "username": username}),
            )),
            Err(ConfirmError::Token(p)) => json_error(StatusCode::GONE, p.message(), p.code()),
            Err(ConfirmError::Password(PasswordError::Busy { .. })) => {
                Outcome::Response(busy_response())
            }
            Err(ConfirmError::Password(e)) => {
                json_error(StatusCode::BAD_REQUEST, &e.to_string(), "password")
            }
            Err(ConfirmError::Store(e)) => bulwark_web::Problem::from(e).into(),
        }
    }
}

/// What a visitor who asked too often is told.
fn too_often(wait: Duration) -> String {
    format!(
        "Too many reset requests for this account or from this address: try again in {} minutes.",
        wait.as_secs().div_ceil(60).max(1)
    )
}

fn json_error(status: StatusCode, message: &str, reason: &str) -> Outcome {
    let kind = match status {
        StatusCode::GONE => ProblemKind::Gone,
        StatusCode::TOO_MANY_REQUESTS => ProblemKind::TooManyRequests,
        _ => ProblemKind::Invalid,
    };
    let problem = Problem::new(kind, message).with("reason", json!(reason));
    match kind {
        ProblemKind::Invalid => problem.with_field(reason),
        _ => problem,
    }
    .into()
}

fn store_failure_page(req: &RequestCtx<'_>, e: &StoreError) -> Outcome {
    if e.is_temporary() {
        return Outcome::Response(busy_response());
    }
    tracing::error!(site = %req.site.site().name(), "password reset: {e}");
    Outcome::Response(error_response(
        req.site,
        StatusCode::INTERNAL_SERVER_ERROR,
        None,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_of_a_mail_template_is_its_subject() {
        assert_eq!(
            split_subject("Subject: Reset\n\nHello\nthere\n"),
            ("Reset", "Hello\nthere\n")
        );
        assert_eq!(split_subject("Hello"), ("Password reset", "Hello"));
    }
}
