//! The `vote` controller kind: `step = "ballot"` (the voter's form, `GET` with
//! the three picks as `?p=..&p=..&p=..`, and its `POST`), `"thanks"` (the
//! confirmation, behind a signed link) and `"totals"` (administrators only).
//!
//! The form's answers: `303` to the confirmation when the vote was taken; the
//! form again with each problem named when not: `400` (a field, the picks),
//! `403` (the ballot expired or the post came from another site), `409` (the
//! address already voted). Problems travel to the template as codes
//! (`errors.email == "taken"`) so the site words them in each language.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::header::{CACHE_CONTROL, HOST, LOCATION, ORIGIN};
use http::{HeaderValue, Method, Response, StatusCode};
use minijinja::Value;
use serde::Deserialize;
use serde_json::json;

use bulwark_acl::AccessPolicy;
use bulwark_module_push::PushHub;
use bulwark_store::{ResourceId, Store, StoreError};
use bulwark_web::{
    Controller, GET_HEAD, ModuleError, Outcome, RequestCtx, SiteNotifier, busy_response,
    error_response, error_response_for, parse_form, read_settings, render_page,
};

use crate::ballot::{PICKS, Problems, Typed, VotingKey, parse_picks};
use crate::projects::{PROJECT_CATEGORY, THEMES};

/// The form field that carries the ballot token.
pub const BALLOT_FIELD: &str = "_ballot";

/// What a site's vote pages share.
pub(crate) struct VotingPages {
    pub key: VotingKey,
    pub notifier: SiteNotifier,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Step {
    Ballot,
    Thanks,
    Totals,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VoteOptions {
    step: Step,
    /// The template (defaults: `vote.tpl`, `vote_thanks.tpl`, `vote_totals.tpl`).
    template: Option<String>,
}

pub(crate) struct VoteController {
    pages: Arc<VotingPages>,
    step: Step,
    template: String,
}

impl VoteController {
    pub(crate) fn new(
        pages: Arc<VotingPages>,
        options: &toml::Table,
    ) -> Result<VoteController, ModuleError> {
        let options: VoteOptions = read_settings(options)?;
        let template = options.template.unwrap_or_else(|| {
            match options.step {
                Step::Ballot => "vote.tpl",
                Step::Thanks => "vote_thanks.tpl",
                Step::Totals => "vote_totals.tpl",
            }
            .to_owned()
        });
        Ok(VoteController {
            pages,
            step: options.step,
            template,
        })
    }
}

const GET_HEAD_POST: &[Method] = &[Method::GET, Method::HEAD, Method::POST];

impl Controller for VoteController {
    fn allowed_methods(&self) -> &'static [Method] {
        match self.step {
            Step::Ballot => GET_HEAD_POST,
            Step::Thanks | Step::Totals => GET_HEAD,
        }
    }

    fn reads_body(&self) -> bool {
        self.step == Step::Ballot
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match (self.step, req.parts.method == Method::POST) {
                (Step::Ballot, false) => self.ballot(req).await,
                (Step::Ballot, true) => self.cast(req).await,
                (Step::Thanks, _) => self.thanks(req).await,
                (Step::Totals, _) => self.totals(req).await,
            }
        })
    }
}

/// The form again (or the first time), with what was typed and what is wrong.
struct Form<'a> {
    picks: Vec<i64>,
    typed: Typed,
    errors: Problems,
    ballot: &'a str,
}

impl VoteController {
    async fn show(&self, req: &RequestCtx<'_>, status: StatusCode, form: Form<'_>) -> Outcome {
        let mut vars = BTreeMap::new();
        vars.insert("picks".to_owned(), Value::from(form.picks));
        vars.insert(
            "typed".to_owned(),
            Value::from(minijinja::value::Serde(&form.typed)),
        );
        vars.insert(
            "errors".to_owned(),
            Value::from(minijinja::value::Serde(&form.errors)),
        );
        vars.insert("ballot".to_owned(), Value::from(form.ballot));
        vars.insert("ballot_field".to_owned(), Value::from(BALLOT_FIELD));
        render_page(req, &self.template, status, vars).await
    }

    /// `GET /vote?p=..&p=..&p=..`: the form for these three projects.
    async fn ballot(&self, req: &RequestCtx<'_>) -> Outcome {
        let query = parse_form(req.parts.uri.query().unwrap_or("").as_bytes());
        let picked = parse_picks(values(&query, "p"));
        let ballot = self.pages.key.ballot();
        let mut form = Form {
            picks: Vec::new(),
            typed: Typed::default(),
            errors: Problems::new(),
            ballot: &ballot,
        };
        let status = match self.checked_picks(req, picked).await {
            Ok(picks) => {
                form.picks = picks.to_vec();
                StatusCode::OK
            }
            Err(Refusal::Picks(code)) => {
                form.errors.insert("picks", code);
                StatusCode::BAD_REQUEST
            }
            Err(Refusal::Store(e)) => return store_failure(req, &e),
        };
        self.show(req, status, form).await
    }

    /// `POST /vote`: take the vote, or say why not.
    async fn cast(&self, req: &RequestCtx<'_>) -> Outcome {
        let fields = parse_form(&req.body);
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let typed = Typed {
            name: field("name"),
            email: field("email"),
            postcode: field("postcode"),
        };
        let fresh = self.pages.key.ballot();
        let mut form = Form {
            picks: values(&fields, "p")
                .filter_map(|p| p.parse().ok())
                .take(PICKS)
                .collect(),
            typed: typed.clone(),
            errors: Problems::new(),
            ballot: &fresh,
        };
        if from_another_site(req) || !self.pages.key.ballot_is_valid(&field(BALLOT_FIELD)) {
            form.errors.insert("form", "expired");
            return self.show(req, StatusCode::FORBIDDEN, form).await;
        }
        let picks = match self
            .checked_picks(req, parse_picks(values(&fields, "p")))
            .await
        {
            Ok(picks) => picks,
            Err(Refusal::Picks(code)) => {
                form.errors.insert("picks", code);
                return self.show(req, StatusCode::BAD_REQUEST, form).await;
            }
            Err(Refusal::Store(e)) => return store_failure(req, &e),
        };
        let voter = match typed.check() {
            Ok(voter) => voter,
            Err(problems) => {
                form.errors = problems;
                return self.show(req, StatusCode::BAD_REQUEST, form).await;
            }
        };
        let store = req.site.models().store.clone();
        let inserted = store
            .run(move |s| {
                s.module_write(|tx| {
                    let row = tx.query_one(
                        "INSERT INTO voting_vote (email, name, postcode, pick1, pick2, pick3, created) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                        &[
                            voter.email.into(),
                            voter.name.into(),
                            voter.postcode.into(),
                            picks[0].into(),
                            picks[1].into(),
                            picks[2].into(),
                            now_millis().into(),
                        ],
                    )?;
                    Ok(row.expect("INSERT .. RETURNING gives a row").int(0))
                })
            })
            .await;
        let id = match inserted {
            Ok(id) => id,
            Err(StoreError::Duplicate(_)) => {
                form.errors.insert("email", "taken");
                return self.show(req, StatusCode::CONFLICT, form).await;
            }
            Err(e) => return store_failure(req, &e),
        };
        if let Some(hub) = self.pages.notifier.current().first(&PushHub) {
            let told = json!({"projects": picks}).to_string();
            if let Err(e) = hub.publish(crate::VOTES_TOPIC, &told) {
                tracing::warn!(error = %e, "telling the totals of a vote");
            }
        }
        let location = format!("/vote/thanks/{id}?k={}", self.pages.key.receipt(id));
        let mut resp = Response::new(bulwark_http::Body::empty());
        *resp.status_mut() = StatusCode::SEE_OTHER;
        if let Ok(location) = HeaderValue::from_str(&location) {
            resp.headers_mut().insert(LOCATION, location);
        }
        resp.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        Outcome::Response(resp)
    }

    /// `GET /vote/thanks/{id}?k=..`: what this voter voted for.
    async fn thanks(&self, req: &RequestCtx<'_>) -> Outcome {
        let Some(id) = req.arg("id").and_then(|id| id.parse::<i64>().ok()) else {
            return Outcome::NotFound;
        };
        if !self
            .pages
            .key
            .receipt_is_valid(id, req.query_param("k").unwrap_or(""))
        {
            return Outcome::NotFound;
        }
        let store = req.site.models().store.clone();
        let vote = store
            .run(move |s| {
                s.module_read(|tx| {
                    tx.query_one(
                        "SELECT name, pick1, pick2, pick3 FROM voting_vote WHERE id = $1",
                        &[id.into()],
                    )
                    .map(|row| row.map(|r| (r.text(0), vec![r.int(1), r.int(2), r.int(3)])))
                })
            })
            .await;
        let (name, picks) = match vote {
            Ok(Some(vote)) => vote,
            Ok(None) => return Outcome::NotFound,
            Err(e) => return store_failure(req, &e),
        };
        let mut vars = BTreeMap::new();
        vars.insert("name".to_owned(), Value::from(name));
        vars.insert("picks".to_owned(), Value::from(picks));
        render_page(req, &self.template, StatusCode::OK, vars).await
    }

    /// `GET /admin/votes`: the totals so far, for administrators.
    async fn totals(&self, req: &RequestCtx<'_>) -> Outcome {
        let who = req.principal();
        if who.is_anonymous() {
            return to_logon(req);
        }
        if !who.is_administrator() {
            return Outcome::Response(error_response_for(req, StatusCode::FORBIDDEN, None));
        }
        let store = req.site.models().store.clone();
        let counted = store
            .run(|s| {
                s.module_read(|tx| {
                    let votes = tx
                        .query_one("SELECT count(*) FROM voting_vote", &[])?
                        .map_or(0, |r| r.int(0));
                    let per_project = tx
                        .query(
                            "SELECT p, count(*) FROM ( \
                               SELECT pick1 AS p FROM voting_vote UNION ALL \
                               SELECT pick2 FROM voting_vote UNION ALL \
                               SELECT pick3 FROM voting_vote) picks \
                             GROUP BY p ORDER BY count(*) DESC, p",
                            &[],
                        )?
                        .iter()
                        .map(|r| (r.int(0), r.int(1)))
                        .collect::<Vec<_>>();
                    Ok((votes, per_project))
                })
            })
            .await;
        let (votes, per_project) = match counted {
            Ok(counted) => counted,
            Err(e) => return store_failure(req, &e),
        };
        let mut vars = BTreeMap::new();
        vars.insert("votes".to_owned(), Value::from(votes));
        vars.insert(
            "totals".to_owned(),
            Value::from(
                per_project
                    .into_iter()
                    .map(|(id, n)| {
                        Value::from(minijinja::value::Serde(json!({"id": id, "votes": n})))
                    })
                    .collect::<Vec<_>>(),
            ),
        );
        vars.insert("topic".to_owned(), Value::from(crate::VOTES_TOPIC));
        render_page(req, &self.template, StatusCode::OK, vars).await
    }

    /// The picks, when each is a published project this visitor may see.
    async fn checked_picks(
        &self,
        req: &RequestCtx<'_>,
        picked: Result<[i64; PICKS], &'static str>,
    ) -> Result<[i64; PICKS], Refusal> {
        let picks = picked.map_err(Refusal::Picks)?;
        let store: Store = req.site.models().store.clone();
        let resources = store
            .run(move |s| {
                picks
                    .iter()
                    .map(|&id| s.resource(ResourceId(id)))
                    .collect::<Result<Vec<_>, _>>()
            })
            .await
            .map_err(Refusal::Store)?;
        let projects = [PROJECT_CATEGORY]
            .into_iter()
            .chain(THEMES.iter().map(|(name, _, _)| *name))
            .collect::<Vec<_>>();
        let all_projects = resources.iter().all(|r| {
            r.as_ref().is_some_and(|r| {
                projects.contains(&r.category_name.as_str())
                    && req.site.policy().may_see(req.principal(), r)
            })
        });
        if all_projects {
            Ok(picks)
        } else {
            Err(Refusal::Picks("unknown"))
        }
    }
}

enum Refusal {
    Picks(&'static str),
    Store(StoreError),
}

fn values<'a>(pairs: &'a [(String, String)], name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    pairs
        .iter()
        .filter(move |(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Whether the browser says this post comes from another site's page: its
/// `Sec-Fetch-Site`, or an `Origin` whose host is not the one asked for.
fn from_another_site(req: &RequestCtx<'_>) -> bool {
    let headers = &req.parts.headers;
    if headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes() == b"cross-site")
    {
        return true;
    }
    let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let host = headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.parts.uri.authority().map(|a| a.as_str()))
        .unwrap_or("");
    let origin_host = origin.split_once("://").map_or("", |(_, h)| h);
    origin == "null" || !origin_host.eq_ignore_ascii_case(host)
}

fn store_failure(req: &RequestCtx<'_>, e: &StoreError) -> Outcome {
    if e.is_temporary() {
        return Outcome::Response(busy_response());
    }
    tracing::error!(error = %e, "the voting pages");
    Outcome::Response(error_response(
        req.site,
        StatusCode::INTERNAL_SERVER_ERROR,
        None,
    ))
}

/// To the logon page, and back to the totals afterwards.
fn to_logon(_req: &RequestCtx<'_>) -> Outcome {
    let mut resp = Response::new(bulwark_http::Body::empty());
    *resp.status_mut() = StatusCode::SEE_OTHER;
    resp.headers_mut().insert(
        LOCATION,
        HeaderValue::from_static("/logon?next=/admin/votes"),
    );
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Outcome::Response(resp)
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
