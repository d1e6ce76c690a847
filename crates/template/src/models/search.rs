//! `m.search(...)`: resources by category, text and order, as the principal may
//! see them: the store filters by what the site's policy says they may see
//! ([`AccessPolicy::search_filter`](bulwark_acl::AccessPolicy::search_filter)), so
//! pages stay full, and each result is still checked like any other resource.

use std::sync::Arc;

use bulwark_store::{DateField, ResourceId, SearchQuery, SortKey, dependency};
use chrono::{DateTime, NaiveDate, Utc};
use minijinja::value::Kwargs;
use minijinja::{Error, ErrorKind, Value};

use super::scope::RenderScope;
use super::{ModelKey, ModelValue, SearchKey};

/// `m.search(cat="article", exclude="meta", text="...", language="nl", sort="-created", page=1, pagelen=10)`:
/// visible resources, plus paging when asked for (`m.search(..., total=true)`).
/// `hasobject=[id, "subject"]`: those with that edge to `id` (a keyword's
/// articles, a person's); `year=2024, month=3`: those created then (a date
/// archive; the month is optional).
pub(super) fn search(scope: &Arc<RenderScope>, kwargs: Kwargs) -> Result<Value, Error> {
    let mut q = SearchQuery {
        visibility: scope.policy.search_filter(&scope.principal),
        descending: true,
        ..SearchQuery::default()
    };
    // The categories searched (their names, one a line), or none for all.
    let mut searched = None;
    if let Some(cat) = given::<String>(&kwargs, "cat")? {
        // Depend on the category and everything below it: a new article changes a
        // search over `text`.
        let below = scope.fetch(
            ModelKey::Below(cat.clone()),
            || vec![dependency::category_tree()],
            |s| {
                Ok(ModelValue::Text(Some(
                    s.category_and_below(&cat)?
                        .iter()
                        .map(|c| c.name.clone())
                        .collect::<Vec<_>>()
                        .join("\n")
                        .into(),
                )))
            },
        )?;
        if let ModelValue::Text(Some(names)) = below {
            searched = Some(names);
        }
        q.categories = vec![cat];
    }
    // `exclude="meta"` or `exclude=["meta", "media"]`: categories left out.
    if let Some(exclude) = given::<Value>(&kwargs, "exclude")? {
        q.exclude_categories = match exclude.as_str() {
            Some(one) => vec![one.to_owned()],
            None => exclude
                .try_iter()?
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        "exclude takes a category name or a list of them",
                    )
                })?,
        };
        q.exclude_categories.retain(|name| !name.is_empty());
    }
    q.text = given::<String>(&kwargs, "text")?.filter(|t| !t.trim().is_empty());
    // Words in the render's language (stemmed its way), unless asked for
    // another: `language="nl"`, or `language=""` for all text as written.
    let language = given::<String>(&kwargs, "language")?;
    if q.text.is_some() {
        q.language = match language {
            Some(lang) if lang.is_empty() => None,
            Some(lang) => Some(lang),
            None => scope.language_order().first().cloned(),
        };
    }
    let sort = given::<String>(&kwargs, "sort")?.unwrap_or_else(|| "-created".into());
    let Some((key, descending)) = SortKey::parse(&sort) else {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("cannot sort by {sort:?}: use {}", SortKey::NAMES),
        ));
    };
    (q.sort, q.descending) = (key, descending);
    let pagelen: u64 = given::<u64>(&kwargs, "pagelen")?
        .unwrap_or(20)
        .clamp(1, 500);
    let page = requested_page(given::<Value>(&kwargs, "page")?);
    q.limit = pagelen;
    q.offset = (page - 1) * pagelen;
    q.count_total = given::<bool>(&kwargs, "total")?.unwrap_or(false);
    match given::<String>(&kwargs, "status")?.as_deref() {
        None | Some("") => {}
        Some("published") => q.published_only = true,
        Some("draft") => q.unpublished_only = true,
        Some("scheduled") => q.scheduled_only = true,
        Some(other) => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("status {other:?}: use \"published\", \"draft\" or \"scheduled\""),
            ));
        }
    }
    if let Some(edge) = given::<Value>(&kwargs, "hasobject")? {
        q.has_object = Some(object_edge(&edge)?);
    }
    if let Some(year) = given::<Value>(&kwargs, "year")? {
        let month = given::<Value>(&kwargs, "month")?;
        let (from, to) = created_within(&year, month.as_ref());
        (q.date_from, q.date_to) = (Some(from), Some(to));
        q.date_field = DateField::Created;
    }
    kwargs.assert_all_used()?;
    let key = ModelKey::Search(SearchKey::from(&q));
    let deps = || {
        let mut deps: Vec<_> = match &searched {
            Some(names) => names.lines().map(dependency::category).collect(),
            None => vec![dependency::search()],
        };
        if q.text.is_some() && searched.is_some() {
            deps.push(dependency::search());
        }
        // An edge made to or taken from the object changes the list, also
        // when the resource itself is unchanged.
        if let Some((predicate, object)) = &q.has_object {
            deps.push(dependency::subjects(*object, predicate));
        }
        deps
    };
    let found = scope.fetch(key, deps, |s| {
        let page = s.search(&q)?;
        Ok(ModelValue::Search(page.ids.into(), page.total))
    })?;
    let ModelValue::Search(ids, total) = found else {
        return Ok(Value::from(Vec::<Value>::new()));
    };
    let items = scope.visible_list(&ids)?;
    Ok(match total {
        None => items,
        Some(total) => minijinja::context! {
            items => items,
            total => total,
            page => page,
            pages => total.div_ceil(pagelen),
        },
    })
}

/// The keyword argument `key` when the template gave it. minijinja's
/// `Kwargs::get` makes two allocations and a hash for every key it is asked
/// about, given or not, and a search asks about ten: only the given ones are
/// asked for (and so marked used).
fn given<'a, T>(kwargs: &'a Kwargs, key: &'a str) -> Result<Option<T>, Error>
where
    Option<T>: minijinja::value::ArgType<'a, Output = Option<T>>,
{
    match kwargs.args().any(|given| given == key) {
        true => kwargs.get::<Option<T>>(key),
        false => Ok(None),
    }
}

/// `hasobject=[42, "subject"]`: the object's id (a number, or a number
/// as text from the path) and the predicate's name.
fn object_edge(edge: &Value) -> Result<(String, ResourceId), Error> {
    let wrong = || {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("hasobject takes [id, \"predicate\"], got {edge}"),
        )
    };
    let (Ok(id), Ok(predicate)) = (edge.get_item_by_index(0), edge.get_item_by_index(1)) else {
        return Err(wrong());
    };
    let id = match id.as_str() {
        Some(text) => text.trim().parse::<i64>().ok(),
        None => i64::try_from(id).ok(),
    };
    match (id, predicate.as_str()) {
        (Some(id), Some(predicate)) if !predicate.is_empty() => {
            Ok((predicate.to_owned(), ResourceId(id)))
        }
        _ => Err(wrong()),
    }
}

/// `year=2024` (and `month=3`): from the first moment of that year (or
/// month) to its last, in UTC. Numbers or text (from a path: a date
/// archive's `/archive/2024/03`); a year outside 1-9999 or a month outside
/// 1-12 matches nothing rather than failing the page (a hand-edited link).
fn created_within(year: &Value, month: Option<&Value>) -> (DateTime<Utc>, DateTime<Utc>) {
    let number = |v: &Value| match v.as_str() {
        Some(text) => text.trim().parse::<u32>().ok(),
        None => u32::try_from(v.clone()).ok(),
    };
    let year = number(year).and_then(|y| i32::try_from(y).ok());
    let month = month
        .filter(|m| !m.is_undefined() && !m.is_none())
        .map(number);
    let start = |y: i32, m: u32| {
        NaiveDate::from_ymd_opt(y, m, 1)
            .map(|d| d.and_hms_opt(0, 0, 0).expect("midnight").and_utc())
    };
    let range = match (year, month) {
        (Some(y), None) if (1..=9999).contains(&y) => start(y, 1).zip(start(y + 1, 1)),
        (Some(y), Some(Some(m))) if (1..=9999).contains(&y) && (1..=12).contains(&m) => {
            let next = if m == 12 {
                start(y + 1, 1)
            } else {
                start(y, m + 1)
            };
            start(y, m).zip(next)
        }
        _ => None,
    };
    match range {
        Some((from, next)) => (from, next - chrono::Duration::milliseconds(1)),
        // An empty range: from the last moment to the first.
        None => (DateTime::<Utc>::MAX_UTC, DateTime::<Utc>::MIN_UTC),
    }
}

/// The deepest page served; beyond it the offset would only grow without finding
/// anything (and must stay within what the database takes).
const MAX_PAGE: u64 = 1_000_000;

/// The page asked for. `page` usually comes straight from the query string
/// (`page=q.page`), so whatever is not a whole number from 1 to [`MAX_PAGE`]
/// (`abc`, `-1`, `2.5`, a number too large for any type) is the first page: a bad
/// or hand-edited link shows the list, never a 500.
fn requested_page(page: Option<Value>) -> u64 {
    let number = page.and_then(|page| match page.as_str() {
        Some(text) => text.trim().parse::<u64>().ok(),
        None => u64::try_from(page).ok(),
    });
    number.filter(|n| (1..=MAX_PAGE).contains(n)).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_that_is_not_a_whole_number_from_one_up_is_the_first_page() {
        for bad in [
            Value::from("abc"),
            Value::from("-1"),
            Value::from(-1),
            Value::from(0),
            Value::from("99999999999999999999999"),
            Value::from(u64::MAX),
            Value::from(2.5),
            Value::from(""),
            Value::from(()),
        ] {
            assert_eq!(requested_page(Some(bad.clone())), 1, "{bad:?}");
        }
        assert_eq!(requested_page(None), 1);
        assert_eq!(requested_page(Some(Value::from("3"))), 3);
        assert_eq!(requested_page(Some(Value::from(" 3 "))), 3);
        assert_eq!(requested_page(Some(Value::from(7))), 7);
    }

    #[test]
    fn a_year_or_a_month_is_its_first_to_its_last_moment() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        assert_eq!(
            created_within(&Value::from("2024"), Some(&Value::from("02"))),
            (at("2024-02-01T00:00:00Z"), at("2024-02-29T23:59:59.999Z"))
        );
        assert_eq!(
            created_within(&Value::from(2023), Some(&Value::from(12))),
            (at("2023-12-01T00:00:00Z"), at("2023-12-31T23:59:59.999Z"))
        );
        assert_eq!(
            created_within(&Value::from(2023), None),
            (at("2023-01-01T00:00:00Z"), at("2023-12-31T23:59:59.999Z"))
        );
        for (year, month) in [("0", "1"), ("2024", "13"), ("abc", "1"), ("2024", "x")] {
            let (from, to) = created_within(&Value::from(year), Some(&Value::from(month)));
            assert!(from > to, "{year}-{month} matches nothing");
        }
    }

    #[test]
    fn hasobject_takes_an_id_and_a_predicate() {
        let edge = Value::from(vec![Value::from("42"), Value::from("subject")]);
        assert_eq!(
            object_edge(&edge).unwrap(),
            ("subject".to_owned(), ResourceId(42))
        );
        let edge = Value::from(vec![Value::from(7), Value::from("author")]);
        assert_eq!(
            object_edge(&edge).unwrap(),
            ("author".to_owned(), ResourceId(7))
        );
        for bad in [
            Value::from(42),
            Value::from(vec![Value::from("x"), Value::from("author")]),
        ] {
            assert!(object_edge(&bad).is_err(), "{bad:?}");
        }
    }
}
