//! Invitations: a mail to someone who has an account but never chose its
//! password (an imported author, `bulwark import wordpress --invite`), with a
//! link where they choose it.
//!
//! The link is a password reset link (`reset.rs`, the same page and the same
//! single-use token) that works for a week instead of an hour: an invitation
//! is read when its reader gets to it, a reset when the person who asked for
//! it is waiting. The mail goes into the site's outbox (the mail module's
//! table), so a command run beside the server queues it and the server sends
//! it, with the mail module's retries.
//!
//! The text is written here, in English, as the comments and forms modules
//! write theirs: a command has no request, so no language to render a
//! template in.

use std::time::Duration;

use chrono::Utc;

use bulwark_module_mail::{Mail, MailError, MailId};
use bulwark_site::Site;
use bulwark_store::{ResourceId, Store, StoreError};

use crate::accounts;
use crate::reset::{self, ResetToken};
use crate::reset_pages::reset_link;
use crate::settings::AuthSettings;

/// How long an invitation's link works.
pub const INVITATION_EXPIRY: Duration = Duration::from_secs(7 * 24 * 3600);

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InviteError {
    #[error("{0} has no e-mail address to send an invitation to")]
    NoAddress(String),
    #[error("person {0} has no account")]
    NoAccount(ResourceId),
    #[error("the site's [auth] settings: {0}")]
    Settings(String),
    #[error("the link of an invitation: {0}")]
    Link(String),
    #[error(transparent)]
    Mail(#[from] MailError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Invites `person` of `site`: a new set-password token (their older ones
/// stop working) and the mail that carries it, queued in the site's outbox.
/// Runs where blocking is allowed; the site must enable the mail module.
pub fn invite(store: &Store, site: &Site, person: ResourceId) -> Result<MailId, InviteError> {
    let contact = accounts::contact(store, person)?.ok_or(InviteError::NoAccount(person))?;
    let email = contact
        .email
        .clone()
        .ok_or_else(|| InviteError::NoAddress(contact.username.clone()))?;
    let settings = AuthSettings::of_site(site).map_err(|e| InviteError::Settings(e.to_string()))?;
    let token = ResetToken::random();
    let link = reset_link(site, &settings, &token).map_err(|e| InviteError::Link(e.to_string()))?;
    let config = &site.config;
    let title = config
        .settings
        .get("title")
        .and_then(|t| t.as_str())
        .unwrap_or(&config.hostname);
    let mail = Mail::new(
        &email,
        &format!("Your account on {title}"),
        invitation_text(&contact.username, title, &link),
    )?;
    reset::issue_token(store, person, &token, Utc::now(), INVITATION_EXPIRY)?;
    Ok(bulwark_module_mail::enqueue(store, &mail)?)
}

fn invitation_text(username: &str, title: &str, link: &str) -> String {
    let days = INVITATION_EXPIRY.as_secs() / (24 * 3600);
    format!(
        "Hello {username},\n\n\
         You have an account on {title}, with the username \"{username}\".\n\
         To choose its password, open this link within {days} days:\n\n\
         {link}\n\n\
         The link works once. If it has expired, ask for a new one with\n\
         \"Forgot your password?\" where you log on.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_invitation_names_the_account_the_site_and_the_link() {
        let text = invitation_text(
            "marta",
            "Marta's kitchen",
            "https://example.org/logon/reset/ab12",
        );
        assert!(text.starts_with("Hello marta,"), "{text}");
        assert!(
            text.contains("on Marta's kitchen, with the username \"marta\""),
            "{text}"
        );
        assert!(
            text.contains("within 7 days:\n\nhttps://example.org/logon/reset/ab12\n"),
            "{text}"
        );
    }
}
