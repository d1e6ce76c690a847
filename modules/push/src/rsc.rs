//! `rsc/{id}` messages: every committed change of a resource publishes
//! `{"id":..,"changed":true}` on its topic, for the clients that may see the
//! resource only.
//!
//! The resource is read after the change (it may have become a draft, or gone)
//! and travels with the message as its [`Audience`]: each client's principal is
//! checked against it with the site's access policy when the message is delivered,
//! recovered from history or sent as a snapshot. So an anonymous `rsc/+`
//! subscriber hears of published public resources only, and a resource turned
//! draft is news for those who may see drafts. A deleted resource's message goes
//! to those who may see every resource.
//!
//! Reads happen on one task per site, in the order of the changes, a batch of
//! changes in one store call; a change whose resource cannot be read (the database
//! is away) publishes nothing: a page loses a hint to reload, nobody sees what they
//! may not.

use std::sync::Arc;

use tokio::sync::mpsc;

use bulwark_acl::{AccessPolicy, Principal, VisibilityFilter};
use bulwark_push::{Audience, Hub, Position, PushError, Topic};
use bulwark_store::{Resource, ResourceId, Store};

/// The topics of resource changes, `rsc/{id}`.
const TOPIC_PREFIX: &str = "rsc/";

fn resource_topic(id: ResourceId) -> String {
    format!("{TOPIC_PREFIX}{id}")
}

/// Whether `topic` is a resource's (whose messages only the server publishes).
pub(crate) fn is_resource_topic(topic: &Topic) -> bool {
    topic.as_str().starts_with(TOPIC_PREFIX)
}

/// Changes read in one store call at most.
const READ_BATCH: usize = 256;

/// Who may hear that a resource changed.
#[derive(Debug)]
enum ResourceAudience {
    /// Those the policy lets see the resource as it is now.
    Visible {
        resource: Box<Resource>,
        policy: Arc<dyn AccessPolicy>,
    },
    /// The resource is gone: those who may see every resource.
    Gone { policy: Arc<dyn AccessPolicy> },
}

impl Audience for ResourceAudience {
    fn admits(&self, principal: &Principal) -> bool {
        match self {
            ResourceAudience::Visible { resource, policy } => policy.may_see(principal, resource),
            ResourceAudience::Gone { policy } => {
                policy.search_filter(principal) == VisibilityFilter::Everything
            }
        }
    }
}

/// Publishes `payload_json` on `topic` for the clients that may see
/// `resource` as it is now (`None`: it is gone, and only those who may see
/// every resource hear of it). For news about a resource on a topic of its
/// own (the comments module's `comments/{id}`), heard by whom `rsc/{id}`
/// would be. Not relayed to other nodes: each node publishes what it heard.
pub fn publish_about(
    hub: &Hub,
    topic: &str,
    payload_json: &str,
    resource: Option<Resource>,
    policy: Arc<dyn AccessPolicy>,
) -> Result<Position, PushError> {
    let audience = match resource {
        Some(resource) => ResourceAudience::Visible {
            resource: Box::new(resource),
            policy,
        },
        None => ResourceAudience::Gone { policy },
    };
    hub.publish_for(topic, payload_json, Arc::new(audience))
}

/// Where a site's change observer sends the ids of changed resources.
pub(crate) type ChangedResources = mpsc::UnboundedSender<ResourceId>;

/// Starts the task that publishes `rsc/{id}` for each id sent to it; it ends when
/// the sender (held by the site's observer) is dropped at the next reload.
pub(crate) fn spawn_publisher(
    hub: Arc<Hub>,
    store: Store,
    policy: Arc<dyn AccessPolicy>,
) -> ChangedResources {
    let (sender, mut changed) = mpsc::unbounded_channel::<ResourceId>();
    tokio::spawn(async move {
        let mut ids = Vec::with_capacity(READ_BATCH);
        while changed.recv_many(&mut ids, READ_BATCH).await > 0 {
            let batch = std::mem::take(&mut ids);
            let read = store
                .run(move |s| {
                    batch
                        .into_iter()
                        .map(|id| Ok((id, s.resource(id)?)))
                        .collect::<Result<Vec<_>, _>>()
                })
                .await;
            let resources = match read {
                Ok(resources) => resources,
                Err(e) => {
                    tracing::warn!("push: changed resources not announced: {e}");
                    continue;
                }
            };
            for (id, resource) in resources {
                // A full hub or an oversized message only loses a hint to reload.
                let _ = publish_about(
                    &hub,
                    &resource_topic(id),
                    &format!("{{\"id\":{id},\"changed\":true}}"),
                    resource,
                    policy.clone(),
                );
            }
        }
    });
    sender
}
