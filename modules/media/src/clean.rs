//! Cleaning an uploaded picture: turned upright by its EXIF orientation and
//! kept without its metadata (a phone photo's location goes).

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::*;

/// An image as it is kept: its size, and whether it was written anew.
pub(crate) struct Cleaned {
    pub(crate) dimensions: (u32, u32),
    /// The new file's size and hash, when it was rewritten.
    pub(crate) rewritten: Option<(u64, String)>,
}

/// Reads an uploaded image; one with EXIF metadata is turned upright by its
/// orientation and written anew without any metadata (the camera's location
/// goes with it). `None`: it cannot be read as an image.
pub(crate) fn clean_image(path: &Path) -> Option<Cleaned> {
    use image::ImageDecoder;
    let reader = image::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .ok()?;
    let format = reader.format()?;
    let mut decoder = reader.into_decoder().ok()?;
    let exif = decoder.exif_metadata().ok().flatten();
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    if exif.is_none() {
        return Some(Cleaned {
            dimensions: decoder.dimensions(),
            rewritten: None,
        });
    }
    // A JPEG's pixels with `jpeg-decoder` (`preview::read_jpeg` says why);
    // what it leaves (CMYK), and other formats, the `image` crate's.
    drop(decoder);
    let jpeg = if format == image::ImageFormat::Jpeg {
        let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
        preview::read_jpeg(file, |_| 1.0).ok()?.map(|(img, _)| img)
    } else {
        None
    };
    let mut img = match jpeg {
        Some(img) => img,
        None => image::ImageReader::open(path)
            .and_then(|r| r.with_guessed_format())
            .ok()?
            .decode()
            .ok()?,
    };
    img.apply_orientation(orientation);
    let tmp = path.with_extension("clean");
    let written = (|| -> image::ImageResult<()> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        match format {
            image::ImageFormat::Jpeg => img.to_rgb8().write_with_encoder(
                image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 92),
            )?,
            image::ImageFormat::WebP => img
                .to_rgba8()
                .write_with_encoder(image::codecs::webp::WebPEncoder::new_lossless(&mut out))?,
            _ => img.write_with_encoder(image::codecs::png::PngEncoder::new(&mut out))?,
        }
        std::io::Write::flush(&mut out)?;
        Ok(())
    })();
    if written.is_err() || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    Some(Cleaned {
        dimensions: (img.width(), img.height()),
        rewritten: Some((bytes.len() as u64, hex::encode(Sha256::digest(&bytes)))),
    })
}
