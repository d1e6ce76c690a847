//! The task that sends a site's mail: one per site load, started by the
//! module's setup. It sends what is due, then sleeps until the next mail is
//! due, the poll interval has passed (mail another node queued), or it is
//! woken because a mail was queued here. It ends when the site's observers it
//! was started with are gone (a reload started a new one, or the site
//! stopped): the wake channel closes.

use std::time::{Duration, Instant};

use chrono::Utc;
use tokio::sync::mpsc;

use bulwark_store::{Store, StoreError};

use crate::outbox::{self, Claimed};
use crate::settings::SmtpSettings;

/// Mails claimed at once; a sender claims again until none are due.
const BATCH: usize = 20;
/// How often finished mail is purged.
const PURGE_EVERY: Duration = Duration::from_secs(3600);

pub(crate) struct Sender {
    pub site: String,
    pub store: Store,
    pub smtp: SmtpSettings,
}

pub(crate) async fn run(sender: Sender, mut wake: mpsc::Receiver<()>) {
    let mut purged: Option<Instant> = None;
    loop {
        if purged.is_none_or(|at| at.elapsed() >= PURGE_EVERY) {
            purged = Some(Instant::now());
            let purge = sender
                .store
                .run(|s| outbox::purge_finished(s, Utc::now()))
                .await;
            if let Err(e) = purge {
                tracing::warn!(site = %sender.site, "mail outbox: purging old mail: {e}");
            }
        }
        let wait = match sender.send_due().await {
            Ok(wait) => wait,
            Err(e) => {
                tracing::warn!(site = %sender.site, "mail outbox: {e}; trying again in {:?}", sender.smtp.poll_interval);
                sender.smtp.poll_interval
            }
        };
        tokio::select! {
            woken = wake.recv() => if woken.is_none() {
                return;
            },
            () = tokio::time::sleep(wait) => {}
        }
    }
}

impl Sender {
    /// Sends every mail that is due; returns how long to wait for the next.
    async fn send_due(&self) -> Result<Duration, StoreError> {
        loop {
            let retry = self.smtp.retry;
            let claimed = self
                .store
                .run(move |s| outbox::claim_due(s, Utc::now(), BATCH, &retry))
                .await?;
            if claimed.is_empty() {
                break;
            }
            for mail in claimed {
                self.send_one(mail).await?;
            }
        }
        let next = self.store.run(outbox::next_due).await?;
        let poll = self.smtp.poll_interval;
        Ok(next.map_or(poll, |at| {
            (at - Utc::now())
                .to_std()
                .unwrap_or(Duration::ZERO)
                .min(poll)
        }))
    }

    async fn send_one(&self, claimed: Claimed) -> Result<(), StoreError> {
        let Claimed { id, mail, attempts } = claimed;
        let site = &self.site;
        match mail.send(&self.smtp).await {
            Ok(()) => {
                tracing::info!(%site, "mail {id} to {} sent ({:?})", mail.to(), mail.subject());
                self.store
                    .run(move |s| outbox::record_sent(s, id, Utc::now()))
                    .await
            }
            Err(e) => {
                let give_up = e.is_permanent() || attempts >= self.smtp.retry.max_attempts;
                let error = e.to_string();
                if give_up {
                    tracing::error!(
                        %site,
                        "mail {id} to {}: gave up after {attempts} attempt(s): {error}",
                        mail.to()
                    );
                } else {
                    tracing::warn!(
                        %site,
                        "mail {id} to {}: attempt {attempts} failed, trying again in {:?}: {error}",
                        mail.to(),
                        self.smtp.retry.delay_after(attempts)
                    );
                }
                self.store
                    .run(move |s| outbox::record_failure(s, id, &error, give_up))
                    .await
            }
        }
    }
}
