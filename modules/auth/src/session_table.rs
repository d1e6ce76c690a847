//! Logon sessions as rows of the module's table `auth_session` (migration 3),
//! in the site's database so any node can serve any request; [`Sessions`]
//! (`sessions.rs`) makes, checks and caches them.
//!
//! A session is found by the SHA-256 of the random token in its cookie; the
//! token itself is never stored. Expiry is decided in `sessions.rs` (idle
//! time from `last_seen`, an absolute end in `expires`); this file only keeps
//! the times and removes what has ended.
//!
//! [`Sessions`]: crate::Sessions

use bulwark_store::{DependencyKey, ModuleSql, ResourceId, SqlRow, Store, StoreError};
use chrono::{DateTime, Utc};

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// SHA-256 of the cookie's token, lowercase hex.
    pub id_hash: String,
    pub person: ResourceId,
    /// The token forms and scripts send back with state-changing requests.
    pub csrf_token: String,
    pub created: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    /// When the session ends however active it is.
    pub expires: DateTime<Utc>,
    /// "Keep me logged in": the cookie outlives the browser.
    pub persistent: bool,
    pub user_agent: Option<String>,
    pub address: Option<String>,
}

/// The dependency key of a session, by its token's hash: a write that ends
/// the session names it, so caches of whom the session stands for drop it on
/// every node of a cluster.
pub fn session_key(id_hash: &str) -> DependencyKey {
    DependencyKey::from(format!("session:{id_hash}"))
}

const COLUMNS: &str = "id_hash, person_id, csrf_token, created, last_seen, expires, persistent, \
                       user_agent, address";

/// What a browser's `User-Agent` may take up in a session row.
const MAX_USER_AGENT_LEN: usize = 256;
/// An IPv6 address with a zone fits.
const MAX_ADDRESS_LEN: usize = 64;

fn session_from_row(r: &SqlRow) -> Session {
    Session {
        id_hash: r.text(0),
        person: ResourceId(r.int(1)),
        csrf_token: r.text(2),
        created: r.time(3),
        last_seen: r.time(4),
        expires: r.time(5),
        persistent: r.int(6) != 0,
        user_agent: r.opt_text(7),
        address: r.opt_text(8),
    }
}

fn is_hash(id_hash: &str) -> bool {
    id_hash.len() == 64 && id_hash.bytes().all(|b| b.is_ascii_hexdigit())
}

fn truncate(s: Option<&str>, max: usize) -> Option<String> {
    s.map(|s| {
        let mut end = s.len().min(max);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_string()
    })
}

/// Stores a new session (the person must exist), ending `previous` (the
/// browser's session before it logged on), if any, in the same transaction.
pub fn create(store: &Store, session: &Session, previous: Option<&str>) -> Result<(), StoreError> {
    if !is_hash(&session.id_hash) {
        return Err(StoreError::invalid(
            "session",
            "a session is stored by the SHA-256 of its token (64 hex digits)",
        ));
    }
    store.module_write(|sql| {
        if let Some(previous) = previous {
            delete_in(sql, previous)?;
        }
        sql.require_resource(session.person, "person")?;
        sql.execute(
            &format!(
                "INSERT INTO auth_session ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
            ),
            &[
                session.id_hash.clone().into(),
                session.person.0.into(),
                session.csrf_token.clone().into(),
                session.created.timestamp_millis().into(),
                session.last_seen.timestamp_millis().into(),
                session.expires.timestamp_millis().into(),
                i64::from(session.persistent).into(),
                truncate(session.user_agent.as_deref(), MAX_USER_AGENT_LEN).into(),
                truncate(session.address.as_deref(), MAX_ADDRESS_LEN).into(),
            ],
        )?;
        Ok(())
    })
}

/// The session with this token hash, if it exists (ended or not).
pub fn find(store: &Store, id_hash: &str) -> Result<Option<Session>, StoreError> {
    if !is_hash(id_hash) {
        return Ok(None);
    }
    store.module_read(|sql| {
        Ok(sql
            .query_one(
                &format!("SELECT {COLUMNS} FROM auth_session WHERE id_hash = $1"),
                &[id_hash.into()],
            )?
            .map(|r| session_from_row(&r)))
    })
}

/// Records activity (`sessions.rs` does this at most once a minute per
/// session, not on every request).
pub fn touch(store: &Store, id_hash: &str, last_seen: DateTime<Utc>) -> Result<(), StoreError> {
    store.module_write(|sql| {
        sql.execute(
            "UPDATE auth_session SET last_seen = $1 WHERE id_hash = $2",
            &[last_seen.timestamp_millis().into(), id_hash.into()],
        )?;
        Ok(())
    })
}

/// Ends one session; `false` when there was none. Its change event names
/// [`session_key`], so every node's cache of it goes.
pub fn delete(store: &Store, id_hash: &str) -> Result<bool, StoreError> {
    store.module_write(|sql| delete_in(sql, id_hash))
}

fn delete_in(sql: &mut ModuleSql<'_>, id_hash: &str) -> Result<bool, StoreError> {
    let ended = sql.execute(
        "DELETE FROM auth_session WHERE id_hash = $1",
        &[id_hash.into()],
    )? > 0;
    if ended {
        sql.flush(session_key(id_hash));
    }
    Ok(ended)
}

/// A person's sessions, newest first.
pub fn of_person(store: &Store, person: ResourceId) -> Result<Vec<Session>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM auth_session WHERE person_id = $1 ORDER BY created DESC, id_hash"
                ),
                &[person.0.into()],
            )?
            .iter()
            .map(session_from_row)
            .collect())
    })
}

/// Ends every session of a person (a password change, an administrator's
/// decision), except `keep`; returns the hashes ended, so caches of them can
/// be dropped (the change event names each, for the other nodes).
pub fn delete_all_of(
    store: &Store,
    person: ResourceId,
    keep: Option<&str>,
) -> Result<Vec<String>, StoreError> {
    let keep = keep.unwrap_or("");
    store.module_write(|sql| {
        let ended: Vec<String> = sql
            .query(
                "SELECT id_hash FROM auth_session WHERE person_id = $1 AND id_hash <> $2",
                &[person.0.into(), keep.into()],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect();
        sql.execute(
            "DELETE FROM auth_session WHERE person_id = $1 AND id_hash <> $2",
            &[person.0.into(), keep.into()],
        )?;
        for id_hash in &ended {
            sql.flush(session_key(id_hash));
        }
        Ok(ended)
    })
}

/// Removes sessions that ended: past their absolute end, or idle since before
/// `idle_before` (`persistent_idle_before` for "keep me logged in" ones).
/// Returns how many.
pub fn delete_ended(
    store: &Store,
    now: DateTime<Utc>,
    idle_before: DateTime<Utc>,
    persistent_idle_before: DateTime<Utc>,
) -> Result<u64, StoreError> {
    store.module_write(|sql| {
        sql.execute(
            "DELETE FROM auth_session WHERE expires <= $1 \
             OR (persistent = 0 AND last_seen < $2) OR (persistent <> 0 AND last_seen < $3)",
            &[
                now.timestamp_millis().into(),
                idle_before.timestamp_millis().into(),
                persistent_idle_before.timestamp_millis().into(),
            ],
        )
    })
}
