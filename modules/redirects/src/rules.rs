//! The redirect rules: kept in the database (table `redirect`), looked up in
//! memory. A lookup happens only on the way to a 404, so a request that finds
//! its page never pays for the rules, however many there are.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use http::StatusCode;
use serde::Serialize;

use bulwark_store::{ModuleSql, ResourceId, Store, StoreError};
use bulwark_web::events::Moved;

/// A path that is longer than this is not a rule.
pub const MAX_PATH: usize = 2000;
/// Statuses a rule may answer.
pub const STATUSES: [u16; 5] = [301, 302, 307, 308, 410];

/// One rule, as the database keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub id: i64,
    pub from: String,
    /// A path of this site or an http(s) URL.
    pub to: Option<String>,
    /// A resource: its page.
    pub to_rsc: Option<i64>,
    pub status: u16,
    pub hits: i64,
    /// RFC 3339.
    pub last_hit: Option<String>,
}

/// What is wrong with a rule a person or a CSV file gave, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("{0:?}: an old path starts with / (a path of this site)")]
    NotAPath(String),
    #[error("the old path is too long, or holds spaces or control characters")]
    BadPath,
    #[error("status {0}: use 301, 302, 307, 308 or 410")]
    Status(u16),
    #[error("{0:?}: a target is a path (/...) or an http(s):// URL")]
    BadTarget(String),
    #[error("the target is too long or holds control characters")]
    BadTargetText,
    #[error("{0} would redirect to itself")]
    ToItself(String),
    #[error("a rule goes to a path or to a resource, not both")]
    TwoTargets,
    #[error("status {0} needs a target (a path, a URL or a resource)")]
    NoTarget(u16),
}

/// What a new rule says, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRule {
    pub from: String,
    pub to: Option<String>,
    pub to_rsc: Option<ResourceId>,
    pub status: u16,
}

impl NewRule {
    /// Checks and normalises what a person or a CSV file gave.
    pub fn new(
        from: &str,
        to: Option<&str>,
        to_rsc: Option<i64>,
        status: Option<u16>,
    ) -> Result<NewRule, RuleError> {
        let from = normalise(from)?;
        let to = to.map(str::trim).filter(|t| !t.is_empty());
        let status = status.unwrap_or(if to.is_none() && to_rsc.is_none() {
            410
        } else {
            301
        });
        if !STATUSES.contains(&status) {
            return Err(RuleError::Status(status));
        }
        if let Some(to) = to {
            let lower = to.to_ascii_lowercase();
            if !(bulwark_site::is_site_path(to)
                || lower.starts_with("http://")
                || lower.starts_with("https://"))
            {
                return Err(RuleError::BadTarget(to.to_owned()));
            }
            if to.len() > MAX_PATH || to.chars().any(char::is_control) {
                return Err(RuleError::BadTargetText);
            }
            if to == from {
                return Err(RuleError::ToItself(from));
            }
        }
        if to.is_some() && to_rsc.is_some() {
            return Err(RuleError::TwoTargets);
        }
        if status != 410 && to.is_none() && to_rsc.is_none() {
            return Err(RuleError::NoTarget(status));
        }
        Ok(NewRule {
            from,
            to: to.map(str::to_owned),
            to_rsc: to_rsc.map(ResourceId),
            status,
        })
    }
}

/// `/old/page/` and `/old/page` are one rule: no trailing slash (but `/`).
pub fn normalise(path: &str) -> Result<String, RuleError> {
    let path = path.trim();
    if !path.starts_with('/') || path.starts_with("//") {
        return Err(RuleError::NotAPath(path.to_owned()));
    }
    if path.len() > MAX_PATH || path.chars().any(|c| c.is_control() || c == ' ') {
        return Err(RuleError::BadPath);
    }
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    let path = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    let path = if path.is_empty() { "/" } else { path };
    let path = decoded(path);
    Ok(match query {
        Some(q) if !q.is_empty() => format!("{path}?{q}"),
        _ => path.to_owned(),
    })
}

/// A path with its percent-escapes decoded, so that `/caf%C3%A9`,
/// `/caf%c3%a9` (as WordPress writes its links) and `/café` are one path.
/// Escapes of what would change the path's meaning (`/`, `?`, `#`, `%`, a
/// space or a control character) stay, in capitals; so does the whole path
/// when its escapes are not UTF-8.
fn decoded(path: &str) -> String {
    if !path.contains('%') {
        return path.to_owned();
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escape {
            Some(b) if b.is_ascii_control() || b"/?#% ".contains(&b) => {
                out.extend_from_slice(format!("%{b:02X}").as_bytes());
                i += 3;
            }
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| upper_escapes(path))
}

/// `%c3%a9` as `%C3%A9`, the rest as it is.
fn upper_escapes(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut upper = 0;
    for c in path.chars() {
        match (c, upper) {
            ('%', _) => {
                upper = 2;
                out.push(c);
            }
            (c, 1..) => {
                upper -= 1;
                out.push(c.to_ascii_uppercase());
            }
            (c, _) => out.push(c),
        }
    }
    out
}

struct Entry {
    rule: Rule,
    /// Hits not written to the database yet.
    hits: AtomicU64,
}

/// The rules in memory, by old path.
#[derive(Default)]
pub struct Rules {
    by_path: RwLock<Arc<HashMap<String, Arc<Entry>>>>,
    /// Whether some rule's old path has a query (`/?p=12`): only then is a
    /// request with a query string looked up before it is routed.
    with_query: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules").field("len", &self.len()).finish()
    }
}

impl Rules {
    pub fn len(&self) -> usize {
        self.by_path.read().expect("rules").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What `path` (and `query`) answers instead of a 404, if a rule says.
    /// A rule for the path with this very query string comes first, then the
    /// one for the path, which passes the query string on.
    pub fn lookup(&self, path: &str, query: Option<&str>) -> Option<Moved> {
        let table = self.by_path.read().expect("rules").clone();
        if table.is_empty() {
            return None;
        }
        let path = normalise(path).ok()?;
        let exact = query
            .filter(|q| !q.is_empty())
            .and_then(|q| table.get(&format!("{path}?{q}")));
        let (entry, pass_query) = match exact {
            Some(entry) => (entry, None),
            None => (table.get(&path)?, query.filter(|q| !q.is_empty())),
        };
        Some(moved(entry, pass_query))
    }

    /// What `path` with exactly `query` answers before it is routed, if a
    /// rule says: only a rule for that path and that query (an old blog's
    /// `/?p=12`); a path's own rule waits for the 404 as always.
    pub fn lookup_query(&self, path: &str, query: &str) -> Option<Moved> {
        if !self.with_query.load(Ordering::Relaxed) {
            return None;
        }
        let table = self.by_path.read().expect("rules").clone();
        let path = normalise(path).ok()?;
        let entry = table.get(&format!("{path}?{query}"))?;
        Some(moved(entry, None))
    }

    /// Puts `rules` in place of the ones in memory (hits not written yet are
    /// carried over to the same rule).
    pub fn replace(&self, rules: Vec<Rule>) {
        let mut table = self.by_path.write().expect("rules");
        let old = table.clone();
        let fresh: HashMap<String, Arc<Entry>> = rules
            .into_iter()
            .map(|rule| {
                // Rules stored before paths were decoded are found all the same.
                let key = normalise(&rule.from).unwrap_or_else(|_| rule.from.clone());
                let pending = old
                    .get(&key)
                    .filter(|e| e.rule.id == rule.id)
                    .map_or(0, |e| e.hits.swap(0, Ordering::Relaxed));
                (
                    key,
                    Arc::new(Entry {
                        rule,
                        hits: AtomicU64::new(pending),
                    }),
                )
            })
            .collect();
        self.with_query
            .store(fresh.keys().any(|k| k.contains('?')), Ordering::Relaxed);
        *table = Arc::new(fresh);
    }

    /// The hits counted since the last call, by rule id.
    pub fn take_hits(&self) -> Vec<(i64, u64)> {
        self.by_path
            .read()
            .expect("rules")
            .values()
            .filter_map(|e| match e.hits.swap(0, Ordering::Relaxed) {
                0 => None,
                n => Some((e.rule.id, n)),
            })
            .collect()
    }
}

fn moment(ms: Option<i64>) -> Option<String> {
    use chrono::TimeZone;
    ms.and_then(|ms| chrono::Utc.timestamp_millis_opt(ms).single())
        .map(|t| t.to_rfc3339())
}

/// Every rule, newest first.
pub fn load(store: &Store) -> Result<Vec<Rule>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query(
                "SELECT id, from_path, to_path, to_rsc, status, hits, last_hit FROM redirect \
                 ORDER BY id DESC",
                &[],
            )?
            .iter()
            .map(|r| Rule {
                id: r.int(0),
                from: r.text(1),
                to: r.opt_text(2),
                to_rsc: r.opt_int(3),
                status: u16::try_from(r.int(4)).unwrap_or(301),
                hits: r.int(5),
                last_hit: moment(r.opt_int(6)),
            })
            .collect())
    })
}

/// Adds `rule` in a transaction of the caller's (an import's batch), unless
/// a rule for its old path is there; the rules are read again when it commits.
pub fn insert_in(sql: &mut ModuleSql<'_>, rule: &NewRule) -> Result<bool, StoreError> {
    let there = sql.query_one(
        "SELECT 1 FROM redirect WHERE from_path = $1",
        &[rule.from.as_str().into()],
    )?;
    if there.is_some() {
        return Ok(false);
    }
    insert(sql, rule, chrono::Utc::now().timestamp_millis())?;
    sql.flush(crate::rules_key());
    Ok(true)
}

fn insert(sql: &mut ModuleSql<'_>, rule: &NewRule, now: i64) -> Result<(), StoreError> {
    if let Some(id) = rule.to_rsc {
        sql.require_resource(id, "to_rsc")?;
    }
    sql.execute(
        "INSERT INTO redirect (from_path, to_path, to_rsc, status, created) VALUES ($1, $2, $3, $4, $5)",
        &[
            rule.from.clone().into(),
            rule.to.clone().into(),
            rule.to_rsc.map(|r| r.0).into(),
            i64::from(rule.status).into(),
            now.into(),
        ],
    )?;
    Ok(())
}

/// Adds rules in one transaction: all of them, or (on any error) none.
pub fn add(store: &Store, rules: &[NewRule]) -> Result<(), StoreError> {
    let now = chrono::Utc::now().timestamp_millis();
    store.module_write(|sql| {
        for rule in rules {
            insert(sql, rule, now)?;
        }
        sql.flush(crate::rules_key());
        Ok(())
    })
}

/// Removes a rule; `false` when there was none.
pub fn remove(store: &Store, id: i64) -> Result<bool, StoreError> {
    store.module_write(|sql| {
        let removed = sql.execute("DELETE FROM redirect WHERE id = $1", &[id.into()])? > 0;
        sql.flush(crate::rules_key());
        Ok(removed)
    })
}

/// How many of the rules hit most `/metrics` names.
const TOP_RULES: i64 = 10;

/// The rules as a person on call reads them, for `/metrics`: how many there
/// are, their hits (written by every node), and the ten hit most by their
/// old path (cut to 200 characters).
pub fn metrics(store: &Store) -> Result<Vec<bulwark_web::Metric>, StoreError> {
    use bulwark_web::Metric;
    let (all, top) = store.module_read(|sql| {
        let all = sql.query_one(
            "SELECT COUNT(*), CAST(COALESCE(SUM(hits), 0) AS BIGINT) FROM redirect",
            &[],
        )?;
        let top = sql.query(
            "SELECT from_path, hits FROM redirect WHERE hits > 0 \
             ORDER BY hits DESC, from_path LIMIT $1",
            &[TOP_RULES.into()],
        )?;
        Ok((all, top))
    })?;
    let (rules, hits) = all.map_or((0, 0), |r| (r.int(0), r.int(1)));
    let mut out = vec![
        Metric::gauge(
            "bulwark_redirect_rules",
            "Redirect rules (old paths that moved or are gone).",
            rules as f64,
        ),
        Metric::counter(
            "bulwark_redirect_hits_total",
            "Requests answered by a redirect rule, by every node (written every few seconds).",
            u64::try_from(hits).unwrap_or(0),
        ),
    ];
    for row in top {
        let from: String = row.text(0).chars().take(200).collect();
        out.push(
            Metric::counter(
                "bulwark_redirect_rule_hits_total",
                "The redirect rules hit most, by old path (the ten most).",
                u64::try_from(row.int(1)).unwrap_or(0),
            )
            .with("from", from),
        );
    }
    Ok(out)
}

/// Writes counted hits.
pub fn add_hits(store: &Store, hits: &[(i64, u64)]) -> Result<(), StoreError> {
    let now = chrono::Utc::now().timestamp_millis();
    store.module_write(|sql| {
        for (id, n) in hits {
            sql.execute(
                "UPDATE redirect SET hits = hits + $1, last_hit = $2 WHERE id = $3",
                &[
                    i64::try_from(*n).unwrap_or(i64::MAX).into(),
                    now.into(),
                    (*id).into(),
                ],
            )?;
        }
        Ok(())
    })
}

/// What a rule answers, counted as a hit; `pass_query`: the request's
/// query string, passed on to a target without one of its own.
fn moved(entry: &Entry, pass_query: Option<&str>) -> Moved {
    entry.hits.fetch_add(1, Ordering::Relaxed);
    let rule = &entry.rule;
    let target = match (&rule.to, rule.to_rsc) {
        (Some(to), _) => Some(to.clone()),
        (None, Some(id)) => Some(format!("/page/{id}")),
        (None, None) => None,
    };
    match (rule.status, target) {
        (410, _) | (_, None) => Moved {
            status: StatusCode::GONE,
            location: None,
        },
        (status, Some(mut location)) => {
            if let Some(q) = pass_query
                && !location.contains('?')
            {
                location = format!("{location}?{q}");
            }
            Moved {
                status: StatusCode::from_u16(status).unwrap_or(StatusCode::MOVED_PERMANENTLY),
                location: Some(location),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_and_plain_paths_are_one_path() {
        let rule = normalise("/2024/%d0%bf%d1%80/").unwrap();
        assert_eq!(rule, "/2024/пр");
        assert_eq!(normalise("/2024/%D0%BF%D1%80").unwrap(), rule);
        assert_eq!(normalise("/a%2fb%3F").unwrap(), "/a%2Fb%3F");
        assert_eq!(normalise("/bad%ff%fe").unwrap(), "/bad%FF%FE");
    }

    fn rule(id: i64, from: &str, to: Option<&str>, to_rsc: Option<i64>, status: u16) -> Rule {
        Rule {
            id,
            from: from.into(),
            to: to.map(Into::into),
            to_rsc,
            status,
            hits: 0,
            last_hit: None,
        }
    }

    #[test]
    fn old_paths_are_one_rule_with_or_without_a_trailing_slash() {
        assert_eq!(normalise("/old/page/").unwrap(), "/old/page");
        assert_eq!(normalise(" /old?p=1 ").unwrap(), "/old?p=1");
        assert_eq!(normalise("/").unwrap(), "/");
        assert!(normalise("old").is_err());
        assert!(normalise("//evil.example").is_err());
        assert!(normalise("/a b").is_err());
    }

    #[test]
    fn a_new_rule_says_what_is_wrong_with_it() {
        assert_eq!(NewRule::new("/gone", None, None, None).unwrap().status, 410);
        assert_eq!(
            NewRule::new("/old", Some("/new"), None, None)
                .unwrap()
                .status,
            301
        );
        assert!(
            NewRule::new("/old", Some("javascript:alert(1)"), None, None)
                .unwrap_err()
                .to_string()
                .contains("a target is a path")
        );
        assert!(NewRule::new("/old", Some("//evil.example"), None, None).is_err());
        assert!(NewRule::new("/old", Some("/\\evil.example"), None, None).is_err());
        assert!(
            NewRule::new("/old", Some("/old"), None, None)
                .unwrap_err()
                .to_string()
                .contains("itself")
        );
        assert!(
            NewRule::new("/old", None, None, Some(301))
                .unwrap_err()
                .to_string()
                .contains("needs a target")
        );
        assert!(
            NewRule::new("/old", Some("/new"), None, Some(200))
                .unwrap_err()
                .to_string()
                .contains("status 200")
        );
    }

    #[test]
    fn a_lookup_finds_the_rule_passes_the_query_on_and_counts_the_hit() {
        let rules = Rules::default();
        rules.replace(vec![
            rule(1, "/old", Some("/new"), None, 301),
            rule(2, "/old?id=7", Some("/seven"), None, 302),
            rule(3, "/gone", None, None, 410),
            rule(4, "/post", None, Some(42), 301),
        ]);
        let moved = rules.lookup("/old/", Some("utm=x")).unwrap();
        assert_eq!(
            (moved.status.as_u16(), moved.location.as_deref()),
            (301, Some("/new?utm=x"))
        );
        let exact = rules.lookup("/old", Some("id=7")).unwrap();
        assert_eq!(
            (exact.status.as_u16(), exact.location.as_deref()),
            (302, Some("/seven"))
        );
        assert_eq!(
            rules.lookup("/gone", None).unwrap().status,
            StatusCode::GONE
        );
        assert_eq!(
            rules.lookup("/post", None).unwrap().location.as_deref(),
            Some("/page/42")
        );
        assert_eq!(rules.lookup("/other", None), None);
        let mut hits = rules.take_hits();
        hits.sort();
        assert_eq!(hits, vec![(1, 1), (2, 1), (3, 1), (4, 1)]);
        assert!(rules.take_hits().is_empty(), "taken once");
    }

    #[test]
    fn before_routing_only_a_rule_for_the_very_path_and_query_answers() {
        let rules = Rules::default();
        rules.replace(vec![rule(1, "/about", Some("/en/about"), None, 301)]);
        assert_eq!(
            rules.lookup_query("/about", "x=1"),
            None,
            "no rule has a query"
        );
        rules.replace(vec![
            rule(1, "/about", Some("/en/about"), None, 301),
            rule(2, "/?p=12", None, Some(7), 301),
            rule(3, "/?page_id=3", Some("/en/about"), None, 301),
        ]);
        assert_eq!(
            rules.lookup_query("/", "p=12").unwrap().location.as_deref(),
            Some("/page/7")
        );
        assert_eq!(
            rules
                .lookup_query("/", "page_id=3")
                .unwrap()
                .location
                .as_deref(),
            Some("/en/about"),
            "the rule's target, without the query it matched"
        );
        assert_eq!(rules.lookup_query("/", "p=13"), None);
        assert_eq!(
            rules.lookup_query("/about", "x=1"),
            None,
            "a path's own rule waits for the 404"
        );
        let mut hits = rules.take_hits();
        hits.sort();
        assert_eq!(hits, vec![(2, 1), (3, 1)]);
    }
}
