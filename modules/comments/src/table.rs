//! The `comment` table: comments as they are stored, read and moderated.
//!
//! A write that changes which comments of a resource are approved flushes the
//! resource's [`comments_key`]: the pages that show them (read through
//! `m.comments`) are rendered again, on every node; nothing else is.
//!
//! The functions here call the store and must run where blocking is allowed
//! (`Store::run`).

use chrono::{DateTime, TimeZone, Utc};
use serde::Serialize;

use bulwark_store::{DependencyKey, ModuleSql, ResourceId, SqlParam, SqlRow, Store, StoreError};

/// Where a comment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Waiting for a moderator.
    Pending,
    /// Shown under its resource.
    Approved,
    /// Held as spam (kept for a moderator to rescue).
    Spam,
    /// Removed by a moderator (kept, not shown).
    Deleted,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::Pending,
        Status::Approved,
        Status::Spam,
        Status::Deleted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Spam => "spam",
            Status::Deleted => "deleted",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// A comment's row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct CommentId(pub i64);

/// A stored comment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comment {
    pub id: CommentId,
    pub rsc: ResourceId,
    pub parent: Option<CommentId>,
    /// The person of the user who wrote it, when a logged-on user did.
    pub user: Option<ResourceId>,
    pub name: String,
    pub email: String,
    pub url: Option<String>,
    pub body: String,
    pub status: Status,
    pub address: Option<String>,
    pub source: Option<String>,
    pub created: DateTime<Utc>,
    pub changed: DateTime<Utc>,
}

/// A comment to store.
#[derive(Debug, Clone)]
pub struct NewComment {
    pub rsc: ResourceId,
    pub parent: Option<CommentId>,
    pub user: Option<ResourceId>,
    pub name: String,
    pub email: String,
    pub url: Option<String>,
    pub body: String,
    pub status: Status,
    pub address: Option<String>,
    /// Where an import found it; a second import of the same source updates
    /// nothing and adds nothing.
    pub source: Option<String>,
    /// Now, unless an import says when it was written.
    pub created: Option<DateTime<Utc>>,
}

/// Why a comment was not stored.
#[derive(Debug, thiserror::Error)]
pub enum CommentError {
    #[error("the comment it answers is not a comment on the same page")]
    ParentElsewhere,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The key a change of resource `rsc`'s approved comments flushes.
pub fn comments_key(rsc: ResourceId) -> DependencyKey {
    DependencyKey::new(format!("{KEY_PREFIX}{}", rsc.0))
}

/// The resource whose comments a flushed key names, if it is such a key:
/// the other half of [`comments_key`], for the nodes that hear of the flush.
pub fn resource_of_key(key: &DependencyKey) -> Option<ResourceId> {
    key.as_str()
        .strip_prefix(KEY_PREFIX)?
        .parse()
        .ok()
        .map(ResourceId)
}

const KEY_PREFIX: &str = "comments:";

/// The key a change of any resource's approved comments flushes: the site's
/// newest comments (its comment feed) depend on it.
pub fn latest_key() -> DependencyKey {
    DependencyKey::new("comments:latest")
}

/// What a change of `rsc`'s approved comments flushes: its comments, and the
/// site's newest.
fn flush_approved(sql: &mut ModuleSql<'_>, rsc: ResourceId) {
    sql.flush(comments_key(rsc));
    sql.flush(latest_key());
}

const COLUMNS: &str = "id, rsc_id, parent_id, user_id, name, email, url, body, status, \
                       address, source, created, changed";

fn time(millis: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(millis)
        .single()
        .unwrap_or_default()
}

fn from_row(row: &SqlRow) -> Comment {
    Comment {
        id: CommentId(row.int(0)),
        rsc: ResourceId(row.int(1)),
        parent: row.opt_int(2).map(CommentId),
        user: row.opt_int(3).map(ResourceId),
        name: row.text(4),
        email: row.text(5),
        url: row.opt_text(6),
        body: row.text(7),
        status: Status::parse(&row.text(8)).unwrap_or(Status::Pending),
        address: row.opt_text(9),
        source: row.opt_text(10),
        created: time(row.int(11)),
        changed: time(row.int(12)),
    }
}

fn now_millis() -> i64 {
    Utc::now().timestamp_millis()
}

/// Stores `new` and gives it back as stored. One from a `source` stored
/// before is given back as it is.
pub fn insert(store: &Store, new: &NewComment) -> Result<Comment, CommentError> {
    store.module_write(|sql| match insert_in(sql, new) {
        // A failed write is rolled back.
        Err(CommentError::Store(e)) => Err(e),
        stored => Ok(stored),
    })?
}

/// [`insert`] in a transaction of the caller's (an import's batch).
pub fn insert_in(sql: &mut ModuleSql<'_>, new: &NewComment) -> Result<Comment, CommentError> {
    {
        if let Some(source) = &new.source {
            let found = sql.query_one(
                &format!("SELECT {COLUMNS} FROM comment WHERE source = $1"),
                &[source.as_str().into()],
            )?;
            if let Some(row) = found {
                return Ok(from_row(&row));
            }
        }
        sql.require_resource(new.rsc, "the page to comment on")?;
        if let Some(parent) = new.parent {
            let same = sql.query_one(
                "SELECT 1 FROM comment WHERE id = $1 AND rsc_id = $2",
                &[parent.0.into(), new.rsc.0.into()],
            )?;
            if same.is_none() {
                return Err(CommentError::ParentElsewhere);
            }
        }
        let now = now_millis();
        let created = new.created.map_or(now, |c| c.timestamp_millis());
        let row = sql
            .query_one(
                &format!(
                    "INSERT INTO comment (rsc_id, parent_id, user_id, name, email, url, body, \
                     status, address, source, created, changed) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING {COLUMNS}"
                ),
                &[
                    new.rsc.0.into(),
                    new.parent.map(|p| p.0).into(),
                    new.user.map(|u| u.0).into(),
                    new.name.as_str().into(),
                    new.email.as_str().into(),
                    new.url.clone().into(),
                    new.body.as_str().into(),
                    new.status.as_str().into(),
                    new.address.clone().into(),
                    new.source.clone().into(),
                    created.into(),
                    now.into(),
                ],
            )?
            .expect("INSERT .. RETURNING gives a row");
        if new.status == Status::Approved {
            flush_approved(sql, new.rsc);
        }
        let made = from_row(&row);
        // Spam is nobody's news (the webhooks module tells the others).
        if made.status != Status::Spam {
            sql.announce(
                "comment.posted",
                serde_json::json!({
                    "id": made.id, "rsc": made.rsc.0, "parent": made.parent, "name": made.name,
                    "body": made.body, "status": made.status, "user": made.user.map(|u| u.0),
                    "created": made.created.to_rfc3339(),
                }),
            );
        }
        Ok(made)
    }
}

/// Resource `rsc`'s approved comments, oldest first.
pub fn approved_of(store: &Store, rsc: ResourceId) -> Result<Vec<Comment>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM comment WHERE rsc_id = $1 AND status = 'approved' \
                     ORDER BY id"
                ),
                &[rsc.0.into()],
            )?
            .iter()
            .map(from_row)
            .collect())
    })
}

/// The site's `limit` newest approved comments, newest first.
pub fn latest_approved(store: &Store, limit: usize) -> Result<Vec<Comment>, StoreError> {
    list(
        store,
        &Filter {
            status: Some(Status::Approved),
            limit,
            ..Filter::default()
        },
    )
}

/// Whether a comment from `email` (or by user `user`) was ever approved.
pub fn has_approved(
    store: &Store,
    email: &str,
    user: Option<ResourceId>,
) -> Result<bool, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query_one(
                "SELECT 1 FROM comment WHERE status = 'approved' \
                 AND (lower(email) = lower($1) OR user_id = $2) LIMIT 1",
                &[email.into(), user.map(|u| u.0).into()],
            )?
            .is_some())
    })
}

/// Which comments a moderator lists.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<Status>,
    pub rsc: Option<ResourceId>,
    /// Only comments older than this one (the next page).
    pub before: Option<CommentId>,
    pub limit: usize,
}

/// The comments `filter` asks for, newest first.
pub fn list(store: &Store, filter: &Filter) -> Result<Vec<Comment>, StoreError> {
    let mut conditions = vec!["1 = 1".to_owned()];
    let mut params: Vec<SqlParam> = Vec::new();
    if let Some(status) = filter.status {
        params.push(status.as_str().into());
        conditions.push(format!("status = ${}", params.len()));
    }
    if let Some(rsc) = filter.rsc {
        params.push(rsc.0.into());
        conditions.push(format!("rsc_id = ${}", params.len()));
    }
    if let Some(before) = filter.before {
        params.push(before.0.into());
        conditions.push(format!("id < ${}", params.len()));
    }
    params.push((filter.limit.clamp(1, 500) as i64).into());
    let sql_text = format!(
        "SELECT {COLUMNS} FROM comment WHERE {} ORDER BY id DESC LIMIT ${}",
        conditions.join(" AND "),
        params.len()
    );
    store.module_read(|sql| {
        Ok(sql
            .query(&sql_text, &params)?
            .iter()
            .map(from_row)
            .collect())
    })
}

/// How many comments each status has.
pub fn counts(store: &Store) -> Result<Vec<(Status, i64)>, StoreError> {
    store.module_read(|sql| {
        let rows = sql.query("SELECT status, COUNT(*) FROM comment GROUP BY status", &[])?;
        Ok(Status::ALL
            .into_iter()
            .map(|status| {
                let n = rows
                    .iter()
                    .find(|r| r.text(0) == status.as_str())
                    .map_or(0, |r| r.int(1));
                (status, n)
            })
            .collect())
    })
}

/// One comment.
pub fn get(store: &Store, id: CommentId) -> Result<Option<Comment>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query_one(
                &format!("SELECT {COLUMNS} FROM comment WHERE id = $1"),
                &[id.0.into()],
            )?
            .as_ref()
            .map(from_row))
    })
}

/// A comment moved from one status to another.
#[derive(Debug, Clone)]
pub struct Moved {
    pub comment: Comment,
    pub was: Status,
}

/// Gives comments `ids` status `status`, in one transaction; the ones that
/// moved, as they are now (ids that exist no more are left out).
pub fn set_status(
    store: &Store,
    ids: &[CommentId],
    status: Status,
) -> Result<Vec<Moved>, StoreError> {
    store.module_write(|sql| {
        let now = now_millis();
        let mut moved = Vec::new();
        for id in ids {
            let Some(row) = sql.query_one(
                &format!("SELECT {COLUMNS} FROM comment WHERE id = $1"),
                &[id.0.into()],
            )?
            else {
                continue;
            };
            let mut comment = from_row(&row);
            if comment.status == status {
                continue;
            }
            sql.execute(
                "UPDATE comment SET status = $1, changed = $2 WHERE id = $3",
                &[status.as_str().into(), now.into(), id.0.into()],
            )?;
            let was = comment.status;
            if was == Status::Approved || status == Status::Approved {
                flush_approved(sql, comment.rsc);
            }
            comment.status = status;
            comment.changed = time(now);
            moved.push(Moved { comment, was });
        }
        Ok(moved)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comments_key_names_its_resource_and_nothing_else_does() {
        let key = comments_key(ResourceId(42));
        assert_eq!(resource_of_key(&key), Some(ResourceId(42)));
        assert_eq!(resource_of_key(&DependencyKey::new("rsc:42")), None);
        assert_eq!(resource_of_key(&DependencyKey::new("comments:x")), None);
        assert_eq!(resource_of_key(&latest_key()), None);
    }

    #[test]
    fn statuses_read_back_as_written() {
        for status in Status::ALL {
            assert_eq!(Status::parse(status.as_str()), Some(status));
        }
        assert_eq!(Status::parse("approve"), None);
    }
}
