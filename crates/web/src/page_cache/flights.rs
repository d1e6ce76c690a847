//! Page renders in progress, by cache key, and the last good version of each page
//! for grace.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use bulwark_template::CachedPage;

/// How a render that others waited for ended.
#[derive(Clone)]
pub(super) enum Landed {
    Page(Arc<CachedPage>),
    /// The render could not run or failed (a full queue, a busy or broken
    /// database): those waiting answer 503 at once instead of each trying again
    /// and waiting out the same deadline in turn.
    Unavailable,
    /// Not a page to share (a 404, a 410, a redirect): each renders for itself.
    RenderYourself,
}

pub(super) type Flight = watch::Receiver<Option<Landed>>;

/// Renders in progress, by cache key, and the last good version of each page for
/// grace.
#[derive(Default)]
pub struct PageFlights {
    pub(super) inflight: Mutex<HashMap<String, Flight>>,
    pub(super) last: Mutex<LastPages>,
}

/// The previous version of pages, bounded in bytes (it starts over when full).
#[derive(Default)]
pub(super) struct LastPages {
    pub(super) pages: HashMap<String, Arc<CachedPage>>,
    bytes: usize,
}

const GRACE_BYTES: usize = 32 * 1024 * 1024;

fn page_size(key: &str, page: &CachedPage) -> usize {
    page.identity.len() + page.gzip.len() + page.brotli.len() + key.len()
}

impl LastPages {
    pub(super) fn remove(&mut self, key: &str) {
        if let Some(old) = self.pages.remove(key) {
            self.bytes -= page_size(key, &old);
        }
    }

    pub(super) fn insert(&mut self, key: &str, page: Arc<CachedPage>) {
        let size = page_size(key, &page);
        if self.bytes + size > GRACE_BYTES {
            self.pages.clear();
            self.bytes = 0;
        }
        if let Some(old) = self.pages.insert(key.to_string(), page) {
            self.bytes -= page_size(key, &old);
        }
        self.bytes += size;
    }
}

/// Removes the flight when the leader is done, whichever way (a panic included):
/// waiters then see the channel close and try again.
pub(super) struct FlightGuard<'a> {
    pub(super) flights: &'a PageFlights,
    pub(super) key: &'a str,
}

impl Drop for FlightGuard<'_> {
    fn drop(&mut self) {
        self.flights
            .inflight
            .lock()
            .expect("page flights")
            .remove(self.key);
    }
}
