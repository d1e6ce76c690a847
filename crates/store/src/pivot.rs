//! The pivot: indexed columns extracted from the JSON document.
//!
//! Why a queue: extracting words and dates from every property on every
//! write would make writes slow and lock the index for each one. A write only
//! puts its id in `pivot_queue` (in its own transaction, so no change is ever
//! missed); the pivot task indexes queued ids in batches, one transaction per
//! batch, like Zotonic's pivot server. On PostgreSQL, `SKIP LOCKED` lets the
//! pivot tasks of several nodes share the queue.
//!
//! Words are normalised here (lowercased, split on anything that is not a
//! letter or digit) and handed to both FTS5 and `to_tsvector('simple', ..)`,
//! so both backends index and match exactly the same tokens.

use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;

use crate::db::{Conn, Dialect, params};
use crate::dependency;
use crate::error::Result;
use crate::model::*;
use crate::resource::{category_lineage, load};
use crate::sanitize::html_to_plain;
use crate::store::Store;

/// Indexed words per resource are capped: enough for search, bounded cost.
const MAX_WORDS_BYTES: usize = 64 * 1024;

/// Lowercased words joined by single spaces.
pub(crate) fn normalise_words(text: &str) -> String {
    let mut out = String::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// A resource's text for the index: all of it, what is the same in every
/// language, and each language's translations.
#[derive(Default)]
struct Texts {
    all: String,
    common: String,
    by_language: std::collections::BTreeMap<String, String>,
}

impl Texts {
    fn add(&mut self, v: &Value) {
        if let Some(map) = crate::translation::translations(v) {
            for (lang, text) in map {
                let Some(text) = text.as_str() else { continue };
                let plain = html_to_plain(text);
                let own = self.by_language.entry(lang.clone()).or_default();
                own.push_str(&plain);
                own.push(' ');
                self.all.push_str(&plain);
                self.all.push(' ');
            }
            return;
        }
        match v {
            Value::String(s) => {
                let plain = html_to_plain(s);
                self.all.push_str(&plain);
                self.all.push(' ');
                self.common.push_str(&plain);
                self.common.push(' ');
            }
            Value::Array(items) => items.iter().for_each(|i| self.add(i)),
            Value::Object(m) => m.values().for_each(|i| self.add(i)),
            _ => {}
        }
    }

    /// The words of each language it is translated into: its own text and
    /// what every language shares, stemmed the language's way.
    fn language_words(&self) -> Vec<(&str, String)> {
        self.by_language
            .iter()
            .map(|(lang, own)| {
                let words = normalise_words(&format!("{own} {}", self.common));
                (
                    lang.as_str(),
                    capped(crate::translation::stem_words(&words, lang)),
                )
            })
            .collect()
    }
}

/// At most [`MAX_WORDS_BYTES`] of words.
fn capped(mut words: String) -> String {
    if words.len() > MAX_WORDS_BYTES {
        let mut cut = MAX_WORDS_BYTES;
        while !words.is_char_boundary(cut) {
            cut -= 1;
        }
        words.truncate(cut);
    }
    words
}

/// `2024-05-01T10:00:00Z` or `2024-05-01`.
fn parse_date(v: Option<&Value>) -> Option<i64> {
    let s = v?.as_str()?.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc).timestamp_millis());
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
}

fn pivot_one(c: &mut dyn Conn, id: ResourceId, now: i64) -> Result<Option<ResourceId>> {
    let Some(r) = load(c, id)? else {
        return Ok(None);
    };
    let title = r.props.str("title").map(html_to_plain).unwrap_or_default();
    let title_sort = title.to_lowercase();
    // The title first, in every language it has.
    let mut texts = Texts::default();
    if let Some(v) = r.props.get("title") {
        texts.add(v);
    }
    for (k, v) in &r.props.0 {
        if k != "title" {
            texts.add(v);
        }
    }
    if let Some(n) = &r.name {
        texts.add(&Value::from(n.as_str()));
    }
    let words = capped(normalise_words(&texts.all));
    let by_language = texts.language_words();
    let date_start = parse_date(r.props.get("date_start"));
    let date_end = parse_date(r.props.get("date_end"));
    let language = r.props.str("language").map(str::to_owned);
    match c.dialect() {
        Dialect::Sqlite => {
            c.execute(
                "INSERT INTO rsc_pivot (rsc_id, title, title_sort, date_start, date_end, language, indexed) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (rsc_id) DO UPDATE SET \
                 title = excluded.title, title_sort = excluded.title_sort, date_start = excluded.date_start, \
                 date_end = excluded.date_end, language = excluded.language, indexed = excluded.indexed",
                &params![id.0, title, title_sort, date_start, date_end, language, now],
            )?;
            c.execute("DELETE FROM rsc_fts WHERE rowid = $1", &params![id.0])?;
            c.execute(
                "INSERT INTO rsc_fts (rowid, words) VALUES ($1, $2)",
                &params![id.0, words],
            )?;
        }
        Dialect::Postgres => {
            c.execute(
                "INSERT INTO rsc_pivot (rsc_id, title, title_sort, date_start, date_end, language, indexed, words) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, to_tsvector('simple', $8)) ON CONFLICT (rsc_id) DO UPDATE SET \
                 title = excluded.title, title_sort = excluded.title_sort, date_start = excluded.date_start, \
                 date_end = excluded.date_end, language = excluded.language, indexed = excluded.indexed, \
                 words = excluded.words",
                &params![id.0, title, title_sort, date_start, date_end, language, now, words],
            )?;
        }
    }
    index_languages(c, id, &by_language)?;
    Ok(Some(r.category))
}

/// Each language's words of resource `id`, in place of what it had.
fn index_languages(c: &mut dyn Conn, id: ResourceId, by_language: &[(&str, String)]) -> Result<()> {
    match c.dialect() {
        Dialect::Sqlite => {
            forget_languages_sqlite(c, id)?;
            for (lang, words) in by_language {
                let row = c
                    .query_one(
                        "INSERT INTO rsc_translation (rsc_id, language) VALUES ($1, $2) RETURNING id",
                        &params![id.0, *lang],
                    )?
                    .expect("RETURNING gives a row")
                    .int(0);
                c.execute(
                    "INSERT INTO rsc_fts_lang (rowid, words) VALUES ($1, $2)",
                    &params![row, words.as_str()],
                )?;
            }
        }
        Dialect::Postgres => {
            c.execute(
                "DELETE FROM rsc_translation WHERE rsc_id = $1",
                &params![id.0],
            )?;
            for (lang, words) in by_language {
                c.execute(
                    "INSERT INTO rsc_translation (rsc_id, language, words) \
                     VALUES ($1, $2, to_tsvector('simple', $3))",
                    &params![id.0, *lang, words.as_str()],
                )?;
            }
        }
    }
    Ok(())
}

/// Drops what SQLite's index holds of resource `id`'s languages (FTS5 tables
/// have no foreign keys to cascade).
pub(crate) fn forget_languages_sqlite(c: &mut dyn Conn, id: ResourceId) -> Result<()> {
    c.execute(
        "DELETE FROM rsc_fts_lang WHERE rowid IN (SELECT id FROM rsc_translation WHERE rsc_id = $1)",
        &params![id.0],
    )?;
    c.execute(
        "DELETE FROM rsc_translation WHERE rsc_id = $1",
        &params![id.0],
    )?;
    Ok(())
}

impl Store {
    /// Index up to `limit` queued resources in one transaction. Returns how
    /// many were taken from the queue (0 when it was empty).
    pub fn pivot_batch(&self, limit: usize) -> Result<usize> {
        self.write(|c, ch| {
            let lock = match c.dialect() {
                Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
                Dialect::Sqlite => "",
            };
            let ids: Vec<ResourceId> = c
                .query(
                    &format!(
                        "SELECT rsc_id FROM pivot_queue ORDER BY queued, rsc_id LIMIT $1{lock}"
                    ),
                    &params![limit as i64],
                )?
                .iter()
                .map(|r| ResourceId(r.int(0)))
                .collect();
            let now = Utc::now().timestamp_millis();
            let mut categories = std::collections::BTreeSet::new();
            for &id in &ids {
                if let Some(category) = pivot_one(c, id, now)? {
                    categories.insert(category);
                }
                c.execute("DELETE FROM pivot_queue WHERE rsc_id = $1", &params![id.0])?;
            }
            // A search over `text` depends on `cat:text`: announce the
            // whole lineage of every category that was indexed.
            for category in categories {
                for name in category_lineage(c, category)? {
                    ch.add(dependency::category(&name));
                }
            }
            if !ids.is_empty() {
                ch.add(dependency::search());
            }
            Ok(ids.len())
        })
    }

    /// Resources waiting to be indexed.
    pub fn pivot_pending(&self) -> Result<u64> {
        self.read(|c| {
            Ok(c.query_one("SELECT count(*) FROM pivot_queue", &[])?
                .map(|r| r.int(0) as u64)
                .unwrap_or(0))
        })
    }

    /// Index until the queue is empty; returns how many were indexed. For
    /// tests, imports and `bulwark` commands; a running site uses
    /// [`Store::spawn_pivot_task`].
    pub fn pivot_all(&self, batch: usize) -> Result<usize> {
        let mut total = 0;
        loop {
            let n = self.pivot_batch(batch)?;
            if n == 0 {
                return Ok(total);
            }
            total += n;
        }
    }

    /// The background pivot task: indexes batches of `batch` ids, sleeps until
    /// a write queues more (or `poll` passes, for writes of other nodes).
    /// Ends when the store closes; abort the handle to stop it sooner.
    pub fn spawn_pivot_task(&self, batch: usize, poll: Duration) -> tokio::task::JoinHandle<()> {
        let store = self.clone();
        self.spawn_while_open(async move {
            loop {
                let s = store.clone();
                match s.run(move |s| s.pivot_batch(batch)).await {
                    Ok(n) if n > 0 => continue,
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "pivot batch failed"),
                }
                let _ = tokio::time::timeout(poll, store.inner.pivot_wakeup.notified()).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercased_and_split_on_punctuation() {
        assert_eq!(
            normalise_words("Hello, World! e-mail ÉTÉ 42x"),
            "hello world e mail été 42x"
        );
    }

    #[test]
    fn dates_parse_in_both_forms() {
        assert_eq!(
            parse_date(Some(&Value::from("1970-01-02"))),
            Some(86_400_000)
        );
        assert_eq!(
            parse_date(Some(&Value::from("1970-01-01T00:00:01Z"))),
            Some(1000)
        );
        assert_eq!(parse_date(Some(&Value::from("nonsense"))), None);
    }
}
