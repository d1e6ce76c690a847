//! The per-request memo.
//!
//! Zotonic keeps what a request already fetched in the process dictionary of the
//! process handling it; this is the same thing as a value owned by the request. It is
//! a plain map with no locks, no expiry and no dependency tracking: it lives for one
//! request, and whoever flushes the depcache during the request clears it. When it
//! grows past its limit it is cleared whole, which bounds the memory a request that
//! loops over many resources can hold without any bookkeeping per key.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// The default number of keys after which a [`RequestMemo`] clears itself.
pub const DEFAULT_MEMO_LIMIT: usize = 10_000;

/// Values already fetched in this request. Not shared between threads or requests.
///
/// Store something cheap to clone out of it, such as a [`Cached`](crate::Cached) or an `Arc`.
///
/// ```
/// use std::time::Duration;
/// use bulwark_depcache::{Cached, Depcache, RequestMemo};
///
/// let cache: Depcache<String, String> = Depcache::default();
/// cache.set("rsc:42".into(), "Hello".into(), Duration::from_secs(60), &["rsc:42".into()]);
///
/// // What the `m` object does for each lookup in a render: memo first, then depcache.
/// let mut memo: RequestMemo<String, Cached<String>> = RequestMemo::new();
/// let title = match memo.get("rsc:42") {
///     Some(title) => title.clone(),
///     None => {
///         let title = cache.get("rsc:42").expect("cached above");
///         memo.insert("rsc:42".into(), title.clone());
///         title
///     }
/// };
/// assert_eq!(title.as_str(), "Hello");
/// assert!(memo.get("rsc:42").is_some());
/// ```
#[derive(Debug)]
pub struct RequestMemo<K, V> {
    values: HashMap<K, V>,
    limit: usize,
}

impl<K: Hash + Eq, V> RequestMemo<K, V> {
    /// An empty memo that clears itself at [`DEFAULT_MEMO_LIMIT`] keys.
    pub fn new() -> Self {
        Self::with_limit(DEFAULT_MEMO_LIMIT)
    }

    /// An empty memo that clears itself when inserting past `limit` keys.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            values: HashMap::new(),
            limit: limit.max(1),
        }
    }

    /// The value memoised for `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.values.get(key)
    }

    /// Memoises `value` for `key`, clearing the memo first when it is full.
    pub fn insert(&mut self, key: K, value: V) {
        if self.values.len() >= self.limit && !self.values.contains_key(&key) {
            self.values.clear();
        }
        self.values.insert(key, value);
    }

    /// Forgets everything (at the end of a request, or after a flush).
    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// Number of memoised keys.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when nothing is memoised.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl<K: Hash + Eq, V> Default for RequestMemo<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn memo_returns_what_was_inserted() {
        let mut memo = RequestMemo::new();
        memo.insert("rsc:1".to_string(), Arc::new(1));
        assert_eq!(memo.get("rsc:1").map(|value| **value), Some(1));
        assert_eq!(memo.get("rsc:2"), None);
    }

    #[test]
    fn memo_clears_itself_when_inserting_past_its_limit() {
        let mut memo = RequestMemo::with_limit(3);
        for i in 0..3 {
            memo.insert(i, Arc::new(i));
        }
        memo.insert(1, Arc::new(10));
        assert_eq!(memo.len(), 3, "replacing a key does not clear");
        memo.insert(3, Arc::new(3));
        assert_eq!(memo.len(), 1);
        assert_eq!(memo.get(&0), None);
        assert_eq!(memo.get(&3).map(|value| **value), Some(3));
    }

    #[test]
    fn default_limit_is_ten_thousand_keys() {
        let mut memo = RequestMemo::new();
        for i in 0..DEFAULT_MEMO_LIMIT {
            memo.insert(i, Arc::new(()));
        }
        assert_eq!(memo.len(), DEFAULT_MEMO_LIMIT);
        memo.insert(DEFAULT_MEMO_LIMIT, Arc::new(()));
        assert_eq!(memo.len(), 1);
    }
}
