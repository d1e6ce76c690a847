//! Posts from visitors without an account (a comment, a form): what keeps
//! bots out at no cost to a person. The comments and forms modules ask
//! [`PostGuard::check`] before they store anything.
//!
//! - **A honeypot**: a field ([`HONEYPOT_FIELD`]) people never see or reach
//!   (hidden, out of the tab order, `autocomplete="off"`), which form-filling
//!   bots fill.
//! - **A minimum fill time**: when a visitor starts typing, the page's script
//!   asks `GET /api/form-ticket` for a ticket, `issued.mac` (an HMAC-SHA256,
//!   under a key of the site's own kept in its database so every node checks
//!   what another issued, of the moment it was issued). A post that comes back
//!   sooner than `min_fill` after its ticket, or with a ticket that is forged
//!   or a day old, was typed by no person. The ticket is asked for by the
//!   script and not written into the page, so the page stays one cached copy
//!   for every visitor. A post without any ticket (a browser without script)
//!   is not refused: [`Verdict::NoTicket`] tells the module to show it back
//!   for a confirmation with a fresh ticket ([`PostGuard::ticket`]).
//! - **Per address**: posts are counted in the database, per address (IPv6 per
//!   /64), in the same table and the same way as logon attempts
//!   ([`Throttle`]), so every node of a cluster counts the same.
//! - **Links**: [`link_count`], for the module to decide (comments hold a
//!   comment with many links as spam).
//!
//! A bot caught by the honeypot or the clock is answered as a person would be
//! (the module says "thank you") and nothing is stored: it learns nothing.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use http::StatusCode;
use serde_json::json;
use sha2::Sha256;

use bulwark_store::{Store, StoreError};
use bulwark_web::{Caller, Outcome, Problem, RequestCtx, json_response};

use crate::throttle::{Throttle, ThrottleKey};

/// The field people never see: a post that fills it is a bot's.
pub const HONEYPOT_FIELD: &str = "extra_info";
/// The field that carries the ticket from `/api/form-ticket`.
pub const TICKET_FIELD: &str = "_ticket";
/// A ticket older than this is refused (a page left open overnight asks for a
/// new one when it posts: the script asks again).
pub const TICKET_LIFE: Duration = Duration::from_secs(24 * 3600);
/// The window posts are counted in.
const WINDOW: Duration = Duration::from_secs(60);

const KEY_SETTING: &str = "secret.auth.form_ticket_key";

/// What a module allows: how long a person takes at least, and how many posts
/// one address may make a minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostLimits {
    pub min_fill: Duration,
    pub per_minute: u32,
}

/// A post as it arrived.
#[derive(Debug, Clone, Copy)]
pub struct VisitorPost<'a> {
    pub address: IpAddr,
    /// What the [`HONEYPOT_FIELD`] held.
    pub honeypot: &'a str,
    /// What the [`TICKET_FIELD`] held.
    pub ticket: &'a str,
}

/// What became of a post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A person, as far as anything can tell.
    Welcome,
    /// A bot: answer as if all was well, store nothing.
    Bot(BotSign),
    /// No ticket: show the post back for confirmation with a fresh one.
    NoTicket,
    /// Past the address's posts a minute: `429` with `Retry-After`.
    TooMany { retry_after: Duration },
}

/// How a bot gave itself away (for the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BotSign {
    Honeypot,
    TooFast,
    BadTicket,
}

impl std::fmt::Display for BotSign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BotSign::Honeypot => "it filled the hidden field",
            BotSign::TooFast => "it posted sooner than a person can type",
            BotSign::BadTicket => "its ticket is forged or expired",
        })
    }
}

/// A site's guard: its ticket key and its counters.
pub struct PostGuard {
    store: Store,
    /// Read (or made) the first time a ticket is issued or checked: in the
    /// blocking pool, never while the site loads.
    key: tokio::sync::OnceCell<Vec<u8>>,
}

impl PostGuard {
    /// The guard of the site whose store this is.
    pub fn new(store: Store) -> PostGuard {
        PostGuard {
            store,
            key: tokio::sync::OnceCell::new(),
        }
    }

    async fn key(&self) -> Result<&[u8], StoreError> {
        let key = self
            .key
            .get_or_try_init(|| async {
                let made = hex::encode(rand::random::<[u8; 32]>());
                let key = self
                    .store
                    .run(move |s| s.config_value_or_insert(KEY_SETTING, &made))
                    .await?;
                Ok::<_, StoreError>(key.into_bytes())
            })
            .await?;
        Ok(key)
    }

    /// A ticket issued now.
    pub async fn ticket(&self) -> Result<String, StoreError> {
        Ok(ticket_at(self.key().await?, now_millis()))
    }

    /// A ticket for a post shown back to confirm (a browser without script):
    /// the person already typed it, so it holds a second from now, not
    /// `min_fill` from now; a bot that posts it back at once is still caught.
    pub async fn confirm_ticket(&self, limits: PostLimits) -> Result<String, StoreError> {
        let aged = limits.min_fill.saturating_sub(Duration::from_secs(1));
        Ok(ticket_at(
            self.key().await?,
            now_millis().saturating_sub(aged.as_millis() as u64),
        ))
    }

    /// The verdict on `post` under `limits`; `kind` names the counter
    /// (`comment`, `form`), so each module's posts are counted apart.
    pub async fn check(
        &self,
        kind: &'static str,
        post: &VisitorPost<'_>,
        limits: PostLimits,
    ) -> Result<Verdict, StoreError> {
        if !post.honeypot.trim().is_empty() {
            return Ok(Verdict::Bot(BotSign::Honeypot));
        }
        if post.ticket.trim().is_empty() {
            return Ok(Verdict::NoTicket);
        }
        let key = self.key().await?;
        if let Err(sign) = judge_ticket(key, post.ticket.trim(), now_millis(), limits) {
            return Ok(Verdict::Bot(sign));
        }
        let throttle = Throttle::new(self.store.clone(), "post", limits.per_minute, WINDOW);
        let counted = throttle
            .count(&[ThrottleKey::posts_from(kind, post.address)])
            .await?;
        Ok(match counted.first().and_then(|c| throttle.over(*c)) {
            Some(retry_after) => Verdict::TooMany { retry_after },
            None => Verdict::Welcome,
        })
    }

    /// The counters, for the sweeper to remove windows that ended.
    pub(crate) fn throttle(&self) -> Throttle {
        Throttle::new(self.store.clone(), "post", 0, WINDOW)
    }
}

fn now_millis() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0)
}

fn mac(key: &[u8], issued: u64) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("any key");
    mac.update(format!("form ticket\n{issued}").as_bytes());
    mac
}

fn ticket_at(key: &[u8], issued: u64) -> String {
    let tag = mac(key, issued).finalize().into_bytes();
    format!("{issued}.{}", hex::encode(tag))
}

/// `Ok` when `ticket` was issued under `key` at least `min_fill` and at most
/// [`TICKET_LIFE`] before `now` (milliseconds).
fn judge_ticket(key: &[u8], ticket: &str, now: u64, limits: PostLimits) -> Result<(), BotSign> {
    let (issued, tag) = ticket.split_once('.').ok_or(BotSign::BadTicket)?;
    let (Ok(issued), Ok(tag)) = (issued.parse::<u64>(), hex::decode(tag)) else {
        return Err(BotSign::BadTicket);
    };
    mac(key, issued)
        .verify_slice(&tag)
        .map_err(|_| BotSign::BadTicket)?;
    let age = Duration::from_millis(now.saturating_sub(issued));
    if issued > now + 60_000 || age > TICKET_LIFE {
        return Err(BotSign::BadTicket);
    }
    if age < limits.min_fill {
        return Err(BotSign::TooFast);
    }
    Ok(())
}

/// How many links `text` holds: `http://`, `https://` and `www.` starts, and
/// `<a` tags.
pub fn link_count(text: &str) -> usize {
    let lower = text.to_ascii_lowercase();
    ["http://", "https://", "www.", "<a "]
        .iter()
        .map(|start| lower.matches(start).count())
        .sum::<usize>()
        .saturating_sub(
            // "https://www." counts once.
            lower.matches("://www.").count(),
        )
}

/// `GET /api/form-ticket`: a fresh ticket, never cached.
pub(crate) async fn form_ticket(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    let guard = req
        .site
        .state::<Arc<PostGuard>>()
        .ok_or_else(|| Problem::internal("the form ticket", &"the auth module is not set up"))?;
    let ticket = guard.ticket().await?;
    let mut resp = json_response(StatusCode::OK, &json!({ "ticket": ticket }));
    resp.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    Ok(Outcome::Response(resp))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: PostLimits = PostLimits {
        min_fill: Duration::from_secs(3),
        per_minute: 5,
    };

    #[test]
    fn a_ticket_holds_from_the_minimum_fill_time_for_a_day_under_its_own_key() {
        let key = b"one key";
        let ticket = ticket_at(key, 1_000_000);
        assert_eq!(
            judge_ticket(key, &ticket, 1_000_500, LIMITS),
            Err(BotSign::TooFast)
        );
        assert_eq!(judge_ticket(key, &ticket, 1_003_000, LIMITS), Ok(()));
        let day = TICKET_LIFE.as_millis() as u64;
        assert_eq!(
            judge_ticket(key, &ticket, 1_000_001 + day, LIMITS),
            Err(BotSign::BadTicket)
        );
        assert_eq!(
            judge_ticket(b"another key", &ticket, 1_003_000, LIMITS),
            Err(BotSign::BadTicket)
        );
        let moved = ticket.replacen("1000000", "999000", 1);
        assert_eq!(
            judge_ticket(key, &moved, 1_003_000, LIMITS),
            Err(BotSign::BadTicket)
        );
        assert_eq!(
            judge_ticket(key, "nonsense", 1_003_000, LIMITS),
            Err(BotSign::BadTicket)
        );
    }

    #[test]
    fn links_are_counted_once_each() {
        assert_eq!(link_count("no links here, just www"), 0);
        assert_eq!(
            link_count("see https://www.example.org and http://a.b/c and www.c.d"),
            3
        );
        assert_eq!(link_count("<a href=\"x\">x</a>"), 1);
    }
}
