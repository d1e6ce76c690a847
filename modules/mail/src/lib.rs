//! The mail module (`mail`): outgoing mail, queued in the site's database and
//! sent over SMTP with retries.
//!
//! **How other modules send mail.** Through the [`SendMail`] notification: the
//! sender builds a [`Mail`] and asks the site's observers; this module answers
//! with a [`Queued`], which says once the mail is in the outbox. Nothing else
//! is shared, so a module that sends mail works (and says so in the log) on a
//! site without this module.
//!
//! **The queue.** A mail is a row of `mail_outbox` ([`outbox`]), written before
//! anything is sent, so it survives a restart. A task per site ([`sender`])
//! sends what is due, woken at once when a mail is queued here and looking
//! again every `poll_interval_ms` for mail queued elsewhere. A failed send is
//! tried again after 10 s, 1 min, 6 min, ... (times six, at most 6 hours) until
//! `max_attempts`; a refusal the server says is permanent is not retried. Each
//! send claims its row first, so several nodes on one database never send a
//! mail twice at once.
//!
//! **Settings.** `[mail]` in `site.toml` ([`MailSettings`], docs/mail.md). A
//! site without `smtp` still starts: every mail is logged (recipient and
//! subject, never the text) at warn and dropped.
//!
//! **Not here.** HTML mail, attachments, templates for mail (the sender renders
//! its text), bounces, and a sendmail or HTTP API transport.

mod events;
mod mail;
pub mod outbox;
mod sender;
mod settings;

use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;

use bulwark_site::ModuleManifest;
use bulwark_store::Migration;
use bulwark_web::events::GatherMetrics;
use bulwark_web::{Module, ModuleError, SiteSetup};

pub use events::{Queued, SendMail, queue_to_each};
pub use mail::{Mail, MailError, looks_like_address};
pub use outbox::{MailId, OutboxMail, enqueue};
pub use settings::{MailSettings, RetryPolicy, SmtpSettings};

pub const PRIORITY: i32 = 400;

/// Among the observers of [`SendMail`], this module's answer comes at this
/// priority (lower first: a module that wants to divert mail answers before).
const OBSERVER_PRIORITY: i32 = 500;

pub struct MailModule;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(MailModule)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "mail",
            PRIORITY,
            &[],
            None,
            None,
            include_str!("../module.toml"),
        );
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for MailModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn migrations(&self) -> &'static [Migration] {
        outbox::MIGRATIONS
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let name = site.site().name().to_string();
        let smtp = match MailSettings::parse(site.settings())? {
            MailSettings::Smtp(smtp) => *smtp,
            MailSettings::Off => {
                tracing::info!(site = %name, "no [mail] smtp: mail is logged and dropped");
                site.observers()
                    .on_first(OBSERVER_PRIORITY, move |send: &SendMail| {
                        tracing::warn!(
                            site = %name,
                            "mail to {} ({:?}) dropped: the site has no [mail] smtp setting (docs/mail.md)",
                            send.0.to(),
                            send.0.subject()
                        );
                        Some(Queued::answered(Err(MailError::NotConfigured {
                            to: send.0.to().to_owned(),
                        })))
                    });
                return Ok(());
            }
        };
        tracing::info!(site = %name, "mail goes out through {}", smtp.server);
        let store = site.models().store.clone();
        let runtime = tokio::runtime::Handle::current();
        // The sender ends when the last `wake` handle is gone: with this
        // load's observers.
        let (wake, woken) = mpsc::channel::<()>(1);
        runtime.spawn(sender::run(
            sender::Sender {
                site: name,
                store: store.clone(),
                smtp,
            },
            woken,
        ));
        let counted = store.clone();
        site.observers().on_fold(
            OBSERVER_PRIORITY,
            move |_: &GatherMetrics, mut metrics: Vec<bulwark_web::Metric>| {
                match outbox::metrics(&counted, chrono::Utc::now()) {
                    Ok(outbox) => metrics.extend(outbox),
                    Err(e) => tracing::warn!("mail: reading the outbox for /metrics: {e}"),
                }
                metrics
            },
        );
        site.observers()
            .on_first(OBSERVER_PRIORITY, move |send: &SendMail| {
                let (reply, queued) = Queued::new();
                let (store, wake, mail) = (store.clone(), wake.clone(), send.0.clone());
                runtime.spawn(async move {
                    let stored = store
                        .run(move |s| outbox::enqueue(s, &mail))
                        .await
                        .map_err(MailError::from);
                    if stored.is_ok() {
                        // Full means a wake-up is pending already.
                        let _ = wake.try_send(());
                    }
                    let _ = reply.send(stored);
                });
                Some(queued)
            });
        Ok(())
    }
}
