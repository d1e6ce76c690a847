//! `m.comments(id)` and `m.comments.count(id)` in templates: a resource's
//! approved comments in thread order, read through the render's models so
//! the page depends on the resource's comments key (and on the resource:
//! one the visitor may not see has no comments for them).
//!
//! `m.comments.latest(n)` gives the site's newest approved comments on pages
//! the visitor may see, newest first (the site's comment feed).
//!
//! Each comment is `{id, rsc, parent, depth, name, url, body, created}`: `body`
//! is the text as typed, escaped, with paragraphs and line breaks kept;
//! e-mail addresses and network addresses never reach a template.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use minijinja::value::{Object, Value};
use minijinja::{Error, ErrorKind, State};

use bulwark_store::ResourceId;
use bulwark_template::{RenderScope, escape_html};

use crate::table::{self, Comment, CommentId};

/// Replies deeper than this are shown at this depth.
pub const MAX_DEPTH: usize = 4;

/// `m.comments` for a site whose resources of `categories` (and below)
/// take comments.
pub(crate) fn comments_model(categories: Vec<String>) -> Value {
    Value::from_object(CommentsModel { categories })
}

#[derive(Debug)]
struct CommentsModel {
    categories: Vec<String>,
}

impl Object for CommentsModel {
    fn call(self: &Arc<Self>, state: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        let (id,): (i64,) = minijinja::value::from_args(args)?;
        Ok(Value::from(approved(state, ResourceId(id))?))
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "count" => {
                let (id,): (i64,) = minijinja::value::from_args(args)?;
                Ok(Value::from(approved(state, ResourceId(id))?.len()))
            }
            // The site's newest approved comments the visitor may read,
            // newest first (the site's comment feed).
            "latest" => {
                let (n,): (Option<usize>,) = minijinja::value::from_args(args)?;
                Ok(Value::from(latest(
                    state,
                    n.unwrap_or(20).clamp(1, LATEST_READ),
                )?))
            }
            // Whether resource `id` takes comments (its category does).
            "open" => {
                let (id,): (i64,) = minijinja::value::from_args(args)?;
                let Some(rsc) = resource(state, ResourceId(id))? else {
                    return Ok(Value::from(false));
                };
                for category in &self.categories {
                    let is_a = rsc.call_method(state, "is_a", &[Value::from(category.as_str())])?;
                    if is_a.is_true() {
                        return Ok(Value::from(true));
                    }
                }
                Ok(Value::from(false))
            }
            _ => Err(Error::new(
                ErrorKind::UnknownMethod,
                format!(
                    "m.comments has no method {method:?}: use m.comments(id), \
                     m.comments.count(id), m.comments.open(id) or m.comments.latest(n)"
                ),
            )),
        }
    }
}

/// The approved comments of `id` the visitor may read, in thread order.
fn approved(state: &State<'_, '_>, id: ResourceId) -> Result<Vec<Value>, Error> {
    let Some(scope) = RenderScope::of(state) else {
        return Ok(Vec::new());
    };
    if resource(state, id)?.is_none() {
        return Ok(Vec::new());
    }
    let list = scope.module_value(
        "comments",
        id.0.to_string(),
        &[table::comments_key(id)],
        |store| {
            let comments = table::approved_of(store, id)?;
            Ok((Value::from(threaded(&comments)), cached_bytes(&comments)))
        },
    )?;
    Ok(list.try_iter().map(|it| it.collect()).unwrap_or_default())
}

/// About what `comments` take in the cache as template values (their text
/// twice: as typed and as HTML), for its byte budget.
fn cached_bytes(comments: &[Comment]) -> usize {
    comments
        .iter()
        .map(|c| 128 + c.name.len() + c.body.len() * 2)
        .sum()
}

/// How many of the site's newest comments `m.comments.latest(n)` reads
/// before it leaves out those on pages the visitor may not see (and so the
/// most it gives).
const LATEST_READ: usize = 100;

/// The site's newest approved comments on pages the visitor may see, at
/// most `n`, newest first; each also names its page (`rsc`).
fn latest(state: &State<'_, '_>, n: usize) -> Result<Vec<Value>, Error> {
    let Some(scope) = RenderScope::of(state) else {
        return Ok(Vec::new());
    };
    let newest = scope.module_value(
        "comments",
        "latest".to_owned(),
        &[table::latest_key()],
        |store| {
            let comments = table::latest_approved(store, LATEST_READ)?;
            let shown: Vec<Value> = comments.iter().map(|c| view(c, 0)).collect();
            Ok((Value::from(shown), cached_bytes(&comments)))
        },
    )?;
    let mut out = Vec::with_capacity(n);
    for comment in newest.try_iter()? {
        let Some(rsc) = comment.get_attr("rsc")?.as_i64() else {
            continue;
        };
        if resource(state, ResourceId(rsc))?.is_some() {
            out.push(comment);
            if out.len() == n {
                break;
            }
        }
    }
    Ok(out)
}

/// Resource `id` as `m.rsc[id]` gives it: through the models, so the access
/// rules decide and the page depends on it. `None` when the visitor may not
/// see it (or it is gone).
fn resource(state: &State<'_, '_>, id: ResourceId) -> Result<Option<Value>, Error> {
    let found = state
        .lookup("m")
        .and_then(|m| m.get_attr("rsc").ok())
        .map(|rsc| rsc.get_item(&Value::from(id.0)))
        .transpose()?;
    Ok(found.filter(|r| !r.is_undefined() && !r.is_none()))
}

/// `comments` (oldest first) in thread order: each followed by its replies.
/// A reply whose parent is not shown is shown where its parent would be.
fn threaded(comments: &[Comment]) -> Vec<Value> {
    let shown: HashMap<CommentId, &Comment> = comments.iter().map(|c| (c.id, c)).collect();
    let mut replies: HashMap<Option<CommentId>, Vec<&Comment>> = HashMap::new();
    for c in comments {
        let parent = c.parent.filter(|p| shown.contains_key(p));
        replies.entry(parent).or_default().push(c);
    }
    let mut out = Vec::with_capacity(comments.len());
    // Depth first, without recursion (a long thread must not grow the stack).
    let mut stack: Vec<(&Comment, usize)> = replies
        .get(&None)
        .map(|roots| roots.iter().rev().map(|c| (*c, 0)).collect())
        .unwrap_or_default();
    while let Some((c, depth)) = stack.pop() {
        out.push(view(c, depth.min(MAX_DEPTH)));
        if let Some(children) = replies.get(&Some(c.id)) {
            stack.extend(children.iter().rev().map(|r| (*r, depth + 1)));
        }
    }
    out
}

fn view(c: &Comment, depth: usize) -> Value {
    let mut map = BTreeMap::new();
    map.insert("id", Value::from(c.id.0));
    map.insert("rsc", Value::from(c.rsc.0));
    map.insert(
        "parent",
        c.parent.map_or(Value::from(()), |p| Value::from(p.0)),
    );
    map.insert("depth", Value::from(depth));
    map.insert("name", Value::from(c.name.as_str()));
    map.insert("url", c.url.as_deref().map_or(Value::from(()), Value::from));
    map.insert("body", Value::from_safe_string(paragraphs(&c.body)));
    map.insert("created", Value::from(c.created.to_rfc3339()));
    Value::from(map)
}

/// Plain text as HTML: escaped, a blank line between paragraphs, single line
/// breaks kept.
pub fn paragraphs(text: &str) -> String {
    text.split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| format!("<p>{}</p>", escape_html(p).replace('\n', "<br>")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn comment(id: i64, parent: Option<i64>) -> Comment {
        Comment {
            id: CommentId(id),
            rsc: ResourceId(1),
            parent: parent.map(CommentId),
            user: None,
            name: format!("writer {id}"),
            email: "w@example.org".into(),
            url: None,
            body: "text".into(),
            status: table::Status::Approved,
            address: None,
            source: None,
            created: Utc::now(),
            changed: Utc::now(),
        }
    }

    #[test]
    fn replies_follow_their_parent_and_orphans_stand_alone() {
        let list = [
            comment(1, None),
            comment(2, None),
            comment(3, Some(1)),
            comment(4, Some(3)),
            comment(5, Some(99)),
        ];
        let order: Vec<(i64, i64)> = threaded(&list)
            .iter()
            .map(|v| {
                (
                    v.get_attr("id").unwrap().as_i64().unwrap(),
                    v.get_attr("depth").unwrap().as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(order, [(1, 0), (3, 1), (4, 2), (2, 0), (5, 0)]);
    }

    #[test]
    fn text_becomes_escaped_paragraphs() {
        assert_eq!(
            paragraphs("Hi <b>all</b>\nline two\n\n\nnext"),
            "<p>Hi &lt;b&gt;all&lt;/b&gt;<br>line two</p><p>next</p>"
        );
    }
}
