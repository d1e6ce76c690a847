//! Content-encoding negotiation and compression.
//!
//! Static bodies are compressed once, at the highest sensible level, and kept;
//! dynamic bodies are compressed per response at a fast level, and only when large
//! enough for it to pay off.

use std::io::Write;

use bytes::Bytes;
use http::HeaderMap;
use http::header::ACCEPT_ENCODING;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Brotli,
}

impl Encoding {
    pub fn header_value(self) -> Option<&'static str> {
        match self {
            Encoding::Identity => None,
            Encoding::Gzip => Some("gzip"),
            Encoding::Brotli => Some("br"),
        }
    }
}

/// The best encoding the client accepts (brotli, then gzip), honouring `q=0`.
pub fn negotiate(headers: &HeaderMap) -> Encoding {
    let mut gzip = false;
    let mut brotli = false;
    for value in headers.get_all(ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            if refused {
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

#[derive(Clone, Copy)]
pub enum Effort {
    /// Per response: cheap.
    Fast,
    /// Once per static file: small.
    Best,
}

pub fn compress(data: &[u8], encoding: Encoding, effort: Effort) -> Bytes {
    match encoding {
        Encoding::Identity => Bytes::copy_from_slice(data),
        Encoding::Gzip => {
            let level = match effort {
                Effort::Fast => 4,
                Effort::Best => 9,
            };
            let mut enc =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
            enc.write_all(data).expect("writing to a Vec");
            Bytes::from(enc.finish().expect("writing to a Vec"))
        }
        Encoding::Brotli => {
            let quality = match effort {
                Effort::Fast => 4,
                Effort::Best => 10,
            };
            let mut out = Vec::with_capacity(data.len() / 3 + 64);
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 16 * 1024, quality, 22);
                w.write_all(data).expect("writing to a Vec");
            }
            Bytes::from(out)
        }
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
        assert_eq!(negotiate(&with("identity")), Encoding::Identity);
        assert_eq!(negotiate(&HeaderMap::new()), Encoding::Identity);
    }
}
