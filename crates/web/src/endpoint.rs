//! Endpoints: a JSON operation declared once, next to its handler.
//!
//! A module lists its endpoints in [`Module::api`](crate::Module::api): each
//! [`Endpoint`] has a name (its dispatch rule's), a path, and per method an
//! [`Operation`]: who may call it ([`Access`]), how it takes its body, its
//! OpenAPI description and its handler. From that one declaration come the
//! module's dispatch rule (`ModuleManifest::with_endpoints`), the `405` with
//! `Allow`, the access decision (made before the body is read: an anonymous
//! write is a 401 whatever it sends), and the site's OpenAPI document
//! ([`openapi_document`]), which therefore lists every endpoint of every
//! enabled module at the path the site serves it. A site moves an endpoint
//! with a rule of the same name (`controller = "endpoint"`), or replaces it
//! with a rule of another kind.
//!
//! Handlers return `Result<Outcome, Problem>`: every error is one
//! [`Problem`] (`application/problem+json`).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::Method;
use http::header::AUTHORIZATION;
use http::request::Parts;
use serde_json::{Value, json};

use bulwark_acl::AccessPolicy;
use bulwark_acl::{Action, Principal};
use bulwark_store::{Resource, ResourceId, Visibility};

use crate::bearer::{BearerCheck, check_bearer};
use crate::controllers::Controller;
use crate::problem::Problem;
use crate::representation::Outcome;
use crate::request::RequestCtx;
use crate::site::SiteRuntime;

/// An OpenAPI description, made when the document is asked for: the code that
/// builds it is never run (nor paged in) by a site whose document nobody reads.
pub type Doc = fn() -> Value;

/// What a handler's future gives: the answer, or the problem.
pub type Answer<'a> = BoxFuture<'a, Result<Outcome, Problem>>;

/// An operation's code: the request and who is asking (already admitted by the
/// operation's [`Access`]).
pub trait Handler: Send + Sync + 'static {
    fn call<'a>(&'a self, req: &'a RequestCtx<'a>, caller: Caller<'a>) -> Answer<'a>;
}

impl<F> Handler for F
where
    F: for<'a> Fn(&'a RequestCtx<'a>, Caller<'a>) -> Answer<'a> + Send + Sync + 'static,
{
    fn call<'a>(&'a self, req: &'a RequestCtx<'a>, caller: Caller<'a>) -> Answer<'a> {
        self(req, caller)
    }
}

/// Who may call an operation, decided before its body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone: the handler decides, per resource, what the caller may see or do.
    Anyone,
    /// Someone who said who they are (a session, an API token, the site's token).
    Known,
    /// The people of a group (and the holder of the site's token).
    Group(&'static str),
    /// The holder of the site's `[api] token` only.
    SiteToken,
}

/// How an operation takes its request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyUse {
    /// Read whole (within the server's limit) before the handler runs.
    Read,
    /// Handed to the handler as it arrives (uploads, with their own limits):
    /// [`RequestCtx::take_body_stream`].
    Stream,
}

/// One method of an endpoint.
pub struct Operation {
    method: Method,
    access: Access,
    body: BodyUse,
    doc: Doc,
    handler: Box<dyn Handler>,
}

/// A path and its operations, named like its dispatch rule.
pub struct Endpoint {
    name: &'static str,
    path: &'static str,
    operations: Vec<Operation>,
    /// The methods answered (GET brings HEAD), for `Allow`.
    methods: Vec<Method>,
}

impl Endpoint {
    pub fn new(name: &'static str, path: &'static str) -> Endpoint {
        Endpoint {
            name,
            path,
            operations: Vec::new(),
            methods: Vec::new(),
        }
    }

    /// An operation: `doc` makes its OpenAPI operation object (`operationId`,
    /// `summary`, parameters, request body, its successful responses); the
    /// error responses its access implies, and every other error as a
    /// problem, are added to it.
    pub fn operation<F>(mut self, method: Method, access: Access, doc: Doc, handler: F) -> Endpoint
    where
        F: for<'a> Fn(&'a RequestCtx<'a>, Caller<'a>) -> Answer<'a> + Send + Sync + 'static,
    {
        assert!(
            !self.operations.iter().any(|o| o.method == method),
            "endpoint {}: {method} declared twice",
            self.name
        );
        if method == Method::GET {
            self.methods.push(Method::HEAD);
        }
        self.methods.push(method.clone());
        self.operations.push(Operation {
            method,
            access,
            body: BodyUse::Read,
            doc,
            handler: Box::new(handler),
        });
        self
    }

    pub fn get<F>(self, access: Access, doc: Doc, handler: F) -> Endpoint
    where
        F: for<'a> Fn(&'a RequestCtx<'a>, Caller<'a>) -> Answer<'a> + Send + Sync + 'static,
    {
        self.operation(Method::GET, access, doc, handler)
    }

    pub fn post<F>(self, access: Access, doc: Doc, handler: F) -> Endpoint
    where
        F: for<'a> Fn(&'a RequestCtx<'a>, Caller<'a>) -> Answer<'a> + Send + Sync + 'static,
    {
        self.operation(Method::POST, access, doc, handler)
    }

    pub fn put<F>(self, access: Access, doc: Doc, handler: F) -> Endpoint
    where
        F: for<'a> Fn(&'a RequestCtx<'a>, Caller<'a>) -> Answer<'a> + Send + Sync + 'static,
    {
        self.operation(Method::PUT, access, doc, handler)
    }

    pub fn patch<F>(self, access: Access, doc: Doc, handler: F) -> Endpoint
    where
        F: for<'a> Fn(&'a RequestCtx<'a>, Caller<'a>) -> Answer<'a> + Send + Sync + 'static,
    {
        self.operation(Method::PATCH, access, doc, handler)
    }

    pub fn delete<F>(self, access: Access, doc: Doc, handler: F) -> Endpoint
    where
        F: for<'a> Fn(&'a RequestCtx<'a>, Caller<'a>) -> Answer<'a> + Send + Sync + 'static,
    {
        self.operation(Method::DELETE, access, doc, handler)
    }

    /// The last operation declared takes its body as it arrives.
    pub fn streaming_body(mut self) -> Endpoint {
        if let Some(op) = self.operations.last_mut() {
            op.body = BodyUse::Stream;
        }
        self
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn path(&self) -> &'static str {
        self.path
    }

    fn operation_for(&self, method: &Method) -> Option<&Operation> {
        let method = if *method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.operations.iter().find(|o| o.method == method)
    }
}

/// What a module adds to the JSON API: its endpoints and the schemas their
/// descriptions refer to (`#/components/schemas/<name>`).
#[derive(Default)]
pub struct Api {
    endpoints: Vec<Endpoint>,
    schemas: Vec<(&'static str, Doc)>,
}

impl Api {
    pub fn new() -> Api {
        Api::default()
    }

    pub fn endpoint(mut self, endpoint: Endpoint) -> Api {
        self.endpoints.push(endpoint);
        self
    }

    pub fn schema(mut self, name: &'static str, schema: Doc) -> Api {
        self.schemas.push((name, schema));
        self
    }

    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// `(name, path)` of each endpoint: the rules its manifest adds.
    pub fn routes(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        self.endpoints.iter().map(|e| (e.name, e.path))
    }
}

/// Who a request is made by, as an endpoint decides what they may do.
#[derive(Clone, Copy)]
pub enum Caller<'a> {
    /// The holder of the site's `[api] token`: everything.
    SiteToken,
    /// Whoever the session or API token says (anonymous without either).
    Principal(&'a Principal),
}

impl<'a> Caller<'a> {
    /// Who is asking. A request whose `Authorization` names nobody (a wrong or
    /// revoked token) is refused outright rather than served as anonymous: a
    /// script should learn that its token no longer works.
    pub fn of(
        parts: &Parts,
        site: &SiteRuntime,
        principal: &'a Principal,
    ) -> Result<Caller<'a>, Problem> {
        if !principal.is_anonymous() || !parts.headers.contains_key(AUTHORIZATION) {
            return Ok(Caller::Principal(principal));
        }
        match check_bearer(parts, site.config().api.token.as_deref()) {
            BearerCheck::Allowed => Ok(Caller::SiteToken),
            BearerCheck::NotConfigured | BearerCheck::Refused => Err(Problem::unauthenticated(
                "the bearer token is not valid (revoked, expired or mistyped)",
            )),
        }
    }

    pub fn may(self, site: &SiteRuntime, action: Action, r: &Resource) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => site.policy().may(who, action, r),
        }
    }

    pub fn may_see(self, site: &SiteRuntime, r: &Resource) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => site.policy().may_see(who, r),
        }
    }

    pub fn may_insert(self, site: &SiteRuntime, category: &str, visibility: Visibility) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => site.policy().may_insert(who, category, visibility),
        }
    }

    /// Whether the caller may read property `name` of `r`.
    pub fn may_read(self, site: &SiteRuntime, r: &Resource, name: &str) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => site.policy().may_read(who, r, name),
        }
    }

    /// Whether the caller counts as one of `group`'s people (the site's
    /// token counts as everyone).
    pub fn in_group(self, group: &str) -> bool {
        match self {
            Caller::SiteToken => true,
            Caller::Principal(who) => who.in_group(group),
        }
    }

    pub fn is_anonymous(self) -> bool {
        matches!(self, Caller::Principal(who) if who.is_anonymous())
    }

    /// The principal, unless the caller is the site's token.
    pub fn principal(self) -> Option<&'a Principal> {
        match self {
            Caller::SiteToken => None,
            Caller::Principal(who) => Some(who),
        }
    }

    /// The user resource to record as creator or modifier.
    pub fn user(self) -> Option<ResourceId> {
        self.principal().and_then(Principal::user_id)
    }

    /// The answer to a refused action: 401 to someone who has not said who
    /// they are, 403 to someone the rules do not let.
    pub fn refused(self, what: &str) -> Problem {
        if self.is_anonymous() {
            Problem::unauthenticated(format!("log on or send an API token to {what}"))
        } else {
            Problem::forbidden(format!("you may not {what}"))
        }
    }

    /// Whether `access` admits this caller; `what` names the operation in a
    /// refusal (made only for one: naming it builds the operation's
    /// description).
    fn admit(
        self,
        access: Access,
        site: &SiteRuntime,
        what: impl FnOnce() -> String,
    ) -> Result<(), Problem> {
        match access {
            Access::Anyone => Ok(()),
            Access::Known if !self.is_anonymous() => Ok(()),
            Access::Known => Err(self.refused(&what())),
            Access::Group(group) if self.in_group(group) => Ok(()),
            Access::Group(_) => Err(self.refused(&what())),
            Access::SiteToken => match (self, &site.config().api.token) {
                (Caller::SiteToken, _) => Ok(()),
                (_, None) => Err(Problem::forbidden(format!(
                    "{} needs the site's API token: set [api] token",
                    what()
                ))),
                (_, Some(_)) => Err(Problem::unauthenticated(format!(
                    "{} needs the site's API token ([api] token)",
                    what()
                ))),
            },
        }
    }
}

/// The controller of a rule that names an endpoint.
pub(crate) struct EndpointController {
    endpoint: &'static Endpoint,
}

impl EndpointController {
    pub(crate) fn new(endpoint: &'static Endpoint) -> EndpointController {
        EndpointController { endpoint }
    }
}

/// The operation's summary, or its method and path, to name it in a refusal.
fn describe(endpoint: &Endpoint, op: &Operation) -> String {
    match (op.doc)().get("summary").and_then(Value::as_str) {
        Some(summary) => lower_first(summary),
        None => format!("{} {}", op.method, endpoint.path),
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Controller for EndpointController {
    fn allowed_methods(&self) -> &[Method] {
        &self.endpoint.methods
    }

    fn reads_body(&self) -> bool {
        true
    }

    fn answers_json(&self) -> bool {
        true
    }

    fn streams_body(&self, method: &Method) -> bool {
        self.endpoint
            .operation_for(method)
            .is_some_and(|op| op.body == BodyUse::Stream)
    }

    fn admit(
        &self,
        parts: &Parts,
        site: &SiteRuntime,
        principal: &Principal,
    ) -> Result<(), Problem> {
        let Some(op) = self.endpoint.operation_for(&parts.method) else {
            return Ok(());
        };
        Caller::of(parts, site, principal)
            .and_then(|caller| caller.admit(op.access, site, || describe(self.endpoint, op)))
    }

    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(op) = self.endpoint.operation_for(&req.parts.method) else {
                return Problem::new(crate::ProblemKind::MethodNotAllowed, "no such method").into();
            };
            let caller = match Caller::of(req.parts, req.site, req.principal()) {
                Ok(caller) => caller,
                Err(problem) => return problem.into(),
            };
            match op.handler.call(req, caller).await {
                Ok(outcome) => outcome,
                Err(problem) => problem.into(),
            }
        })
    }
}

/// What a site's OpenAPI document is made from; the running site makes it the
/// first time it is asked for (most sites serve many requests and never this
/// one) and keeps it.
pub(crate) struct OpenApi {
    site: Arc<bulwark_site::Site>,
    apis: Vec<&'static Api>,
}

impl OpenApi {
    pub(crate) fn new(site: Arc<bulwark_site::Site>, apis: Vec<&'static Api>) -> OpenApi {
        OpenApi { site, apis }
    }

    /// The document: every rule of the site's router that names an endpoint,
    /// at the rule's path.
    pub(crate) fn make(self) -> bytes::Bytes {
        {
            let routes: Vec<(&str, &'static Endpoint)> = self
                .site
                .router
                .rules()
                .iter()
                .filter_map(|rule| match &rule.controller {
                    bulwark_site::Controller::Endpoint { name } => self
                        .apis
                        .iter()
                        .flat_map(|a| a.endpoints())
                        .find(|e| e.name() == name)
                        .map(|e| (rule.pattern.as_str(), e)),
                    _ => None,
                })
                .collect();
            let doc = openapi_document(&self.site, &routes, &self.apis);
            bytes::Bytes::from(serde_json::to_vec_pretty(&doc).expect("a JSON value serialises"))
        }
    }
}

/// The site's OpenAPI 3.1 document: every endpoint its router serves (at the
/// path it serves it), with the schemas of the modules that declare them.
fn openapi_document(
    site: &bulwark_site::Site,
    routes: &[(&str, &'static Endpoint)],
    apis: &[&'static Api],
) -> Value {
    let mut paths = BTreeMap::new();
    for (path, endpoint) in routes {
        let mut item = serde_json::Map::new();
        for op in &endpoint.operations {
            let has_parameters = path.contains('{');
            item.insert(
                op.method.as_str().to_lowercase(),
                operation_doc(op, has_parameters),
            );
        }
        paths.insert(openapi_path(path), Value::Object(item));
    }
    let mut schemas = serde_json::Map::new();
    schemas.insert("Error".into(), Problem::schema());
    for api in apis {
        for (name, schema) in &api.schemas {
            schemas.insert((*name).into(), schema());
        }
    }
    let problem = |description: &str| {
        json!({
            "description": description,
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        })
    };
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": format!("{} JSON API", site.name()),
            "version": "1",
            "description": "Resources, edges, search, revisions, accounts and media, read and written \
                through the site's access rules. Who is asking: a session cookie (with its CSRF \
                token on writes), a user's API token, or the site's `[api] token`. Every error \
                is `application/problem+json` (RFC 9457).",
        },
        "servers": [{"url": "/"}],
        "security": [{}, {"bearerAuth": []}, {"session": [], "csrf": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer", "description": "A user's API token, or the site's [api] token"},
                "siteToken": {"type": "http", "scheme": "bearer", "description": "The site's [api] token"},
                "session": {"type": "apiKey", "in": "cookie", "name": crate::SESSION_COOKIE},
                "csrf": {"type": "apiKey", "in": "header", "name": crate::CSRF_HEADER},
            },
            "parameters": {
                "id": {"name": "id", "in": "path", "required": true, "description": "A resource id", "schema": {"type": "integer", "minimum": 1}},
                "ifMatch": {"name": "If-Match", "in": "header", "required": false, "description": "The version the change is based on", "schema": {"type": "string", "pattern": "^(W/)?\"?[0-9]+\"?$"}},
            },
            "schemas": schemas,
            "responses": {
                "BadRequest": problem("The request is malformed or a value is not acceptable"),
                "Unauthorized": problem("Log on or send a token"),
                "Forbidden": problem("The caller may not do this"),
                "NotFound": problem("No such thing, or one the caller may not see"),
                "Gone": problem("Deleted"),
                "Conflict": problem("Changed since the given version"),
                "Unprocessable": problem("Refused for what it would cost"),
                "Error": problem("An error"),
            },
        },
    })
}

/// `{*path}` (a catch-all) is `{path}` in OpenAPI.
fn openapi_path(path: &str) -> String {
    path.replace("{*", "{")
}

fn operation_doc(op: &Operation, has_parameters: bool) -> Value {
    let mut doc = (op.doc)();
    let Some(object) = doc.as_object_mut() else {
        return doc;
    };
    let responses = object
        .entry("responses")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("responses is an object");
    let mut add = |status: &str, name: &str| {
        responses
            .entry(status)
            .or_insert_with(|| json!({"$ref": format!("#/components/responses/{name}")}));
    };
    // What every operation may answer: a malformed request, a token that is
    // not valid; what its access implies; and what a path names that is not
    // there (or not to be seen).
    add("400", "BadRequest");
    add("401", "Unauthorized");
    if op.access != Access::Anyone {
        add("403", "Forbidden");
    }
    if has_parameters {
        add("404", "NotFound");
    }
    add("default", "Error");
    if op.access == Access::SiteToken {
        object.insert("security".into(), json!([{"siteToken": []}]));
    }
    object.insert(
        "x-access".into(),
        match op.access {
            Access::Anyone => json!("anyone"),
            Access::Known => json!("known"),
            Access::Group(group) => json!(format!("group:{group}")),
            Access::SiteToken => json!("site-token"),
        },
    );
    doc
}

/// A numeric path argument; anything else names nothing here (404).
pub fn id_arg(req: &RequestCtx<'_>, name: &str) -> Option<i64> {
    req.arg(name)?.parse::<i64>().ok().filter(|id| *id > 0)
}

/// Loads a resource the caller may see: 404 for one they may not see, as
/// for one that does not exist (the API does not tell what exists to those
/// who may not see it).
pub async fn visible_resource(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
    id: i64,
) -> Result<Resource, Problem> {
    let id = ResourceId(id);
    match req.site.models().store.run(move |s| s.resource(id)).await? {
        Some(r) if caller.may_see(req.site, &r) => Ok(r),
        _ => Err(Problem::not_found("no such resource")),
    }
}

/// A resource the caller may see and act on: 404 when they may not see it,
/// 401/403 when they see it but may not do `action` (`what` says it).
pub async fn resource_for(
    req: &RequestCtx<'_>,
    caller: Caller<'_>,
    id: i64,
    action: Action,
    what: &str,
) -> Result<Resource, Problem> {
    let r = visible_resource(req, caller, id).await?;
    if caller.may(req.site, action, &r) {
        Ok(r)
    } else {
        Err(caller.refused(what))
    }
}
