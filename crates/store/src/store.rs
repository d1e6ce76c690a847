//! Opening a store, the connection pools, transactions and change events.
//!
//! Every data operation is a synchronous method on [`Store`]. The template
//! render path runs on blocking threads and calls them directly; async code
//! calls [`Store::run`], which moves the call to tokio's blocking pool. The
//! PostgreSQL backend drives sqlx with `Handle::block_on` from that thread.
//! A call made on a runtime worker by mistake still works: waits go through
//! `block_in_place`, which hands the worker's other tasks to another thread.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bulwark_depcache::DependencyKey;
use parking_lot::Mutex;
use tokio::runtime::Handle;
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

use crate::db::{Conn, DbError, DbFailure, PgConn, SqliteConn, pg_error};
use crate::error::{DatabaseError, Result, StoreError};
use crate::model::{ChangeEvent, ChangeKind, ResourceChange, ResourceId};
use crate::module_sql::ModuleSql;

/// Where the data lives.
#[derive(Debug, Clone)]
pub enum Database {
    /// One SQLite file (per site). Created when missing.
    Sqlite { path: PathBuf },
    /// A PostgreSQL database; `schema` (created when missing) lets several
    /// sites share one database.
    Postgres { url: String, schema: Option<String> },
}

/// Pool sizes and deadlines.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// PostgreSQL: connections kept open even when idle.
    pub min_connections: u32,
    /// PostgreSQL: the most connections ever open.
    pub max_connections: u32,
    /// PostgreSQL: idle connections above the minimum close after this.
    pub idle_timeout: Duration,
    /// Both: waiting longer than this for a connection (or SQLite's single
    /// writer) gives [`StoreError::Busy`].
    pub acquire_timeout: Duration,
    /// SQLite: read connections (WAL lets them read while the writer writes).
    pub sqlite_readers: usize,
    /// PostgreSQL: a statement running longer (a lock held elsewhere, a
    /// query gone wrong) is cancelled and the request answered `503`, instead
    /// of holding a connection and its visitor. Migrations run without it.
    pub statement_timeout: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            min_connections: 1,
            max_connections: 8,
            idle_timeout: Duration::from_secs(300),
            acquire_timeout: Duration::from_secs(5),
            sqlite_readers: 4,
            statement_timeout: Duration::from_secs(10),
        }
    }
}

#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub database: Database,
    pub pool: PoolOptions,
    /// SQLite: fsync on every commit (`synchronous=FULL`). With `false`
    /// (`NORMAL`) a commit survives a process crash but may be lost when the
    /// machine loses power.
    pub sqlite_fsync_every_commit: bool,
}

impl StoreConfig {
    pub fn sqlite(path: impl Into<PathBuf>) -> Self {
        Self::with(Database::Sqlite { path: path.into() })
    }
    pub fn postgres(url: &str, schema: Option<&str>) -> Self {
        Self::with(Database::Postgres {
            url: url.to_owned(),
            schema: schema.map(str::to_owned),
        })
    }
    fn with(database: Database) -> Self {
        StoreConfig {
            database,
            pool: PoolOptions::default(),
            sqlite_fsync_every_commit: true,
        }
    }
}

/// A snapshot of the connection pool, for metrics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    pub open: u32,
    pub idle: usize,
}

impl ChangeEvent {
    /// Several writes' events, in order, as one: each key once, each
    /// resource's changes added up as within one write (inserted then
    /// updated is inserted, inserted then deleted nothing), anything may
    /// have changed when any says so. (Here, beside the adding-up it uses.)
    pub fn merged(events: impl IntoIterator<Item = ChangeEvent>) -> ChangeEvent {
        Changes::merged(events)
    }
}

/// What a write touches, collected while it runs and emitted once it
/// committed: the dependency keys it makes stale and what happened to which
/// resources.
#[derive(Default)]
pub(crate) struct Changes {
    keys: BTreeSet<DependencyKey>,
    resources: BTreeMap<ResourceId, ChangeKind>,
    pub pivot_queued: bool,
    /// Category name -> (id, names of it and its ancestors), looked up once
    /// per transaction: a bulk import would otherwise ask for every row.
    /// Cleared whenever the tree is renumbered.
    pub category_memo: std::collections::HashMap<String, (ResourceId, Vec<String>)>,
    /// What modules said happened in this write ([`ModuleSql::announce`]),
    /// for the commit hooks.
    notes: Vec<ChangeNote>,
    /// Anything may have changed (a restore).
    pub everything: bool,
}

/// Something a module says happened in a write (`comment.posted`,
/// `form.submitted`): handed to the commit hooks with the write's change
/// (the webhooks module queues its messages from them), in the same
/// transaction. Not part of the change event: the other nodes and the caches
/// have no use for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeNote {
    pub kind: &'static str,
    pub payload: serde_json::Value,
}

impl Changes {
    pub(crate) fn note(&mut self, note: ChangeNote) {
        self.notes.push(note);
    }

    pub fn add(&mut self, key: DependencyKey) {
        self.keys.insert(key);
    }

    /// Note what happened to a resource. Several things happening to one
    /// resource in one transaction add up to what the world outside sees:
    /// inserted then updated is inserted, updated then deleted is deleted, and
    /// inserted then deleted is nothing at all.
    pub fn resource(&mut self, id: ResourceId, kind: ChangeKind) {
        use ChangeKind::*;
        let merged = match (self.resources.get(&id), kind) {
            (None, kind) => Some(kind),
            (Some(Inserted), Deleted) => None,
            (Some(Deleted), _) | (_, Deleted) => Some(Deleted),
            (Some(Inserted), _) | (_, Inserted) => Some(Inserted),
            (Some(Updated), Updated) => Some(Updated),
        };
        match merged {
            Some(kind) => self.resources.insert(id, kind),
            None => self.resources.remove(&id),
        };
    }

    /// Several writes' events in order as one: each key once, each
    /// resource's changes added up as within one write, anything may have
    /// changed when any says so. For one that tells another process what a
    /// command changed (`bulwark import` to the running server).
    pub(crate) fn merged(events: impl IntoIterator<Item = ChangeEvent>) -> ChangeEvent {
        let mut all = Changes::default();
        for event in events {
            all.everything |= event.everything;
            all.keys.extend(event.keys);
            for r in event.resources {
                all.resource(r.id, r.kind);
            }
        }
        all.into_event().unwrap_or_else(ChangeEvent::nothing)
    }

    pub(crate) fn into_event(self) -> Option<ChangeEvent> {
        if self.keys.is_empty() && self.resources.is_empty() && !self.everything {
            return None;
        }
        Some(ChangeEvent {
            keys: self.keys.into_iter().collect(),
            resources: self
                .resources
                .into_iter()
                .map(|(id, kind)| ResourceChange { id, kind })
                .collect(),
            everything: self.everything,
        })
    }

    /// The event this write will emit once it commits, if any.
    fn peek_event(&self) -> Option<ChangeEvent> {
        if self.keys.is_empty() && self.resources.is_empty() && !self.everything {
            return None;
        }
        Some(ChangeEvent {
            keys: self.keys.iter().cloned().collect(),
            resources: self
                .resources
                .iter()
                .map(|(&id, &kind)| ResourceChange { id, kind })
                .collect(),
            everything: self.everything,
        })
    }
}

pub(crate) struct SqliteBackend {
    pub path: PathBuf,
    writer: Mutex<rusqlite::Connection>,
    readers: Vec<Mutex<rusqlite::Connection>>,
    next_reader: AtomicUsize,
}

pub(crate) struct PgBackend {
    pub pool: sqlx::PgPool,
    pub handle: Handle,
}

pub(crate) enum Backend {
    Sqlite(SqliteBackend),
    Postgres(PgBackend),
}

pub(crate) struct Inner {
    pub backend: Backend,
    pub config: StoreConfig,
    events: broadcast::Sender<ChangeEvent>,
    pub pivot_wakeup: Notify,
    /// Woken by every change event: a resource's publication window may have
    /// moved (`publication.rs`).
    pub publication_wakeup: Notify,
    /// By the name they were set under, in the order they were first set.
    commit_hooks: parking_lot::RwLock<Vec<(&'static str, Arc<dyn CommitHook>)>>,
    /// Cancelled by [`Store::close`]: the store's background tasks end.
    closing: CancellationToken,
}

/// Runs inside every write's transaction that changes something (or in which
/// a module announced something), just before it commits, with the event the
/// write will emit and the modules' notes: what it writes commits or rolls
/// back with the change. The cluster module keeps its outbox this way, so the
/// other nodes hear of a change exactly when it committed; the webhooks module
/// queues its messages. An error rolls the write back.
pub trait CommitHook: Send + Sync {
    fn before_commit(
        &self,
        tx: &mut ModuleSql<'_>,
        change: &ChangeEvent,
        notes: &[ChangeNote],
    ) -> Result<()>;
}

/// A site's database. Cheap to clone; all clones share the pools.
#[derive(Clone)]
pub struct Store {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("database", &self.inner.config.database)
            .finish()
    }
}

fn valid_schema_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// Makes the SQLite file readable by its owner only (0600), creating it so
/// when it is new; SQLite gives its `-wal` and `-shm` files the database
/// file's permissions, and those made before are narrowed too.
fn keep_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let failed = |e| {
        StoreError::Database(DatabaseError::new(
            format!("making {} readable by its owner only", path.display()),
            e,
        ))
    };
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        // No folder, no right to make it: SQLite opening it says why, in
        // its own words.
        Err(_) => return Ok(()),
    }
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        match std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(failed(e)),
            _ => {}
        }
    }
    Ok(())
}

fn open_sqlite_conn(path: &Path, fsync: bool, reader: bool) -> Result<rusqlite::Connection> {
    let failed =
        |e| StoreError::Database(DatabaseError::new(format!("opening {}", path.display()), e));
    let conn = rusqlite::Connection::open(path).map_err(failed)?;
    let sync = if fsync { "FULL" } else { "NORMAL" };
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = {sync};
         PRAGMA foreign_keys = ON;
         PRAGMA busy_timeout = 5000;
         PRAGMA cache_size = -16000;"
    ))
    .map_err(failed)?;
    if reader {
        conn.execute_batch("PRAGMA query_only = ON;")
            .map_err(failed)?;
    }
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

/// Where a PostgreSQL database is, for messages: never the password.
fn pg_location(options: &sqlx::postgres::PgConnectOptions) -> String {
    let place = match options.get_socket() {
        Some(socket) => socket.display().to_string(),
        None => format!("{}:{}", options.get_host(), options.get_port()),
    };
    let database = options.get_database().unwrap_or(options.get_username());
    format!(
        "PostgreSQL at {place}, database {database:?}, user {:?}",
        options.get_username()
    )
}

/// Connecting at open failed. A pool that gave up waiting here is not busy:
/// nobody answered (it retries a refused connection until its deadline).
fn connect_error(location: &str, e: sqlx::Error) -> StoreError {
    let context = format!("connecting to {location}");
    match e {
        sqlx::Error::PoolTimedOut => StoreError::Unavailable {
            source: DatabaseError::new(context, e),
        },
        e => pg_error(e).during(context),
    }
}

impl Store {
    /// Open (and create, and migrate) a store. Needs a tokio runtime: the
    /// PostgreSQL backend keeps its handle to drive queries from blocking threads.
    pub async fn open(config: StoreConfig) -> Result<Store> {
        let handle = Handle::current();
        let backend = match &config.database {
            Database::Sqlite { path } => {
                let path = path.clone();
                let fsync = config.sqlite_fsync_every_commit;
                let readers = config.pool.sqlite_readers.max(1);
                tokio::task::spawn_blocking(move || -> Result<Backend> {
                    keep_private(&path)?;
                    // The writer first: it creates the file and switches it to WAL.
                    let writer = open_sqlite_conn(&path, fsync, false)?;
                    let readers = (0..readers)
                        .map(|_| open_sqlite_conn(&path, fsync, true).map(Mutex::new))
                        .collect::<Result<Vec<_>>>()?;
                    Ok(Backend::Sqlite(SqliteBackend {
                        path,
                        writer: Mutex::new(writer),
                        readers,
                        next_reader: AtomicUsize::new(0),
                    }))
                })
                .await
                .map_err(StoreError::task_failed)??
            }
            Database::Postgres { url, schema } => {
                let schema = schema.clone().unwrap_or_else(|| "public".to_owned());
                if !valid_schema_name(&schema) {
                    return Err(StoreError::invalid(
                        "schema",
                        "must be 1 to 63 characters of a-z, 0-9 and '_'",
                    ));
                }
                let base: sqlx::postgres::PgConnectOptions = url
                    .parse()
                    .map_err(|e| StoreError::invalid("url", format!("{e}")))?;
                let location = pg_location(&base);
                {
                    use sqlx::Connection;
                    let mut c = sqlx::PgConnection::connect_with(&base)
                        .await
                        .map_err(|e| connect_error(&location, e))?;
                    // The name is checked above; identifiers cannot be bound.
                    // Two servers starting at once both find no schema, and
                    // the second `CREATE SCHEMA IF NOT EXISTS` fails on
                    // PostgreSQL's catalog: one at a time, under a lock.
                    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                        "BEGIN; SELECT pg_advisory_xact_lock(hashtext('bulwark schema {schema}')); \
                         CREATE SCHEMA IF NOT EXISTS \"{schema}\"; COMMIT;"
                    )))
                    .execute(&mut c)
                    .await
                    .map_err(|e| pg_error(e).during(format!("creating schema {schema:?}")))?;
                    let _ = c.close().await;
                }
                let p = &config.pool;
                let statement_timeout = p.statement_timeout.as_millis().max(1).to_string();
                // Named after the schema, so an operator sees whose connections
                // these are (`pg_stat_activity`).
                let opts = base
                    .options([
                        ("search_path", schema.as_str()),
                        ("statement_timeout", statement_timeout.as_str()),
                    ])
                    .application_name(&format!("bulwark/{schema}"));
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .min_connections(p.min_connections.max(1))
                    .max_connections(p.max_connections.max(p.min_connections.max(1)))
                    .idle_timeout(p.idle_timeout)
                    .acquire_timeout(p.acquire_timeout)
                    .connect_with(opts)
                    .await
                    .map_err(|e| connect_error(&location, e))?;
                Backend::Postgres(PgBackend {
                    pool,
                    handle: handle.clone(),
                })
            }
        };
        let (events, _) = broadcast::channel(4096);
        let store = Store {
            inner: Arc::new(Inner {
                backend,
                config,
                events,
                pivot_wakeup: Notify::new(),
                publication_wakeup: Notify::new(),
                commit_hooks: parking_lot::RwLock::new(Vec::new()),
                closing: CancellationToken::new(),
            }),
        };
        let s = store.clone();
        tokio::task::spawn_blocking(move || crate::migrate::migrate(&s))
            .await
            .map_err(StoreError::task_failed)??;
        Ok(store)
    }

    /// Run store calls from async code: on tokio's blocking pool, so a slow
    /// query or a password hash never stalls a runtime worker.
    pub async fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(StoreError::task_failed)?
    }

    /// Change events of committed writes. A receiver that falls more than
    /// 4096 events behind gets `Lagged` and should flush everything it caches.
    pub fn subscribe(&self) -> broadcast::Receiver<ChangeEvent> {
        self.inner.events.subscribe()
    }

    /// Emits a change this store did not write: one another node committed to
    /// the same database (the cluster module delivers those), a publication
    /// window that opened or closed, or [`ChangeEvent::everything`]. Its
    /// receivers treat it like any other.
    pub fn announce(&self, event: ChangeEvent) {
        self.inner.publication_wakeup.notify_one();
        let _ = self.inner.events.send(event);
    }

    /// Sets (or with `None` removes) the hook named `name` (one per module)
    /// that every changing write runs just before its commit.
    pub fn set_commit_hook(&self, name: &'static str, hook: Option<Arc<dyn CommitHook>>) {
        let mut hooks = self.inner.commit_hooks.write();
        match (hooks.iter().position(|(n, _)| *n == name), hook) {
            (Some(at), Some(hook)) => hooks[at].1 = hook,
            (Some(at), None) => {
                hooks.remove(at);
            }
            (None, Some(hook)) => hooks.push((name, hook)),
            (None, None) => {}
        }
    }

    /// How many database connections are open and idle right now.
    pub fn connections(&self) -> PoolStatus {
        match &self.inner.backend {
            Backend::Sqlite(b) => PoolStatus {
                open: b.readers.len() as u32 + 1,
                idle: b.readers.iter().filter(|r| !r.is_locked()).count()
                    + usize::from(!b.writer.is_locked()),
            },
            Backend::Postgres(b) => PoolStatus {
                open: b.pool.size(),
                idle: b.pool.num_idle(),
            },
        }
    }

    /// Ends the store's background tasks (and those of its users that wait
    /// on [`closed`](Store::closed)) and closes its PostgreSQL connections,
    /// whoever still holds a handle: a stopped server, or a site that now
    /// uses another database, gives its connection slots back to the server
    /// at once. A later query on PostgreSQL fails as unavailable; SQLite's
    /// file stays open until the last handle goes.
    pub async fn close(&self) {
        self.inner.closing.cancel();
        if let Backend::Postgres(pg) = &self.inner.backend {
            pg.pool.close().await;
        }
    }

    /// Resolves once [`close`](Store::close) was called: a task that lives
    /// as long as the store selects on it.
    pub fn closed(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.inner.closing.cancelled()
    }

    /// Whether `other` is a handle of this same open store.
    pub fn same_as(&self, other: &Store) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Spawns `task`, which ends when it is done or when the store closes,
    /// whichever comes first: a task that serves the store for as long as it
    /// is open, and drops its handle of the store with it.
    pub fn spawn_while_open(
        &self,
        task: impl Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let closing = self.inner.closing.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = closing.cancelled() => {}
                _ = task => {}
            }
        })
    }

    /// The database's size in bytes: the site's SQLite file (its pages,
    /// without the write-ahead log), or the PostgreSQL database the site is
    /// in (every schema of it).
    pub fn database_bytes(&self) -> Result<u64> {
        self.module_read(|sql| {
            let asked = if sql.is_postgres() {
                "SELECT pg_database_size(current_database())"
            } else {
                "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
            };
            let row = sql.query_one(asked, &[])?;
            Ok(row.map_or(0, |r| u64::try_from(r.int(0)).unwrap_or(0)))
        })
    }

    /// "sqlite" or "postgres".
    pub fn backend_name(&self) -> &'static str {
        match self.inner.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// The configuration this store was opened with (to reopen it, or to
    /// open a second handle in another process).
    pub fn config(&self) -> &StoreConfig {
        &self.inner.config
    }

    fn acquire_timeout(&self) -> Duration {
        self.inner.config.pool.acquire_timeout
    }

    /// Run `f` on a read connection, outside a transaction.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&mut dyn Conn) -> Result<T>) -> Result<T> {
        match &self.inner.backend {
            Backend::Sqlite(b) => {
                let n = b.readers.len();
                let start = b.next_reader.fetch_add(1, Ordering::Relaxed);
                for i in 0..n {
                    if let Some(c) = b.readers[(start + i) % n].try_lock() {
                        return f(&mut SqliteConn(&c));
                    }
                }
                let c = b.readers[start % n]
                    .try_lock_for(self.acquire_timeout())
                    .ok_or(StoreError::Busy)?;
                f(&mut SqliteConn(&c))
            }
            Backend::Postgres(b) => {
                // Dropping a pooled connection spawns its return to the pool:
                // that needs the runtime's context on this (non-runtime) thread.
                let _context = b.handle.enter();
                let mut conn =
                    crate::db::block_on(&b.handle, b.pool.acquire()).map_err(acquire_error)?;
                f(&mut PgConn {
                    handle: &b.handle,
                    conn: &mut conn,
                })
            }
        }
    }

    /// Run `f` in a transaction; commit when it returns Ok, roll back when it
    /// returns Err. The change event goes out only after the commit succeeded.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&mut dyn Conn, &mut Changes) -> Result<T>,
    ) -> Result<T> {
        let mut changes = Changes::default();
        let hooks = self.inner.commit_hooks.read().clone();
        let body = |c: &mut dyn Conn| -> Result<T> {
            let out = f(c, &mut changes)?;
            if !hooks.is_empty() {
                let event = changes.peek_event();
                if event.is_some() || !changes.notes.is_empty() {
                    let event = event.unwrap_or_else(ChangeEvent::nothing);
                    for (_, hook) in &hooks {
                        hook.before_commit(&mut ModuleSql::new(c), &event, &changes.notes)?;
                    }
                }
            }
            Ok(out)
        };
        let out = match &self.inner.backend {
            // Waiting for the writer (and fsync) can take a while: if this
            // runs on a runtime worker by mistake, let the runtime move the
            // worker's other tasks elsewhere first (a no-op on other threads).
            Backend::Sqlite(b) => tokio::task::block_in_place(|| -> Result<T> {
                let c = b
                    .writer
                    .try_lock_for(self.acquire_timeout())
                    .ok_or(StoreError::Busy)?;
                let mut conn = SqliteConn(&c);
                Ok(transaction(&mut conn, "BEGIN IMMEDIATE", body)?)
            })?,
            Backend::Postgres(b) => {
                let _context = b.handle.enter();
                let mut pooled =
                    crate::db::block_on(&b.handle, b.pool.acquire()).map_err(acquire_error)?;
                let mut conn = PgConn {
                    handle: &b.handle,
                    conn: &mut pooled,
                };
                let r = transaction(&mut conn, "BEGIN", body);
                if matches!(r, Err(TxError::RollbackFailed(_))) {
                    // The connection is in an unknown state: never reuse it.
                    pooled.close_on_drop();
                }
                r?
            }
        };
        self.emit(changes);
        Ok(out)
    }

    fn emit(&self, changes: Changes) {
        if changes.pivot_queued {
            self.inner.pivot_wakeup.notify_one();
        }
        if let Some(event) = changes.into_event() {
            self.inner.publication_wakeup.notify_one();
            // No receivers is fine: nobody caches anything yet.
            let _ = self.inner.events.send(event);
        }
    }

    pub(crate) fn sqlite_backend(&self) -> Option<&SqliteBackend> {
        match &self.inner.backend {
            Backend::Sqlite(b) => Some(b),
            Backend::Postgres(_) => None,
        }
    }

    pub(crate) fn pg_backend(&self) -> Option<&PgBackend> {
        match &self.inner.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(b) => Some(b),
        }
    }

    /// Run `f` with SQLite's writer, outside any transaction (for a restore:
    /// nobody else writes meanwhile).
    pub(crate) fn with_sqlite_writer<T>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> Result<T>,
    ) -> Result<T> {
        let b = self
            .sqlite_backend()
            .ok_or_else(|| StoreError::Database(DatabaseError::unexpected("not a SQLite store")))?;
        let mut c = b
            .writer
            .try_lock_for(self.acquire_timeout())
            .ok_or(StoreError::Busy)?;
        tokio::task::block_in_place(|| f(&mut c))
    }

    /// Run `f` with a read connection of SQLite (for `VACUUM INTO`).
    pub(crate) fn with_sqlite_reader<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T>,
    ) -> Result<T> {
        let b = self
            .sqlite_backend()
            .ok_or_else(|| StoreError::Database(DatabaseError::unexpected("not a SQLite store")))?;
        let c = b.readers[0]
            .try_lock_for(self.acquire_timeout())
            .ok_or(StoreError::Busy)?;
        f(&c)
    }
}

fn acquire_error(e: sqlx::Error) -> StoreError {
    match e {
        sqlx::Error::PoolTimedOut => StoreError::Busy,
        other => pg_error(other).into(),
    }
}

enum TxError {
    Store(StoreError),
    RollbackFailed(StoreError),
}

impl From<TxError> for StoreError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) | TxError::RollbackFailed(e) => e,
        }
    }
}

fn transaction<T>(
    conn: &mut dyn Conn,
    begin: &str,
    f: impl FnOnce(&mut dyn Conn) -> Result<T>,
) -> std::result::Result<T, TxError> {
    conn.execute_batch(begin)
        .map_err(|e| TxError::Store(e.into()))?;
    let rollback = |conn: &mut dyn Conn, err: StoreError| -> TxError {
        match conn.execute_batch("ROLLBACK") {
            Ok(()) => TxError::Store(err),
            Err(_) => TxError::RollbackFailed(err),
        }
    };
    match f(conn) {
        Ok(v) => match conn.execute_batch("COMMIT") {
            Ok(()) => Ok(v),
            // A deferred constraint fails at COMMIT, and SQLite then leaves the
            // transaction open.
            Err(e) => Err(rollback(conn, commit_error(e))),
        },
        Err(e) => Err(rollback(conn, e)),
    }
}

fn commit_error(e: DbError) -> StoreError {
    match e.failure {
        DbFailure::ForeignKey => StoreError::InUse(format!("a referenced resource ({})", e.source)),
        _ => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use crate::{ChangeEvent, ChangeKind, ResourceChange};

    #[test]
    fn events_merged_are_each_key_once_and_each_resource_added_up() {
        let key = |k: &str| DependencyKey::new(k);
        let change = |keys: &[&str], resources: &[(i64, ChangeKind)]| ChangeEvent {
            keys: keys.iter().map(|k| key(k)).collect(),
            resources: resources
                .iter()
                .map(|&(id, kind)| ResourceChange {
                    id: ResourceId(id),
                    kind,
                })
                .collect(),
            everything: false,
        };
        use ChangeKind::*;
        let merged = ChangeEvent::merged([
            change(
                &["rsc:1", "cat:article"],
                &[(1, Inserted), (2, Updated), (3, Inserted)],
            ),
            change(
                &["cat:article", "rsc:2"],
                &[(1, Updated), (2, Deleted), (3, Deleted)],
            ),
        ]);
        assert_eq!(
            merged.keys,
            [key("cat:article"), key("rsc:1"), key("rsc:2")]
        );
        assert_eq!(
            merged.resources,
            [
                ResourceChange {
                    id: ResourceId(1),
                    kind: Inserted
                },
                ResourceChange {
                    id: ResourceId(2),
                    kind: Deleted
                },
            ],
            "made then changed is made, changed then deleted deleted, made then deleted nothing"
        );
        assert!(!merged.everything);
        let restore = ChangeEvent {
            everything: true,
            ..ChangeEvent::nothing()
        };
        assert!(ChangeEvent::merged([merged, restore]).everything);
        assert_eq!(ChangeEvent::merged([]), ChangeEvent::nothing());
    }

    use super::*;

    fn kinds(changes: Changes) -> Vec<ResourceChange> {
        changes
            .into_event()
            .map(|e| e.resources)
            .unwrap_or_default()
    }

    #[test]
    fn changes_to_one_resource_add_up_to_what_the_world_outside_sees() {
        use ChangeKind::*;
        let one = ResourceId(1);
        for (steps, seen) in [
            (vec![Inserted, Updated], Some(Inserted)),
            (vec![Updated, Updated], Some(Updated)),
            (vec![Updated, Deleted], Some(Deleted)),
            (vec![Deleted, Updated], Some(Deleted)),
            (vec![Inserted, Updated, Deleted], None),
        ] {
            let mut changes = Changes::default();
            for &step in &steps {
                changes.resource(one, step);
            }
            let want: Vec<_> = seen
                .map(|kind| ResourceChange { id: one, kind })
                .into_iter()
                .collect();
            assert_eq!(kinds(changes), want, "{steps:?}");
        }
    }
}
