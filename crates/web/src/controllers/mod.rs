//! Controllers: what answers a matched dispatch rule. A controller finds the thing
//! asked for and says what it is ([`Outcome`]); `respond` makes the HTTP decisions.
//!
//! The built-in kinds each have a file here; a module brings more kinds through
//! [`SiteSetup::add_controller`](crate::SiteSetup::add_controller). [`build`] is the
//! one place where a dispatch rule becomes a controller.

mod file;
mod lib_files;
mod page;
mod redirect;
mod template;

use std::collections::HashMap;

use futures_util::future::BoxFuture;
use http::Method;

use bulwark_acl::Principal;
use bulwark_site::{Controller as Kind, DispatchRule};

use crate::endpoint::{Api, EndpointController};
use crate::problem::Problem;
use crate::site::SiteRuntime;

use crate::error::ModuleError;
use crate::representation::Outcome;
use crate::request::RequestCtx;

pub const GET_HEAD: &[Method] = &[Method::GET, Method::HEAD];

pub trait Controller: Send + Sync {
    /// Methods this controller answers; others get `405` with an `Allow` header.
    fn allowed_methods(&self) -> &[Method] {
        GET_HEAD
    }

    /// Whether the request body should be read (within the limit) before `resolve`.
    fn reads_body(&self) -> bool {
        false
    }

    /// Whether the controller reads the body itself as it arrives (uploads:
    /// `RequestCtx::take_body_stream`) instead of the server reading it whole
    /// first. Such a controller keeps its own size and time limits, and a
    /// session's CSRF token must come in the `X-CSRF-Token` header.
    fn streams_body(&self, _method: &Method) -> bool {
        false
    }

    /// Whether the request may go on, decided from its head and who is asking
    /// before its body is read (an endpoint's declared access): `Err` is the
    /// refusal (a problem for JSON clients, the error page for browsers).
    fn admit(
        &self,
        _parts: &http::request::Parts,
        _site: &SiteRuntime,
        _principal: &Principal,
    ) -> Result<(), Problem> {
        Ok(())
    }

    /// Whether every answer, errors included, is JSON (an endpoint): a 405 or
    /// 413 before the controller runs is then a problem, not the error page.
    fn answers_json(&self) -> bool {
        false
    }

    /// Whether answering may wait a long time (a long-poll). Such a request gets
    /// its own copy of its head, so that it does not keep the connection's read
    /// buffer alive while it waits.
    fn waits_long(&self) -> bool {
        false
    }

    /// Finds the resource and everything `respond` needs to answer. Called once.
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome>;
}

/// Makes a controller of a module's kind from a rule's options (the rule's keys
/// other than `name`, `path` and `controller`); an error says what is wrong with
/// the options.
pub type ControllerFactory =
    Box<dyn Fn(&toml::Table) -> Result<Box<dyn Controller>, ModuleError> + Send + Sync>;

/// The controller kinds modules brought to one site, by the name rules use.
pub(crate) type ModuleKinds = HashMap<String, ControllerFactory>;

/// The controller for a rule: a built-in kind, an endpoint of an enabled
/// module, or a kind an enabled module brought.
pub(crate) fn build(
    rule: &DispatchRule,
    kinds: &ModuleKinds,
    apis: &[&'static Api],
) -> Result<Box<dyn Controller>, String> {
    Ok(match &rule.controller {
        Kind::Template {
            template,
            content_type,
            cache,
            vars,
        } => Box::new(
            template::TemplateController::new(template, content_type.as_deref(), *cache)
                .with_vars(vars),
        ),
        Kind::Page { cache } => Box::new(page::PageController::new(*cache)),
        Kind::Lib => Box::new(lib_files::LibController),
        Kind::File { root } => Box::new(file::FileController { root: root.clone() }),
        Kind::Redirect { to, permanent } => Box::new(redirect::RedirectController {
            to: to.clone(),
            permanent: *permanent,
        }),
        Kind::Endpoint { name } => {
            match apis
                .iter()
                .flat_map(|a| a.endpoints())
                .find(|e| e.name() == name)
            {
                Some(endpoint) => Box::new(EndpointController::new(endpoint)),
                None => {
                    return Err(format!(
                        "rule {:?}: no endpoint named {name:?} (is its module enabled?)",
                        rule.name
                    ));
                }
            }
        }
        Kind::Module { kind, options } => match kinds.get(kind) {
            Some(factory) => factory(options).map_err(|problem| {
                format!("rule {:?}, controller {kind:?}: {problem}", rule.name)
            })?,
            None => {
                let mut known: Vec<&str> =
                    ["template", "page", "lib", "file", "redirect", "endpoint"]
                        .into_iter()
                        .chain(kinds.keys().map(String::as_str))
                        .collect();
                known.sort();
                return Err(format!(
                    "rule {:?}: unknown controller {kind:?} (is its module enabled?); known: {}",
                    rule.name,
                    known.join(", ")
                ));
            }
        },
    })
}
