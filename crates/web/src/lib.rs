//! The running sites: everything between the HTTP protocol (the `http` crate) and
//! the sites' data and templates.
//!
//! A request goes: the [`Sites`] handler picks the site by host (aliases redirect,
//! unknown hosts go to the default site) -> modules may rewrite the path
//! ([`events::RequestDispatch`]) -> the site's router picks a dispatch rule -> the
//! rule's controller (`controllers/`, or a kind a module brought) resolves the
//! request: a template or a resource's page is rendered through the render
//! bottleneck and, for anonymous visitors, the page cache; static files come from
//! `lib/` and `files/` -> `respond/` makes every HTTP decision (304, ranges,
//! encoding, HEAD, `Content-Language`) in one place.
//!
//! Modules plug in through [`Module`]: JSON endpoints (declared once beside
//! their handlers, [`Endpoint`]; the OpenAPI document is made from them),
//! controller kinds, observers of the core [`events`], template functions,
//! migrations. Every JSON error is one [`Problem`] (`application/problem+json`).
//! Dependencies point one way: this crate knows no module; the binary
//! registers them.
//!
//! Deliberately not here: the protocol (accepting, limits, TLS handshakes, the
//! access log: `bulwark-http`), push (the `push` module), parsing `site.toml`
//! (`bulwark-site`) and the models (`bulwark-template`).

mod authenticate;
mod bearer;
mod bottleneck;
mod content_type;
mod controllers;
mod counters;
mod dispatch;
mod endpoint;
mod error;
mod error_page;
pub mod events;
mod figures;
pub mod file_cache;
mod form;
mod language;
mod metric;
mod module;
mod notifier;
mod options;
mod origin;
mod page_cache;
mod problem;
mod reload;
mod render;
mod representation;
mod request;
mod respond;
mod security_headers;
mod site;
mod sites;
mod status;
mod stores;
mod surrogate;
mod table;
mod tls;

pub use authenticate::{Authenticated, Authenticator, CSRF_FIELD, CSRF_HEADER};
pub use bearer::{BearerCheck, check_bearer};
pub use bottleneck::{Bottleneck, LibBuilds, LibLimits, RenderCost, RenderLimits, busy_response};
pub use content_type::content_type_for;
pub use controllers::{Controller, ControllerFactory, GET_HEAD};
pub use counters::{Counters, LATENCY_BOUNDS, RuleAnswers, controller_kind};
pub use endpoint::{
    Access, Answer, Api, Caller, Doc, Endpoint, Handler, id_arg, resource_for, visible_resource,
};
pub use error::{LoadError, ModuleError, OpenError, StartError, read_settings};
pub use error_page::{empty_response, error_response, error_response_for, json_response};
pub use figures::{FIGURES_EVERY, Figures, PoolUse};
pub use form::parse_form;
pub use language::pick_language;
pub use metric::{Metric, MetricKind, core_metrics, refused};
pub use module::{Module, SiteSetup, enabled_modules};
pub use notifier::SiteNotifier;
pub use options::SitesOptions;
pub use origin::{Origin, origin_of};
pub use page_cache::SESSION_COOKIE;
pub use problem::{PROBLEM_TYPE_PREFIX, Problem, ProblemKind};
pub use reload::{ReloadError, ReloadHandle};
pub use render::{render_page, render_uncached};
pub use representation::{Content, Outcome, Representation};
pub use request::RequestCtx;
pub use respond::not_modified;
pub use site::{ModuleInfo, SiteRuntime};
pub use sites::Sites;
pub use status::{CacheStatus, HitRatio, Purge, SiteStatus};
pub use stores::open_site_store;
pub use surrogate::{Surrogate, site_token as surrogate_site_token, token as surrogate_token};
pub use tls::{Certificates, TlsError};
