//! `m.rsc`: resources by id or unique name, their properties (as the access
//! policy lets the principal read them) and their edges (`o`, `s`).

use std::sync::Arc;

use bulwark_store::{
    DependencyKey, Resource, ResourceId, StoreError, Visibility, any_text, dependency,
    html_to_plain,
};
use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{Error, ErrorKind, State, Value};

use super::scope::RenderScope;
use super::{ModelKey, ModelValue};

#[derive(Debug)]
pub(super) struct RscCollection(pub(super) Arc<RenderScope>);

impl Object for RscCollection {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        // Path arguments are strings: `m.rsc[id]` works with "42" as with 42.
        match key.as_i64() {
            Some(n) => self.0.rsc_value(ResourceId(n)).ok(),
            None => self.0.rsc(key.as_str()?).ok().flatten(),
        }
    }
}

/// A resource as templates see it.
#[derive(Debug)]
pub struct RscObject {
    rsc: Arc<Resource>,
    scope: Arc<RenderScope>,
}

impl RscObject {
    /// The resource itself.
    pub fn resource(&self) -> &Arc<Resource> {
        &self.rsc
    }

    /// Whether the resource is published in `language` (its `languages`
    /// property names it, or it has none).
    pub fn is_published_in(&self, language: &str) -> bool {
        self.rsc.props.published_in(language)
    }

    /// The slug in this render's language.
    fn slug(&self) -> String {
        slug_in(&self.rsc, &self.languages())
    }

    fn languages(&self) -> Vec<&str> {
        self.scope
            .language_order()
            .iter()
            .map(String::as_str)
            .collect()
    }

    /// A property as this render reads it: a translated one in its
    /// languages (the wanted one, then the fallbacks, then any).
    fn text(&self, prop: &str) -> Option<Value> {
        let v = self.rsc.props.get(prop)?;
        if bulwark_store::translations(v).is_none() {
            return Some(prop_value(v));
        }
        let text = bulwark_store::text_in(v, &self.languages()).or_else(|| any_text(v))?;
        Some(Value::from_safe_string(text.to_owned()))
    }
}

/// A resource's URL slug: its `slug` property when an editor set one, else
/// made from the title as people read it ("Tom &amp; Jerry", as stored, is
/// `tom-jerry`, not `tom-amp-jerry`).
pub fn slug_of(r: &Resource) -> String {
    slug_in(r, &[])
}

/// [`slug_of`] in the first of `languages` the resource has text in.
pub fn slug_in(r: &Resource, languages: &[&str]) -> String {
    let prop = |key: &str| r.props.get(key);
    let usable = |s: &&str| !s.trim().is_empty();
    let here = |key: &str| {
        prop(key)
            .and_then(|v| bulwark_store::text_in(v, languages))
            .filter(usable)
    };
    let anywhere = |key: &str| prop(key).and_then(any_text).filter(usable);
    // A title translated into the language names the page there, before a
    // slug given in another (an import's English `about` does not name the
    // Dutch page called "Over ons").
    let translated_title = prop("title")
        .filter(|v| bulwark_store::translations(v).is_some())
        .and_then(|_| here("title"));
    let source = here("slug")
        .or(translated_title)
        .or_else(|| anywhere("slug"))
        .or_else(|| here("title"))
        .or_else(|| anywhere("title"))
        .unwrap_or("");
    slugify(&html_to_plain(source))
}

/// Lower-case letters and digits, one `-` for whatever is between them, at
/// most 60 characters.
pub fn slugify(text: &str) -> String {
    // One pass that stops at the 60th character: a page shows a slug for every
    // link it makes.
    const MAX: usize = 60;
    let mut slug = String::with_capacity(text.len().min(MAX));
    let mut room = MAX;
    let mut gap = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            gap = !slug.is_empty();
            continue;
        }
        if gap {
            if room == 0 {
                break;
            }
            slug.push('-');
            room -= 1;
            gap = false;
        }
        if c.is_ascii() {
            if room == 0 {
                break;
            }
            slug.push(c.to_ascii_lowercase());
            room -= 1;
            continue;
        }
        for lower in c.to_lowercase() {
            if room == 0 {
                break;
            }
            slug.push(lower);
            room -= 1;
        }
    }
    slug.truncate(slug.trim_end_matches('-').len());
    slug
}

impl Object for RscObject {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let r = &self.rsc;
        let time = |t: chrono::DateTime<chrono::Utc>| Value::from(t.to_rfc3339());
        Some(match key.as_str()? {
            "id" => Value::from(r.id.0),
            "name" => r
                .name
                .as_deref()
                .map(Value::from)
                .unwrap_or(Value::from(())),
            "category" => Value::from(r.category_name.as_str()),
            "published" => Value::from(r.published),
            // Published and inside its publication window: what visitors see.
            "is_live" => Value::from(r.is_visible_at(chrono::Utc::now())),
            // "draft", "scheduled", "published" or "ended".
            "publication_state" => Value::from(r.publication_state(chrono::Utc::now())),
            "created" => time(r.created),
            "modified" => time(r.modified),
            "publication_start" => r.publication_start.map(time).unwrap_or(Value::from(())),
            "publication_end" => r.publication_end.map(time).unwrap_or(Value::from(())),
            "visibility" => Value::from(match r.visibility {
                Visibility::Public => "public",
                Visibility::Members => "members",
                Visibility::Group(_) => "group",
            }),
            "content_group" => match r.visibility {
                Visibility::Group(g) => Value::from(g.0),
                _ => Value::from(()),
            },
            "version" => Value::from(r.version.0),
            "slug" => Value::from(self.slug()),
            // The slug an editor chose, if any (`slug` is what is in use).
            "own_slug" => r
                .props
                .get("slug")
                .and_then(|v| bulwark_store::text_in(v, &self.languages()).or_else(|| any_text(v)))
                .map(|s| Value::from(html_to_plain(s)))
                .unwrap_or(Value::from(())),
            "page_url" => {
                let slug = self.slug();
                let url = self
                    .scope
                    .page_rule
                    .as_ref()
                    .and_then(|f| f(r.id, &slug))
                    .unwrap_or_else(|| format!("/page/{}/{slug}", r.id));
                Value::from_safe_string(format!("{}{url}", self.scope.page_prefix()))
            }
            // The languages it has text in (translated properties), and the
            // languages it is published in (`languages`, else all).
            "translated_languages" => {
                self.scope.depend_with(|| dependency::resource_texts(r.id));
                Value::from(r.props.translated_languages())
            }
            "o" => Value::from_object(EdgeAccessor {
                id: r.id,
                outgoing: true,
                scope: self.scope.clone(),
            }),
            "s" => Value::from_object(EdgeAccessor {
                id: r.id,
                outgoing: false,
                scope: self.scope.clone(),
            }),
            prop if self.scope.policy.may_read(&self.scope.principal, r, prop) => {
                self.text(prop)?
            }
            _ => return None,
        })
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let mut keys: Vec<Value> = [
            "id",
            "name",
            "category",
            "published",
            "created",
            "modified",
            "page_url",
        ]
        .iter()
        .map(|k| Value::from(*k))
        .collect();
        let scope = &self.scope;
        keys.extend(
            self.rsc
                .props
                .0
                .keys()
                .filter(|k| scope.policy.may_read(&scope.principal, &self.rsc, k))
                .map(|k| Value::from(k.as_str())),
        );
        Enumerator::Values(keys)
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "is_a" => {
                let category: String = args
                    .first()
                    .and_then(|v| v.as_str())
                    .ok_or_else(|| Error::new(ErrorKind::MissingArgument, "is_a(category)"))?
                    .to_string();
                let id = self.rsc.id;
                let deps = || vec![dependency::resource(id), dependency::category_tree()];
                let key = ModelKey::IsA(id, category.clone());
                let v = self
                    .scope
                    .fetch(key, deps, |s| Ok(ModelValue::Flag(s.is_a(id, &category)?)))?;
                Ok(Value::from(matches!(v, ModelValue::Flag(true))))
            }
            // `rsc.translation("title", "nl")`: the text in exactly that
            // language, no fallback (undefined when it has none): for the
            // admin's side-by-side editor and a language switch.
            "translation" => {
                let (Some(prop), Some(lang)) = (
                    args.first().and_then(Value::as_str),
                    args.get(1).and_then(Value::as_str),
                ) else {
                    return Err(Error::new(
                        ErrorKind::MissingArgument,
                        "translation(property, language)",
                    ));
                };
                if !self
                    .scope
                    .policy
                    .may_read(&self.scope.principal, &self.rsc, prop)
                {
                    return Ok(Value::UNDEFINED);
                }
                self.scope
                    .depend_with(|| dependency::resource_text(self.rsc.id, lang));
                Ok(match self.rsc.props.get(prop) {
                    Some(v) => bulwark_store::text_in(v, &[lang])
                        .map(|t| Value::from_safe_string(t.to_owned()))
                        .unwrap_or(Value::UNDEFINED),
                    None => Value::UNDEFINED,
                })
            }
            // `rsc.is_translated("title")`: whether the property holds one
            // text per language (rather than one for all).
            "is_translated" => {
                let prop = args.first().and_then(Value::as_str).ok_or_else(|| {
                    Error::new(ErrorKind::MissingArgument, "is_translated(property)")
                })?;
                Ok(Value::from(
                    self.rsc
                        .props
                        .get(prop)
                        .is_some_and(|v| bulwark_store::translations(v).is_some()),
                ))
            }
            // `rsc.is_published_in("nl")`: its `languages` name it, or it has none.
            "is_published_in" => {
                let lang = args.first().and_then(Value::as_str).ok_or_else(|| {
                    Error::new(ErrorKind::MissingArgument, "is_published_in(language)")
                })?;
                Ok(Value::from(self.rsc.props.published_in(lang)))
            }
            _ => Err(Error::new(
                ErrorKind::UnknownMethod,
                format!("resources have no method {method}"),
            )),
        }
    }
}

/// Stored text is sanitised on write, so strings go out as they are: none
/// holds markup beyond the store's whitelist or a raw quote, so each is safe as
/// element content and inside a quoted attribute (`bulwark_store`'s sanitiser).
fn prop_value(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::String(s) => Value::from_safe_string(s.clone()),
        other => Value::from(minijinja::value::Serde(other)),
    }
}

#[derive(Debug)]
struct EdgeAccessor {
    id: ResourceId,
    outgoing: bool,
    scope: Arc<RenderScope>,
}

impl Object for EdgeAccessor {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let predicate = key.as_str()?.to_string();
        let id = self.id;
        let outgoing = self.outgoing;
        let (key, dep) = if outgoing {
            (
                ModelKey::Objects(id, predicate.clone()),
                dependency::edges as fn(ResourceId, &str) -> DependencyKey,
            )
        } else {
            (
                ModelKey::Subjects(id, predicate.clone()),
                dependency::subjects as fn(ResourceId, &str) -> DependencyKey,
            )
        };
        let ids = self
            .scope
            .fetch(
                key,
                || vec![dep(id, &predicate)],
                |s| {
                    let ids = if outgoing {
                        s.objects(id, &predicate)
                    } else {
                        s.subjects(id, &predicate)
                    };
                    match ids {
                        Ok(ids) => Ok(ModelValue::Ids(ids.into())),
                        // An unknown predicate has no edges.
                        Err(StoreError::UnknownPredicate(_)) => Ok(ModelValue::Ids(Arc::from([]))),
                        Err(e) => Err(e),
                    }
                },
            )
            .ok()?;
        match ids {
            ModelValue::Ids(ids) => self.scope.visible_list(&ids).ok(),
            _ => None,
        }
    }
}

impl RenderScope {
    /// A resource by id (digits) or unique name, as templates see it; `None` when
    /// it does not exist or this principal may not see it.
    pub fn rsc(self: &Arc<Self>, key: &str) -> Result<Option<Value>, Error> {
        let id = match key.parse::<i64>() {
            Ok(n) => Some(ResourceId(n)),
            Err(_) => self.resource_id_by_name(key)?,
        };
        let Some(id) = id else { return Ok(None) };
        let v = self.rsc_value(id)?;
        Ok((!v.is_undefined()).then_some(v))
    }

    /// Whether `key` (an id or a unique name) names a deleted resource that this
    /// principal could see before it went: its page says 410 Gone rather than
    /// 404. Cached like every other read, and flushed when the id or name is
    /// used again.
    pub fn is_gone(&self, key: &str) -> Result<bool, Error> {
        let dep = || match key.parse::<i64>() {
            Ok(n) => vec![dependency::resource(ResourceId(n))],
            Err(_) => vec![dependency::resource_name(key)],
        };
        let value = self.fetch(ModelKey::Gone(key.to_string()), dep, |s| {
            Ok(ModelValue::Deletion(s.deletion(key)?.map(Arc::new)))
        })?;
        Ok(match value {
            ModelValue::Deletion(Some(d)) => d.was_public || self.principal.is_administrator(),
            _ => false,
        })
    }

    pub(super) fn rsc_value(self: &Arc<Self>, id: ResourceId) -> Result<Value, Error> {
        Ok(match self.resource(id)? {
            Some(r) => Value::from_object(RscObject {
                rsc: r,
                scope: self.clone(),
            }),
            None => Value::UNDEFINED,
        })
    }

    pub(super) fn visible_list(self: &Arc<Self>, ids: &[ResourceId]) -> Result<Value, Error> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let v = self.rsc_value(*id)?;
            if !v.is_undefined() {
                out.push(v);
            }
        }
        Ok(Value::from(out))
    }
}

#[cfg(test)]
mod tests {
    use super::{slug_in, slugify};

    use bulwark_store::{Props, Resource, ResourceId, translated};

    fn resource(props: Props) -> Resource {
        let now = chrono::Utc::now();
        Resource {
            id: ResourceId(7),
            name: None,
            category: ResourceId(3),
            category_name: "text".into(),
            published: true,
            publication_start: None,
            publication_end: None,
            visibility: bulwark_store::Visibility::Public,
            creator: None,
            modifier: None,
            created: now,
            modified: now,
            version: bulwark_store::Version(1),
            props,
        }
    }

    #[test]
    fn a_page_is_named_by_its_languages_slug_or_translated_title_before_another_languages_slug() {
        // An import's English slug; the title translated into Dutch.
        let imported = resource(
            Props::new()
                .with("slug", translated([("en", "about")]))
                .with(
                    "title",
                    translated([("en", "About us"), ("nl", "Over ons")]),
                ),
        );
        assert_eq!(slug_in(&imported, &["en"]), "about");
        assert_eq!(slug_in(&imported, &["nl"]), "over-ons");
        // Not translated: the slug there is, in every language.
        let untranslated = resource(
            Props::new()
                .with("slug", translated([("en", "about")]))
                .with("title", "About us"),
        );
        assert_eq!(slug_in(&untranslated, &["nl"]), "about");
        // A slug of no language names the page in every one.
        let neutral = resource(Props::new().with("slug", "contact").with(
            "title",
            translated([("en", "Contact"), ("nl", "Contact opnemen")]),
        ));
        assert_eq!(slug_in(&neutral, &["nl"]), "contact");
        assert_eq!(
            slug_in(
                &resource(Props::new().with("title", "Tom &amp; Jerry")),
                &[]
            ),
            "tom-jerry"
        );
    }

    #[test]
    fn a_slug_is_lowercase_words_joined_by_single_dashes_and_at_most_60_characters() {
        assert_eq!(
            slugify("  Hello, World! Ünïcode ÆØ 42 "),
            "hello-world-ünïcode-æø-42"
        );
        assert_eq!(slugify("--"), "");
        assert_eq!(slugify(&"ab ".repeat(40)).chars().count(), 59);
        assert!(!slugify(&"ab ".repeat(40)).ends_with('-'));
        assert_eq!(slugify(&"x".repeat(100)), "x".repeat(60));
        // A capital that lowercases into two characters counts as both.
        assert_eq!(slugify("İ"), "i\u{307}");
    }
}
