//! One permanent task per client: it owns the subscriptions and the inbox, and
//! transports come and go around it.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::PushError;
use crate::hub::{Encoding, Hub, Message, Position};
use crate::topic::{Topic, TopicFilter};

/// A client's identity: 128 random bits, so it cannot be guessed; it survives
/// reconnects and transport changes.
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

impl std::borrow::Borrow<str> for ClientId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

pub(crate) struct ClientEntry {
    pub(crate) commands: mpsc::Sender<Command>,
    pub(crate) principal: Option<String>,
    /// Set when messages could not even be queued for the task.
    pub(crate) lost: Arc<AtomicBool>,
}

/// Kept to 32 bytes (the rarer, larger variants are boxed): every client's channel
/// allocates its slots 32 at a time, and idle clients are what a node holds most of.
pub(crate) enum Command {
    Subscribe(Box<SubscribeRequest>),
    Unsubscribe(Box<(TopicFilter, oneshot::Sender<()>)>),
    Deliver(Vec<Arc<Message>>),
    Take(oneshot::Sender<Taken>),
    /// A batch that was taken but never reached its transport goes back in front.
    Requeue(Box<Taken>),
}

const _: () = assert!(std::mem::size_of::<Command>() <= 32);

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
    /// How `body` is encoded: what was asked for, or `Identity` for a small body.
    pub encoding: Encoding,
    pub count: usize,
    pub lost: bool,
}

/// A handle to a client's task, held by a transport for as long as it is attached.
#[derive(Clone)]
pub struct ClientHandle {
    hub: Arc<Hub>,
    id: ClientId,
    commands: mpsc::Sender<Command>,
    principal: Option<String>,
    lost: Arc<AtomicBool>,
}

impl ClientHandle {
    pub(crate) fn new(hub: Arc<Hub>, id: ClientId, entry: &ClientEntry) -> ClientHandle {
        ClientHandle {
            hub,
            id,
            commands: entry.commands.clone(),
            principal: entry.principal.clone(),
            lost: entry.lost.clone(),
        }
    }

    pub fn id(&self) -> &ClientId {
        &self.id
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
        if !self
            .hub
            .acl
            .may_subscribe(self.principal.as_deref(), &filter)
        {
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

    /// Publishes as this client: the access policy decides.
    pub fn publish(&self, topic: &str, payload_json: &str) -> Result<Position, PushError> {
        let parsed = Topic::parse(topic)?;
        if !self.hub.acl.may_publish(self.principal.as_deref(), &parsed) {
            return Err(PushError::Forbidden(format!("publishing on {topic}")));
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
        tokio::time::timeout(wait, self.batch(encoding))
            .await
            .unwrap_or(Ok(None))
    }

    /// Like [`next_batch`](Self::next_batch) without a deadline, for a transport
    /// that keeps its own keep-alive timer (a timer per batch costs a timer-wheel
    /// insertion and removal per delivery). Safe to cancel, like `next_batch`.
    pub async fn batch(&self, encoding: Encoding) -> Result<Option<Batch>, PushError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Take(reply))
            .await
            .map_err(|_| PushError::UnknownClient)?;
        let mut pending = PendingTake {
            answer: Some(answer),
            commands: self.commands.clone(),
            lost: self.lost.clone(),
        };
        let taken = match pending.answer.as_mut().expect("set above").await {
            Ok(taken) => taken,
            Err(_) => return Err(PushError::UnknownClient),
        };
        pending.answer = None;
        if taken.superseded {
            return Err(PushError::Superseded);
        }
        if taken.messages.is_empty() && !taken.lost {
            return Ok(None);
        }
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
        Ok(Some(Batch {
            body,
            encoding,
            count: taken.messages.len(),
            lost: taken.lost,
        }))
    }
}

/// Makes [`ClientHandle::next_batch`] safe to cancel (a transport closing, a
/// `select!` choosing another branch): a batch the task already handed over but
/// nobody received is sent back to the task instead of being lost.
struct PendingTake {
    answer: Option<oneshot::Receiver<Taken>>,
    commands: mpsc::Sender<Command>,
    lost: Arc<AtomicBool>,
}

impl Drop for PendingTake {
    fn drop(&mut self) {
        let Some(mut answer) = self.answer.take() else {
            return;
        };
        let Ok(taken) = answer.try_recv() else {
            return;
        };
        let had_news = !taken.messages.is_empty() || taken.lost;
        if had_news
            && self
                .commands
                .try_send(Command::Requeue(Box::new(taken)))
                .is_err()
        {
            // The task's queue is full: the client's next batch says it lost some.
            self.lost.store(true, Ordering::Relaxed);
        }
    }
}

/// Starts a client's task.
pub(crate) fn spawn(hub: &Arc<Hub>, principal: Option<&str>) -> (ClientId, ClientEntry) {
    let id = ClientId::new();
    let (commands, receiver) = mpsc::channel(256);
    let lost = Arc::new(AtomicBool::new(false));
    let task = ClientTask {
        hub: Arc::downgrade(hub),
        id: id.clone(),
        principal: principal.map(str::to_string),
        filters: Vec::new(),
        inbox: VecDeque::new(),
        lost: lost.clone(),
        waiter: None,
        last_active: Instant::now(),
        replayed: HashSet::new(),
    };
    tokio::spawn(task.run(receiver));
    (
        id,
        ClientEntry {
            commands,
            principal: principal.map(str::to_string),
            lost,
        },
    )
}

struct ClientTask {
    hub: std::sync::Weak<Hub>,
    id: ClientId,
    principal: Option<String>,
    filters: Vec<TopicFilter>,
    inbox: VecDeque<Arc<Message>>,
    lost: Arc<AtomicBool>,
    waiter: Option<oneshot::Sender<Taken>>,
    last_active: Instant,
    /// Ids in the inbox that were replayed from history (see [`Taken::replayed`]).
    replayed: HashSet<u64>,
}

impl ClientTask {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let Some(idle_timeout) = self.hub.upgrade().map(|h| h.config.client_idle_timeout) else {
            return;
        };
        let tick = (idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
        // One timer for the task's life: a fresh `sleep` per command would cost a
        // timer-wheel insertion and removal per delivery.
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + tick, tick);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let command = tokio::select! {
                c = commands.recv() => c,
                _ = ticks.tick() => {
                    if self.waiter.as_ref().is_some_and(|w| w.is_closed()) {
                        self.waiter = None;
                    }
                    if self.waiter.is_none() && self.last_active.elapsed() >= idle_timeout {
                        break;
                    }
                    continue;
                }
            };
            let Some(command) = command else { break };
            let Some(hub) = self.hub.upgrade() else { break };
            match command {
                Command::Deliver(messages) => {
                    self.inbox.extend(messages);
                    let limit = hub.config.inbox_size;
                    if self.inbox.len() > limit {
                        let overflow = self.inbox.len() - limit;
                        self.inbox.drain(..overflow);
                        hub.count_lost(overflow as u64);
                        self.lost.store(true, Ordering::Relaxed);
                    }
                    self.flush_to_waiter();
                }
                Command::Requeue(taken) => {
                    let taken = *taken;
                    self.replayed.extend(taken.replayed);
                    for message in taken.messages.into_iter().rev() {
                        self.inbox.push_front(message);
                    }
                    if taken.lost {
                        self.lost.store(true, Ordering::Relaxed);
                    }
                    self.flush_to_waiter();
                }
                Command::Take(reply) => {
                    self.last_active = Instant::now();
                    if let Some(old) = self.waiter.replace(reply) {
                        // A newer transport took over: the old one ends empty-handed.
                        let _ = old.send(Taken {
                            messages: Vec::new(),
                            replayed: Vec::new(),
                            lost: false,
                            superseded: true,
                        });
                    }
                    self.flush_to_waiter();
                }
                Command::Subscribe(request) => {
                    self.last_active = Instant::now();
                    let SubscribeRequest {
                        filter,
                        since,
                        snapshot,
                        reply,
                    } = *request;
                    let _ = reply.send(self.subscribe(&hub, filter, since, snapshot));
                    self.flush_to_waiter();
                }
                Command::Unsubscribe(request) => {
                    let (filter, reply) = *request;
                    self.last_active = Instant::now();
                    if let Some(i) = self.filters.iter().position(|f| *f == filter) {
                        self.filters.remove(i);
                        hub.index.write().remove(&self.id, &filter);
                    }
                    let _ = reply.send(());
                }
            }
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
            hub.index.write().add(&self.id, &filter);
        }
        let topic = filter.as_topic();
        let readable = |m: &Arc<Message>| hub.acl.may_read(self.principal.as_deref(), &m.topic);
        let mut recovery = Recovery::None;
        if let (Some(topic), Some(since)) = (&topic, since) {
            recovery = if since.epoch != hub.epoch() {
                Recovery::EpochChanged
            } else {
                match hub.history_since(topic, since.offset) {
                    Some(missed) => {
                        let missed: Vec<Arc<Message>> =
                            missed.into_iter().filter(readable).collect();
                        self.replayed.extend(missed.iter().map(|m| m.id));
                        self.inbox.extend(missed);
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
                self.replayed.insert(latest.id);
                self.inbox.push_back(latest);
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

    fn flush_to_waiter(&mut self) {
        let lost = self.lost.load(Ordering::Relaxed);
        if self.inbox.is_empty() && !lost {
            return;
        }
        let Some(waiter) = self.waiter.take() else {
            return;
        };
        self.lost.store(false, Ordering::Relaxed);
        let messages: Vec<Arc<Message>> = self.inbox.drain(..).collect();
        let replayed = if self.replayed.is_empty() {
            Vec::new()
        } else {
            messages
                .iter()
                .filter(|m| self.replayed.remove(&m.id))
                .map(|m| m.id)
                .collect()
        };
        let taken = Taken {
            messages,
            replayed,
            lost,
            superseded: false,
        };
        if let Err(taken) = waiter.send(taken) {
            // The transport went away meanwhile: keep everything for the next one.
            self.replayed.extend(taken.replayed);
            self.inbox = taken.messages.into_iter().collect();
            if taken.lost {
                self.lost.store(true, Ordering::Relaxed);
            }
        }
    }
}
