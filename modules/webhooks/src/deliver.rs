//! Delivering the queued messages: one task per site on every node, off the
//! request path (a slow or dead receiver slows nothing but its own queue).
//!
//! - **Endpoints apart.** Each endpoint due is delivered to by a task of its
//!   own: a receiver that does not answer delays its own messages only.
//!   Of an answer, the first 4 KiB are read (for the log) and the rest left
//!   unread; `timeout_ms` bounds the whole attempt.
//! - **Once, in order.** An endpoint's messages are sent one at a time, oldest
//!   first, by the node that holds the endpoint's lease (a row update any node
//!   can win and renews while it sends), so two nodes never send the same
//!   message at once and a receiver gets them in the order the changes
//!   committed. A message that fails holds back the ones after it until it is
//!   delivered or given up: order is kept.
//! - **Retried** with a backoff that doubles from `[webhooks] retry_first_ms`
//!   (five seconds) up to an hour, for `give_up_hours` (a day); then the
//!   message is given up (`failed`) and the next one goes. A 2xx answer is a
//!   delivery; anything else, or no answer within `timeout_ms`, is a failure.
//! - **Signed** as the Standard Webhooks specification says: `webhook-id` (the
//!   message's id, the same on every attempt: a receiver drops repeats by it),
//!   `webhook-timestamp`, and `webhook-signature: v1,<base64 HMAC-SHA256 of
//!   "{id}.{timestamp}.{body}">` under the endpoint's secret.
//! - **Logged**: each message keeps its last status, the first characters of
//!   the answer, how long it took and when; delivered ones are removed after
//!   thirty days. Results are written a few at a time (one transaction per
//!   fifty, or per 200 ms): a message delivered just before a crash and not
//!   yet written is sent again, with its id, so the receiver can drop it.

use std::collections::HashSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use base64::Engine;
use chrono::Utc;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use bulwark_store::{Store, StoreError};

use crate::endpoints::{Endpoint, Endpoints};

/// How often the queue is looked at when nothing woke the worker.
const POLL: Duration = Duration::from_millis(250);
/// How long a lease holds without being renewed.
const LEASE: Duration = Duration::from_secs(30);
/// Characters of a receiver's answer kept.
const RESPONSE_EXCERPT: usize = 500;
/// Bytes of a receiver's answer read at most (enough for the excerpt in any
/// UTF-8); the rest is not read: the connection is closed.
const RESPONSE_READ: usize = 4 * 1024;
/// Delivered messages are removed this long after.
const KEEP_DELIVERED: Duration = Duration::from_secs(30 * 24 * 3600);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(3600);
/// Messages read from the queue at a time.
const BATCH: i64 = 100;
/// Results written together (one transaction, one fsync): at most this many,
/// and no later than this after the first of them.
const RECORD_EVERY: usize = 50;
const RECORD_AFTER: Duration = Duration::from_millis(200);

/// `[webhooks]` as the worker uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeliverySettings {
    pub first_retry: Duration,
    pub give_up_after: Duration,
    pub timeout: Duration,
}

/// The wait before attempt `attempts + 1`, after `attempts` failed.
pub fn backoff(settings: &DeliverySettings, attempts: u32) -> Duration {
    let doubled = settings.first_retry.saturating_mul(
        1u32.checked_shl(attempts.saturating_sub(1))
            .unwrap_or(u32::MAX),
    );
    doubled.min(MAX_BACKOFF)
}

/// The `webhook-signature` header's value for a message.
pub fn signature(key: &[u8], id: &str, timestamp: i64, body: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("any key");
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

fn now_millis() -> i64 {
    Utc::now().timestamp_millis()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A queued message about to be sent.
struct Due {
    id: i64,
    message_id: String,
    payload: String,
    attempts: u32,
    next_attempt: i64,
    created: i64,
}

/// What one attempt gave.
struct Attempt {
    status: Option<u16>,
    error: Option<String>,
    response: String,
    took: Duration,
}

impl Attempt {
    fn delivered(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// Starts the site's worker; it ends when `endpoints` (held by the site) goes
/// at the next reload.
pub(crate) fn spawn(
    endpoints: Weak<Endpoints>,
    store: Store,
    settings: DeliverySettings,
    queued: Arc<tokio::sync::Notify>,
) {
    if tokio::runtime::Handle::try_current().is_err() {
        return; // A command, not a server.
    }
    let node = format!("node-{}", hex::encode(rand::random::<[u8; 8]>()));
    let client = match reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(settings.timeout)
        .user_agent(concat!("Bulwark-Webhooks/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            tracing::error!("webhooks: no HTTP client: {e}");
            return;
        }
    };
    // The endpoints being delivered to now, each by a task of its own: a
    // receiver that is slow or dead holds back its own messages, never
    // another endpoint's.
    let busy: Arc<parking_lot::Mutex<HashSet<i64>>> = Arc::default();
    store.clone().spawn_while_open(async move {
        let mut last_purge = 0i64;
        loop {
            tokio::select! {
                _ = queued.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
            let Some(endpoints) = endpoints.upgrade() else {
                return;
            };
            let current = endpoints.current();
            drop(endpoints);
            if current.is_empty() {
                continue;
            }
            let due = match store.run(due_endpoints).await {
                Ok(due) => due,
                Err(e) => {
                    tracing::warn!("webhooks: reading the queue: {e}");
                    continue;
                }
            };
            for id in due {
                let Some(endpoint) = current.iter().find(|e| e.id == id && e.active) else {
                    continue;
                };
                if !busy.lock().insert(id) {
                    continue; // Its task is still at it.
                }
                let (endpoint, busy) = (endpoint.clone(), busy.clone());
                let (client, node, queue) = (client.clone(), node.clone(), store.clone());
                store.clone().spawn_while_open(async move {
                    if let Err(e) =
                        deliver_endpoint(&queue, &client, &settings, &node, &endpoint).await
                    {
                        tracing::warn!(endpoint = endpoint.id, "webhooks: {e}");
                    }
                    busy.lock().remove(&endpoint.id);
                });
            }
            if now_millis() - last_purge > 3_600_000 {
                last_purge = now_millis();
                if let Err(e) = store.run(purge).await {
                    tracing::warn!("webhooks: removing old messages: {e}");
                }
            }
        }
    });
}

/// The endpoints with a message due now.
fn due_endpoints(store: &Store) -> Result<Vec<i64>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query(
                "SELECT DISTINCT endpoint_id FROM webhook_delivery \
                 WHERE state = 'pending' AND next_attempt <= $1",
                &[now_millis().into()],
            )?
            .iter()
            .map(|r| r.int(0))
            .collect())
    })
}

fn purge(store: &Store) -> Result<u64, StoreError> {
    store.module_write(|sql| {
        sql.execute(
            "DELETE FROM webhook_delivery WHERE state = 'delivered' AND delivered < $1",
            &[(now_millis() - millis(KEEP_DELIVERED)).into()],
        )
    })
}

/// Takes (or renews) endpoint `id`'s lease for `node`: whether it holds it.
fn lease(store: &Store, id: i64, node: &str) -> Result<bool, StoreError> {
    let now = now_millis();
    store.module_write(|sql| {
        Ok(sql.execute(
            "UPDATE webhook_endpoint SET lease_holder = $1, lease_until = $2 WHERE id = $3 \
             AND (lease_until IS NULL OR lease_until < $4 OR lease_holder = $1)",
            &[
                node.into(),
                (now + millis(LEASE)).into(),
                id.into(),
                now.into(),
            ],
        )? > 0)
    })
}

fn release(store: &Store, id: i64, node: &str) -> Result<(), StoreError> {
    store.module_write(|sql| {
        sql.execute(
            "UPDATE webhook_endpoint SET lease_until = NULL WHERE id = $1 AND lease_holder = $2",
            &[id.into(), node.into()],
        )?;
        Ok(())
    })
}

/// The endpoint's oldest messages that wait, `limit` of them, in order.
fn waiting(store: &Store, id: i64, limit: i64) -> Result<Vec<Due>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query(
                "SELECT id, message_id, payload, attempts, next_attempt, created FROM webhook_delivery \
                 WHERE endpoint_id = $1 AND state = 'pending' ORDER BY id LIMIT $2",
                &[id.into(), limit.into()],
            )?
            .iter()
            .map(|r| Due {
                id: r.int(0),
                message_id: r.text(1),
                payload: r.text(2),
                attempts: u32::try_from(r.int(3)).unwrap_or(u32::MAX),
                next_attempt: r.int(4),
                created: r.int(5),
            })
            .collect())
    })
}

/// Sends the endpoint's messages that are due, in order, while this node
/// holds its lease.
async fn deliver_endpoint(
    store: &Store,
    client: &reqwest::Client,
    settings: &DeliverySettings,
    node: &str,
    endpoint: &Endpoint,
) -> Result<(), StoreError> {
    let (id, owner) = (endpoint.id, node.to_owned());
    if !store.run(move |s| lease(s, id, &owner)).await? {
        return Ok(()); // Another node is on it.
    }
    let key = endpoint.key();
    let mut renewed = now_millis();
    'queue: loop {
        if now_millis() - renewed > millis(LEASE) / 3 {
            let owner = node.to_owned();
            if !store.run(move |s| lease(s, id, &owner)).await? {
                return Ok(()); // Lost it (a long stall): the other node goes on.
            }
            renewed = now_millis();
        }
        let batch = store.run(move |s| waiting(s, id, BATCH)).await?;
        if batch.is_empty() {
            break;
        }
        let mut results = Vec::new();
        let mut written = std::time::Instant::now();
        for due in batch {
            if due.next_attempt > now_millis() {
                // It waits for its retry, and the ones after it with it.
                record(store, results).await?;
                break 'queue;
            }
            let attempt = send(client, &endpoint.url, &key, &due).await;
            let result = judge(settings, &due, attempt);
            let go_on = result.goes_on();
            results.push(result);
            if !go_on {
                record(store, results).await?;
                break 'queue;
            }
            if results.len() >= RECORD_EVERY || written.elapsed() > RECORD_AFTER {
                record(store, std::mem::take(&mut results)).await?;
                written = std::time::Instant::now();
            }
        }
        record(store, results).await?;
    }
    let owner = node.to_owned();
    store.run(move |s| release(s, id, &owner)).await
}

async fn send(client: &reqwest::Client, url: &str, key: &[u8], due: &Due) -> Attempt {
    let timestamp = Utc::now().timestamp();
    let started = std::time::Instant::now();
    let sent = client
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", &due.message_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header(
            "webhook-signature",
            signature(key, &due.message_id, timestamp, &due.payload),
        )
        .body(due.payload.clone())
        .send()
        .await;
    match sent {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let head = answer_head(resp).await;
            Attempt {
                status: Some(status),
                error: None,
                response: String::from_utf8_lossy(&head)
                    .chars()
                    .take(RESPONSE_EXCERPT)
                    .collect(),
                took: started.elapsed(),
            }
        }
        Err(e) => Attempt {
            status: None,
            error: Some(if e.is_timeout() {
                "no answer in time".to_owned()
            } else if e.is_connect() {
                "could not connect".to_owned()
            } else {
                e.to_string()
            }),
            response: String::new(),
            took: started.elapsed(),
        },
    }
}

/// The first [`RESPONSE_READ`] bytes of a receiver's answer, for the log:
/// no more is read whatever it sends (an answer without end, or of 2 GiB,
/// costs 4 KiB), and the client's timeout bounds how long it may take.
async fn answer_head(mut resp: reqwest::Response) -> Vec<u8> {
    let mut head = Vec::new();
    while head.len() < RESPONSE_READ {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                let room = RESPONSE_READ - head.len();
                head.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    head
}

/// What an attempt gave, to be written.
struct Tried {
    id: i64,
    state: &'static str,
    attempts: u32,
    next: i64,
    attempt: Attempt,
    at: i64,
}

impl Tried {
    /// Whether the endpoint's next message may go: this one was delivered or
    /// given up.
    fn goes_on(&self) -> bool {
        self.state != "pending"
    }
}

fn judge(settings: &DeliverySettings, due: &Due, attempt: Attempt) -> Tried {
    let now = now_millis();
    let attempts = due.attempts + 1;
    let delivered = attempt.delivered();
    let next = now + millis(backoff(settings, attempts));
    let given_up = !delivered && next > due.created + millis(settings.give_up_after);
    let state = if delivered {
        "delivered"
    } else if given_up {
        "failed"
    } else {
        "pending"
    };
    Tried {
        id: due.id,
        state,
        attempts,
        next,
        attempt,
        at: now,
    }
}

/// Writes what attempts gave, in one transaction: a message delivered but
/// not yet written when the server stops is sent again (with its id, which
/// the receiver knows), never lost.
async fn record(store: &Store, results: Vec<Tried>) -> Result<(), StoreError> {
    if results.is_empty() {
        return Ok(());
    }
    store
        .run(move |s| {
            s.module_write(|sql| {
                for r in results {
                    let delivered = r.state == "delivered";
                    let error = r.attempt.error.clone().or_else(|| {
                        (!delivered)
                            .then(|| format!("answered {}", r.attempt.status.unwrap_or_default()))
                    });
                    sql.execute(
                        "UPDATE webhook_delivery SET state = $1, attempts = $2, next_attempt = $3, \
                         last_status = $4, last_error = $5, last_response = $6, last_attempt = $7, \
                         last_millis = $8, delivered = $9 WHERE id = $10",
                        &[
                            r.state.into(),
                            i64::from(r.attempts).into(),
                            r.next.into(),
                            r.attempt.status.map(i64::from).into(),
                            if delivered { None } else { error }.into(),
                            r.attempt.response.into(),
                            r.at.into(),
                            millis(r.attempt.took).into(),
                            delivered.then_some(r.at).into(),
                            r.id.into(),
                        ],
                    )?;
                }
                Ok(())
            })
        })
        .await
}

/// The messages as a person on call reads them, for `/metrics`: per endpoint
/// (its id; a site has few), by state: `queued` (not tried yet), `retrying`
/// (an attempt failed; another is due), `failed` (given up on), `delivered`
/// (kept a while).
pub(crate) fn metrics(store: &Store) -> Result<Vec<bulwark_web::Metric>, StoreError> {
    use bulwark_web::Metric;
    let rows = store.module_read(|sql| {
        sql.query(
            "SELECT e.id, \
               COALESCE(SUM(CASE WHEN d.state = 'pending' AND d.attempts = 0 THEN 1 ELSE 0 END), 0), \
               COALESCE(SUM(CASE WHEN d.state = 'pending' AND d.attempts > 0 THEN 1 ELSE 0 END), 0), \
               COALESCE(SUM(CASE WHEN d.state = 'failed' THEN 1 ELSE 0 END), 0), \
               COALESCE(SUM(CASE WHEN d.state = 'delivered' THEN 1 ELSE 0 END), 0) \
             FROM webhook_endpoint e LEFT JOIN webhook_delivery d ON d.endpoint_id = e.id \
             GROUP BY e.id ORDER BY e.id",
            &[],
        )
    })?;
    let mut out = Vec::new();
    for row in rows {
        let endpoint = row.int(0).to_string();
        for (i, state) in ["queued", "retrying", "failed", "delivered"]
            .iter()
            .enumerate()
        {
            out.push(
                Metric::gauge(
                    "bulwark_webhook_messages",
                    "Webhook messages kept, by endpoint (its id) and state: queued (not \
                     tried yet), retrying (an attempt failed; another is due), failed (given \
                     up on), delivered.",
                    row.int(i + 1) as f64,
                )
                .with("endpoint", endpoint.clone())
                .with("state", *state),
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_the_first_retry_up_to_an_hour() {
        let settings = DeliverySettings {
            first_retry: Duration::from_secs(5),
            give_up_after: Duration::from_secs(86_400),
            timeout: Duration::from_secs(10),
        };
        let waits: Vec<u64> = (1..=12).map(|n| backoff(&settings, n).as_secs()).collect();
        assert_eq!(
            waits,
            [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]
        );
    }

    #[test]
    fn the_signature_is_the_standard_webhooks_one() {
        // The Standard Webhooks specification's example.
        let key = base64::engine::general_purpose::STANDARD
            .decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            .unwrap();
        assert_eq!(
            signature(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                r#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }
}
