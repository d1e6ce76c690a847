//! The search query: one SQL statement built from a [`SearchQuery`], with
//! every value bound as a parameter. Ordering always ends in the id and puts
//! NULLs last explicitly, so both backends return the same ids in the same
//! order for the same data.

use chrono::Utc;

use crate::db::{Dialect, Param, params};
use crate::error::{Result, StoreError};
use crate::model::*;
use crate::pivot::normalise_words;
use crate::store::Store;

const MAX_LIMIT: u64 = 1000;
const MAX_TEXT_TERMS: usize = 16;
const MAX_GROUPS: usize = 100;

struct Sql {
    conditions: Vec<String>,
    params: Vec<Param>,
}

impl Sql {
    /// Add a parameter and return its placeholder.
    fn bind(&mut self, p: impl Into<Param>) -> String {
        self.params.push(p.into());
        format!("${}", self.params.len())
    }
}

impl Store {
    /// Run a search. Unknown categories or predicates are errors, not empty
    /// results, so a typo in a template shows up.
    pub fn search(&self, q: &SearchQuery) -> Result<SearchPage> {
        let limit = q.limit.min(MAX_LIMIT);
        if let VisibilityFilter::Visible {
            groups, editable, ..
        } = &q.visibility
            && (groups.len() > MAX_GROUPS || editable.len() > MAX_GROUPS)
        {
            return Err(StoreError::invalid(
                "visibility",
                format!("at most {MAX_GROUPS} content groups"),
            ));
        }
        self.read(|c| {
            let dialect = c.dialect();
            let mut sql = Sql {
                conditions: Vec::new(),
                params: Vec::new(),
            };
            for (names, include) in [(&q.categories, true), (&q.exclude_categories, false)] {
                if names.is_empty() {
                    continue;
                }
                let mut ranges = Vec::new();
                for name in names {
                    let (left, right) = category_range(c, name)?;
                    let (l, r) = (sql.bind(left), sql.bind(right));
                    ranges.push(format!("k.nr_left BETWEEN {l} AND {r}"));
                }
                sql.conditions.push(format!(
                    "r.category_id {}IN (SELECT k.id FROM category k WHERE {})",
                    if include { "" } else { "NOT " },
                    ranges.join(" OR ")
                ));
            }
            if let Some(text) = &q.text {
                let words = normalise_words(text);
                let terms: Vec<&str> = words.split(' ').filter(|w| !w.is_empty()).take(MAX_TEXT_TERMS).collect();
                if !terms.is_empty() {
                    let everything = text_condition(&mut sql, dialect, &terms);
                    // In a language: the resource's words in it, stemmed its
                    // way; a resource not translated into it by all its words.
                    let condition = match &q.language {
                        Some(lang) => {
                            let stemmed = crate::translation::stem_words(&terms.join(" "), lang);
                            let stems: Vec<&str> = stemmed.split(' ').collect();
                            let own = language_condition(&mut sql, dialect, lang, &stems);
                            let l = sql.bind(lang.clone());
                            format!(
                                "({own} OR ({everything} AND r.id NOT IN \
                                 (SELECT t.rsc_id FROM rsc_translation t WHERE t.language = {l})))"
                            )
                        }
                        None => everything,
                    };
                    sql.conditions.push(condition);
                }
            }
            let date_col = date_column(q.date_field);
            if let Some(from) = q.date_from {
                let p = sql.bind(to_millis(from));
                sql.conditions.push(format!("{date_col} >= {p}"));
            }
            if let Some(to) = q.date_to {
                let p = sql.bind(to_millis(to));
                sql.conditions.push(format!("{date_col} <= {p}"));
            }
            if let Some((predicate, object)) = &q.has_object {
                if crate::names::check_name("predicate", predicate).is_err() {
                    return Err(StoreError::UnknownPredicate(predicate.clone()));
                }
                let pred = c
                    .query_one(
                        "SELECT r.id FROM rsc r JOIN rsc k ON k.id = r.category_id WHERE r.name = $1 AND k.name = 'predicate'",
                        &params![predicate.as_str()],
                    )?
                    .ok_or_else(|| StoreError::UnknownPredicate(predicate.clone()))?;
                let (pp, op) = (sql.bind(pred.int(0)), sql.bind(object.0));
                sql.conditions.push(format!(
                    "EXISTS (SELECT 1 FROM edge e WHERE e.subject_id = r.id AND e.predicate_id = {pp} AND e.object_id = {op})"
                ));
            }
            if q.published_only {
                let published = published_now(&mut sql);
                sql.conditions.push(published);
            }
            if q.unpublished_only {
                let published = published_now(&mut sql);
                sql.conditions.push(format!("NOT ({published})"));
            }
            if q.scheduled_only {
                let (t, now) = (sql.bind(true), sql.bind(Utc::now().timestamp_millis()));
                sql.conditions.push(format!(
                    "r.is_published = {t} AND r.publication_start > {now}"
                ));
            }
            if let VisibilityFilter::Visible {
                members,
                groups,
                creator,
                editable,
            } = &q.visibility
            {
                let mut allowed = vec![if *members {
                    "r.visibility IN ('public', 'members')".to_owned()
                } else {
                    "r.visibility = 'public'".to_owned()
                }];
                if !groups.is_empty() {
                    let list: Vec<String> = groups.iter().map(|g| sql.bind(g.0)).collect();
                    allowed.push(format!(
                        "(r.visibility = 'group' AND r.content_group_id IN ({}))",
                        list.join(", ")
                    ));
                }
                let published = published_now(&mut sql);
                let mut visible = format!("({published} AND ({}))", allowed.join(" OR "));
                if let Some(creator) = creator {
                    let c = sql.bind(creator.0);
                    visible = format!("({visible} OR r.creator_id = {c})");
                }
                for scope in editable {
                    let group = match scope.content_group {
                        ScopeGroup::Any => "TRUE".to_owned(),
                        ScopeGroup::Default => "r.visibility IN ('public', 'members')".to_owned(),
                        ScopeGroup::Group(g) => format!(
                            "(r.visibility = 'group' AND r.content_group_id = {})",
                            sql.bind(g.0)
                        ),
                    };
                    let categories = if scope.categories.is_empty() {
                        "TRUE".to_owned()
                    } else {
                        let names: Vec<String> = scope
                            .categories
                            .iter()
                            .map(|n| sql.bind(n.as_str()))
                            .collect();
                        format!(
                            "r.category_id IN (SELECT k.id FROM category k \
                             JOIN category a ON k.nr_left BETWEEN a.nr_left AND a.nr_right \
                             JOIN rsc ar ON ar.id = a.id WHERE ar.name IN ({}))",
                            names.join(", ")
                        )
                    };
                    visible = format!("({visible} OR ({group} AND {categories}))");
                }
                sql.conditions.push(visible);
            }
            let where_clause = if sql.conditions.is_empty() {
                String::new()
            } else {
                format!("WHERE {}", sql.conditions.join(" AND "))
            };
            let from = "FROM rsc r LEFT JOIN rsc_pivot p ON p.rsc_id = r.id";
            let total = if q.count_total {
                Some(
                    c.query_planned(&format!("SELECT count(*) {from} {where_clause}"), &sql.params)?
                        .first()
                        .map(|r| r.int(0) as u64)
                        .unwrap_or(0),
                )
            } else {
                None
            };
            let dir = if q.descending { "DESC" } else { "ASC" };
            let order = match q.sort {
                SortKey::Id => format!("r.id {dir}"),
                key => {
                    let mut col = sort_column(key).to_owned();
                    if key == SortKey::Title && dialect == Dialect::Postgres {
                        // Byte order, like SQLite's BINARY: same order on both.
                        col.push_str(" COLLATE \"C\"");
                    }
                    if matches!(key, SortKey::Created | SortKey::Modified) {
                        // Never NULL: a plain ORDER BY lets the database walk
                        // the column's index and stop after one page.
                        format!("{col} {dir}, r.id {dir}")
                    } else {
                        let null_col = sort_column(key);
                        format!("CASE WHEN {null_col} IS NULL THEN 1 ELSE 0 END, {col} {dir}, r.id {dir}")
                    }
                }
            };
            let lp = sql.bind(limit as i64);
            let op = sql.bind(q.offset.min(i64::MAX as u64) as i64);
            let ids = c
                .query_planned(
                    &format!("SELECT r.id {from} {where_clause} ORDER BY {order} LIMIT {lp} OFFSET {op}"),
                    &sql.params,
                )?
                .iter()
                .map(|r| ResourceId(r.int(0)))
                .collect();
            Ok(SearchPage { ids, total })
        })
    }
}

/// Published and inside the publication window now.
fn published_now(sql: &mut Sql) -> String {
    let t = sql.bind(true);
    let now = sql.bind(Utc::now().timestamp_millis());
    format!(
        "r.is_published = {t} AND (r.publication_start IS NULL OR r.publication_start <= {now}) \
         AND (r.publication_end IS NULL OR r.publication_end > {now})"
    )
}

/// Resources whose words (in every language) start with all of `terms`.
fn text_condition(sql: &mut Sql, dialect: Dialect, terms: &[&str]) -> String {
    match dialect {
        Dialect::Sqlite => {
            // Terms are letters and digits only, quoted anyway.
            let p = sql.bind(fts5_prefixes(terms));
            format!("r.id IN (SELECT rowid FROM rsc_fts WHERE rsc_fts MATCH {p})")
        }
        Dialect::Postgres => {
            let p = sql.bind(tsquery_prefixes(terms));
            format!("p.words @@ to_tsquery('simple', {p})")
        }
    }
}

/// Resources whose words in `lang` start with all of `stems`.
fn language_condition(sql: &mut Sql, dialect: Dialect, lang: &str, stems: &[&str]) -> String {
    let l = sql.bind(lang.to_owned());
    match dialect {
        Dialect::Sqlite => {
            let p = sql.bind(fts5_prefixes(stems));
            format!(
                "r.id IN (SELECT t.rsc_id FROM rsc_translation t WHERE t.language = {l} \
                 AND t.id IN (SELECT rowid FROM rsc_fts_lang WHERE rsc_fts_lang MATCH {p}))"
            )
        }
        Dialect::Postgres => {
            let p = sql.bind(tsquery_prefixes(stems));
            format!(
                "r.id IN (SELECT t.rsc_id FROM rsc_translation t WHERE t.language = {l} \
                 AND t.words @@ to_tsquery('simple', {p}))"
            )
        }
    }
}

fn fts5_prefixes(terms: &[&str]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{t}\"*"))
        .collect::<Vec<_>>()
        .join(" AND ")
}

fn tsquery_prefixes(terms: &[&str]) -> String {
    terms
        .iter()
        .map(|t| format!("{t}:*"))
        .collect::<Vec<_>>()
        .join(" & ")
}

fn date_column(f: DateField) -> &'static str {
    match f {
        DateField::Created => "r.created",
        DateField::Modified => "r.modified",
        DateField::PublicationStart => "r.publication_start",
        DateField::DateStart => "p.date_start",
    }
}

fn sort_column(k: SortKey) -> &'static str {
    match k {
        SortKey::Id => "r.id",
        SortKey::Created => "r.created",
        SortKey::Modified => "r.modified",
        SortKey::PublicationStart => "r.publication_start",
        SortKey::DateStart => "p.date_start",
        SortKey::Title => "p.title_sort",
    }
}

/// The nested-set range of a category and everything below it.
fn category_range(c: &mut dyn crate::db::Conn, name: &str) -> Result<(i64, i64)> {
    if crate::names::check_name("category", name).is_err() {
        return Err(StoreError::UnknownCategory(name.to_owned()));
    }
    let row = c
        .query_one(
            "SELECT k.nr_left, k.nr_right FROM category k JOIN rsc r ON r.id = k.id WHERE r.name = $1",
            &params![name],
        )?
        .ok_or_else(|| StoreError::UnknownCategory(name.to_owned()))?;
    Ok((row.int(0), row.int(1)))
}
