//! Content-encoding negotiation. The encodings themselves and the compression
//! live in `bulwark-encoding` (shared with the push hub); this crate re-exports
//! them and adds what needs the request's headers.

use bulwark_encoding::Encoding;

use crate::accept::weighted_choices;
use http::HeaderMap;
use http::header::ACCEPT_ENCODING;

/// The best encoding the client accepts (brotli, then gzip), honouring `q=0`.
pub fn negotiate(headers: &HeaderMap) -> Encoding {
    let mut gzip = false;
    let mut brotli = false;
    for value in headers.get_all(ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for (coding, mut weights) in weighted_choices(value) {
            if weights.any(|q| q.parse::<f32>().is_ok_and(|q| q <= 0.0)) {
                continue;
            }
            if coding.eq_ignore_ascii_case("br") {
                brotli = true;
            } else if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                gzip = true;
            }
        }
    }
    if brotli {
        Encoding::Brotli
    } else if gzip {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with(ae: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT_ENCODING, HeaderValue::from_str(ae).unwrap());
        h
    }

    #[test]
    fn prefers_brotli_then_gzip_and_honours_q_zero() {
        assert_eq!(negotiate(&with("gzip, deflate, br")), Encoding::Brotli);
        assert_eq!(negotiate(&with("gzip;q=0.5")), Encoding::Gzip);
        assert_eq!(negotiate(&with("br;q=0, gzip")), Encoding::Gzip);
        assert_eq!(negotiate(&with("br; Q = 0, gzip")), Encoding::Gzip);
        assert_eq!(negotiate(&with("identity")), Encoding::Identity);
        assert_eq!(negotiate(&HeaderMap::new()), Encoding::Identity);
    }
}
