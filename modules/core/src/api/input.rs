//! What the API accepts in a body: JSON objects with known fields only, so a
//! typo is a 400 that names it rather than a change silently not made.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use bulwark_store::{Props, ResourceId, Visibility};

use bulwark_web::{Problem, RequestCtx};

/// The body as `T`; `Err` is a 400 saying what is wrong.
pub(super) fn json_body<T: DeserializeOwned>(req: &RequestCtx<'_>) -> Result<T, Problem> {
    if req.body.is_empty() {
        return Err(Problem::bad_request("the body must be a JSON object"));
    }
    // An object and nothing else: serde would also take a struct's fields
    // from an array in order (`[null, 0]`), which no client means.
    let bad = |e: serde_json::Error| {
        let hint = if e.to_string().contains("unknown field") {
            " (properties go in \"props\")"
        } else {
            ""
        };
        Problem::bad_request(format!("bad JSON body: {e}{hint}"))
    };
    let value: serde_json::Value = serde_json::from_slice(&req.body).map_err(bad)?;
    if !value.is_object() {
        return Err(Problem::bad_request("the body must be a JSON object"));
    }
    T::deserialize(value).map_err(bad)
}

/// A field that may be absent (leave as is), `null` (clear) or a value.
fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum VisibilityName {
    Public,
    Members,
    Group,
}

/// `visibility` and `content_group` as given, into the store's [`Visibility`].
pub(super) fn visibility(
    name: Option<VisibilityName>,
    content_group: Option<i64>,
    current: Visibility,
) -> Result<Visibility, Problem> {
    let bad = |m: &str| Err(Problem::bad_request(m));
    match (name, content_group) {
        (None, None) => Ok(current),
        (Some(VisibilityName::Public), None) => Ok(Visibility::Public),
        (Some(VisibilityName::Members), None) => Ok(Visibility::Members),
        (Some(VisibilityName::Group) | None, Some(g)) if g > 0 => {
            Ok(Visibility::Group(ResourceId(g)))
        }
        (Some(VisibilityName::Group), None) => {
            bad("visibility \"group\" needs a content_group (its id)")
        }
        (Some(_), Some(_)) => bad("a content_group goes with visibility \"group\" only"),
        (None, Some(_)) => bad("content_group must be a resource id"),
    }
}

/// `POST /api/rsc`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NewFields {
    pub category: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub published: bool,
    #[serde(default)]
    pub publication_start: Option<DateTime<Utc>>,
    #[serde(default)]
    pub publication_end: Option<DateTime<Utc>>,
    #[serde(default)]
    pub visibility: Option<VisibilityName>,
    #[serde(default)]
    pub content_group: Option<i64>,
    #[serde(default)]
    pub props: Props,
}

/// `PATCH /api/rsc/{id}`: a merge patch of the resource document (RFC 7396):
/// fields left out stay as they are; in `props`, `null` removes a property.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PatchFields {
    #[serde(default, deserialize_with = "nullable")]
    pub name: Option<Option<String>>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub published: Option<bool>,
    #[serde(default, deserialize_with = "nullable")]
    pub publication_start: Option<Option<DateTime<Utc>>>,
    #[serde(default, deserialize_with = "nullable")]
    pub publication_end: Option<Option<DateTime<Utc>>>,
    #[serde(default)]
    pub visibility: Option<VisibilityName>,
    #[serde(default)]
    pub content_group: Option<i64>,
    #[serde(default)]
    pub props: Option<Props>,
}

/// `POST /api/rsc/{id}/edges`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NewEdge {
    pub predicate: String,
    pub object: i64,
    /// Where in the subject's list (0 is first); the end when left out.
    #[serde(default)]
    pub position: Option<usize>,
}

/// `PATCH /api/rsc/{id}/edges/{predicate}/{object}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EdgeMove {
    pub position: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_tells_left_out_from_null() {
        let p: PatchFields = serde_json::from_str(r#"{"name": null}"#).unwrap();
        assert_eq!(p.name, Some(None));
        assert_eq!(p.publication_start, None);
        let p: PatchFields = serde_json::from_str(r#"{"props": {"title": "x"}}"#).unwrap();
        assert_eq!(p.name, None);
        assert!(serde_json::from_str::<PatchFields>(r#"{"title": "x"}"#).is_err());
    }

    #[test]
    fn visibility_and_content_group_go_together() {
        let cur = Visibility::Members;
        assert!(matches!(
            visibility(None, None, cur),
            Ok(Visibility::Members)
        ));
        assert!(matches!(
            visibility(Some(VisibilityName::Public), None, cur),
            Ok(Visibility::Public)
        ));
        assert!(matches!(
            visibility(None, Some(7), cur),
            Ok(Visibility::Group(ResourceId(7)))
        ));
        assert!(visibility(Some(VisibilityName::Group), None, cur).is_err());
        assert!(visibility(Some(VisibilityName::Members), Some(7), cur).is_err());
        assert!(visibility(None, Some(-1), cur).is_err());
    }
}
