//! The observers of a site as it is loaded now, for what outlives one load
//! (the change task, a module's hub): a configuration reload swaps in the new
//! ones.

use std::sync::Arc;

use arc_swap::ArcSwap;
use bulwark_notify::Notifier;

/// Where a site's current observers are, for code that lives longer than one
/// load of the site (the change task, a module's hub): a configuration reload
/// puts the new ones here.
#[derive(Clone, Default)]
pub struct SiteNotifier(Arc<ArcSwap<Notifier>>);

impl SiteNotifier {
    /// The observers of the site as it is loaded now.
    pub fn current(&self) -> Arc<Notifier> {
        self.0.load_full()
    }

    /// Whether two handles are the same site's (the same store).
    pub fn same_as(&self, other: &SiteNotifier) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub(crate) fn replace(&self, notifier: Arc<Notifier>) {
        self.0.store(notifier);
    }
}
