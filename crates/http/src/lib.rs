//! The HTTP protocol side of Bulwark: accepting connections, limits, TLS, HTTP/1.1
//! and HTTP/2, request bodies, content-encoding negotiation, graceful shutdown and
//! the access log. The encodings and `compress` are `bulwark-encoding`'s (shared with
//! the push hub), re-exported here.
//!
//! A request goes: accept -> (TLS handshake, ALPN) -> hyper parses the head (size
//! and time limits) -> the [`Handler`] answers it -> the access log records it
//! (written by a background thread). A panic in the handler answers 500 for that
//! request only.
//!
//! Deliberately not here: sites, dispatch, controllers, templates, stores and push.
//! The `web` crate implements [`Handler`] for the running sites; this crate depends
//! on none of them (`cargo tree -p bulwark-http` shows it).

mod accept;
mod access_log;
mod body;
mod encoding;
mod forwarded;
mod response;
mod server;

pub use accept::weighted_choices;
pub use access_log::AccessLogTarget;
pub use body::{Body, BodyError, read_body};
pub use bulwark_encoding::{Effort, EncodedBody, Encoding, compress};
pub use encoding::negotiate;
pub use forwarded::{Networks, NotAnAddress, TrustedProxies, visitor_network};
pub use response::{html_response, plain_error_page, plain_response};
pub use server::{Handler, Peer, Server, ServerError, ServerOptions};
