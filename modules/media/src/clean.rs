//! Cleaning an uploaded picture without decoding it: its metadata (a phone
//! photo's location, the camera, XMP and IPTC, comments) is cut out of the
//! file (`img-parts`), the pixels are kept byte for byte. Only the EXIF
//! orientation stays, alone in a minimal EXIF block, so browsers show the
//! original upright; previews turn by it after decoding at a reduced scale.
//!
//! Decoding a whole picture to rewrite it (what this did before) took its full
//! size in memory: 800 MiB for a 5 MB JPEG of 12000x12000, and re-encoding grew
//! small files. The size comes from the header alone, so a picture over the
//! site's pixel limit is refused before anything reads its pixels.

use std::path::Path;

use bytes::Bytes;
use image::metadata::Orientation;
use img_parts::{ImageEXIF, jpeg::Jpeg, png::Png, webp::WebP};
use sha2::{Digest, Sha256};

/// An image as it is kept: its size (as stored, before any orientation), its
/// orientation, and whether the file was written anew.
pub(crate) struct Cleaned {
    pub(crate) dimensions: (u32, u32),
    pub(crate) orientation: Orientation,
    /// The new file's size and hash, when metadata was cut out.
    pub(crate) rewritten: Option<(u64, String)>,
}

/// What an image's header says: its size and orientation, read without its
/// pixels. `None`: it cannot be read as an image.
pub(crate) fn header(path: &Path) -> Option<(image::ImageFormat, (u32, u32), Orientation)> {
    use image::ImageDecoder;
    let reader = image::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .ok()?;
    let format = reader.format()?;
    let mut decoder = reader.into_decoder().ok()?;
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    Some((format, decoder.dimensions(), orientation))
}

impl Cleaned {
    /// The size as people see it: width and height swapped when the
    /// orientation turns the picture on its side.
    pub(crate) fn upright_dimensions(&self) -> (u32, u32) {
        let (w, h) = self.dimensions;
        if sideways(self.orientation) {
            (h, w)
        } else {
            (w, h)
        }
    }
}

/// Whether an orientation turns the picture on its side (width and height
/// swap).
pub(crate) fn sideways(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

/// Cuts the metadata out of an uploaded image that has any, keeping its
/// orientation. `None`: it cannot be read as an image.
pub(crate) fn clean_image(path: &Path) -> Option<Cleaned> {
    let (format, dimensions, orientation) = header(path)?;
    let bytes = Bytes::from(std::fs::read(path).ok()?);
    let kept = match format {
        image::ImageFormat::Jpeg => strip_jpeg(bytes.clone(), orientation),
        image::ImageFormat::Png => strip_png(bytes.clone()),
        image::ImageFormat::WebP => strip_webp(bytes.clone()),
        // GIF carries no EXIF; AVIF's metadata is left as it is (nothing here
        // rewrites its container).
        _ => None,
    };
    let rewritten = match kept {
        Some(kept) if kept != bytes => {
            let tmp = path.with_extension("clean");
            if std::fs::write(&tmp, &kept).is_err() || std::fs::rename(&tmp, path).is_err() {
                let _ = std::fs::remove_file(&tmp);
                return None;
            }
            Some((kept.len() as u64, hex::encode(Sha256::digest(&kept))))
        }
        _ => None,
    };
    Some(Cleaned {
        dimensions,
        orientation,
        rewritten,
    })
}

/// JPEG markers of segments that hold metadata and nothing a decoder needs:
/// APP1 (EXIF, XMP), APP3 to APP13 (maker notes, IPTC), APP15, comments. APP0
/// (JFIF), APP2 (ICC profile, MPF) and APP14 (Adobe's colour transform) stay.
const JPEG_METADATA: [u8; 14] = [
    0xE1, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xEB, 0xEC, 0xED, 0xEF, 0xFE,
];

fn strip_jpeg(bytes: Bytes, orientation: Orientation) -> Option<Bytes> {
    let mut jpeg = Jpeg::from_bytes(bytes).ok()?;
    for marker in JPEG_METADATA {
        jpeg.remove_segments_by_marker(marker);
    }
    if orientation != Orientation::NoTransforms {
        jpeg.set_exif(Some(orientation_only_exif(orientation)));
    }
    let mut out = Vec::with_capacity(jpeg.len());
    jpeg.encoder().write_to(&mut out).ok()?;
    Some(Bytes::from(out))
}

fn strip_png(bytes: Bytes) -> Option<Bytes> {
    let mut png = Png::from_bytes(bytes).ok()?;
    for kind in [*b"eXIf", *b"tEXt", *b"zTXt", *b"iTXt", *b"tIME"] {
        png.remove_chunks_by_type(kind);
    }
    let mut out = Vec::with_capacity(png.len());
    png.encoder().write_to(&mut out).ok()?;
    Some(Bytes::from(out))
}

fn strip_webp(bytes: Bytes) -> Option<Bytes> {
    let mut webp = WebP::from_bytes(bytes).ok()?;
    webp.set_exif(None);
    webp.remove_chunks_by_id(img_parts::webp::CHUNK_XMP);
    let mut out = Vec::with_capacity(webp.len() as usize + 8);
    webp.encoder().write_to(&mut out).ok()?;
    Some(Bytes::from(out))
}

/// An EXIF block (a little-endian TIFF header and one IFD) holding only the
/// orientation tag. Written by hand: the tag is all that is kept, and no
/// well-kept crate writes EXIF.
fn orientation_only_exif(orientation: Orientation) -> Bytes {
    let value = u16::from(orientation.to_exif());
    let mut exif = Vec::with_capacity(26);
    exif.extend_from_slice(b"II*\0"); // little endian, TIFF magic 42
    exif.extend_from_slice(&8u32.to_le_bytes()); // the IFD right after
    exif.extend_from_slice(&1u16.to_le_bytes()); // one entry
    exif.extend_from_slice(&0x0112u16.to_le_bytes()); // Orientation
    exif.extend_from_slice(&3u16.to_le_bytes()); // SHORT
    exif.extend_from_slice(&1u32.to_le_bytes()); // one value
    exif.extend_from_slice(&value.to_le_bytes());
    exif.extend_from_slice(&[0, 0]); // padding of the 4-byte value field
    exif.extend_from_slice(&0u32.to_le_bytes()); // no next IFD
    Bytes::from(exif)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small JPEG with EXIF (a GPS position and orientation 6, "turn 90°
    /// clockwise"), XMP and a comment, made by the `image` crate and `img-parts`.
    fn tagged_jpeg(dir: &Path) -> std::path::PathBuf {
        let img = image::RgbImage::from_fn(64, 32, |x, _| image::Rgb([(x * 4) as u8, 80, 160]));
        let mut plain = Vec::new();
        img.write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(
            &mut plain, 90,
        ))
        .unwrap();
        let mut jpeg = Jpeg::from_bytes(Bytes::from(plain)).unwrap();
        let mut exif = orientation_only_exif(Orientation::Rotate90).to_vec();
        exif.extend_from_slice(b"GPS 52.37N 4.89E");
        jpeg.set_exif(Some(Bytes::from(exif)));
        let segments = jpeg.segments_mut();
        segments.insert(
            1,
            img_parts::jpeg::JpegSegment::new_with_contents(
                0xE1,
                Bytes::from_static(b"http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>"),
            ),
        );
        segments.insert(
            1,
            img_parts::jpeg::JpegSegment::new_with_contents(0xFE, Bytes::from_static(b"secret")),
        );
        let mut out = Vec::new();
        jpeg.encoder().write_to(&mut out).unwrap();
        let path = dir.join("photo.jpg");
        std::fs::write(&path, &out).unwrap();
        path
    }

    #[test]
    fn a_jpeg_loses_its_metadata_but_not_its_pixels_nor_its_orientation() {
        let dir = tempfile::tempdir().unwrap();
        let path = tagged_jpeg(dir.path());
        let before = std::fs::read(&path).unwrap();
        let cleaned = clean_image(&path).unwrap();
        let after = std::fs::read(&path).unwrap();
        assert_eq!(cleaned.dimensions, (64, 32));
        assert_eq!(cleaned.orientation, Orientation::Rotate90);
        let (size, sha) = cleaned.rewritten.unwrap();
        assert_eq!(
            (size, sha),
            (after.len() as u64, hex::encode(Sha256::digest(&after)))
        );
        for gone in [&b"GPS"[..], b"xmpmeta", b"secret"] {
            assert!(
                !after.windows(gone.len()).any(|w| w == gone),
                "{}",
                String::from_utf8_lossy(gone)
            );
        }
        assert!(after.len() < before.len());
        // The pixels are the same bytes, and the orientation is still there.
        let decode = |b: &[u8]| image::load_from_memory(b).unwrap().to_rgb8();
        assert_eq!(decode(&before), decode(&after));
        assert_eq!(header(&path).unwrap().2, Orientation::Rotate90);
        // Clean again: nothing left to cut.
        assert!(clean_image(&path).unwrap().rewritten.is_none());
    }

    #[test]
    fn a_png_loses_its_text_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let img = image::RgbImage::from_pixel(8, 8, image::Rgb([1, 2, 3]));
        let mut plain = Vec::new();
        img.write_with_encoder(image::codecs::png::PngEncoder::new(&mut plain))
            .unwrap();
        let mut png = Png::from_bytes(Bytes::from(plain)).unwrap();
        png.chunks_mut().insert(
            1,
            img_parts::png::PngChunk::new(*b"tEXt", Bytes::from_static(b"Author\0Eve at home")),
        );
        let mut tagged = Vec::new();
        png.encoder().write_to(&mut tagged).unwrap();
        let path = dir.path().join("p.png");
        std::fs::write(&path, &tagged).unwrap();
        let cleaned = clean_image(&path).unwrap();
        assert!(cleaned.rewritten.is_some());
        let after = std::fs::read(&path).unwrap();
        assert!(!after.windows(3).any(|w| w == b"Eve"));
        assert_eq!(image::load_from_memory(&after).unwrap().to_rgb8(), img);
    }
}
