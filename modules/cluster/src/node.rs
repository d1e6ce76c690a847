//! One running node of a site's cluster: the listening connection, the
//! heartbeat that proves it still delivers, what arrives applied to this node,
//! and this node's push publications sent to the others.
//!
//! **Why a node flushes everything when in doubt.** Notifications are not kept
//! for a listener that is not connected: a change committed while this node was
//! not listening is never heard of. So the node flushes its whole cache when it
//! notices the connection is gone, again every retry while it is gone (so pages
//! rendered meanwhile do not outlive a change they could not hear of by more than
//! a retry), and once more after `LISTEN` is in place again. Everything cached
//! after that last flush was read after `LISTEN`, so any later change is heard of.
//! A connection can also die silently (a partition sends no reset): the node
//! sends itself a notification every heartbeat, through the database; one that
//! has not come back within three heartbeats counts as a lost connection.
//! PostgreSQL delivers notifications in commit order, so a ping that came back
//! proves every change committed before it was delivered too.
//!
//! **Batching.** Whatever arrived together is applied together: the listener
//! takes every notification already buffered with the one it waited for. Push
//! publications are collected while the previous notification is being sent, and
//! go as one notification (up to [`INLINE_LIMIT`] bytes).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use serde_json::value::RawValue;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use bulwark_push::{Hub, Relay, Topic};
use bulwark_store::{ChangeEvent, Database, Store};
use bulwark_web::events::SiteFigures;
use bulwark_web::{Figures, SiteNotifier};

use crate::outbox::{KEEP_MILLIS, Outbox, now_millis};
use crate::settings::ClusterSettings;
use crate::wire::{self, Body, Envelope, INLINE_LIMIT, Publication};

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("a cluster shares a PostgreSQL database: set [database] url")]
    NotPostgres,
    #[error("the database url: {0}")]
    Url(#[source] sqlx::Error),
    #[error(
        "the notification channel {0:?} is longer than PostgreSQL allows (63 bytes): use a shorter schema name"
    )]
    ChannelName(String),
}

/// Longest wait between attempts to listen again.
const MAX_RETRY: Duration = Duration::from_secs(1);
/// Outbox rows older than [`KEEP_MILLIS`] are deleted this often.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// Publications sent in one go at most.
const PUSH_BATCH: usize = 256;

/// What a node's health answer shows; counters only grow.
#[derive(Default)]
pub struct NodeState {
    listening: AtomicBool,
    /// When the last ping came back.
    last_proof: Mutex<Option<Instant>>,
    pub changes_applied: AtomicU64,
    pub publications_applied: AtomicU64,
    pub publications_sent: AtomicU64,
    pub publications_lost: AtomicU64,
    pub full_flushes: AtomicU64,
    pub connections: AtomicU64,
}

impl NodeState {
    /// Whether the node hears the other nodes now: listening, with a ping
    /// back within the last three heartbeats.
    pub fn hearing(&self, heartbeat: Duration) -> bool {
        self.listening.load(Ordering::Relaxed)
            && self
                .last_proof
                .lock()
                .is_some_and(|at| at.elapsed() <= heartbeat * 3)
    }

    pub fn last_proof_age(&self) -> Option<Duration> {
        self.last_proof.lock().map(|at| at.elapsed())
    }
}

/// A running node: stops its tasks when dropped.
pub struct Node {
    shared: Arc<Shared>,
    tasks: Vec<JoinHandle<()>>,
}

struct Shared {
    settings: ClusterSettings,
    origin: String,
    channel: String,
    store: Store,
    /// For sending (publications, pings), reading stored envelopes, pruning.
    pool: PgPool,
    listen_options: PgConnectOptions,
    state: NodeState,
    hub: RwLock<Option<Arc<Hub>>>,
    /// The site's observers, told of the other nodes' figures.
    notifier: RwLock<Option<SiteNotifier>>,
    publications: mpsc::UnboundedSender<(Topic, String)>,
}

impl Node {
    /// Starts a node for `store`: the outbox hook on every write, the listener,
    /// the push sender and the pruning of old outbox rows. Connects lazily: a
    /// database that is away now is tried again until it answers.
    pub fn start(store: &Store, settings: ClusterSettings) -> Result<Node, ClusterError> {
        let Database::Postgres { url, schema } = &store.config().database else {
            return Err(ClusterError::NotPostgres);
        };
        let schema = schema.clone().unwrap_or_else(|| "public".to_owned());
        let channel = format!("bulwark_{schema}");
        if channel.len() > 63 {
            return Err(ClusterError::ChannelName(channel));
        }
        let base: PgConnectOptions = url.parse().map_err(ClusterError::Url)?;
        let app = format!("bulwark-cluster {}", settings.node);
        let pool = PgPoolOptions::new()
            .min_connections(0)
            .max_connections(2)
            .acquire_timeout(Duration::from_secs(2))
            .idle_timeout(Duration::from_secs(60))
            .connect_lazy_with(
                base.clone()
                    .options([("search_path", schema.as_str())])
                    .application_name(&app),
            );
        let listen_options = base.application_name(&format!("{app} listener"));
        let origin = format!("{}/{:016x}", settings.node, rand::random::<u64>());
        let (publications, queue) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            settings,
            origin: origin.clone(),
            channel: channel.clone(),
            store: store.clone(),
            pool,
            listen_options,
            state: NodeState::default(),
            hub: RwLock::new(None),
            notifier: RwLock::new(None),
            publications,
        });
        store.set_commit_hook("cluster", Some(Arc::new(Outbox { origin, channel })));
        // The node serves its store while the store is open: when it closes
        // (the server stops), so do the listener and this node's own pool.
        let pool = shared.pool.clone();
        let closing = store.clone();
        let tasks = vec![
            store.spawn_while_open(listen(shared.clone())),
            store.spawn_while_open(send_publications(shared.clone(), queue)),
            store.spawn_while_open(prune(shared.clone())),
            tokio::spawn(async move {
                closing.closed().await;
                pool.close().await;
            }),
        ];
        Ok(Node { shared, tasks })
    }

    pub fn settings(&self) -> &ClusterSettings {
        &self.shared.settings
    }

    pub fn state(&self) -> &NodeState {
        &self.shared.state
    }

    /// This running node's id, as its messages name it.
    pub fn origin(&self) -> &str {
        &self.shared.origin
    }

    /// The site's push hub now (a change of `[push]` makes a new one): its
    /// publications go to the other nodes, theirs are published on it.
    pub fn attach_hub(&self, hub: Option<Arc<Hub>>) {
        let mut current = self.shared.hub.write();
        if let (Some(old), Some(new)) = (&*current, &hub)
            && Arc::ptr_eq(old, new)
        {
            return;
        }
        if let Some(old) = current.take() {
            old.set_relay(None);
        }
        if let Some(new) = &hub {
            new.set_relay(Some(Arc::new(SendToNodes(
                self.shared.publications.clone(),
            ))));
        }
        *current = hub;
    }
}

impl Node {
    /// The site's observers, which hear of the other nodes' figures
    /// ([`SiteFigures`] with their node's name).
    pub fn attach_notifier(&self, notifier: SiteNotifier) {
        *self.shared.notifier.write() = Some(notifier);
    }

    /// Sends this node's figures of the last second to the other nodes; lost
    /// quietly when the database does not take them (the next second's come).
    pub fn send_figures(&self, figures: &Figures) {
        let Ok(json) = serde_json::value::to_raw_value(figures) else {
            return;
        };
        let note = Envelope {
            origin: self.shared.origin.clone(),
            body: Body::Figures(json),
        }
        .to_json();
        if note.len() > INLINE_LIMIT {
            return;
        }
        let shared = self.shared.clone();
        tokio::spawn(async move {
            if let Err(e) = shared.notify(&note).await {
                tracing::debug!(error = %e, "figures not sent to the other nodes");
            }
        });
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        if let Some(hub) = self.shared.hub.write().take() {
            hub.set_relay(None);
        }
    }
}

/// The hub's relay: publications queued for the sender task.
struct SendToNodes(mpsc::UnboundedSender<(Topic, String)>);

impl Relay for SendToNodes {
    fn relay(&self, topic: &Topic, payload_json: &str) {
        let _ = self.0.send((topic.clone(), payload_json.to_owned()));
    }
}

impl Shared {
    fn flush_everything(&self, why: &str) {
        tracing::debug!(node = %self.settings.node, why, "flushing everything");
        self.state.full_flushes.fetch_add(1, Ordering::Relaxed);
        self.store.announce(ChangeEvent::everything());
    }

    async fn notify(&self, payload: &str) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(&self.channel)
            .bind(payload)
            .execute(&self.pool)
            .await
            .map(|_| ())
    }

    /// Keeps `body` in the outbox and notifies only its row id.
    async fn notify_stored(&self, body: &str) -> Result<(), sqlx::Error> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO cluster_outbox (origin, body, created) VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(&self.origin)
        .bind(body)
        .bind(now_millis())
        .fetch_one(&self.pool)
        .await?;
        let note = Envelope {
            origin: self.origin.clone(),
            body: Body::Stored(id),
        };
        self.notify(&note.to_json()).await
    }

    /// Applies what arrived together; returns the pings of this node that came back.
    async fn apply(&self, notes: Vec<String>, pongs: &mut Vec<u64>) {
        for note in notes {
            let envelope = match serde_json::from_str::<Envelope>(&note) {
                Ok(e) => e,
                Err(e) if let Some(kind) = wire::unknown_kind(&note) => {
                    tracing::debug!(kind, error = %e, "a newer node's notification, passed over");
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "a cluster notification that is not ours to read");
                    self.flush_everything("unreadable notification");
                    continue;
                }
            };
            if envelope.origin == self.origin {
                if let Body::Ping(seq) = envelope.body {
                    pongs.push(seq);
                }
                continue;
            }
            let body = match envelope.body {
                Body::Stored(id) => match self.read_stored(id).await {
                    Some(body) => body,
                    None => {
                        self.flush_everything("stored envelope unreadable");
                        continue;
                    }
                },
                body => body,
            };
            self.apply_body(body);
        }
    }

    fn apply_body(&self, body: Body) {
        match body {
            Body::Change(change) => {
                self.state.changes_applied.fetch_add(1, Ordering::Relaxed);
                match change.into_event() {
                    Some(event) => self.store.announce(event),
                    None => self.flush_everything("a change of an unknown kind"),
                }
            }
            Body::Push(publications) => {
                let hub = self.hub.read().clone();
                for p in publications {
                    self.state
                        .publications_applied
                        .fetch_add(1, Ordering::Relaxed);
                    if let Some(hub) = &hub
                        && let Err(e) = hub.publish_relayed(&p.topic, p.payload.get())
                    {
                        tracing::warn!(topic = %p.topic, error = %e, "a publication from another node");
                    }
                }
            }
            Body::Figures(json) => {
                let notifier = self.notifier.read().clone();
                match serde_json::from_str::<Figures>(json.get()) {
                    Ok(figures) => {
                        if let Some(notifier) = notifier {
                            notifier.current().notify(&SiteFigures(Arc::new(figures)));
                        }
                    }
                    Err(e) => tracing::debug!(error = %e, "another node's figures unread"),
                }
            }
            // Another node's ping, or a reference inside a reference.
            Body::Ping(_) | Body::Stored(_) => {}
        }
    }

    async fn read_stored(&self, id: i64) -> Option<Body> {
        let body: Option<String> =
            sqlx::query_scalar("SELECT body FROM cluster_outbox WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .inspect_err(|e| tracing::warn!(error = %e, "reading a stored cluster message"))
                .ok()
                .flatten();
        serde_json::from_str::<Envelope>(&body?)
            .ok()
            .map(|e| e.body)
    }
}

/// How a listening connection ended.
enum Lost {
    Connection(String),
    Heartbeat,
}

/// Listens, applies, and starts again whenever the connection is lost.
async fn listen(shared: Arc<Shared>) {
    let mut retry = Duration::from_millis(50);
    loop {
        match connect_listener(&shared).await {
            Ok(listener) => {
                retry = Duration::from_millis(50);
                shared.state.connections.fetch_add(1, Ordering::Relaxed);
                // What committed before LISTEN took effect was not heard.
                shared.flush_everything("listening (again)");
                shared.state.listening.store(true, Ordering::Relaxed);
                let lost = run_listener(&shared, listener).await;
                shared.state.listening.store(false, Ordering::Relaxed);
                let why = match &lost {
                    Lost::Connection(e) => e.clone(),
                    Lost::Heartbeat => "no heartbeat came back".to_owned(),
                };
                tracing::warn!(node = %shared.settings.node, why, "cluster listener lost; flushing the cache");
                shared.flush_everything("listener lost");
            }
            Err(e) => {
                tracing::warn!(node = %shared.settings.node, error = %e, "cluster listener cannot connect");
                shared.flush_everything("not listening");
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(MAX_RETRY);
            }
        }
    }
}

async fn connect_listener(shared: &Shared) -> Result<PgListener, sqlx::Error> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .max_lifetime(None)
        .idle_timeout(None)
        .acquire_timeout(Duration::from_secs(3))
        .connect_with(shared.listen_options.clone())
        .await?;
    let mut listener = PgListener::connect_with(&pool).await?;
    listener.eager_reconnect(false);
    listener.listen(&shared.channel).await?;
    Ok(listener)
}

/// Receives until the connection is lost or stops proving itself alive.
async fn run_listener(shared: &Shared, mut listener: PgListener) -> Lost {
    // The listener is read by a task of its own (its receive is not meant to be
    // cancelled midway); it hands over batches and ends with the connection.
    let (batches, mut arriving) = mpsc::channel::<Result<Vec<String>, String>>(64);
    let reader = tokio::spawn(async move {
        loop {
            let first = match listener.try_recv().await {
                Ok(Some(n)) => n,
                Ok(None) => {
                    let _ = batches.send(Err("connection lost".into())).await;
                    return;
                }
                Err(e) => {
                    let _ = batches.send(Err(e.to_string())).await;
                    return;
                }
            };
            let mut batch = vec![first.payload().to_owned()];
            while let Some(n) = listener.next_buffered() {
                batch.push(n.payload().to_owned());
            }
            if batches.send(Ok(batch)).await.is_err() {
                return;
            }
        }
    });
    struct AbortOnDrop(JoinHandle<()>);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let _reader = AbortOnDrop(reader);

    let heartbeat = shared.settings.heartbeat;
    let mut ticker = tokio::time::interval(heartbeat);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seq = 0u64;
    let mut outstanding: Option<(u64, Instant)> = None;
    let mut pongs = Vec::new();
    loop {
        tokio::select! {
            batch = arriving.recv() => match batch {
                Some(Ok(notes)) => {
                    shared.apply(notes, &mut pongs).await;
                    if let Some((want, _)) = outstanding
                        && pongs.drain(..).any(|s| s == want)
                    {
                        outstanding = None;
                        *shared.state.last_proof.lock() = Some(Instant::now());
                    }
                }
                Some(Err(e)) => return Lost::Connection(e),
                None => return Lost::Connection("listener ended".into()),
            },
            _ = ticker.tick() => {
                match outstanding {
                    Some((_, sent)) if sent.elapsed() > heartbeat * 3 => return Lost::Heartbeat,
                    Some(_) => {}
                    None => {
                        seq += 1;
                        let ping = Envelope { origin: shared.origin.clone(), body: Body::Ping(seq) };
                        // A failed send is noticed as a ping that never came back.
                        let sent = tokio::time::timeout(heartbeat, shared.notify(&ping.to_json())).await;
                        if !matches!(sent, Ok(Ok(()))) {
                            tracing::debug!("cluster heartbeat not sent");
                        }
                        outstanding = Some((seq, Instant::now()));
                    }
                }
            }
        }
    }
}

/// Sends this node's publications to the others, batched.
async fn send_publications(
    shared: Arc<Shared>,
    mut queue: mpsc::UnboundedReceiver<(Topic, String)>,
) {
    let mut taken = Vec::with_capacity(PUSH_BATCH);
    while queue.recv_many(&mut taken, PUSH_BATCH).await > 0 {
        let mut batch: Vec<Publication> = Vec::new();
        let mut size = 0;
        for (topic, payload) in taken.drain(..) {
            let Ok(payload) = RawValue::from_string(payload) else {
                continue;
            };
            let publication = Publication {
                topic: topic.as_str().to_owned(),
                payload,
            };
            let one = publication.topic.len() + publication.payload.get().len() + 32;
            if size + one > INLINE_LIMIT - 128 && !batch.is_empty() {
                send_batch(&shared, std::mem::take(&mut batch)).await;
                size = 0;
            }
            size += one;
            batch.push(publication);
        }
        if !batch.is_empty() {
            send_batch(&shared, batch).await;
        }
    }
}

async fn send_batch(shared: &Shared, batch: Vec<Publication>) {
    let n = batch.len() as u64;
    let json = Envelope {
        origin: shared.origin.clone(),
        body: Body::Push(batch),
    }
    .to_json();
    let sent = if json.len() <= INLINE_LIMIT {
        shared.notify(&json).await
    } else {
        shared.notify_stored(&json).await
    };
    match sent {
        Ok(()) => shared
            .state
            .publications_sent
            .fetch_add(n, Ordering::Relaxed),
        Err(e) => {
            tracing::warn!(error = %e, lost = n, "push publications not sent to the other nodes");
            shared
                .state
                .publications_lost
                .fetch_add(n, Ordering::Relaxed)
        }
    };
}

/// Deletes outbox rows nobody will read any more.
async fn prune(shared: Arc<Shared>) {
    let mut every = tokio::time::interval(PRUNE_EVERY);
    loop {
        every.tick().await;
        if let Err(e) = sqlx::query("DELETE FROM cluster_outbox WHERE created < $1")
            .bind(now_millis() - KEEP_MILLIS)
            .execute(&shared.pool)
            .await
        {
            tracing::debug!(error = %e, "pruning the cluster outbox");
        }
    }
}
