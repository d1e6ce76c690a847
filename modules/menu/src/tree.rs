//! `m.menu("main")` (or `menu("main")`) in a template: the menu's tree as the
//! visitor may see it.
//!
//! It reads through the models, like any template (`m.rsc`), so the access
//! rules apply and the page depends on what it read: the menu resource, and
//! each resource an item points at. A page that shows the menu is flushed
//! when the menu changes or a title in it does, by the dependency capture
//! alone.
//!
//! An item is `{"id": 12}` (a resource: its title, unless the item gives one,
//! and its page URL; left out when the visitor may not see it or it is gone)
//! or `{"title": "Contact", "url": "/contact"}` (a plain link; the store keeps
//! only URLs that cannot run script), each with optional `children`.

use minijinja::value::Value;
use minijinja::{Environment, Error, State, context};

/// Levels shown: deeper items are left out.
pub const MAX_DEPTH: usize = 4;
/// Items read at most, in case a menu was made huge by hand.
pub const MAX_ITEMS: usize = 500;

/// The unique name of the resource that holds menu `name`.
pub fn resource_name(name: &str) -> String {
    format!("menu_{name}")
}

/// `menu("main")`, the same as `m.menu("main")`.
pub(crate) fn register(env: &mut Environment<'static>) {
    env.add_function("menu", menu);
}

/// The items of menu `name` the visitor may see, as `{title, url, id,
/// children}` (`m.menu("main")`).
pub(crate) fn menu(state: &State, name: String) -> Result<Value, Error> {
    let Some(rsc) = state.lookup("m").and_then(|m| m.get_attr("rsc").ok()) else {
        return Ok(Value::from(Vec::<Value>::new()));
    };
    let menu = rsc.get_item(&Value::from(resource_name(&name)))?;
    if menu.is_undefined() || menu.is_none() {
        return Ok(Value::from(Vec::<Value>::new()));
    }
    let mut budget = MAX_ITEMS;
    let scope = bulwark_template::RenderScope::of(state);
    let language = Language {
        order: scope
            .as_ref()
            .map_or(Vec::new(), |s| s.language_order().to_vec()),
        prefix: scope
            .as_ref()
            .map_or(String::new(), |s| s.url_prefix().to_owned()),
    };
    Ok(Value::from(visible(
        &rsc,
        &menu.get_attr("menu")?,
        1,
        &mut budget,
        &language,
    )?))
}

/// The render's languages (for translated titles) and the prefix its links
/// keep (`/nl`, for the plain links of a site with language URLs).
struct Language {
    order: Vec<String>,
    prefix: String,
}

impl Language {
    /// An item's own title: text, or a translated value read in the render's
    /// languages (then any).
    fn title(&self, title: &Value) -> Option<String> {
        if let Some(text) = title.as_str() {
            return Some(text.to_owned());
        }
        let trans = title.get_attr("trans").ok().filter(|t| !t.is_undefined())?;
        let pick = |lang: &str| {
            trans
                .get_attr(lang)
                .ok()
                .and_then(|t| t.as_str().map(str::to_owned))
                .filter(|t| !t.trim().is_empty())
        };
        self.order.iter().find_map(|l| pick(l)).or_else(|| {
            trans
                .try_iter()
                .ok()?
                .find_map(|l| l.as_str().and_then(pick))
        })
    }

    /// A plain link's URL: a path of this site gets the page's prefix.
    fn url(&self, url: String) -> String {
        if !self.prefix.is_empty() && bulwark_site::is_site_path(&url) {
            format!("{}{url}", self.prefix)
        } else {
            url
        }
    }
}

/// The items of `items` the visitor may see, as `{title, url, id, children}`.
fn visible(
    rsc: &Value,
    items: &Value,
    depth: usize,
    budget: &mut usize,
    language: &Language,
) -> Result<Vec<Value>, Error> {
    let mut shown = Vec::new();
    let Ok(items) = items.try_iter() else {
        return Ok(shown);
    };
    for item in items {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        // Text in the store is kept escaped for HTML: safe as it is.
        let own_title = item
            .get_attr("title")
            .ok()
            .and_then(|t| language.title(&t))
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .map(Value::from_safe_string);
        let (title, url, id) = match item.get_attr("id").ok().and_then(|v| i64::try_from(v).ok()) {
            Some(id) => {
                let r = rsc.get_item(&Value::from(id))?;
                if r.is_undefined() || r.is_none() {
                    continue;
                }
                let title = own_title.unwrap_or(r.get_attr("title")?);
                (title, r.get_attr("page_url")?, Value::from(id))
            }
            None => {
                let url = item
                    .get_attr("url")
                    .ok()
                    .and_then(|u| u.as_str().map(str::trim).map(str::to_owned))
                    .filter(|u| !u.is_empty());
                let (Some(url), Some(title)) = (url, own_title) else {
                    continue;
                };
                (
                    title,
                    Value::from_safe_string(language.url(url)),
                    Value::from(()),
                )
            }
        };
        let children = match depth < MAX_DEPTH {
            true => visible(
                rsc,
                &item.get_attr("children").unwrap_or_default(),
                depth + 1,
                budget,
                language,
            )?,
            false => Vec::new(),
        };
        shown.push(context! { title, url, id, children });
    }
    Ok(shown)
}
