//! Identities: how a user resource logs in or is reached.
//!
//! Passwords are stored only as argon2id PHC strings. Hashing and verifying
//! are CPU-heavy on purpose; they run on the calling thread, which is a
//! blocking thread by this crate's contract (async callers use `Store::run`),
//! and never inside a database transaction.

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version as ArgonVersion};
use chrono::Utc;

use crate::db::{Conn, params};
use crate::dependency;
use crate::error::{DatabaseError, Result, StoreError};
use crate::model::*;
use crate::resource::require_resource;
use crate::store::Store;

const MAX_USERNAME_LEN: usize = 80;
const MAX_EMAIL_LEN: usize = 254;
const MAX_PASSWORD_LEN: usize = 1024;

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
        .map_err(|e| crate::resource::map_unique(e, || format!("{} {key:?}", kind.as_str())))?
        .ok_or_else(|| StoreError::Database(DatabaseError::unexpected("insert returned no row")))?;
    Ok(identity_from_row(&row))
}

impl Store {
    fn argon2(&self) -> Result<Argon2<'static>> {
        let p = self.config().passwords;
        let params = Params::new(p.memory_kib, p.iterations, p.parallelism, None)
            .map_err(|e| StoreError::invalid("passwords", e.to_string()))?;
        Ok(Argon2::new(
            Algorithm::Argon2id,
            ArgonVersion::V0x13,
            params,
        ))
    }

    /// Give a user resource a username and password (replacing an earlier
    /// username). Usernames are case-insensitive.
    pub fn set_username_password(
        &self,
        resource: ResourceId,
        username: &str,
        password: &str,
    ) -> Result<Identity> {
        let key = normalise_key(IdentityKind::Username, username)?;
        if password.is_empty() || password.len() > MAX_PASSWORD_LEN {
            return Err(StoreError::invalid(
                "password",
                format!("must be 1 to {MAX_PASSWORD_LEN} bytes"),
            ));
        }
        let hash = self
            .argon2()?
            .hash_password(password.as_bytes())
            .map_err(|e| StoreError::Database(DatabaseError::new("hashing the password", e)))?
            .to_string();
        self.write(|c, ch| {
            let id = upsert_identity(c, resource, IdentityKind::Username, &key, Some(hash))?;
            ch.add(dependency::identity(resource));
            Ok(id)
        })
    }

    /// The user resource for a username and password, or `None` when either is
    /// wrong. Unknown usernames cost as much time as wrong passwords.
    pub fn check_password(&self, username: &str, password: &str) -> Result<Option<ResourceId>> {
        let Ok(key) = normalise_key(IdentityKind::Username, username) else {
            return Ok(None);
        };
        let found = self.read(|c| {
            Ok(c.query_one(
                "SELECT rsc_id, secret FROM identity WHERE kind = $1 AND key = $2",
                &params![IdentityKind::Username.as_str(), key],
            )?
            .map(|r| (ResourceId(r.int(0)), r.opt_text(1).unwrap_or_default())))
        })?;
        let argon = self.argon2()?;
        match found {
            Some((id, hash)) => {
                let ok = argon
                    .verify_password(password.as_bytes(), hash.as_str())
                    .is_ok();
                Ok(ok.then_some(id))
            }
            None => {
                // Spend the same effort so timing does not reveal usernames.
                let _ = argon.hash_password(password.as_bytes());
                Ok(None)
            }
        }
    }

    /// Add an e-mail address (or another non-secret identity) to a resource.
    pub fn add_identity(
        &self,
        resource: ResourceId,
        kind: IdentityKind,
        key: &str,
    ) -> Result<Identity> {
        if kind == IdentityKind::Username {
            return Err(StoreError::invalid(
                "kind",
                "usernames are set with set_username_password",
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
