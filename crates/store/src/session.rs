//! Logon sessions, kept in the site's database so any node can serve any
//! request (the accounts module, `modules/auth`, makes and checks them).
//!
//! A session is found by the SHA-256 of the random token in its cookie; the
//! token itself is never stored. Expiry is the accounts module's decision
//! (idle time from `last_seen`, an absolute end in `expires`); the store only
//! keeps the times and removes what has ended.

use chrono::{DateTime, Utc};

use crate::db::{Row, params};
use crate::dependency;
use crate::error::{Result, StoreError};
use crate::model::{ResourceId, from_millis, to_millis};
use crate::resource::require_resource;
use crate::store::Store;

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

const COLUMNS: &str = "id_hash, person_id, csrf_token, created, last_seen, expires, persistent, \
                       user_agent, address";

/// What a browser's `User-Agent` may take up in a session row.
const MAX_USER_AGENT_LEN: usize = 256;

fn session_from_row(r: &Row) -> Session {
    Session {
        id_hash: r.text(0),
        person: ResourceId(r.int(1)),
        csrf_token: r.text(2),
        created: from_millis(r.int(3)),
        last_seen: from_millis(r.int(4)),
        expires: from_millis(r.int(5)),
        persistent: r.int(6) != 0,
        user_agent: r.opt_text(7),
        address: r.opt_text(8),
    }
}

fn check_hash(id_hash: &str) -> Result<()> {
    if id_hash.len() == 64 && id_hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(StoreError::invalid(
            "session",
            "a session is stored by the SHA-256 of its token (64 hex digits)",
        ))
    }
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

impl Store {
    /// Stores a new session (the person must exist).
    pub fn create_session(&self, session: &Session) -> Result<()> {
        check_hash(&session.id_hash)?;
        let s = session.clone();
        self.write(|c, _| {
            require_resource(c, s.person, "person")?;
            c.execute(
                &format!(
                    "INSERT INTO auth_session ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
                ),
                &params![
                    s.id_hash.as_str(),
                    s.person.0,
                    s.csrf_token.as_str(),
                    to_millis(s.created),
                    to_millis(s.last_seen),
                    to_millis(s.expires),
                    i64::from(s.persistent),
                    truncate(s.user_agent.as_deref(), MAX_USER_AGENT_LEN),
                    truncate(s.address.as_deref(), 64)
                ],
            )?;
            Ok(())
        })
    }

    /// The session with this token hash, if it exists (ended or not).
    pub fn session(&self, id_hash: &str) -> Result<Option<Session>> {
        if check_hash(id_hash).is_err() {
            return Ok(None);
        }
        self.read(|c| {
            Ok(c.query_one(
                &format!("SELECT {COLUMNS} FROM auth_session WHERE id_hash = $1"),
                &params![id_hash],
            )?
            .map(|r| session_from_row(&r)))
        })
    }

    /// Records activity (the accounts module does this at most once a minute
    /// per session, not on every request).
    pub fn touch_session(&self, id_hash: &str, last_seen: DateTime<Utc>) -> Result<()> {
        let id_hash = id_hash.to_string();
        self.write(|c, _| {
            c.execute(
                "UPDATE auth_session SET last_seen = $1 WHERE id_hash = $2",
                &params![to_millis(last_seen), id_hash.as_str()],
            )?;
            Ok(())
        })
    }

    /// Ends one session; `false` when there was none. Its change event names
    /// [`dependency::session`], so every node's cache of it goes.
    pub fn delete_session(&self, id_hash: &str) -> Result<bool> {
        let id_hash = id_hash.to_string();
        self.write(|c, ch| {
            let ended = c.execute(
                "DELETE FROM auth_session WHERE id_hash = $1",
                &params![id_hash.as_str()],
            )? > 0;
            if ended {
                ch.add(dependency::session(&id_hash));
            }
            Ok(ended)
        })
    }

    /// A person's sessions, newest first.
    pub fn sessions_of(&self, person: ResourceId) -> Result<Vec<Session>> {
        self.read(|c| {
            Ok(c.query(
                &format!(
                    "SELECT {COLUMNS} FROM auth_session WHERE person_id = $1 ORDER BY created DESC, id_hash"
                ),
                &params![person.0],
            )?
            .iter()
            .map(session_from_row)
            .collect())
        })
    }

    /// Ends every session of a person (a password change, an administrator's
    /// decision), except `keep`; returns the hashes ended, so caches of them
    /// can be dropped (the change event names each, for the other nodes).
    pub fn delete_sessions_of(
        &self,
        person: ResourceId,
        keep: Option<&str>,
    ) -> Result<Vec<String>> {
        let keep = keep.unwrap_or("").to_string();
        self.write(|c, ch| {
            let ended: Vec<String> = c
                .query(
                    "SELECT id_hash FROM auth_session WHERE person_id = $1 AND id_hash <> $2",
                    &params![person.0, keep.as_str()],
                )?
                .iter()
                .map(|r| r.text(0))
                .collect();
            c.execute(
                "DELETE FROM auth_session WHERE person_id = $1 AND id_hash <> $2",
                &params![person.0, keep.as_str()],
            )?;
            for id_hash in &ended {
                ch.add(dependency::session(id_hash));
            }
            Ok(ended)
        })
    }

    /// Removes sessions that ended: past their absolute end, or idle since
    /// before `idle_before`. Returns how many.
    pub fn delete_ended_sessions(
        &self,
        now: DateTime<Utc>,
        idle_before: DateTime<Utc>,
        persistent_idle_before: DateTime<Utc>,
    ) -> Result<u64> {
        self.write(|c, _| {
            Ok(c.execute(
                "DELETE FROM auth_session WHERE expires <= $1 \
                 OR (persistent = 0 AND last_seen < $2) OR (persistent <> 0 AND last_seen < $3)",
                &params![
                    to_millis(now),
                    to_millis(idle_before),
                    to_millis(persistent_idle_before)
                ],
            )?)
        })
    }
}
