//! Posts from visitors without an account (a comment, a form): what keeps
//! bots out at no cost to a person. The comments and forms modules ask
//! [`PostGuard::check`] before they store anything.
//!
//! - **A honeypot**: a field ([`HONEYPOT_FIELD`]) people never see or reach
//!   (hidden, out of the tab order, `autocomplete="off"`), which form-filling
//!   bots fill.
//! - **A minimum fill time**: when a visitor starts typing, the page's script
//!   asks `GET /api/form-ticket?for=form:12` (or `comments:42`) for a ticket,
//!   `issued.tag` (an HMAC-SHA256, under a key of the site's own kept in its
//!   database so every node checks what another issued, of the moment it was
//!   issued and of what it is for). A post that comes back sooner than
//!   `min_fill` after its ticket, with a ticket that is forged, an hour old,
//!   made for another form or page, or used already (each ticket's uses are
//!   counted in the database, [`Throttle`], so on every node: one post a
//!   ticket), was typed by no person. The ticket is asked for by the
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
/// A ticket older than this is refused (a page left open longer asks for a
/// new one when it posts: the script asks again).
pub const TICKET_LIFE: Duration = Duration::from_secs(3600);
/// The longest `for` a ticket names (`form:12`, `comments:42`).
const TICKET_FOR_MAX: usize = 64;
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
    /// What the post is for, as the ticket must name it (`form:12`,
    /// `comments:42`).
    pub target: &'a str,
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
    UsedTicket,
}

impl std::fmt::Display for BotSign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BotSign::Honeypot => "it filled the hidden field",
            BotSign::TooFast => "it posted sooner than a person can type",
            BotSign::BadTicket => "its ticket is forged, expired or for something else",
            BotSign::UsedTicket => "its ticket was used already",
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

    /// A ticket issued now for posts to `target`.
    pub async fn ticket(&self, target: &str) -> Result<String, StoreError> {
        Ok(ticket_at(self.key().await?, target, now_millis()))
    }

    /// A ticket for a post to `target` shown back to confirm (a browser
    /// without script): the person already typed it, so it holds a second
    /// from now, not `min_fill` from now; a bot that posts it back at once is
    /// still caught.
    pub async fn confirm_ticket(
        &self,
        target: &str,
        limits: PostLimits,
    ) -> Result<String, StoreError> {
        let aged = limits.min_fill.saturating_sub(Duration::from_secs(1));
        Ok(ticket_at(
            self.key().await?,
            target,
            now_millis().saturating_sub(aged.as_millis() as u64),
        ))
    }

    /// Counts a use of the ticket whose tag is `tag`; `false` when it had
    /// one already.
    async fn first_use(&self, tag: &str) -> Result<bool, StoreError> {
        let uses = self.ticket_uses();
        let counted = uses.count(&[ThrottleKey::ticket(tag)]).await?;
        Ok(counted.first().is_none_or(|c| uses.over(*c).is_none()))
    }

    /// The tickets' uses, one allowed in a ticket's life.
    pub(crate) fn ticket_uses(&self) -> Throttle {
        Throttle::new(self.store.clone(), "ticket", 1, TICKET_LIFE)
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
        let tag = match judge_ticket(key, post.target, post.ticket.trim(), now_millis(), limits) {
            Ok(tag) => tag,
            Err(sign) => return Ok(Verdict::Bot(sign)),
        };
        if !self.first_use(tag).await? {
            return Ok(Verdict::Bot(BotSign::UsedTicket));
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

/// The tag of a ticket issued at `issued` for `target`, and a random nonce
/// that makes two tickets of one millisecond two tickets.
fn mac(key: &[u8], target: &str, issued: u64, nonce: &str) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("any key");
    mac.update(format!("form ticket\n{target}\n{issued}\n{nonce}").as_bytes());
    mac
}

/// A ticket for posts to `target` issued at `issued` (Unix milliseconds)
/// under `key`: what [`PostGuard::ticket`] gives for now (and tests for a
/// moment a person's page would hold).
pub fn ticket_at(key: &[u8], target: &str, issued: u64) -> String {
    let nonce = hex::encode(rand::random::<[u8; 8]>());
    let tag = mac(key, target, issued, &nonce).finalize().into_bytes();
    format!("{issued}.{nonce}.{}", hex::encode(tag))
}

/// The ticket's tag when `ticket` was issued under `key` for `target` at
/// least `min_fill` and at most [`TICKET_LIFE`] before `now` (milliseconds).
fn judge_ticket<'t>(
    key: &[u8],
    target: &str,
    ticket: &'t str,
    now: u64,
    limits: PostLimits,
) -> Result<&'t str, BotSign> {
    let mut parts = ticket.splitn(3, '.');
    let (Some(issued), Some(nonce), Some(tag_hex)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(BotSign::BadTicket);
    };
    let (Ok(issued), Ok(tag)) = (issued.parse::<u64>(), hex::decode(tag_hex)) else {
        return Err(BotSign::BadTicket);
    };
    mac(key, target, issued, nonce)
        .verify_slice(&tag)
        .map_err(|_| BotSign::BadTicket)?;
    let age = Duration::from_millis(now.saturating_sub(issued));
    if issued > now + 60_000 || age > TICKET_LIFE {
        return Err(BotSign::BadTicket);
    }
    if age < limits.min_fill {
        return Err(BotSign::TooFast);
    }
    Ok(tag_hex)
}

/// Whether `target` is what a ticket may name: a short word of letters,
/// digits, `:`, `_` and `-` (`form:12`).
fn valid_target(target: &str) -> bool {
    !target.is_empty()
        && target.len() <= TICKET_FOR_MAX
        && target
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'_' | b'-'))
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

/// `GET /api/form-ticket?for=...`: a fresh ticket for posts to that form or
/// page, never cached.
pub(crate) async fn form_ticket(req: &RequestCtx<'_>, _: Caller<'_>) -> Result<Outcome, Problem> {
    let guard = req
        .site
        .state::<Arc<PostGuard>>()
        .ok_or_else(|| Problem::internal("the form ticket", &"the auth module is not set up"))?;
    let target = bulwark_web::parse_form(req.parts.uri.query().unwrap_or("").as_bytes())
        .into_iter()
        .find_map(|(name, value)| (name == "for").then_some(value))
        .unwrap_or_default();
    if !valid_target(&target) {
        return Err(Problem::bad_request(
            "say what the ticket is for: ?for=form:<id> or ?for=comments:<page id>",
        ));
    }
    let ticket = guard.ticket(&target).await?;
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
    fn a_ticket_holds_from_the_minimum_fill_time_for_an_hour_for_its_own_target_and_key() {
        let key = b"one key";
        let ticket = ticket_at(key, "form:12", 1_000_000);
        let tag = ticket.rsplit('.').next().unwrap();
        fn judge<'t>(
            key: &[u8],
            target: &str,
            ticket: &'t str,
            now: u64,
        ) -> Result<&'t str, BotSign> {
            judge_ticket(key, target, ticket, now, LIMITS)
        }
        assert_eq!(
            judge(key, "form:12", &ticket, 1_000_500),
            Err(BotSign::TooFast)
        );
        assert_eq!(judge(key, "form:12", &ticket, 1_003_000), Ok(tag));
        let hour = TICKET_LIFE.as_millis() as u64;
        assert_eq!(hour, 3_600_000);
        assert_eq!(
            judge(key, "form:12", &ticket, 1_000_001 + hour),
            Err(BotSign::BadTicket)
        );
        assert_eq!(
            judge(key, "form:13", &ticket, 1_003_000),
            Err(BotSign::BadTicket),
            "made for another form"
        );
        assert_eq!(
            judge(key, "comments:12", &ticket, 1_003_000),
            Err(BotSign::BadTicket),
            "made for a form, not for comments"
        );
        assert_eq!(
            judge(b"another key", "form:12", &ticket, 1_003_000),
            Err(BotSign::BadTicket)
        );
        let moved = ticket.replacen("1000000", "999000", 1);
        assert_eq!(
            judge(key, "form:12", &moved, 1_003_000),
            Err(BotSign::BadTicket)
        );
        assert_eq!(
            judge(key, "form:12", "nonsense", 1_003_000),
            Err(BotSign::BadTicket)
        );
        assert_ne!(
            ticket_at(key, "form:12", 1_000_000),
            ticket,
            "two tickets of one moment are two"
        );
        assert!(valid_target("form:12") && valid_target("comments:42"));
        assert!(!valid_target("") && !valid_target("a b") && !valid_target(&"x".repeat(65)));
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
