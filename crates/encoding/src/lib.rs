//! Content encodings: the one `Encoding` enum of Bulwark and the one function that
//! compresses a body with it.
//!
//! Web responses (through `bulwark-http`, which re-exports all of this and adds
//! `Accept-Encoding` negotiation) and the push hub's shared batch bodies both
//! compress here, so a level or a format is chosen in one place.
//!
//! The caller picks an [`Effort`] that says how often a body is compressed for how
//! many readers: static bodies are compressed once, at the highest sensible level,
//! and kept; dynamic bodies are compressed per response at a fast level; push
//! batches are compressed on the dispatch path, at the cheapest level.
//!
//! Deliberately not here: headers and negotiation (they need `http`; this crate
//! stays a leaf that the push hub can use without the HTTP server), decoding, and
//! the decision whether a body is large enough to be worth compressing (the callers
//! know their bodies).

use std::io::Write;

use bytes::Bytes;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    Identity,
    Gzip,
    Brotli,
}

impl Encoding {
    /// The `Content-Encoding` value, `None` for identity.
    pub fn header_value(self) -> Option<&'static str> {
        match self {
            Encoding::Identity => None,
            Encoding::Gzip => Some("gzip"),
            Encoding::Brotli => Some("br"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    /// On the dispatch path of push batches: the cheapest level (gzip 1, brotli 1).
    Fastest,
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
                Effort::Fastest => 1,
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
                Effort::Fastest => 1,
                Effort::Fast => 4,
                Effort::Best => 10,
            };
            let mut out = Vec::with_capacity(data.len() / 3 + 64);
            {
                // A 1 MiB window rather than brotli's 4 MiB maximum: on a 16 MB input
                // at quality 10 it took 35 MiB instead of 97 MiB and 40% less time,
                // for an output 3% larger; inputs under 1 MiB come out the same.
                let mut w = brotli::CompressorWriter::new(&mut out, 16 * 1024, quality, 20);
                w.write_all(data).expect("writing to a Vec");
            }
            Bytes::from(out)
        }
    }
}

/// A body compressed once in every encoding, for bodies many clients get (static
/// files, cached pages): each request then only picks one.
#[derive(Debug, Clone)]
pub struct EncodedBody {
    pub identity: Bytes,
    pub gzip: Bytes,
    pub brotli: Bytes,
}

impl EncodedBody {
    pub fn new(identity: Bytes, effort: Effort) -> EncodedBody {
        EncodedBody {
            gzip: compress(&identity, Encoding::Gzip, effort),
            brotli: compress(&identity, Encoding::Brotli, effort),
            identity,
        }
    }

    /// The body in `encoding`.
    pub fn get(&self, encoding: Encoding) -> &Bytes {
        match encoding {
            Encoding::Identity => &self.identity,
            Encoding::Gzip => &self.gzip,
            Encoding::Brotli => &self.brotli,
        }
    }

    /// Bytes held, all encodings together.
    pub fn len(&self) -> usize {
        self.identity.len() + self.gzip.len() + self.brotli.len()
    }

    pub fn is_empty(&self) -> bool {
        self.identity.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    const EFFORTS: [Effort; 3] = [Effort::Fastest, Effort::Fast, Effort::Best];

    fn body() -> Vec<u8> {
        (0..2000)
            .map(|i| format!("{{\"topic\":\"chat/{}\",\"offset\":{i}}},", i % 7))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn gzip_round_trips_at_every_effort() {
        let data = body();
        for effort in EFFORTS {
            let packed = compress(&data, Encoding::Gzip, effort);
            assert!(
                packed.len() < data.len() / 4,
                "{effort:?}: {} bytes",
                packed.len()
            );
            let mut plain = Vec::new();
            flate2::read::GzDecoder::new(&packed[..])
                .read_to_end(&mut plain)
                .unwrap();
            assert_eq!(plain, data, "{effort:?}");
        }
    }

    #[test]
    fn brotli_round_trips_at_every_effort() {
        let data = body();
        for effort in EFFORTS {
            let packed = compress(&data, Encoding::Brotli, effort);
            assert!(
                packed.len() < data.len() / 4,
                "{effort:?}: {} bytes",
                packed.len()
            );
            let mut plain = Vec::new();
            brotli::Decompressor::new(&packed[..], 4096)
                .read_to_end(&mut plain)
                .unwrap();
            assert_eq!(plain, data, "{effort:?}");
        }
    }

    #[test]
    fn identity_is_the_body_itself() {
        let data = body();
        assert_eq!(compress(&data, Encoding::Identity, Effort::Best), data);
        assert_eq!(Encoding::Identity.header_value(), None);
        assert_eq!(Encoding::Gzip.header_value(), Some("gzip"));
        assert_eq!(Encoding::Brotli.header_value(), Some("br"));
    }

    #[test]
    fn empty_bodies_round_trip() {
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&compress(b"", Encoding::Gzip, Effort::Fast)[..])
            .read_to_end(&mut plain)
            .unwrap();
        assert!(plain.is_empty());
        brotli::Decompressor::new(&compress(b"", Encoding::Brotli, Effort::Fast)[..], 4096)
            .read_to_end(&mut plain)
            .unwrap();
        assert!(plain.is_empty());
    }

    #[test]
    fn an_encoded_body_hands_out_each_encoding_it_made() {
        let text = Bytes::from("hello hello hello hello hello".repeat(40));
        let body = EncodedBody::new(text.clone(), Effort::Fast);
        assert_eq!(body.get(Encoding::Identity), &text);
        assert_eq!(body.get(Encoding::Gzip), &body.gzip);
        assert_eq!(body.get(Encoding::Brotli), &body.brotli);
        assert!(body.gzip.len() < text.len() && body.brotli.len() < text.len());
        assert_eq!(body.len(), text.len() + body.gzip.len() + body.brotli.len());
    }
}
