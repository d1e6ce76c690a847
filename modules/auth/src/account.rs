//! `/logon/account`: a logged-on person's own account page (`account.tpl`),
//! where the second factor is set up in the browser, as `bulwark user totp`
//! does on a terminal:
//!
//! 1. **start** (with the current password): a new secret, shown as a QR code,
//!    as text to type, and as the `otpauth://` URI; the earlier second factor,
//!    if any, stays in force until the new one is confirmed;
//! 2. **confirm** with a code the app made: the secret is the account's from
//!    now on, and ten recovery codes are shown, this once;
//!
//! and **recovery** (new recovery codes, the old ones void) and **disable**,
//! each with the current password. An editor (or above) also turns the mail
//! about the whole site's comments and form answers on or off here (**mail**,
//! no password needed: it is only what they are sent). A stolen session alone cannot change the
//! second factor: every step that does needs the password or a code from the
//! app, and wrong passwords count towards the account's logon limit.
//!
//! The page is plain HTML forms (CSRF-checked like every form): it works
//! without script.

use std::collections::BTreeMap;

use http::StatusCode;
use minijinja::Value;

use bulwark_acl::EDITORS;
use bulwark_store::ResourceId;
use bulwark_web::{Outcome, Problem, RequestCtx, busy_response, parse_form, render_page};

use crate::accounts;
use crate::logon::{AuthSite, see_other};
use crate::password::{Password, PasswordError};
use crate::second_factor::{self, PendingEnrolment, RecoveryCodes, SecondFactorError};
use crate::throttle::ThrottleKey;

const TEMPLATE: &str = "account.tpl";

/// What the page shows besides the account's state.
#[derive(Default)]
struct Shown {
    pending: Option<PendingEnrolment>,
    codes: Option<RecoveryCodes>,
    message: Option<String>,
    error: Option<String>,
}

pub(crate) async fn page(req: &RequestCtx<'_>, site: &AuthSite, post: bool) -> Outcome {
    let Some(person) = req.principal().user_id() else {
        return Outcome::Response(see_other("/logon?next=/logon/account"));
    };
    let store = site.sessions.store().clone();
    let contact = match store.run(move |s| accounts::contact(s, person)).await {
        Ok(Some(contact)) => contact,
        // A person without a username (made by an import, say) has no account
        // to set up here.
        Ok(None) => return Outcome::NotFound,
        Err(e) => return Problem::from(e).into(),
    };
    let username = contact.username.clone();
    let issuer = req.site.site().name().to_string();
    let shown = if post {
        let mut form: BTreeMap<String, String> = parse_form(&req.body).into_iter().collect();
        let step = form.remove("step").unwrap_or_default();
        let password = form.remove("password").unwrap_or_default();
        let code = form.remove("code").unwrap_or_default();
        match step.as_str() {
            "start" | "recovery" | "disable" => {
                match password_holds(site, person, &username, password).await {
                    Ok(Ok(())) => {}
                    Ok(Err(why)) => {
                        let shown = Shown {
                            error: Some(why),
                            ..Shown::default()
                        };
                        return show(req, site, person, &contact, issuer, shown).await;
                    }
                    Err(outcome) => return *outcome,
                }
                change(site, person, &step, &issuer, &username).await
            }
            "confirm" => {
                let code = code.trim().replace(' ', "");
                let confirmed = site
                    .sessions
                    .store()
                    .run(move |s| Ok(second_factor::confirm_enrolment(s, person, &code)))
                    .await;
                match confirmed {
                    Ok(Ok(codes)) => Ok(Shown {
                        codes: Some(codes),
                        message: Some(
                            "Your account now asks for a code from the app at every logon.".into(),
                        ),
                        ..Shown::default()
                    }),
                    Ok(Err(e)) => Ok(Shown {
                        error: Some(format!("Not confirmed: {e}.")),
                        ..Shown::default()
                    }),
                    Err(e) => Err(e.into()),
                }
            }
            "mail" => {
                let on = form.get("site_activity").is_some_and(|v| v == "on");
                store
                    .run(move |s| Ok(accounts::set_site_activity_mail(s, person, on)))
                    .await
                    .and_then(|set| set.map_err(account_store_error))
                    .map(|()| Shown {
                        message: Some(if on {
                            "You are mailed about every new comment and form answer.".into()
                        } else {
                            "You are no longer mailed about the whole site's comments and form answers.".into()
                        }),
                        ..Shown::default()
                    })
                    .map_err(Problem::from)
            }
            other => {
                return Problem::bad_request(format!(
                    "step {other:?}: use start, confirm, recovery, disable or mail"
                ))
                .into();
            }
        }
    } else {
        Ok(Shown::default())
    };
    match shown {
        Ok(shown) => show(req, site, person, &contact, issuer, shown).await,
        Err(problem) => problem.into(),
    }
}

/// Starts an enrolment, makes new recovery codes, or removes the second factor.
async fn change(
    site: &AuthSite,
    person: ResourceId,
    step: &str,
    issuer: &str,
    username: &str,
) -> Result<Shown, Problem> {
    let store = site.sessions.store();
    match step {
        "start" => {
            let (issuer, username) = (issuer.to_owned(), username.to_owned());
            let pending = store
                .run(move |s| {
                    Ok(second_factor::start_enrolment(
                        s, person, &issuer, &username,
                    ))
                })
                .await?
                .map_err(second_factor_problem)?;
            Ok(Shown {
                pending: Some(pending),
                ..Shown::default()
            })
        }
        "recovery" => match store
            .run(move |s| Ok(second_factor::regenerate_recovery_codes(s, person)))
            .await?
        {
            Ok(codes) => Ok(Shown {
                codes: Some(codes),
                message: Some("New recovery codes: the earlier ones no longer work.".into()),
                ..Shown::default()
            }),
            Err(SecondFactorError::NotEnrolled) => Ok(Shown {
                error: Some("Your account has no second factor to make recovery codes for.".into()),
                ..Shown::default()
            }),
            Err(e) => Err(second_factor_problem(e)),
        },
        _ => {
            let removed = store
                .run(move |s| second_factor::disable(s, person))
                .await?;
            Ok(Shown {
                message: Some(if removed {
                    "Your account no longer asks for a code at logon.".into()
                } else {
                    "Your account had no second factor.".into()
                }),
                ..Shown::default()
            })
        }
    }
}

/// An account's store error as the store's (the person is the caller's own,
/// so an unknown user is the store's doing too).
fn account_store_error(e: accounts::AccountError) -> bulwark_store::StoreError {
    match e {
        accounts::AccountError::Store(e) => e,
        other => bulwark_store::StoreError::invalid("account", other.to_string()),
    }
}

fn second_factor_problem(e: SecondFactorError) -> Problem {
    match e {
        SecondFactorError::Store(e) => e.into(),
        other => Problem::internal("the second factor", &other),
    }
}

/// Whether `password` is the person's: `Ok(Err(why))` when it is not (or too
/// many wrong ones were tried: they count towards the account's logon limit,
/// the same throttle as `/logon`), in words for the page.
async fn password_holds(
    site: &AuthSite,
    person: ResourceId,
    username: &str,
    password: String,
) -> Result<Result<(), String>, Box<Outcome>> {
    let account = ThrottleKey::account(username);
    let counts = site
        .throttle
        .count(std::slice::from_ref(&account))
        .await
        .map_err(|e| Box::new(Outcome::from(Problem::from(e))))?;
    if let Some(wait) = site.throttle.over(counts[0]) {
        let minutes = wait.as_secs().div_ceil(60).max(1);
        return Ok(Err(format!(
            "Too many wrong passwords: try again in {minutes} minute{}. Nothing was changed.",
            if minutes == 1 { "" } else { "s" }
        )));
    }
    let lookup = username.to_owned();
    let stored = site
        .sessions
        .store()
        .run(move |s| s.password_hash(&lookup))
        .await
        .map_err(|e| Box::new(Outcome::from(Problem::from(e))))?
        .filter(|(owner, _)| *owner == person)
        .map(|(_, hash)| hash);
    let wrong = || {
        Ok(Err(
            "That is not your password: nothing was changed.".to_owned()
        ))
    };
    let Ok(password) = Password::new(password) else {
        return wrong();
    };
    match site.passwords.verify_or_dummy(password, stored).await {
        Ok(true) => {
            site.throttle
                .give_back(&account)
                .await
                .map_err(|e| Box::new(Outcome::from(Problem::from(e))))?;
            Ok(Ok(()))
        }
        Ok(false) => wrong(),
        Err(PasswordError::Busy { .. }) => Err(Box::new(Outcome::Response(busy_response()))),
        Err(e) => Err(Box::new(
            Problem::internal("checking the password", &e).into(),
        )),
    }
}

/// Renders the page: the account's state, and what the last step produced.
async fn show(
    req: &RequestCtx<'_>,
    site: &AuthSite,
    person: ResourceId,
    contact: &accounts::UserContact,
    issuer: String,
    mut shown: Shown,
) -> Outcome {
    let store = site.sessions.store().clone();
    let username = contact.username.clone();
    let state = store
        .run(move |s| {
            let enrolled = second_factor::has_second_factor(s, person)?;
            let left = second_factor::recovery_codes_left(s, person)?;
            // Only the editors (and above) are mailed about the whole site.
            let site_mail = match accounts::principal_of(s, person)?.in_group(EDITORS) {
                true => Some(accounts::site_activity_mail(s, person)?),
                false => None,
            };
            Ok((enrolled, left, site_mail))
        })
        .await;
    let (enrolled, left, site_mail) = match state {
        Ok(state) => state,
        Err(e) => return Problem::from(e).into(),
    };
    // A started enrolment is shown again until it is confirmed (or replaced),
    // unless this answer brings the recovery codes of the one just confirmed.
    if shown.pending.is_none() && shown.codes.is_none() {
        let pending = store
            .run(move |s| {
                Ok(second_factor::pending_enrolment(
                    s, person, &issuer, &username,
                ))
            })
            .await;
        match pending {
            Ok(Ok(pending)) => shown.pending = pending,
            Ok(Err(e)) => return second_factor_problem(e).into(),
            Err(e) => return Problem::from(e).into(),
        }
    }
    let mut vars = BTreeMap::new();
    vars.insert("username".into(), Value::from(contact.username.as_str()));
    vars.insert("email".into(), Value::from(contact.email.clone()));
    vars.insert("second_factor".into(), Value::from(enrolled));
    vars.insert("recovery_codes_left".into(), Value::from(left));
    vars.insert("site_activity_mail".into(), Value::from(site_mail));
    if let Some(pending) = &shown.pending {
        vars.insert(
            "pending".into(),
            minijinja::context! {
                qr_svg => Value::from_safe_string(pending.qr_svg()),
                secret => pending.secret.as_str(),
                uri => pending.uri.as_str(),
            },
        );
    }
    if let Some(codes) = &shown.codes {
        vars.insert("new_codes".into(), Value::from(codes.codes().to_vec()));
    }
    vars.insert("message".into(), Value::from(shown.message));
    vars.insert("error".into(), Value::from(shown.error));
    let mut outcome = render_page(req, TEMPLATE, StatusCode::OK, vars).await;
    // Recovery codes and secrets are not for any cache, nor the back button.
    if let Outcome::Found(page) = &mut outcome {
        page.cache_control = "no-store";
    }
    outcome
}
