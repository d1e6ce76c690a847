//! A mail to send, and what can go wrong with one.

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, Message};
use lettre::{Address, AsyncTransport};

use bulwark_store::StoreError;

use crate::settings::SmtpSettings;

/// A plain-text mail to one recipient. Its `Debug` leaves the text out: a
/// mail may carry a secret (a password reset link).
#[derive(Clone, PartialEq, Eq)]
pub struct Mail {
    to: String,
    subject: String,
    text: String,
    /// Where an answer goes, when not to the site's sender (a contact
    /// form's visitor).
    reply_to: Option<String>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MailError {
    #[error("{address:?} is not an e-mail address: {source}")]
    Address {
        address: String,
        #[source]
        source: lettre::address::AddressError,
    },
    /// The site has no `[mail] smtp`: the mail was logged and dropped.
    #[error("the site has no [mail] smtp setting: the mail to {to} was dropped")]
    NotConfigured { to: String },
    /// The site's queue went away (a reload or shutdown) before the mail was
    /// written.
    #[error("the mail queue stopped before the mail was stored")]
    QueueStopped,
    #[error("the mail queue: {0}")]
    Store(#[from] StoreError),
    #[error("building the message: {0}")]
    Message(#[source] lettre::error::Error),
    #[error("sending over SMTP: {0}")]
    Smtp(#[source] lettre::transport::smtp::Error),
}

/// Something, `@`, a domain with a dot, no spaces, at most 254 characters:
/// what a form can check as it is typed. [`Mail::new`] checks an address
/// properly before a mail is sent to it.
pub fn looks_like_address(email: &str) -> bool {
    let Some((local, domain)) = email.rsplit_once('@') else {
        return false;
    };
    email.len() <= 254
        && !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.contains(char::is_whitespace)
}

impl MailError {
    /// Trying again cannot help (the server refused the recipient for good,
    /// or the message cannot be built).
    pub fn is_permanent(&self) -> bool {
        match self {
            MailError::Smtp(e) => e.is_permanent(),
            MailError::Address { .. } | MailError::Message(_) => true,
            _ => false,
        }
    }
}

/// `address` as an address, or why it is none.
fn checked(address: &str) -> Result<Address, MailError> {
    let address = address.trim();
    address
        .parse::<Address>()
        .map_err(|source| MailError::Address {
            address: address.to_owned(),
            source,
        })
}

impl Mail {
    /// A mail to `to` (an address such as `ann@example.org`, checked here);
    /// line breaks in the subject become spaces.
    pub fn new(to: &str, subject: &str, text: impl Into<String>) -> Result<Mail, MailError> {
        let to = to.trim();
        checked(to)?;
        Ok(Mail {
            to: to.to_owned(),
            subject: subject.replace(['\r', '\n'], " ").trim().to_owned(),
            text: text.into(),
            reply_to: None,
        })
    }

    /// The same mail, answered to `address` (checked here) rather than to
    /// the site's sender.
    pub fn with_reply_to(mut self, address: &str) -> Result<Mail, MailError> {
        self.reply_to = Some(checked(address)?.to_string());
        Ok(self)
    }

    /// A mail read back from the outbox, checked when it was queued.
    pub(crate) fn stored(
        to: String,
        subject: String,
        text: String,
        reply_to: Option<String>,
    ) -> Mail {
        Mail {
            to,
            subject,
            text,
            reply_to,
        }
    }

    pub fn to(&self) -> &str {
        &self.to
    }

    pub fn subject(&self) -> &str {
        &self.subject
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn reply_to(&self) -> Option<&str> {
        self.reply_to.as_deref()
    }

    fn message(&self, from: &Mailbox) -> Result<Message, MailError> {
        let mut message = Message::builder()
            .from(from.clone())
            .to(Mailbox::new(None, checked(&self.to)?));
        if let Some(reply_to) = &self.reply_to {
            message = message.reply_to(Mailbox::new(None, checked(reply_to)?));
        }
        message
            .subject(self.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(self.text.clone())
            .map_err(MailError::Message)
    }

    /// Sends the mail now, over the site's SMTP server.
    pub(crate) async fn send(&self, smtp: &SmtpSettings) -> Result<(), MailError> {
        let message = self.message(&smtp.from)?;
        smtp.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(MailError::Smtp)
    }
}

impl std::fmt::Debug for Mail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mail")
            .field("to", &self.to)
            .field("subject", &self.subject)
            .field("reply_to", &self.reply_to)
            .field("text", &format_args!("<{} bytes>", self.text.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_needs_a_name_an_at_and_a_domain() {
        assert!(looks_like_address("ann@example.org"));
        for wrong in [
            "",
            "ann",
            "ann@",
            "@example.org",
            "ann@example",
            "a nn@x.org",
            "ann@.org",
        ] {
            assert!(!looks_like_address(wrong), "{wrong}");
        }
    }

    #[test]
    fn an_address_is_checked_and_a_subject_stays_on_one_line() {
        assert!(matches!(
            Mail::new("not an address", "s", "t"),
            Err(MailError::Address { .. })
        ));
        let mail = Mail::new(" ann@example.org ", "Hello\r\nBcc: eve@example.org", "t").unwrap();
        assert_eq!(mail.to(), "ann@example.org");
        assert_eq!(mail.subject(), "Hello  Bcc: eve@example.org");
    }

    #[test]
    fn debug_output_leaves_the_text_out() {
        let mail = Mail::new("ann@example.org", "Reset", "secret-link").unwrap();
        assert!(!format!("{mail:?}").contains("secret-link"));
    }
}
