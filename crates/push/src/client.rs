//! One permanent task per client: it owns the subscriptions and notices when the
//! client has gone; transports come and go around it. The client's inbox is shared:
//! the dispatcher puts batches in it and hands them to a waiting transport
//! directly, and a transport takes what is waiting without asking the task, so a
//! delivery costs one wake-up (the transport's), not two.

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::Encoding;
use bulwark_acl::Principal;

use crate::PushError;
use crate::hub::{Hub, Message, Position};
use crate::rate::TokenBucket;
use crate::topic::{Topic, TopicFilter};

/// A client's identity: 128 random bits; it survives reconnects and transport
/// changes. It names the client and may show in URLs (and so in access logs):
/// acting as the client takes its [`ClientToken`] too.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientId(Arc<str>);

impl ClientId {
    fn new() -> ClientId {
        ClientId(format!("{:032x}", rand::random::<u128>()).into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The secret that proves a transport speaks for a client: 128 random bits, given
/// in the client's `hello` and sent back out of the URL (a header, a WebSocket
/// subprotocol, a cookie) when a transport resumes the client.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ClientToken(u128);

impl ClientToken {
    fn new() -> ClientToken {
        ClientToken(rand::random())
    }

    /// The token as sent (32 lowercase hex digits), or `None` if `text` is not one.
    pub fn parse(text: &str) -> Option<ClientToken> {
        if text.len() != 32 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u128::from_str_radix(text, 16).ok().map(ClientToken)
    }
}

impl std::fmt::Display for ClientToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// Never printed by accident (a log line of a handle must not carry it).
impl std::fmt::Debug for ClientToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientToken(..)")
    }
}

impl std::borrow::Borrow<str> for ClientId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

pub(crate) struct ClientEntry {
    pub(crate) commands: mpsc::Sender<Command>,
    pub(crate) principal: Principal,
    pub(crate) token: ClientToken,
    pub(crate) inbox: Arc<Mutex<Inbox>>,
    /// What the client may still publish (see [`PushConfig::client_publish`](crate::PushConfig)).
    pub(crate) publish_budget: Arc<Mutex<TokenBucket>>,
}

/// What waits for a client, and the transport waiting for it.
pub(crate) struct Inbox {
    messages: VecDeque<Arc<Message>>,
    /// Ids in `messages` that were replayed from history (see [`Taken::replayed`]).
    replayed: HashSet<u64>,
    /// The highest offset replayed from each topic's history. A message published
    /// just before a recovering subscription is in the history already but maybe
    /// not yet dispatched: the dispatcher must not hand it over a second time.
    replayed_upto: HashMap<Topic, u64>,
    /// Messages were dropped (the inbox overflowed): the next batch says so.
    lost: bool,
    waiter: Option<oneshot::Sender<Taken>>,
    last_active: Instant,
    /// A transport attached at least once. A client nobody came back for (a
    /// `hello` answered, then nothing) expires after the much shorter
    /// `unclaimed_client_timeout`, so a flood of hellos does not hold the table.
    claimed: bool,
    /// The client expired: its transports get [`PushError::UnknownClient`].
    closed: bool,
}

impl Inbox {
    fn new() -> Inbox {
        Inbox {
            messages: VecDeque::new(),
            replayed: HashSet::new(),
            replayed_upto: HashMap::new(),
            lost: false,
            waiter: None,
            last_active: Instant::now(),
            claimed: false,
            closed: false,
        }
    }

    /// Adds messages (oldest dropped past `limit`) and hands them on if a
    /// transport waits; returns how many were dropped. `replayed`: they come from
    /// a topic's history (see [`Taken::replayed`]).
    pub(crate) fn deliver(
        &mut self,
        messages: Vec<Arc<Message>>,
        limit: usize,
        replayed: bool,
    ) -> usize {
        let mut messages = messages;
        if replayed {
            self.replayed.extend(messages.iter().map(|m| m.id));
            for m in &messages {
                let upto = self.replayed_upto.entry(m.topic.clone()).or_insert(0);
                *upto = (*upto).max(m.offset);
            }
        } else if !self.replayed_upto.is_empty() {
            messages.retain(|m| {
                self.replayed_upto
                    .get(&m.topic)
                    .is_none_or(|upto| m.offset > *upto)
            });
        }
        self.messages.extend(messages);
        let overflow = self.messages.len().saturating_sub(limit);
        if overflow > 0 {
            for dropped in self.messages.drain(..overflow) {
                self.replayed.remove(&dropped.id);
            }
            self.lost = true;
        }
        self.flush_to_waiter();
        overflow
    }

    /// Everything waiting, if anything is (or a loss to report).
    fn take(&mut self) -> Option<Taken> {
        if self.messages.is_empty() && !self.lost {
            return None;
        }
        let messages: Vec<Arc<Message>> = self.messages.drain(..).collect();
        let replayed = if self.replayed.is_empty() {
            Vec::new()
        } else {
            messages
                .iter()
                .filter(|m| self.replayed.remove(&m.id))
                .map(|m| m.id)
                .collect()
        };
        Some(Taken {
            messages,
            replayed,
            lost: std::mem::take(&mut self.lost),
            superseded: false,
        })
    }

    fn flush_to_waiter(&mut self) {
        if self.waiter.is_none() {
            return;
        }
        let Some(taken) = self.take() else { return };
        let waiter = self.waiter.take().expect("checked above");
        if let Err(taken) = waiter.send(taken) {
            // The transport went away meanwhile: keep everything for the next one.
            self.requeue(taken);
        }
    }

    /// A batch that was taken but never reached its transport goes back in front.
    fn requeue(&mut self, taken: Taken) {
        self.replayed.extend(taken.replayed);
        for message in taken.messages.into_iter().rev() {
            self.messages.push_front(message);
        }
        self.lost |= taken.lost;
    }
}

/// Kept to 16 bytes (both variants boxed): every client's channel allocates its
/// slots 32 at a time, and idle clients are what a node holds most of.
pub(crate) enum Command {
    Subscribe(Box<SubscribeRequest>),
    Unsubscribe(Box<(TopicFilter, oneshot::Sender<()>)>),
}

const _: () = assert!(std::mem::size_of::<Command>() <= 16);

pub(crate) struct SubscribeRequest {
    filter: TopicFilter,
    since: Option<Position>,
    snapshot: bool,
    reply: oneshot::Sender<Result<SubscribeReply, PushError>>,
}

pub(crate) struct Taken {
    messages: Vec<Arc<Message>>,
    /// Ids among `messages` that came from a topic's history (recovery or a
    /// snapshot), not from a publication just now: left out of the latency.
    replayed: Vec<u64>,
    lost: bool,
    /// Another transport attached to this client: the one that waited should end.
    superseded: bool,
}

/// What resuming from a position gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// No position was given.
    None,
    /// Everything missed is in the inbox.
    Recovered,
    /// The history no longer reaches back that far: reload.
    Gap,
    /// The server restarted: reload.
    EpochChanged,
}

#[derive(Debug, Clone, Serialize)]
pub struct SubscribeReply {
    pub filter: String,
    /// For a topic without wildcards: where its stream is now.
    pub position: Option<Position>,
    pub recovery: Recovery,
}

/// A batch for one transport: the shared body, and whether messages were lost
/// before it (then the client should resynchronise).
#[derive(Debug, Clone)]
pub struct Batch {
    pub body: Bytes,
    /// How `body` is encoded: what was asked for (gzip or brotli), or `Identity`
    /// for a small body.
    pub encoding: Encoding,
    pub count: usize,
    pub lost: bool,
}

/// A handle to a client's task, held by a transport for as long as it is attached.
#[derive(Clone)]
pub struct ClientHandle {
    hub: Arc<Hub>,
    id: ClientId,
    token: ClientToken,
    commands: mpsc::Sender<Command>,
    principal: Principal,
    inbox: Arc<Mutex<Inbox>>,
    publish_budget: Arc<Mutex<TokenBucket>>,
}

impl ClientHandle {
    pub(crate) fn new(hub: Arc<Hub>, id: ClientId, entry: &ClientEntry) -> ClientHandle {
        ClientHandle {
            hub,
            id,
            token: entry.token,
            commands: entry.commands.clone(),
            principal: entry.principal.clone(),
            inbox: entry.inbox.clone(),
            publish_budget: entry.publish_budget.clone(),
        }
    }

    pub fn id(&self) -> &ClientId {
        &self.id
    }

    /// The client's secret, for its `hello` only.
    pub fn token(&self) -> ClientToken {
        self.token
    }

    pub fn epoch(&self) -> u64 {
        self.hub.epoch()
    }

    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, PushError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(make(reply))
            .await
            .map_err(|_| PushError::UnknownClient)?;
        answer.await.map_err(|_| PushError::UnknownClient)
    }

    /// Subscribes; with `since`, first delivers what was missed after that position;
    /// with `snapshot`, first delivers the topic's latest message.
    pub async fn subscribe(
        &self,
        filter: &str,
        since: Option<Position>,
        snapshot: bool,
    ) -> Result<SubscribeReply, PushError> {
        let filter = TopicFilter::parse(filter)?;
        if !self.hub.acl.may_subscribe(&self.principal, &filter) {
            return Err(PushError::Forbidden(format!(
                "subscribing to {}",
                filter.as_str()
            )));
        }
        self.ask(|reply| {
            Command::Subscribe(Box::new(SubscribeRequest {
                filter,
                since,
                snapshot,
                reply,
            }))
        })
        .await?
    }

    pub async fn unsubscribe(&self, filter: &str) -> Result<(), PushError> {
        let filter = TopicFilter::parse(filter)?;
        self.ask(|reply| Command::Unsubscribe(Box::new((filter, reply))))
            .await
    }

    /// Publishes as this client: the access policy decides, and the client's
    /// rate ([`PushConfig::client_publish`](crate::PushConfig)) must allow it.
    pub fn publish(&self, topic: &str, payload_json: &str) -> Result<Position, PushError> {
        let parsed = Topic::parse(topic)?;
        if !self.hub.acl.may_publish(&self.principal, &parsed) {
            return Err(PushError::Forbidden(format!("publishing on {topic}")));
        }
        let rate = self.hub.config.client_publish;
        if let Err(wait) = self.publish_budget.lock().take(rate) {
            return Err(PushError::PublishingTooFast {
                retry_after_ms: wait.as_millis().try_into().unwrap_or(u64::MAX).max(1),
            });
        }
        self.hub.publish(topic, payload_json)
    }

    /// What is waiting, or the next batch if it arrives within `wait`; `None` if
    /// nothing came. This is all a long-poll request does. Only one transport waits
    /// at a time: when another one asks, this one gets [`PushError::Superseded`].
    pub async fn next_batch(
        &self,
        wait: Duration,
        encoding: Encoding,
    ) -> Result<Option<Batch>, PushError> {
        match tokio::time::timeout(wait, self.batch(encoding)).await {
            Ok(batch) => batch.map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Like [`next_batch`](Self::next_batch) without a deadline, for a transport
    /// that keeps its own keep-alive timer (a timer per batch costs a timer-wheel
    /// insertion and removal per delivery). Safe to cancel, like `next_batch`.
    pub async fn batch(&self, encoding: Encoding) -> Result<Batch, PushError> {
        let answer = {
            let mut inbox = self.inbox.lock();
            if inbox.closed {
                return Err(PushError::UnknownClient);
            }
            inbox.last_active = Instant::now();
            inbox.claimed = true;
            if let Some(old) = inbox.waiter.take() {
                // A newer transport took over: the old one ends empty-handed.
                let _ = old.send(Taken {
                    messages: Vec::new(),
                    replayed: Vec::new(),
                    lost: false,
                    superseded: true,
                });
            }
            match inbox.take() {
                Some(taken) => Err(taken),
                None => {
                    let (reply, answer) = oneshot::channel();
                    inbox.waiter = Some(reply);
                    Ok(answer)
                }
            }
        };
        let taken = match answer {
            // Something was waiting: no need to wait.
            Err(taken) => taken,
            Ok(answer) => {
                let mut pending = PendingTake {
                    answer: Some(answer),
                    inbox: self.inbox.clone(),
                };
                let taken = match pending.answer.as_mut().expect("set above").await {
                    Ok(taken) => taken,
                    Err(_) => return Err(PushError::UnknownClient),
                };
                pending.answer = None;
                taken
            }
        };
        if taken.superseded {
            return Err(PushError::Superseded);
        }
        // Otherwise it holds messages, or only the news that some were lost.
        let (body, encoding) = if taken.messages.is_empty() {
            (Bytes::new(), Encoding::Identity)
        } else {
            self.hub.encode(&taken.messages, encoding)
        };
        if taken.replayed.is_empty() {
            self.hub.record_delivery(&taken.messages);
        } else {
            let live: Vec<Arc<Message>> = taken
                .messages
                .iter()
                .filter(|m| !taken.replayed.contains(&m.id))
                .cloned()
                .collect();
            self.hub.record_delivery(&live);
        }
        Ok(Batch {
            body,
            encoding,
            count: taken.messages.len(),
            lost: taken.lost,
        })
    }
}

/// Makes [`ClientHandle::next_batch`] safe to cancel (a transport closing, a
/// `select!` choosing another branch): a batch already handed over but never
/// received goes back into the inbox instead of being lost.
struct PendingTake {
    answer: Option<oneshot::Receiver<Taken>>,
    inbox: Arc<Mutex<Inbox>>,
}

impl Drop for PendingTake {
    fn drop(&mut self) {
        let Some(mut answer) = self.answer.take() else {
            return;
        };
        // Closing first: the dispatcher can no longer hand this waiter a batch.
        answer.close();
        if let Ok(taken) = answer.try_recv() {
            let mut inbox = self.inbox.lock();
            inbox.requeue(taken);
            inbox.flush_to_waiter();
        }
    }
}

/// Starts a client's task.
pub(crate) fn spawn(hub: &Arc<Hub>, principal: &Principal) -> (ClientId, ClientEntry) {
    let id = ClientId::new();
    let publish_budget = Arc::new(Mutex::new(TokenBucket::new(hub.config.client_publish)));
    let (commands, receiver) = mpsc::channel(256);
    let inbox = Arc::new(Mutex::new(Inbox::new()));
    let task = ClientTask {
        hub: Arc::downgrade(hub),
        id: id.clone(),
        principal: principal.clone(),
        filters: Vec::new(),
        inbox: inbox.clone(),
    };
    tokio::spawn(task.run(receiver));
    (
        id,
        ClientEntry {
            commands,
            principal: principal.clone(),
            token: ClientToken::new(),
            inbox,
            publish_budget,
        },
    )
}

/// A client task's timer for noticing that it expired after `timeout`.
fn idle_check(timeout: Duration) -> tokio::time::Interval {
    let tick = (timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + tick, tick);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks
}

struct ClientTask {
    hub: std::sync::Weak<Hub>,
    id: ClientId,
    principal: Principal,
    filters: Vec<TopicFilter>,
    inbox: Arc<Mutex<Inbox>>,
}

impl ClientTask {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let Some((idle_timeout, unclaimed_timeout)) = self.hub.upgrade().map(|h| {
            let idle = h.config.client_idle_timeout;
            (idle, h.config.unclaimed_client_timeout.min(idle))
        }) else {
            return;
        };
        // One timer (not a fresh `sleep` per command, which would cost a
        // timer-wheel insertion and removal each time), ticking faster while the
        // client is unclaimed and at the idle pace once a transport came.
        let mut ticks = idle_check(unclaimed_timeout);
        let mut claimed = false;
        loop {
            let command = tokio::select! {
                c = commands.recv() => c,
                _ = ticks.tick() => {
                    let mut inbox = self.inbox.lock();
                    if inbox.claimed && !claimed {
                        claimed = true;
                        ticks = idle_check(idle_timeout);
                    }
                    if inbox.waiter.as_ref().is_some_and(|w| w.is_closed()) {
                        inbox.waiter = None;
                    }
                    let timeout = if inbox.claimed { idle_timeout } else { unclaimed_timeout };
                    if inbox.waiter.is_none() && inbox.last_active.elapsed() >= timeout {
                        break;
                    }
                    continue;
                }
            };
            let Some(command) = command else { break };
            let Some(hub) = self.hub.upgrade() else { break };
            self.inbox.lock().last_active = Instant::now();
            match command {
                Command::Subscribe(request) => {
                    let SubscribeRequest {
                        filter,
                        since,
                        snapshot,
                        reply,
                    } = *request;
                    let _ = reply.send(self.subscribe(&hub, filter, since, snapshot));
                }
                Command::Unsubscribe(request) => {
                    let (filter, reply) = *request;
                    if let Some(i) = self.filters.iter().position(|f| *f == filter) {
                        self.filters.remove(i);
                        hub.index.write().remove(&self.id, &filter);
                    }
                    let _ = reply.send(());
                }
            }
        }
        // Transports still attached learn that the client is gone.
        {
            let mut inbox = self.inbox.lock();
            inbox.closed = true;
            inbox.waiter = None;
        }
        if let Some(hub) = self.hub.upgrade() {
            hub.forget_client(&self.id, &self.filters);
        }
    }

    fn subscribe(
        &mut self,
        hub: &Hub,
        filter: TopicFilter,
        since: Option<Position>,
        snapshot: bool,
    ) -> Result<SubscribeReply, PushError> {
        if !self.filters.contains(&filter) {
            if self.filters.len() >= hub.config.max_subscriptions {
                return Err(PushError::TooManySubscriptions(
                    hub.config.max_subscriptions,
                ));
            }
            self.filters.push(filter.clone());
            hub.index
                .write()
                .add(&self.id, &filter, hub.next_message_id());
        }
        let topic = filter.as_topic();
        let readable = |m: &Arc<Message>| hub.may_receive(&self.principal, m);
        let mut recovery = Recovery::None;
        if let (Some(topic), Some(since)) = (&topic, since) {
            recovery = if since.epoch != hub.epoch() {
                Recovery::EpochChanged
            } else {
                match hub.history_since(topic, since.offset) {
                    Some(missed) => {
                        let missed: Vec<Arc<Message>> =
                            missed.into_iter().filter(readable).collect();
                        hub.deliver(&self.inbox, missed, true);
                        Recovery::Recovered
                    }
                    None => Recovery::Gap,
                }
            };
        }
        let position = topic.as_ref().map(|topic| {
            let (latest, offset) = hub.latest(topic);
            if snapshot
                && since.is_none()
                && let Some(latest) = latest.filter(readable)
            {
                hub.deliver(&self.inbox, vec![latest], true);
            }
            Position {
                epoch: hub.epoch(),
                offset,
            }
        });
        Ok(SubscribeReply {
            filter: filter.as_str().to_string(),
            position,
            recovery,
        })
    }
}
