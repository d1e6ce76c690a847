//! The hub: topics with their history, the subscription index, the dispatcher and
//! the shared encodings.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use bulwark_encoding::{Effort, Encoding, compress};
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use bulwark_acl::Principal;

use crate::PushError;
use crate::client::{ClientEntry, ClientHandle, ClientId, ClientToken, Inbox};
use crate::rate::Rate;
use crate::topic::{Topic, TopicFilter};

#[derive(Debug, Clone)]
pub struct PushConfig {
    /// How long the dispatcher waits for more publications after one arrives
    /// before delivering them. Zero (the default): no wait; a batch is what
    /// was published while the previous one went out, so batches grow with
    /// the rate of publication and a lone message costs no delay.
    pub batch_interval: Duration,
    /// Messages kept per topic for clients that reconnect.
    pub history_size: usize,
    /// A topic's history is dropped this long after its last publication.
    pub history_ttl: Duration,
    /// A client with no transport attached for this long is removed.
    pub client_idle_timeout: Duration,
    /// A client no transport ever attached to (a `hello` answered, then nothing)
    /// is removed after this (at most `client_idle_timeout`).
    pub unclaimed_client_timeout: Duration,
    /// How fast one client may publish; past it, its publications are refused
    /// with [`PushError::PublishingTooFast`].
    pub client_publish: Rate,
    pub max_clients: usize,
    pub max_subscriptions: usize,
    pub max_message_bytes: usize,
    /// Messages waiting for a client; past this the oldest are dropped and the
    /// client is told it lost messages.
    pub inbox_size: usize,
}

impl Default for PushConfig {
    fn default() -> Self {
        PushConfig {
            batch_interval: Duration::ZERO,
            history_size: 100,
            history_ttl: Duration::from_secs(300),
            client_idle_timeout: Duration::from_secs(60),
            unclaimed_client_timeout: Duration::from_secs(10),
            client_publish: Rate {
                per_second: 20.0,
                burst: 40,
            },
            max_clients: 100_000,
            max_subscriptions: 64,
            max_message_bytes: 64 * 1024,
            inbox_size: 256,
        }
    }
}

/// Who may read, subscribe and publish. `principal` is who the client acts for,
/// as the transport established it when the client connected.
pub trait PushAcl: Send + Sync {
    fn may_subscribe(&self, principal: &Principal, filter: &TopicFilter) -> bool;
    /// Checked for every delivered message, so a wildcard subscription never leaks a
    /// topic the client may not read.
    fn may_read(&self, principal: &Principal, topic: &Topic) -> bool;
    fn may_publish(&self, principal: &Principal, topic: &Topic) -> bool;
}

/// Who may receive one message, beyond the topic rules: asked for each client when
/// the message is delivered, recovered from history or sent as a snapshot. A
/// resource's `rsc/{id}` message carries one that asks the site's access policy
/// whether the client's principal may see the resource.
pub trait Audience: Send + Sync + std::fmt::Debug {
    fn admits(&self, principal: &Principal) -> bool;
}

/// Where a hub's publications go besides its own clients: the cluster module
/// hands them to the other nodes sharing the site's database. Told of every
/// publication without an [`Audience`] (those are resource changes, which every
/// node hears of and publishes itself), after it was accepted; never of one that
/// came from another node ([`Hub::publish_relayed`]). Must not block.
pub trait Relay: Send + Sync {
    fn relay(&self, topic: &Topic, payload_json: &str);
}

/// Everything allowed: for tests and trusted embedding.
pub struct OpenAcl;

impl PushAcl for OpenAcl {
    fn may_subscribe(&self, _: &Principal, _: &TopicFilter) -> bool {
        true
    }
    fn may_read(&self, _: &Principal, _: &Topic) -> bool {
        true
    }
    fn may_publish(&self, _: &Principal, _: &Topic) -> bool {
        true
    }
}

/// A published message, serialised once when it is published.
#[derive(Debug)]
pub struct Message {
    pub id: u64,
    pub topic: Topic,
    pub offset: u64,
    /// `{"topic":..,"offset":..,"payload":..}`: a slice of `alone`.
    pub json: Bytes,
    pub published: Instant,
    /// Who may receive it, if not everyone the topic rules let read the topic.
    audience: Option<Arc<dyn Audience>>,
    /// The body of a batch of this message alone, `{"epoch":..,"messages":[json]}`:
    /// most batches hold one message, and this shares their body without a cache
    /// lookup or a second copy.
    alone: Bytes,
    /// `alone` gzipped and brotli-compressed, each made on first need (and only for
    /// bodies of [`COMPRESS_MIN_BYTES`] or more).
    alone_gzip: OnceLock<Bytes>,
    alone_brotli: OnceLock<Bytes>,
    /// Whether `alone` was sent yet: it counts as one computed encoding then (it
    /// is made with `json`, in the same pass, when the message is published).
    alone_sent: std::sync::atomic::AtomicBool,
}

/// Where a topic's stream is: the process epoch and the offset of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub epoch: u64,
    pub offset: u64,
}

struct TopicHistory {
    next_offset: u64,
    messages: VecDeque<Arc<Message>>,
    last_publish: Instant,
}

/// Who subscribed to what, and from which message on: a subscription gets the
/// messages published after it was made (ids from `from` up), never one that was
/// published before but reached the dispatcher after (or that a recovery already
/// delivered).
#[derive(Default)]
pub(crate) struct SubIndex {
    exact: HashMap<Topic, HashMap<ClientId, u64>>,
    wildcard: HashMap<ClientId, Vec<(TopicFilter, u64)>>,
}

impl SubIndex {
    pub(crate) fn add(&mut self, client: &ClientId, filter: &TopicFilter, from: u64) {
        match filter.as_topic() {
            Some(topic) => {
                self.exact
                    .entry(topic)
                    .or_default()
                    .insert(client.clone(), from);
            }
            None => self
                .wildcard
                .entry(client.clone())
                .or_default()
                .push((filter.clone(), from)),
        }
    }

    pub(crate) fn remove(&mut self, client: &ClientId, filter: &TopicFilter) {
        match filter.as_topic() {
            Some(topic) => {
                if let Some(set) = self.exact.get_mut(&topic) {
                    set.remove(client);
                    if set.is_empty() {
                        self.exact.remove(&topic);
                    }
                }
            }
            None => {
                if let Some(filters) = self.wildcard.get_mut(client) {
                    filters.retain(|(f, _)| f != filter);
                    if filters.is_empty() {
                        self.wildcard.remove(client);
                    }
                }
            }
        }
    }

    fn matching(&self, message: &Message, out: &mut HashSet<ClientId>) {
        if let Some(set) = self.exact.get(&message.topic) {
            out.extend(
                set.iter()
                    .filter(|(_, from)| message.id >= **from)
                    .map(|(client, _)| client.clone()),
            );
        }
        for (client, filters) in &self.wildcard {
            if filters
                .iter()
                .any(|(f, from)| message.id >= *from && f.matches(&message.topic))
            {
                out.insert(client.clone());
            }
        }
    }
}

/// Counters, cheap to update, read as a snapshot.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    pub published: u64,
    pub delivered: u64,
    pub batches: u64,
    /// Batch bodies handed to clients.
    pub encodings_needed: u64,
    /// Batch bodies actually serialised (the rest were shared).
    pub encodings_computed: u64,
    pub lost: u64,
    pub clients: u64,
    /// Time from publication until a transport took the message for its client,
    /// over every delivery so far, in microseconds: the server's own part of the
    /// delivery latency (batch window, dispatch, encoding, a long-poll client's
    /// wait for its next request), without the network or the client.
    pub delivery_p50_us: u64,
    pub delivery_p99_us: u64,
    pub delivery_max_us: u64,
}

#[derive(Default)]
struct Counters {
    published: AtomicU64,
    delivered: AtomicU64,
    batches: AtomicU64,
    encodings_needed: AtomicU64,
    encodings_computed: AtomicU64,
    lost: AtomicU64,
}

type BatchKey = (Arc<[u64]>, Encoding);

/// Bodies below this size are sent uncompressed even to clients that accept gzip or
/// brotli: under about a kilobyte compression saves no packet (gzip's own 18-byte
/// frame can even make a one-message batch larger) and costs CPU on both ends.
pub const COMPRESS_MIN_BYTES: usize = 1024;

/// Batches are compressed on the dispatch path, once per set but while clients
/// wait, so at the cheapest level. Brotli is served as asked rather than replaced
/// by gzip (a client may accept only one of them): at this level it costs about
/// what gzip costs and is 10-15% smaller (measured on 0.6-40 KB batches of JSON).
const BATCH_EFFORT: Effort = Effort::Fastest;

pub struct Hub {
    pub(crate) config: PushConfig,
    pub(crate) acl: Arc<dyn PushAcl>,
    epoch: u64,
    next_id: AtomicU64,
    topics: Mutex<HashMap<Topic, TopicHistory>>,
    pub(crate) clients: RwLock<HashMap<ClientId, ClientEntry>>,
    pub(crate) index: RwLock<SubIndex>,
    dispatch: mpsc::UnboundedSender<Arc<Message>>,
    encodings: moka::sync::Cache<BatchKey, (Bytes, Encoding)>,
    counters: Counters,
    delivery: parking_lot::Mutex<hdrhistogram::Histogram<u64>>,
    relay: RwLock<Option<Arc<dyn Relay>>>,
}

impl Hub {
    /// Starts a hub with its dispatcher and history sweeper (on the current tokio
    /// runtime). The epoch is new for every hub, so clients notice a restart.
    pub fn new(config: PushConfig, acl: Arc<dyn PushAcl>) -> Arc<Hub> {
        let (dispatch, queue) = mpsc::unbounded_channel();
        let hub = Arc::new(Hub {
            epoch: rand::random::<u64>() >> 11,
            next_id: AtomicU64::new(1),
            topics: Mutex::new(HashMap::new()),
            clients: RwLock::new(HashMap::new()),
            index: RwLock::new(SubIndex::default()),
            dispatch,
            encodings: moka::sync::Cache::builder()
                .max_capacity(16 * 1024 * 1024)
                // The key's ids and the cache's own bookkeeping count too (about 100
                // bytes an entry): long-poll clients make many small distinct sets.
                .weigher(|k: &BatchKey, v: &(Bytes, Encoding)| {
                    (v.0.len() + k.0.len() * 8 + 100).min(u32::MAX as usize) as u32
                })
                // Sharing happens among the clients of one dispatch, within
                // milliseconds; a set seen again seconds later is rare.
                .time_to_live(Duration::from_secs(2))
                .build(),
            counters: Counters::default(),
            // Microseconds, up to an hour, 3 significant digits (about 20 KiB).
            delivery: parking_lot::Mutex::new(
                hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000, 3)
                    .expect("valid histogram bounds"),
            ),
            acl,
            config,
            relay: RwLock::new(None),
        });
        tokio::spawn(dispatcher(Arc::downgrade(&hub), queue));
        tokio::spawn(history_sweeper(Arc::downgrade(&hub)));
        hub
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The id the next message published will get.
    pub(crate) fn next_message_id(&self) -> u64 {
        self.next_id.load(Ordering::Relaxed)
    }

    pub fn config(&self) -> &PushConfig {
        &self.config
    }

    /// Publishes a JSON payload on a topic (no access check: this is the server's own
    /// API; browsers publish through [`ClientHandle::publish`]).
    pub fn publish(&self, topic: &str, payload_json: &str) -> Result<Position, PushError> {
        let position = self.publish_message(topic, payload_json, None)?;
        if let Some(relay) = &*self.relay.read() {
            // Parsed again only when there is somewhere to relay to.
            relay.relay(&Topic::parse(topic)?, payload_json);
        }
        Ok(position)
    }

    /// Publishes a message another node published (which that node's own
    /// clients already have): like [`publish`](Hub::publish), but not relayed.
    pub fn publish_relayed(&self, topic: &str, payload_json: &str) -> Result<Position, PushError> {
        self.publish_message(topic, payload_json, None)
    }

    /// Sets where this hub's publications go besides its own clients (see
    /// [`Relay`]); `None` stops relaying.
    pub fn set_relay(&self, relay: Option<Arc<dyn Relay>>) {
        *self.relay.write() = relay;
    }

    /// Publishes a message only `audience` may receive (among the clients the
    /// topic rules let read the topic), now and when it is recovered later.
    pub fn publish_for(
        &self,
        topic: &str,
        payload_json: &str,
        audience: Arc<dyn Audience>,
    ) -> Result<Position, PushError> {
        self.publish_message(topic, payload_json, Some(audience))
    }

    /// Whether a client acting for `principal` may receive `message`: the one check
    /// for live deliveries, recoveries and snapshots.
    pub(crate) fn may_receive(&self, principal: &Principal, message: &Message) -> bool {
        self.acl.may_read(principal, &message.topic)
            && message
                .audience
                .as_ref()
                .is_none_or(|audience| audience.admits(principal))
    }

    fn publish_message(
        &self,
        topic: &str,
        payload_json: &str,
        audience: Option<Arc<dyn Audience>>,
    ) -> Result<Position, PushError> {
        let topic = Topic::parse(topic)?;
        if payload_json.len() > self.config.max_message_bytes {
            return Err(PushError::TooLarge {
                size: payload_json.len(),
                limit: self.config.max_message_bytes,
            });
        }
        let payload: &serde_json::value::RawValue =
            serde_json::from_str(payload_json).map_err(|e| PushError::BadPayload(e.to_string()))?;
        let message = {
            let mut topics = self.topics.lock();
            // A topic's offsets start above every offset it ever had (message ids only
            // grow), so a client resuming across a history sweep sees a gap, never a
            // silently reused offset.
            let first_offset = self.next_id.load(Ordering::Relaxed);
            let history = topics.entry(topic.clone()).or_insert_with(|| TopicHistory {
                next_offset: first_offset,
                messages: VecDeque::new(),
                last_publish: Instant::now(),
            });
            let offset = history.next_offset;
            history.next_offset += 1;
            history.last_publish = Instant::now();
            #[derive(Serialize)]
            struct Wire<'a> {
                topic: &'a str,
                offset: u64,
                payload: &'a serde_json::value::RawValue,
            }
            let mut json = 0..0;
            let alone = Bytes::from(self.batch_body(payload.get().len() + 64, |body| {
                let start = body.len();
                serde_json::to_writer(
                    &mut *body,
                    &Wire {
                        topic: topic.as_str(),
                        offset,
                        payload,
                    },
                )
                .expect("serialising a message");
                json = start..body.len();
            }));
            let message = Arc::new(Message {
                id: self.next_id.fetch_add(1, Ordering::Relaxed),
                topic,
                offset,
                json: alone.slice(json),
                published: Instant::now(),
                audience,
                alone,
                alone_gzip: OnceLock::new(),
                alone_brotli: OnceLock::new(),
                alone_sent: Default::default(),
            });
            history.messages.push_back(message.clone());
            while history.messages.len() > self.config.history_size {
                history.messages.pop_front();
            }
            message
        };
        let position = Position {
            epoch: self.epoch,
            offset: message.offset,
        };
        self.counters.published.fetch_add(1, Ordering::Relaxed);
        let _ = self.dispatch.send(message);
        Ok(position)
    }

    /// A new client, for an anonymous visitor.
    pub fn connect(self: &Arc<Self>) -> Result<ClientHandle, PushError> {
        self.connect_as(&Principal::Anonymous)
    }

    /// The client `id` again (a reconnect, a transport switch), for whoever shows
    /// its token and acts for the principal it was made for; anyone else learns
    /// only [`PushError::UnknownClient`], as for an id that never existed.
    pub fn resume(
        self: &Arc<Self>,
        id: &str,
        token: &str,
        principal: &Principal,
    ) -> Result<ClientHandle, PushError> {
        let token = ClientToken::parse(token).ok_or(PushError::UnknownClient)?;
        let clients = self.clients.read();
        match clients.get_key_value(id) {
            Some((key, entry))
                if entry.token == token
                    && entry.principal == *principal
                    && !entry.commands.is_closed() =>
            {
                Ok(ClientHandle::new(self.clone(), key.clone(), entry))
            }
            _ => Err(PushError::UnknownClient),
        }
    }

    /// A new client acting for `principal`.
    pub fn connect_as(self: &Arc<Self>, principal: &Principal) -> Result<ClientHandle, PushError> {
        let mut clients = self.clients.write();
        if clients.len() >= self.config.max_clients {
            return Err(PushError::TooManyClients(self.config.max_clients));
        }
        let (id, entry) = crate::client::spawn(self, principal);
        let handle = ClientHandle::new(self.clone(), id.clone(), &entry);
        clients.insert(id, entry);
        Ok(handle)
    }

    /// The messages of `topic` after `offset`, or `None` when the history no longer
    /// reaches back that far.
    pub(crate) fn history_since(&self, topic: &Topic, offset: u64) -> Option<Vec<Arc<Message>>> {
        let topics = self.topics.lock();
        let Some(history) = topics.get(topic) else {
            return (offset == 0).then(Vec::new);
        };
        let oldest = history
            .messages
            .front()
            .map_or(history.next_offset, |m| m.offset);
        if offset + 1 < oldest {
            return None;
        }
        Some(
            history
                .messages
                .iter()
                .filter(|m| m.offset > offset)
                .cloned()
                .collect(),
        )
    }

    pub(crate) fn latest(&self, topic: &Topic) -> (Option<Arc<Message>>, u64) {
        let topics = self.topics.lock();
        match topics.get(topic) {
            Some(h) => (h.messages.back().cloned(), h.next_offset - 1),
            None => (None, 0),
        }
    }

    /// The body for exactly these messages, serialised once per distinct set, and
    /// the encoding it has: `Identity` when compression was asked for a body too
    /// small to gain from it (see [`COMPRESS_MIN_BYTES`]). Concurrent askers for one set wait
    /// for the first one's work (single flight).
    pub(crate) fn encode(
        &self,
        messages: &[Arc<Message>],
        encoding: Encoding,
    ) -> (Bytes, Encoding) {
        self.counters
            .encodings_needed
            .fetch_add(1, Ordering::Relaxed);
        if let [only] = messages {
            let compressed = match encoding {
                Encoding::Identity => None,
                Encoding::Gzip => Some(&only.alone_gzip),
                Encoding::Brotli => Some(&only.alone_brotli),
            };
            return match compressed {
                Some(cell) if only.alone.len() >= COMPRESS_MIN_BYTES => {
                    let body = cell.get_or_init(|| {
                        self.counters
                            .encodings_computed
                            .fetch_add(1, Ordering::Relaxed);
                        compress(&only.alone, encoding, BATCH_EFFORT)
                    });
                    (body.clone(), encoding)
                }
                _ => {
                    if !only.alone_sent.swap(true, Ordering::Relaxed) {
                        self.counters
                            .encodings_computed
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    (only.alone.clone(), Encoding::Identity)
                }
            };
        }
        let ids: Arc<[u64]> = messages.iter().map(|m| m.id).collect();
        self.encodings
            .get_with((ids, encoding), || self.encode_now(messages, encoding))
    }

    /// A batch body, `{"epoch":..,"messages":[..]}`, around what `write_messages`
    /// writes: one wire format for one-message bodies (made at publication) and
    /// larger sets.
    fn batch_body(&self, size: usize, write_messages: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut body = Vec::with_capacity(size + 40);
        write!(body, "{{\"epoch\":{},\"messages\":[", self.epoch).expect("Vec write");
        write_messages(&mut body);
        body.extend_from_slice(b"]}");
        body
    }

    fn encode_now(&self, messages: &[Arc<Message>], encoding: Encoding) -> (Bytes, Encoding) {
        self.counters
            .encodings_computed
            .fetch_add(1, Ordering::Relaxed);
        let size = messages.iter().map(|m| m.json.len() + 1).sum();
        let json = self.batch_body(size, |body| {
            for (i, m) in messages.iter().enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                body.extend_from_slice(&m.json);
            }
        });
        if encoding == Encoding::Identity || json.len() < COMPRESS_MIN_BYTES {
            return (Bytes::from(json), Encoding::Identity);
        }
        (compress(&json, encoding, BATCH_EFFORT), encoding)
    }

    /// Puts messages in a client's inbox (its waiting transport gets them at
    /// once) and counts those a full inbox dropped. `replayed`: from history.
    pub(crate) fn deliver(
        &self,
        inbox: &Mutex<Inbox>,
        messages: Vec<Arc<Message>>,
        replayed: bool,
    ) {
        let dropped = inbox
            .lock()
            .deliver(messages, self.config.inbox_size, replayed);
        if dropped > 0 {
            self.counters
                .lost
                .fetch_add(dropped as u64, Ordering::Relaxed);
        }
    }

    pub(crate) fn forget_client(&self, id: &ClientId, filters: &[TopicFilter]) {
        let mut index = self.index.write();
        for f in filters {
            index.remove(id, f);
        }
        drop(index);
        self.clients.write().remove(id);
    }

    /// How many clients are connected (or between reconnects) now.
    pub fn client_count(&self) -> u64 {
        self.clients.read().len() as u64
    }

    pub fn stats(&self) -> Stats {
        let c = &self.counters;
        let delivery = self.delivery.lock().clone();
        Stats {
            published: c.published.load(Ordering::Relaxed),
            delivered: c.delivered.load(Ordering::Relaxed),
            batches: c.batches.load(Ordering::Relaxed),
            encodings_needed: c.encodings_needed.load(Ordering::Relaxed),
            encodings_computed: c.encodings_computed.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed),
            clients: self.clients.read().len() as u64,
            delivery_p50_us: delivery.value_at_quantile(0.5),
            delivery_p99_us: delivery.value_at_quantile(0.99),
            delivery_max_us: delivery.max(),
        }
    }

    /// Notes that a transport took these messages for its client now.
    pub(crate) fn record_delivery(&self, messages: &[Arc<Message>]) {
        let now = Instant::now();
        let mut delivery = self.delivery.lock();
        for m in messages {
            let us = now.duration_since(m.published).as_micros();
            delivery.saturating_record(u64::try_from(us).unwrap_or(u64::MAX));
        }
    }
}

/// Takes what has been published (waiting the batch interval first, if one is
/// set), then hands every client its share of the batch in one go. Without an
/// interval this is a group commit: while one batch goes out, the next
/// collects, so a lone publication leaves at once and a burst leaves in few
/// batches. (A fixed 10 ms window, the default before, was most of a
/// message's latency at 10,000 clients: bench/RESULTS.md.)
async fn dispatcher(hub: Weak<Hub>, mut queue: mpsc::UnboundedReceiver<Arc<Message>>) {
    while let Some(first) = queue.recv().await {
        let Some(interval) = hub.upgrade().map(|h| h.config.batch_interval) else {
            return;
        };
        if !interval.is_zero() {
            tokio::time::sleep(interval).await;
        }
        let mut batch = vec![first];
        while let Ok(m) = queue.try_recv() {
            batch.push(m);
        }
        let Some(hub) = hub.upgrade() else { return };
        hub.counters.batches.fetch_add(1, Ordering::Relaxed);
        let mut per_client: HashMap<ClientId, Vec<Arc<Message>>> = HashMap::new();
        {
            let index = hub.index.read();
            let mut matched = HashSet::new();
            for message in &batch {
                matched.clear();
                index.matching(message, &mut matched);
                for client in matched.drain() {
                    per_client.entry(client).or_default().push(message.clone());
                }
            }
        }
        let clients = hub.clients.read();
        for (id, mut messages) in per_client {
            let Some(entry) = clients.get(&id) else {
                continue;
            };
            messages.retain(|m| hub.may_receive(&entry.principal, m));
            if messages.is_empty() {
                continue;
            }
            let n = messages.len() as u64;
            hub.deliver(&entry.inbox, messages, false);
            hub.counters.delivered.fetch_add(n, Ordering::Relaxed);
        }
    }
}

async fn history_sweeper(hub: Weak<Hub>) {
    loop {
        let Some(ttl) = hub.upgrade().map(|h| h.config.history_ttl) else {
            return;
        };
        tokio::time::sleep(
            ttl.min(Duration::from_secs(30))
                .max(Duration::from_millis(100)),
        )
        .await;
        let Some(hub) = hub.upgrade() else { return };
        hub.topics
            .lock()
            .retain(|_, h| h.last_publish.elapsed() < ttl);
    }
}
