//! The `form_submission` table: what visitors sent, by form.
//!
//! The functions here call the store and must run where blocking is allowed
//! (`Store::run`).

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use serde::Serialize;
use serde_json::Value;

use bulwark_store::{ResourceId, SqlRow, Store, StoreError};

/// A stored submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Submission {
    pub id: i64,
    pub form: i64,
    /// By field name.
    pub answers: BTreeMap<String, Value>,
    pub user: Option<i64>,
    pub address: Option<String>,
    pub created: DateTime<Utc>,
}

const COLUMNS: &str = "id, form_id, answers, user_id, address, created";

fn from_row(row: &SqlRow) -> Submission {
    Submission {
        id: row.int(0),
        form: row.int(1),
        answers: serde_json::from_str(&row.text(2)).unwrap_or_default(),
        user: row.opt_int(3),
        address: row.opt_text(4),
        created: Utc
            .timestamp_millis_opt(row.int(5))
            .single()
            .unwrap_or_default(),
    }
}

/// Stores the answers to `form`; gives the submission back.
pub fn insert(
    store: &Store,
    form: ResourceId,
    answers: &BTreeMap<String, Value>,
    user: Option<ResourceId>,
    address: Option<String>,
) -> Result<Submission, StoreError> {
    let text = serde_json::to_string(answers)
        .map_err(|e| StoreError::invalid("answers", e.to_string()))?;
    store.module_write(|sql| {
        let row = sql
            .query_one(
                &format!(
                    "INSERT INTO form_submission (form_id, answers, user_id, address, created) \
                     VALUES ($1, $2, $3, $4, $5) RETURNING {COLUMNS}"
                ),
                &[
                    form.0.into(),
                    text.as_str().into(),
                    user.map(|u| u.0).into(),
                    address.clone().into(),
                    Utc::now().timestamp_millis().into(),
                ],
            )?
            .expect("INSERT .. RETURNING gives a row");
        let made = from_row(&row);
        sql.announce(
            "form.submitted",
            serde_json::json!({
                "id": made.id, "form": made.form, "rsc": made.form, "answers": made.answers,
                "user": made.user, "created": made.created.to_rfc3339(),
            }),
        );
        Ok(made)
    })
}

/// `form`'s submissions, newest first: `limit` of them older than `before`.
pub fn list(
    store: &Store,
    form: ResourceId,
    before: Option<i64>,
    limit: usize,
) -> Result<Vec<Submission>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM form_submission WHERE form_id = $1 AND id < $2 \
                     ORDER BY id DESC LIMIT $3"
                ),
                &[
                    form.0.into(),
                    before.unwrap_or(i64::MAX).into(),
                    (limit.clamp(1, 100_000) as i64).into(),
                ],
            )?
            .iter()
            .map(from_row)
            .collect())
    })
}

/// How many submissions `form` has.
pub fn count(store: &Store, form: ResourceId) -> Result<i64, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query_one(
                "SELECT COUNT(*) FROM form_submission WHERE form_id = $1",
                &[form.0.into()],
            )?
            .map_or(0, |r| r.int(0)))
    })
}

/// Removes submission `id` of `form`; whether there was one.
pub fn remove(store: &Store, form: ResourceId, id: i64) -> Result<bool, StoreError> {
    store.module_write(|sql| {
        Ok(sql.execute(
            "DELETE FROM form_submission WHERE id = $1 AND form_id = $2",
            &[id.into(), form.0.into()],
        )? > 0)
    })
}
