//! `m.search(...)`: resources by category, text and order, as the principal may
//! see them: the store filters by what the site's policy says they may see
//! ([`AccessPolicy::search_filter`](bulwark_acl::AccessPolicy::search_filter)), so
//! pages stay full, and each result is still checked like any other resource.

use std::sync::Arc;

use bulwark_store::{SearchQuery, SortKey, dependency};
use minijinja::value::Kwargs;
use minijinja::{Error, ErrorKind, Value};

use super::scope::RenderScope;
use super::{ModelKey, ModelValue, SearchKey};

/// `m.search(cat="article", exclude="meta", text="...", language="nl", sort="-created", page=1, pagelen=10)`:
/// visible resources, plus paging when asked for (`m.search(..., total=true)`).
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
}
