//! `[mail]` in `site.toml`: where mail goes, who it is from, and how the queue
//! retries.

use std::time::Duration;

use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, Tokio1Executor};
use serde::Deserialize;

use bulwark_web::{ModuleError, read_settings};

/// `[mail]` as written (see docs/mail.md).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MailSection {
    /// `smtp://host:port`, `smtps://...`, `smtp://...?tls=required`, with
    /// `user:password@` when the server wants it.
    smtp: Option<String>,
    /// The sender: `noreply@example.org` or `Example <noreply@example.org>`.
    from: Option<String>,
    max_attempts: Option<u32>,
    retry_delay_ms: Option<u64>,
    retry_max_delay_ms: Option<u64>,
    poll_interval_ms: Option<u64>,
    timeout_ms: Option<u64>,
}

/// Sends per mail before the queue gives up on it.
pub const MAX_ATTEMPTS: u32 = 8;
/// The wait after the first failed send; each later one is [`BACKOFF_FACTOR`]
/// times longer: 10 s, 1 min, 6 min, 36 min, 3.6 h, then [`RETRY_MAX_DELAY`].
pub const RETRY_DELAY: Duration = Duration::from_secs(10);
pub const BACKOFF_FACTOR: u32 = 6;
pub const RETRY_MAX_DELAY: Duration = Duration::from_secs(6 * 3600);
/// How often the queue looks for mail it was not woken for (queued by
/// another node, or a command).
pub const POLL_INTERVAL: Duration = Duration::from_secs(30);
/// How long one SMTP conversation may take.
pub const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// A site's mail settings, checked.
#[derive(Clone)]
pub enum MailSettings {
    /// No `smtp`: mail is logged and dropped.
    Off,
    Smtp(Box<SmtpSettings>),
}

#[derive(Clone)]
pub struct SmtpSettings {
    pub(crate) transport: AsyncSmtpTransport<Tokio1Executor>,
    /// The server, without credentials, for the log.
    pub server: String,
    pub from: Mailbox,
    pub retry: RetryPolicy,
    pub poll_interval: Duration,
}

/// When a mail that could not be sent is tried again, and how often.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub first_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: MAX_ATTEMPTS,
            first_delay: RETRY_DELAY,
            max_delay: RETRY_MAX_DELAY,
        }
    }
}

impl RetryPolicy {
    /// The wait after the `attempts`-th send failed (1 for the first).
    pub fn delay_after(&self, attempts: u32) -> Duration {
        let factor = BACKOFF_FACTOR.saturating_pow(attempts.saturating_sub(1));
        self.first_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }
}

impl MailSettings {
    /// Reads and checks a site's `[mail]` section (absent: mail is off). A
    /// server address lettre cannot use or a sender that is no address is
    /// named by its key.
    pub fn parse(section: Option<&toml::Table>) -> Result<MailSettings, ModuleError> {
        let section: MailSection = match section {
            None => MailSection::default(),
            Some(table) => read_settings(table)?,
        };
        let Some(url) = section.smtp else {
            return Ok(MailSettings::Off);
        };
        let from = section.from.ok_or_else(|| {
            ModuleError::new(
                "from",
                "the sender address is needed with `smtp` (e.g. from = \"noreply@example.org\")",
            )
        })?;
        let from: Mailbox = from
            .parse()
            .map_err(|e| ModuleError::new("from", format!("{from:?} is not an address: {e}")))?;
        for (key, value) in [
            ("retry_delay_ms", section.retry_delay_ms),
            ("retry_max_delay_ms", section.retry_max_delay_ms),
            ("poll_interval_ms", section.poll_interval_ms),
            ("timeout_ms", section.timeout_ms),
            ("max_attempts", section.max_attempts.map(u64::from)),
        ] {
            if value == Some(0) {
                return Err(ModuleError::new(key, "must be at least 1"));
            }
        }
        let ms = |v: Option<u64>, default: Duration| v.map_or(default, Duration::from_millis);
        let timeout = ms(section.timeout_ms, SMTP_TIMEOUT);
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&url)
            .map_err(|e| {
                ModuleError::new("smtp", format!("not a server address lettre can use: {e}"))
            })?
            .timeout(Some(timeout))
            .build();
        Ok(MailSettings::Smtp(Box::new(SmtpSettings {
            transport,
            server: without_credentials(&url),
            from,
            retry: RetryPolicy {
                max_attempts: section.max_attempts.unwrap_or(MAX_ATTEMPTS),
                first_delay: ms(section.retry_delay_ms, RETRY_DELAY),
                max_delay: ms(section.retry_max_delay_ms, RETRY_MAX_DELAY),
            },
            poll_interval: ms(section.poll_interval_ms, POLL_INTERVAL),
        })))
    }
}

/// `smtp://user:secret@host:587` -> `smtp://host:587`.
fn without_credentials(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, _)), Some(at)) => format!("{scheme}://{}", &url[at + 1..]),
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<MailSettings, ModuleError> {
        MailSettings::parse(Some(&toml::from_str(text).unwrap()))
    }

    #[test]
    fn retries_back_off_by_six_up_to_the_cap() {
        let policy = RetryPolicy::default();
        let delays: Vec<u64> = (1..=7).map(|n| policy.delay_after(n).as_secs()).collect();
        assert_eq!(delays, [10, 60, 360, 2160, 12960, 21600, 21600]);
        assert_eq!(policy.delay_after(1000), RETRY_MAX_DELAY);
    }

    #[test]
    fn no_smtp_means_off_and_smtp_needs_a_sender() {
        assert!(matches!(MailSettings::parse(None), Ok(MailSettings::Off)));
        assert!(matches!(
            parse("from = \"a@b.example\""),
            Ok(MailSettings::Off)
        ));
        let e = parse("smtp = \"smtp://127.0.0.1:2525\"").err().unwrap();
        assert_eq!(e.key, "from");
        let e = parse("smtp = \"smtp://127.0.0.1:2525\"\nfrom = \"not an address\"")
            .err()
            .unwrap();
        assert_eq!(e.key, "from");
        let e = parse("smtp = \"ftp://127.0.0.1\"\nfrom = \"a@b.example\"")
            .err()
            .unwrap();
        assert_eq!(e.key, "smtp");
        let e = parse("smtp = \"smtp://h\"\nfrom = \"a@b.example\"\nretry_delay_ms = 0")
            .err()
            .unwrap();
        assert_eq!(e.key, "retry_delay_ms");
        let e = parse("smpt = \"smtp://h\"").err().unwrap();
        assert_eq!(e.key, "smpt");
    }

    #[test]
    fn every_form_lettre_knows_is_accepted_and_logged_without_its_password() {
        for url in [
            "smtp://127.0.0.1:2525",
            "smtp://mail.example.org:587?tls=required",
            "smtp://mail.example.org:587?tls=opportunistic",
            "smtps://user:secret@mail.example.org",
        ] {
            let text = format!("smtp = {url:?}\nfrom = \"Site <noreply@example.org>\"");
            let Ok(MailSettings::Smtp(s)) = parse(&text) else {
                panic!("{url} was refused");
            };
            assert!(!s.server.contains("secret"), "{}", s.server);
            assert_eq!(s.from.email.to_string(), "noreply@example.org");
        }
    }
}
