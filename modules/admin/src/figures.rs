//! The dashboard's live figures: the site's [`SiteFigures`], published once a
//! second on the push topic `admin/figures` for editors (and the groups above
//! them) only; on several nodes, every node's (each named by `node`: the
//! cluster module brings the others', and the dashboard sums them). A browser may subscribe to the topic only as an editor, never
//! publish on it, and a wildcard subscription (`admin/#`, `#`) of anyone else
//! receives nothing of it: the messages carry their audience.

use std::sync::Arc;

use bulwark_acl::Principal;
use bulwark_module_push::{Publish, PushAccess, PushAction};
use bulwark_push::Audience;
use bulwark_web::SiteSetup;
use bulwark_web::events::SiteFigures;

use crate::ADMIN_GROUP;

/// The topic the dashboard listens to.
pub const FIGURES_TOPIC: &str = "admin/figures";

/// Among this module's observers.
const OBSERVER_PRIORITY: i32 = 500;

/// Those who may use the admin.
#[derive(Debug)]
pub(crate) struct Editors;

impl Audience for Editors {
    fn admits(&self, principal: &Principal) -> bool {
        principal.in_group(ADMIN_GROUP)
    }
}

pub(crate) fn observe(setup: &mut SiteSetup<'_>) {
    let notifier = setup.notifier();
    let editors: Arc<dyn Audience> = Arc::new(Editors);
    setup
        .observers()
        .on_notify(OBSERVER_PRIORITY, move |f: &SiteFigures| {
            let Ok(payload) = serde_json::to_string(&*f.0) else {
                return;
            };
            // No answer: the site does not enable push, and nobody could listen.
            if let Some(Err(e)) = notifier.current().first(&Publish {
                topic: FIGURES_TOPIC.to_owned(),
                payload,
                audience: Some(editors.clone()),
            }) {
                tracing::warn!("publishing the admin's figures: {e}");
            }
        });
    setup
        .observers()
        .on_first(OBSERVER_PRIORITY, |access: &PushAccess| {
            (access.topic == FIGURES_TOPIC).then(|| match access.action {
                PushAction::Subscribe => access.principal.in_group(ADMIN_GROUP),
                PushAction::Publish => false,
            })
        });
}
