//! Push: topics, one permanent task per client, batched dispatch, and encodings
//! shared between clients.
//!
//! The design follows the long-polling comet server in the seed article: a client is
//! a long-lived task with an inbox, not a request. Transports (WebSocket, Server-Sent
//! Events, long-poll; in the `push` module, `modules/push`) only attach to that client and take what
//! is waiting, so a reconnect or a switch of transport loses nothing and recomputes
//! nothing. The task keeps the subscriptions and notices when the client has gone;
//! the inbox is shared, so deliveries and takes do not pass through the task.
//!
//! Publications go to a dispatcher that collects them for a short interval and then
//! hands each client the messages it is subscribed to, all at once. Clients that
//! follow the same topics therefore get the same set of messages, and the serialised
//! (and compressed: gzip or brotli, with `bulwark-encoding`) body for a set of
//! message ids is built once and shared: the [`Stats`] count how many bodies were
//! needed and how many were computed.
//!
//! Each topic keeps a short history with the process epoch and a per-topic offset
//! (the Centrifugo model): a client that reconnects with its last position gets
//! exactly what it missed, or is told that it cannot (the history no longer reaches
//! back that far, or the server restarted and the epoch changed).
//!
//! Not here: HTTP, authentication and cross-node fan-out. Access control is a trait
//! ([`PushAcl`]) the embedding application implements; it is asked with the
//! [`Principal`](bulwark_acl::Principal) a client acts for, the same type a page
//! render is asked with, kept by the client for its life and borrowed per message.
//! A message may also carry its own [`Audience`] (a resource's change goes only to
//! those who may see the resource), asked per client at delivery and recovery.
//!
//! A client is named by its [`ClientId`] and resumed only with its [`ClientToken`]
//! (given once, in the transport's `hello`), so an id seen in a URL or a log does
//! not let anyone read or act as the client. Clients nobody came back for expire
//! quickly, and each client's publishing is rate-limited ([`Rate`]).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::time::Duration;
//! use bulwark_push::{Hub, PushConfig, OpenAcl, Encoding};
//! let hub = Hub::new(PushConfig::default(), std::sync::Arc::new(OpenAcl));
//! let client = hub.connect().unwrap();
//! client.subscribe("chat/+", None, false).await.unwrap();
//! hub.publish("chat/lobby", r#"{"text":"hi"}"#).unwrap();
//! let batch = client.next_batch(Duration::from_secs(1), Encoding::Identity).await.unwrap().unwrap();
//! assert!(std::str::from_utf8(&batch.body).unwrap().contains(r#""text":"hi""#));
//! # });
//! ```

mod client;
mod hub;
mod rate;
mod topic;

/// The one content encoding of Bulwark (`bulwark-encoding`), re-exported so that a
/// transport asks for what it negotiated without converting.
pub use bulwark_encoding::Encoding;
pub use client::{Batch, ClientHandle, ClientId, ClientToken, Recovery, SubscribeReply};
pub use hub::{Audience, Hub, Message, OpenAcl, Position, PushAcl, PushConfig, Relay, Stats};
pub use rate::{Rate, TokenBucket};
pub use topic::{Topic, TopicFilter};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushError {
    #[error("bad topic: {0}")]
    BadTopic(String),
    #[error("message too large: {size} bytes, the limit is {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error("payload is not valid JSON: {0}")]
    BadPayload(String),
    #[error("too many clients connected (limit {0})")]
    TooManyClients(usize),
    #[error("too many subscriptions for this client (limit {0})")]
    TooManySubscriptions(usize),
    #[error("not allowed: {0}")]
    Forbidden(String),
    /// The client's publishing rate ([`PushConfig::client_publish`]) is used up.
    #[error("publishing too fast: try again in {retry_after_ms} ms")]
    PublishingTooFast { retry_after_ms: u64 },
    #[error("unknown or expired client")]
    UnknownClient,
    #[error("another transport took over this client")]
    Superseded,
}
