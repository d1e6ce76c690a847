//! The HTTP side of Bulwark: the server, host and path dispatch, controllers, static
//! files, compression, limits and the access log.
//!
//! A request goes: accept -> hyper parses the head (size and time limits) -> the
//! `Host` picks a site (aliases redirect, unknown hosts go to the default site) ->
//! the site's router picks a dispatch rule -> its controller answers the questions of
//! [`Controller`] -> one function makes every HTTP decision (405, 404, 304, ranges,
//! encoding, HEAD). Everything runs in the task that accepted the connection; the
//! access log is written by a background thread.
//!
//! Deliberately not here: data models and caching of pages (later layers plug into
//! the template controller), and site configuration parsing (the `site` crate).

mod access_log;
mod api;
mod auth;
mod body;
mod bottleneck;
mod controller;
mod controllers;
mod data;
mod encoding;
mod error_page;
mod page_cache;
mod push;
mod runtime;
mod server;
mod tls;

pub use access_log::AccessLogTarget;
pub use body::Body;
pub use bottleneck::RenderLimits;
pub use controller::{Content, Controller, Outcome, Representation, RequestCtx};
pub use data::SiteStores;
pub use encoding::{Encoding, negotiate};
pub use runtime::{PushHubs, SiteRuntime, SiteTable};
pub use server::{Server, ServerError, ServerOptions};
