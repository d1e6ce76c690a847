//! `/api/auth/users`: the site's accounts, for managers (the admin's users
//! screen). `GET` lists every user with the groups they were put in; `POST
//! {"username", "password", "group", "email"?}` makes one.
//!
//! Who may give a group: only someone who is in it. A manager can make
//! editors and managers but not administrators; the same rule holds when a
//! membership edge (`hasusergroup`) is added or removed through the JSON API
//! ([`membership_change`], an observer of the core's `EdgeChange`), and only
//! administrators change the group tree (`hasparentgroup`).

use http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::{ADMINISTRATORS, MANAGERS, Principal};
use bulwark_http::Body;
use bulwark_web::events::{EdgeChange, EdgeRefused};
use bulwark_web::{Problem, RequestCtx, json_response};
use http::Response;

use bulwark_store::Store;

use crate::accounts::{self, AccountError, GroupName, HAS_PARENT_GROUP, HAS_USER_GROUP};
use crate::password::{NewPassword, PasswordError, Passwords};
use crate::rights::is_last_administrator_without;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewUser {
    username: String,
    password: String,
    group: String,
    #[serde(default)]
    email: Option<String>,
}

fn answer(status: StatusCode, value: serde_json::Value) -> Response<Body> {
    let mut resp = json_response(status, &value);
    resp.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    resp
}

fn refused(status: StatusCode, message: impl std::fmt::Display) -> Response<Body> {
    Problem::with_status_of(status, message.to_string()).into_response()
}

fn account_error(e: AccountError) -> Response<Body> {
    match e {
        AccountError::Store(e) => Problem::from(e).into_response(),
        e => refused(StatusCode::BAD_REQUEST, e),
    }
}

/// Whether `who` may put people in `group` (or take them out).
fn may_give(who: &Principal, group: &GroupName) -> bool {
    who.in_group(group.as_str())
}

/// The [`EdgeChange`] observer: memberships only by people of that group,
/// never the last administrator's out of the administrators; the group tree
/// only by administrators. A store that fails refuses.
pub fn membership_change(store: &Store, change: &EdgeChange) -> Option<EdgeRefused> {
    match change.predicate.as_str() {
        HAS_USER_GROUP => {
            let group = match accounts::group_name(store, change.object) {
                Ok(group) => group?,
                Err(e) => return Some(EdgeRefused(format!("the user groups cannot be read: {e}"))),
            };
            if !may_give(&change.principal, &group) {
                return Some(EdgeRefused(format!(
                    "only people in the group {group} may put others in it or take them out"
                )));
            }
            if change.added {
                return None;
            }
            match is_last_administrator_without(store, change.subject, Some(change.object)) {
                Ok(false) => None,
                Ok(true) => Some(EdgeRefused(
                    "this is the site's last administrator: make someone else one first".to_owned(),
                )),
                Err(e) => Some(EdgeRefused(format!("the user groups cannot be read: {e}"))),
            }
        }
        HAS_PARENT_GROUP => (!change.principal.in_group(ADMINISTRATORS))
            .then(|| EdgeRefused("only administrators change the user group tree".to_owned())),
        _ => None,
    }
}

/// `/api/auth/users`.
pub async fn users(req: &RequestCtx<'_>, passwords: &std::sync::Arc<Passwords>) -> Response<Body> {
    let who = req.principal();
    if who.is_anonymous() {
        return refused(StatusCode::UNAUTHORIZED, "log on to see or add users");
    }
    if !who.in_group(MANAGERS) {
        return refused(StatusCode::FORBIDDEN, "you may not see or add users");
    }
    let store = req.site.models().store.clone();
    if req.parts.method != Method::POST {
        return match store.run(accounts::accounts).await {
            Ok(list) => {
                let users: Vec<serde_json::Value> = list
                    .iter()
                    .map(|a| {
                        json!({
                            "username": a.username,
                            "person": a.person.0,
                            "groups": a.groups.iter().map(GroupName::as_str).collect::<Vec<_>>(),
                            "created": a.created.to_rfc3339(),
                        })
                    })
                    .collect();
                answer(StatusCode::OK, json!({ "users": users }))
            }
            Err(e) => Problem::from(e).into_response(),
        };
    }
    // An object and nothing else (serde would also read the fields from an array).
    let new: NewUser = match serde_json::from_slice::<serde_json::Value>(&req.body) {
        Ok(value) if value.is_object() => match serde_json::from_value(value) {
            Ok(n) => n,
            Err(e) => return refused(StatusCode::BAD_REQUEST, format!("bad JSON body: {e}")),
        },
        Ok(_) => return refused(StatusCode::BAD_REQUEST, "the body must be a JSON object"),
        Err(e) => return refused(StatusCode::BAD_REQUEST, format!("bad JSON body: {e}")),
    };
    let group = GroupName::new(&new.group);
    if !may_give(who, &group) {
        return refused(
            StatusCode::FORBIDDEN,
            format!("only people in the group {group} may put others in it"),
        );
    }
    let username = new.username.trim().to_owned();
    if username.is_empty()
        || username.chars().count() > 80
        || username.chars().any(char::is_whitespace)
    {
        return refused(
            StatusCode::BAD_REQUEST,
            "a username is 1 to 80 characters without spaces",
        );
    }
    let password = match NewPassword::new(new.password) {
        Ok(p) => p,
        Err(e) => return refused(StatusCode::BAD_REQUEST, e),
    };
    let hash = match passwords.hash(password).await {
        Ok(h) => h,
        Err(e @ PasswordError::Busy { .. }) => return refused(StatusCode::SERVICE_UNAVAILABLE, e),
        Err(e) => {
            tracing::error!("hashing a new user's password: {e}");
            return refused(
                StatusCode::INTERNAL_SERVER_ERROR,
                "hashing the password failed",
            );
        }
    };
    let email = new.email.filter(|e| !e.trim().is_empty());
    let made = store
        .run(move |s| {
            let made = accounts::add_user(s, &username, &group, &hash).map(|person| {
                let email = email
                    .as_deref()
                    .map(|email| accounts::set_email(s, &username, email));
                (person, email)
            });
            Ok(made)
        })
        .await;
    match made {
        Ok(Ok((person, None | Some(Ok(()))))) => {
            answer(StatusCode::CREATED, json!({ "person": person.0 }))
        }
        Ok(Ok((person, Some(Err(e))))) => {
            // The account stands; say what was wrong with the address.
            answer(
                StatusCode::CREATED,
                json!({ "person": person.0, "warning": e.to_string() }),
            )
        }
        Ok(Err(e)) => account_error(e),
        Err(e) => Problem::from(e).into_response(),
    }
}
