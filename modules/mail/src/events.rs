//! The notification the mail module answers.

use tokio::sync::oneshot;

use bulwark_notify::{Event, First};

use crate::outbox::MailId;
use crate::{Mail, MailError};

/// **first**: queue a mail for sending. The mail module (when the site
/// enables it) answers with a [`Queued`] at once; no answer means the site
/// does not enable it. Other modules send mail through this, so they need
/// not know how mail goes out:
///
/// ```text
/// match notifier.first(&SendMail(mail)) {
///     Some(queued) => queued.stored().await?,
///     None => tracing::warn!("enable the mail module to send mail"),
/// }
/// ```
#[derive(Debug, Clone)]
pub struct SendMail(pub Mail);

impl Event for SendMail {
    type Delivery = First<Queued>;
}

/// The mail module's answer to [`SendMail`]: the mail is being written to the
/// outbox; [`stored`](Self::stored) says when it is (or why not).
#[derive(Debug)]
pub struct Queued(oneshot::Receiver<Result<MailId, MailError>>);

impl Queued {
    pub(crate) fn new() -> (oneshot::Sender<Result<MailId, MailError>>, Queued) {
        let (tx, rx) = oneshot::channel();
        (tx, Queued(rx))
    }

    pub(crate) fn answered(result: Result<MailId, MailError>) -> Queued {
        let (tx, queued) = Queued::new();
        let _ = tx.send(result);
        queued
    }

    /// Waits until the mail is in the outbox: from then on it is sent (and
    /// retried) even if this server stops. [`MailError::NotConfigured`] when
    /// the site has no SMTP server (the mail was logged and dropped).
    pub async fn stored(self) -> Result<MailId, MailError> {
        self.0.await.unwrap_or(Err(MailError::QueueStopped))
    }
}

/// Queues the same mail (`subject`, `text`, answered to `reply_to` when
/// given) to each address of `to` through
/// the site's `notifier`, one after the other, waiting until each is stored;
/// `who` names the sender in the log. An address that is not one, or a mail
/// not stored, is logged and the others still go; a site without the mail
/// module is logged once and nothing goes.
pub async fn queue_to_each(
    notifier: &bulwark_notify::Notifier,
    to: &[String],
    subject: &str,
    text: &str,
    reply_to: Option<&str>,
    who: &str,
) {
    for address in to {
        let made = crate::Mail::new(address, subject, text).and_then(|mail| match reply_to {
            Some(reply_to) => mail.with_reply_to(reply_to),
            None => Ok(mail),
        });
        let mail = match made {
            Ok(mail) => mail,
            Err(e) => {
                tracing::warn!("{who}: not telling {address}: {e}");
                continue;
            }
        };
        match notifier.first(&SendMail(mail)) {
            Some(queued) => {
                if let Err(e) = queued.stored().await {
                    tracing::warn!("{who}: mail to {address}: {e}");
                }
            }
            None => {
                tracing::info!("{who}: enable the mail module to tell {address}");
                return;
            }
        }
    }
}
