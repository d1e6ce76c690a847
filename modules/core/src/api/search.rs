//! `GET /api/search?cat=&text=&language=&sort=&page=&pagelen=`: resources as the caller
//! may see them, filtered in the database by the same rules as `m.search`
//! ([`AccessPolicy::search_filter`](bulwark_acl::AccessPolicy::search_filter))
//! and each result checked once more like any other resource.

use http::StatusCode;
use serde_json::json;

use bulwark_acl::AccessPolicy;
use bulwark_store::{ResourceId, SearchQuery, SortKey, VisibilityFilter};

use super::reply;
use super::resource_json;
use bulwark_web::parse_form;
use bulwark_web::{Access, Caller, Endpoint, Outcome, Problem, RequestCtx};

const MAX_PAGELEN: u64 = 100;
const MAX_PAGE: u64 = 1_000_000;

/// A query parameter that must be a whole number in `range` when given.
fn number(
    params: &[(String, String)],
    name: &str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, Problem> {
    match params.iter().rev().find(|(k, _)| k == name) {
        None => Ok(default),
        Some((_, v)) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                Problem::bad_request(format!(
                    "{name} must be a whole number from {} to {}",
                    range.start(),
                    range.end()
                ))
            }),
    }
}

pub(super) async fn search(req: &RequestCtx<'_>, caller: Caller<'_>) -> Result<Outcome, Problem> {
    let params = parse_form(req.parts.uri.query().unwrap_or("").as_bytes());
    let param = |name: &str| {
        params
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    };
    let mut q = SearchQuery {
        visibility: match caller {
            Caller::SiteToken => VisibilityFilter::Everything,
            Caller::Principal(who) => req.site.policy().search_filter(who),
        },
        text: param("text").map(str::to_string),
        count_total: true,
        ..SearchQuery::default()
    };
    if let Some(cat) = param("cat") {
        q.categories = vec![cat.to_string()];
    }
    // The language `text` is in (its words stemmed that language's way).
    if let Some(language) = param("language") {
        if !req.site.config().languages.iter().any(|l| l == language) {
            return Err(Problem::bad_request(format!(
                "language {language:?} is not one of the site's: {}",
                req.site.config().languages.join(", ")
            )));
        }
        q.language = Some(language.to_owned());
    }
    // Given but empty is a mistake, not the default.
    let sort = params
        .iter()
        .rev()
        .find(|(k, _)| k == "sort")
        .map_or("-created", |(_, v)| v.as_str());
    let Some((key, descending)) = SortKey::parse(sort) else {
        return Err(Problem::bad_request(format!(
            "cannot sort by {sort:?}: use {}, with - in front for descending",
            SortKey::NAMES
        )));
    };
    (q.sort, q.descending) = (key, descending);
    let page = number(&params, "page", 1, 1..=MAX_PAGE)?;
    let pagelen = number(&params, "pagelen", 20, 1..=MAX_PAGELEN)?;
    q.limit = pagelen;
    q.offset = (page - 1) * pagelen;
    let store = req.site.models().store.clone();
    let found = store
        .run(move |s| {
            let page = s.search(&q)?;
            let items = page
                .ids
                .iter()
                .map(|id: &ResourceId| s.resource(*id))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((items, page.total.unwrap_or(0)))
        })
        .await;
    match found {
        Ok((items, total)) => {
            let items: Vec<serde_json::Value> = items
                .iter()
                .flatten()
                .filter(|r| caller.may_see(req.site, r))
                .map(|r| resource_json(caller, req.site, r))
                .collect();
            reply(
                StatusCode::OK,
                json!({
                    "items": items,
                    "total": total,
                    "page": page,
                    "pages": total.div_ceil(pagelen)
                }),
            )
        }
        Err(e) => Err(e.into()),
    }
}

/// This file's endpoints, with their OpenAPI descriptions.
pub(super) fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::new("api_search", "/api/search")
            .get(
                Access::Anyone,
                || json!({
                    "operationId": "search",
                    "summary": "Find resources",
                    "tags": [
                        "search"
                    ],
                    "description": "Only what the caller may see, filtered in the database by the site's access rules.",
                    "parameters": [
                        {
                            "name": "cat",
                            "in": "query",
                            "description": "A category; its subcategories match too.",
                            "schema": {
                                "type": "string"
                            }
                        },
                        {
                            "name": "text",
                            "in": "query",
                            "description": "Words that must all occur (prefix match).",
                            "schema": {
                                "type": "string"
                            }
                        },
                        {
                            "name": "language",
                            "in": "query",
                            "description": "The language the text is in, one of the site's: each resource's text in that language is searched, stemmed its way (docs/languages.md).",
                            "schema": {
                                "type": "string"
                            }
                        },
                        {
                            "name": "sort",
                            "in": "query",
                            "schema": {
                                "type": "string",
                                "enum": [
                                    "created",
                                    "-created",
                                    "modified",
                                    "-modified",
                                    "title",
                                    "-title",
                                    "publication_start",
                                    "-publication_start",
                                    "id",
                                    "-id"
                                ],
                                "default": "-created"
                            }
                        },
                        {
                            "name": "page",
                            "in": "query",
                            "schema": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": 1000000,
                                "default": 1
                            }
                        },
                        {
                            "name": "pagelen",
                            "in": "query",
                            "schema": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": 100,
                                "default": 20
                            }
                        }
                    ],
                    "responses": {
                        "200": {
                            "description": "One page of results",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/SearchPage"
                                    }
                                }
                            }
                        }
                    }
                }),
                |req, caller| Box::pin(search(req, caller)),
            ),
    ]
}
