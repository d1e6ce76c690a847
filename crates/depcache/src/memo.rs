//! The per-request memo.
//!
//! Zotonic keeps what a request already fetched in the process dictionary of the
//! process handling it; this is the same thing as a value owned by the request (in
//! Bulwark, by the render scope). It is a plain map with no expiry and no dependency
//! tracking: it lives for one request, and whoever flushes the depcache during the
//! request clears it. When it grows past its limit it is cleared whole, which bounds
//! the memory a request that loops over many resources can hold without any
//! bookkeeping per key.
//!
//! Its methods take `&self`: template lookups reach the render scope through objects
//! that must be `Send + Sync` and are shared, so the map sits behind a lock of its own.
//! One render uses it at a time, so the lock is never contended and costs an atomic
//! operation or two per call; a value is cloned out rather than borrowed, so no lock
//! is held while the caller uses it.
//!
//! The map hashes with foldhash, not the standard library's SipHash: a page
//! looks up and memoises a few hundred keys, and SipHash made those lookups
//! (and the map's growth, which hashes every key again) a tenth of a logged-on
//! front page's instructions. SipHash's defence against keys chosen to collide
//! matters little here: the memo lives for one request and holds at most its
//! limit of keys.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use parking_lot::Mutex;

/// The default number of keys after which a [`RequestMemo`] clears itself.
pub const DEFAULT_MEMO_LIMIT: usize = 10_000;

/// Values already fetched in this request.
///
/// Store something cheap to clone in it, such as a [`Cached`](crate::Cached), an
/// `Arc` or an enum of them.
///
/// ```
/// use std::time::Duration;
/// use bulwark_depcache::{Cached, Depcache, RequestMemo};
///
/// let cache: Depcache<String, String> = Depcache::default();
/// cache.set("rsc:42".into(), "Hello".into(), Duration::from_secs(60), &["rsc:42".into()]);
///
/// // What the `m` object does for each lookup in a render: memo first, then depcache.
/// let memo: RequestMemo<String, Cached<String>> = RequestMemo::new();
/// let title = match memo.get("rsc:42") {
///     Some(title) => title,
///     None => {
///         let title = cache.get("rsc:42").expect("cached above");
///         memo.insert("rsc:42".into(), title.clone());
///         title
///     }
/// };
/// assert_eq!(title.as_str(), "Hello");
/// assert!(memo.get("rsc:42").is_some());
/// ```
pub struct RequestMemo<K, V> {
    values: Mutex<HashMap<K, V, foldhash::fast::RandomState>>,
    limit: usize,
}

impl<K: Hash + Eq, V: Clone> RequestMemo<K, V> {
    /// An empty memo that clears itself at [`DEFAULT_MEMO_LIMIT`] keys.
    pub fn new() -> Self {
        Self::with_limit(DEFAULT_MEMO_LIMIT)
    }

    /// An empty memo that clears itself when inserting past `limit` keys.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            values: Mutex::new(HashMap::default()),
            limit: limit.max(1),
        }
    }

    /// The value memoised for `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.values.lock().get(key).cloned()
    }

    /// Memoises `value` for `key`, clearing the memo first when it is full.
    pub fn insert(&self, key: K, value: V) {
        let mut values = self.values.lock();
        if values.len() >= self.limit && !values.contains_key(&key) {
            values.clear();
        }
        values.insert(key, value);
    }

    /// Forgets everything (at the end of a request, or after a flush).
    pub fn clear(&self) {
        self.values.lock().clear();
    }

    /// Number of memoised keys.
    pub fn len(&self) -> usize {
        self.values.lock().len()
    }

    /// True when nothing is memoised.
    pub fn is_empty(&self) -> bool {
        self.values.lock().is_empty()
    }
}

impl<K: Hash + Eq, V: Clone> Default for RequestMemo<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K, V> fmt::Debug for RequestMemo<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestMemo")
            .field("len", &self.values.lock().len())
            .field("limit", &self.limit)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn memo_returns_what_was_inserted() {
        let memo = RequestMemo::new();
        memo.insert("rsc:1".to_string(), Arc::new(1));
        assert_eq!(memo.get("rsc:1").map(|value| *value), Some(1));
        assert_eq!(memo.get("rsc:2"), None);
    }

    /// The render scope's use: a `String`-keyed memo of cheap-to-clone values, shared
    /// by the objects of one render, looked up by `&str`.
    #[test]
    fn memo_is_shared_by_reference_and_looked_up_by_borrowed_key() {
        #[derive(Clone, Debug, PartialEq)]
        enum Model {
            Title(Arc<str>),
        }
        let memo: Arc<RequestMemo<String, Model>> = Arc::new(RequestMemo::new());
        let other = Arc::clone(&memo);
        std::thread::spawn(move || other.insert("rsc:1".to_string(), Model::Title("Hi".into())))
            .join()
            .unwrap();
        assert_eq!(memo.get("rsc:1"), Some(Model::Title("Hi".into())));
        memo.clear();
        assert!(memo.is_empty());
    }

    #[test]
    fn memo_clears_itself_when_inserting_past_its_limit() {
        let memo = RequestMemo::with_limit(3);
        for i in 0..3 {
            memo.insert(i, Arc::new(i));
        }
        memo.insert(1, Arc::new(10));
        assert_eq!(memo.len(), 3, "replacing a key does not clear");
        memo.insert(3, Arc::new(3));
        assert_eq!(memo.len(), 1);
        assert_eq!(memo.get(&0), None);
        assert_eq!(memo.get(&3).map(|value| *value), Some(3));
    }

    #[test]
    fn default_limit_is_ten_thousand_keys() {
        let memo = RequestMemo::new();
        for i in 0..DEFAULT_MEMO_LIMIT {
            memo.insert(i, Arc::new(()));
        }
        assert_eq!(memo.len(), DEFAULT_MEMO_LIMIT);
        memo.insert(DEFAULT_MEMO_LIMIT, Arc::new(()));
        assert_eq!(memo.len(), 1);
    }
}
