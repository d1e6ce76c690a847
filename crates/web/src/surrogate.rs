//! Surrogate keys: a page's dependency keys as a header (`xkey` for
//! Varnish's xkey module, `Surrogate-Key` for CDNs that read that), so a
//! shared cache in front can drop exactly the pages a change made stale when
//! it is told the same keys (the `cdn` module forwards each flush as a
//! purge). Opt-in per site: a site whose modules do not ask sends none and
//! pays nothing.
//!
//! A key goes out as a short token, a hash of the site's name and the key:
//! keys hold characters a header list cannot (`edges:42:author`, a search),
//! and one cache in front of several sites must not mix up their `rsc:42`.
//! Every page also carries its site's own token, which a flush of everything
//! purges.

use std::hash::Hasher;

use http::{HeaderName, HeaderValue};

use bulwark_depcache::DependencyKey;

/// How a site sends surrogate keys.
#[derive(Debug, Clone)]
pub struct Surrogate {
    /// The header that carries them (`xkey`, `surrogate-key`).
    pub header: HeaderName,
    /// `Surrogate-Control: max-age=N`: how long the cache in front may keep
    /// a page (it is purged when it changes before).
    pub control: HeaderValue,
}

impl Surrogate {
    pub fn new(header: HeaderName, max_age_seconds: u64) -> Surrogate {
        Surrogate {
            header,
            control: HeaderValue::from_str(&format!("max-age={max_age_seconds}"))
                .expect("digits are a header value"),
        }
    }

    /// The header value for a page of `site` rendered from `deps`.
    pub(crate) fn header_value<'a>(
        &self,
        site: &str,
        keys: impl IntoIterator<Item = &'a DependencyKey>,
    ) -> HeaderValue {
        let mut tokens = site_token(site);
        for key in keys {
            tokens.push(' ');
            tokens.push_str(&token(site, key));
        }
        HeaderValue::from_str(&tokens).expect("hex tokens are a header value")
    }
}

fn hash(site: &str, key: &str) -> String {
    // SipHash with the standard library's fixed keys: every node gives a key
    // the same token.
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(site.as_bytes());
    hasher.write_u8(0);
    hasher.write(key.as_bytes());
    format!("{:016x}", hasher.finish())
}

/// The token of one dependency key of a site.
pub fn token(site: &str, key: &DependencyKey) -> String {
    hash(site, key.as_str())
}

/// The token every page of a site carries: purging it drops them all.
pub fn site_token(site: &str) -> String {
    hash(site, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ_per_site_and_key_and_every_page_has_its_sites() {
        let rsc = DependencyKey::new("rsc:42");
        assert_ne!(token("a", &rsc), token("b", &rsc));
        assert_ne!(token("a", &rsc), token("a", &DependencyKey::new("rsc:43")));
        assert_eq!(token("a", &rsc).len(), 16);
        let s = Surrogate::new(HeaderName::from_static("xkey"), 60);
        let value = s.header_value("a", [&rsc]);
        assert_eq!(
            value.to_str().unwrap(),
            format!("{} {}", site_token("a"), token("a", &rsc))
        );
    }
}
