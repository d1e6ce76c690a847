//! Identities: how a user resource logs in or is reached.
//!
//! A username identity keeps a password *hash* (a PHC string such as
//! `$argon2id$v=19$m=19456,t=2,p=1$...`), made and checked by the accounts
//! module (`modules/auth`, `password.rs`): the store never sees a password, so
//! hashing has one home, runs where the accounts module decides (off the async
//! workers, behind its concurrency gate) and never inside a transaction. The
//! store refuses a secret that is not shaped like a PHC string, so a plain
//! password cannot be stored by mistake.

use chrono::Utc;

use crate::db::require_resource;
use crate::db::{Conn, params};
use crate::dependency;
use crate::error::{DatabaseError, Result, StoreError};
use crate::model::*;
use crate::store::Store;

const MAX_USERNAME_LEN: usize = 80;
const MAX_EMAIL_LEN: usize = 254;
/// Longer than any PHC string argon2 writes (about 100 characters).
const MAX_PASSWORD_HASH_LEN: usize = 512;

/// A PHC string: `$<algorithm>$...` with at least a parameter or salt part and
/// a hash part, in printable ASCII without spaces.
fn check_password_hash(hash: &str) -> Result<()> {
    let shaped = hash.len() <= MAX_PASSWORD_HASH_LEN
        && hash.starts_with('$')
        && hash.split('$').skip(1).all(|part| !part.is_empty())
        && hash.split('$').count() >= 4
        && hash.bytes().all(|b| b.is_ascii_graphic());
    if shaped {
        Ok(())
    } else {
        Err(StoreError::invalid(
            "password hash",
            "not a PHC string ($algorithm$...$hash): the store keeps hashes, never passwords",
        ))
    }
}

fn normalise_key(kind: IdentityKind, key: &str) -> Result<String> {
    let key = key.trim().to_lowercase();
    match kind {
        IdentityKind::Username => {
            if key.is_empty() || key.chars().count() > MAX_USERNAME_LEN {
                return Err(StoreError::invalid(
                    "username",
                    format!("must be 1 to {MAX_USERNAME_LEN} characters"),
                ));
            }
            if key.chars().any(|c| c.is_control() || c.is_whitespace()) {
                return Err(StoreError::invalid(
                    "username",
                    "may not contain spaces or control characters",
                ));
            }
        }
        IdentityKind::Email => {
            if key.len() > MAX_EMAIL_LEN {
                return Err(StoreError::invalid(
                    "email",
                    format!("longer than {MAX_EMAIL_LEN} characters"),
                ));
            }
            let ok = matches!(key.split_once('@'), Some((l, d)) if !l.is_empty() && d.contains('.') && !d.starts_with('.'))
                && !key.chars().any(|c| c.is_control() || c.is_whitespace());
            if !ok {
                return Err(StoreError::invalid("email", "not an e-mail address"));
            }
        }
    }
    Ok(key)
}

fn identity_from_row(r: &crate::db::Row) -> Identity {
    Identity {
        id: r.int(0),
        resource: ResourceId(r.int(1)),
        kind: IdentityKind::parse(&r.text(2)),
        key: r.text(3),
        created: from_millis(r.int(4)),
    }
}

fn upsert_identity(
    c: &mut dyn Conn,
    resource: ResourceId,
    kind: IdentityKind,
    key: &str,
    secret: Option<String>,
) -> Result<Identity> {
    require_resource(c, resource, "identity")?;
    let taken = c.query_one(
        "SELECT rsc_id FROM identity WHERE kind = $1 AND key = $2",
        &params![kind.as_str(), key],
    )?;
    if let Some(r) = taken
        && r.int(0) != resource.0
    {
        return Err(StoreError::Duplicate(format!("{} {key:?}", kind.as_str())));
    }
    if kind == IdentityKind::Username {
        // One username per user: renaming replaces the old one.
        c.execute(
            "DELETE FROM identity WHERE rsc_id = $1 AND kind = $2",
            &params![resource.0, kind.as_str()],
        )?;
    } else {
        c.execute(
            "DELETE FROM identity WHERE rsc_id = $1 AND kind = $2 AND key = $3",
            &params![resource.0, kind.as_str(), key],
        )?;
    }
    let row = c
        .query_one(
            "INSERT INTO identity (rsc_id, kind, key, secret, created) VALUES ($1, $2, $3, $4, $5) \
             RETURNING id, rsc_id, kind, key, created",
            &params![
                resource.0,
                kind.as_str(),
                key,
                secret,
                Utc::now().timestamp_millis()
            ],
        )
        .map_err(|e| crate::db::map_unique(e, || format!("{} {key:?}", kind.as_str())))?
        .ok_or_else(|| StoreError::Database(DatabaseError::unexpected("insert returned no row")))?;
    Ok(identity_from_row(&row))
}

impl Store {
    /// Give a user resource a username and a password hash (replacing an
    /// earlier username and hash). Usernames are case-insensitive.
    pub fn set_username_password_hash(
        &self,
        resource: ResourceId,
        username: &str,
        password_hash: &str,
    ) -> Result<Identity> {
        let key = normalise_key(IdentityKind::Username, username)?;
        check_password_hash(password_hash)?;
        let hash = password_hash.to_owned();
        self.write(|c, ch| {
            let id = upsert_identity(c, resource, IdentityKind::Username, &key, Some(hash))?;
            ch.add(dependency::identity(resource));
            Ok(id)
        })
    }

    /// The user resource with this username and its password hash, for the
    /// accounts module to verify a password against.
    pub fn password_hash(&self, username: &str) -> Result<Option<(ResourceId, String)>> {
        let Ok(key) = normalise_key(IdentityKind::Username, username) else {
            return Ok(None);
        };
        self.read(|c| {
            Ok(c.query_one(
                "SELECT rsc_id, secret FROM identity WHERE kind = $1 AND key = $2",
                &params![IdentityKind::Username.as_str(), key],
            )?
            .and_then(|r| Some((ResourceId(r.int(0)), r.opt_text(1)?))))
        })
    }

    /// Add an e-mail address (or another non-secret identity) to a resource.
    pub fn add_identity(
        &self,
        resource: ResourceId,
        kind: IdentityKind,
        key: &str,
    ) -> Result<Identity> {
        if kind.has_secret() {
            return Err(StoreError::invalid(
                "kind",
                "identities with a secret are set with their own methods \
                 (set_username_password_hash, the second factor's)",
            ));
        }
        let key = normalise_key(kind, key)?;
        self.write(|c, ch| {
            let id = upsert_identity(c, resource, kind, &key, None)?;
            ch.add(dependency::identity(resource));
            Ok(id)
        })
    }

    /// Look an identity up by kind and key (case-insensitive).
    pub fn find_identity(&self, kind: IdentityKind, key: &str) -> Result<Option<Identity>> {
        let Ok(key) = normalise_key(kind, key) else {
            return Ok(None);
        };
        self.read(|c| {
            Ok(c.query_one(
                "SELECT id, rsc_id, kind, key, created FROM identity WHERE kind = $1 AND key = $2",
                &params![kind.as_str(), key],
            )?
            .map(|r| identity_from_row(&r)))
        })
    }

    /// Every identity of one kind (every username, every e-mail address),
    /// by key.
    pub fn identities_of_kind(&self, kind: IdentityKind) -> Result<Vec<Identity>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT id, rsc_id, kind, key, created FROM identity WHERE kind = $1 ORDER BY key",
                &params![kind.as_str()],
            )?
            .iter()
            .map(identity_from_row)
            .collect())
        })
    }

    /// All identities of a resource.
    pub fn identities(&self, resource: ResourceId) -> Result<Vec<Identity>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT id, rsc_id, kind, key, created FROM identity WHERE rsc_id = $1 ORDER BY id",
                &params![resource.0],
            )?
            .iter()
            .map(identity_from_row)
            .collect())
        })
    }

    pub fn delete_identity(&self, identity_id: i64) -> Result<()> {
        self.write(|c, ch| {
            let r = c
                .query_one(
                    "SELECT rsc_id FROM identity WHERE id = $1",
                    &params![identity_id],
                )?
                .ok_or(StoreError::IdentityNotFound)?;
            c.execute("DELETE FROM identity WHERE id = $1", &params![identity_id])?;
            ch.add(dependency::identity(ResourceId(r.int(0))));
            Ok(())
        })
    }
}
