//! Preview making against libvips' `vipsthumbnail`, on the same 20 photos in
//! the same run: each made into a 400 px WebP and a 400 px JPEG (quality 82),
//! fitted in a 400 x 400 box as `vipsthumbnail -s 400` does.
//!
//!   cargo bench -p bulwark-module-media --bench previews [-- PHOTOS]
//!
//! Two figures: one core against one core (Bulwark's pool makes each preview
//! on one thread; `VIPS_CONCURRENCY=1`), and the whole machine against the
//! whole machine (two resize workers against vips with its default threads).
//! The photos are made here: 3000 x 2000 JPEGs (quality 90) of smooth colour,
//! edges and fine noise, each different, so no decoder meets the same bytes
//! twice. bench/previews.sh installs libvips-tools and runs this.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use bulwark_module_media::{Format, Preset, render};

fn photo(seed: u32, path: &Path) {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state % 24) as f32 - 12.0
    };
    let (w, h) = (3000u32, 2000u32);
    let phase = seed as f32 * 0.7;
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        let (fx, fy) = (x as f32 / w as f32, y as f32 / h as f32);
        let sky = 120.0 + 100.0 * (fy * 3.0 + phase).sin();
        let hill = if fy > 0.55 + 0.1 * (fx * 9.0 + phase).sin() {
            1.0
        } else {
            0.0
        };
        let n = noise();
        let r = sky * (1.0 - hill) + 60.0 * hill + 40.0 * (fx * 20.0 + phase).sin() + n;
        let g = 140.0 * (1.0 - hill) + 150.0 * hill + 30.0 * (fy * 40.0).cos() + n;
        let b = 220.0 * (1.0 - hill) + 50.0 * hill + n;
        image::Rgb([r, g, b].map(|c| c.clamp(0.0, 255.0) as u8))
    });
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    img.write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(
        &mut out, 90,
    ))
    .unwrap();
}

fn preset(format: Format) -> Preset {
    Preset {
        width: 400,
        height: 400,
        crop: false,
        format,
        quality: 82,
    }
}

/// Seconds for Bulwark to make every photo's previews, on `threads` threads.
fn bulwark(photos: &[PathBuf], threads: usize, formats: &[Format]) -> f64 {
    let start = Instant::now();
    std::thread::scope(|scope| {
        for part in photos.chunks(photos.len().div_ceil(threads)) {
            scope.spawn(move || {
                for photo in part {
                    for &format in formats {
                        let bytes = render(photo, &preset(format), (0.5, 0.5)).unwrap();
                        assert!(bytes.len() > 1000);
                    }
                }
            });
        }
    });
    start.elapsed().as_secs_f64()
}

/// Seconds for vipsthumbnail to do the same (one process per format, every
/// photo in it, so process start-up is paid twice, not forty times).
fn vips(photos: &[PathBuf], out: &Path, concurrency: Option<usize>, formats: &[&str]) -> f64 {
    let start = Instant::now();
    for format in formats {
        let mut cmd = Command::new("vipsthumbnail");
        cmd.arg("-s")
            .arg("400")
            .arg("-o")
            .arg(format!("{}/%s.{format}[Q=82]", out.display()));
        cmd.args(photos);
        if let Some(n) = concurrency {
            cmd.env("VIPS_CONCURRENCY", n.to_string());
        }
        let status = cmd
            .status()
            .expect("vipsthumbnail (apt-get install libvips-tools)");
        assert!(status.success());
    }
    start.elapsed().as_secs_f64()
}

fn main() {
    let count: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let photos: Vec<PathBuf> = (0..count)
        .map(|i| {
            let path = dir.path().join(format!("photo{i:02}.jpg"));
            photo(i as u32, &path);
            path
        })
        .collect();
    let out = dir.path().join("vips");
    std::fs::create_dir_all(&out).unwrap();
    // Once each to warm the page cache and the code.
    const OURS: [Format; 2] = [Format::Webp, Format::Jpeg];
    const VIPS: [&str; 2] = ["webp", "jpg"];
    bulwark(&photos[..1], 1, &OURS);
    vips(&photos[..1], &out, Some(1), &VIPS);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let b1 = bulwark(&photos, 1, &OURS);
    let v1 = vips(&photos, &out, Some(1), &VIPS);
    let bn = bulwark(&photos, cores, &OURS);
    let vn = vips(&photos, &out, None, &VIPS);
    let per = |t: f64| t * 1000.0 / (2 * count) as f64;
    println!(
        "{count} photos 3000x2000 -> 400 px WebP + JPEG (Q 82), {} previews",
        2 * count
    );
    println!("                 bulwark      vipsthumbnail   vips/bulwark time");
    println!(
        "one core        {:7.2} s  {:7.2} s        {:.2}x   ({:.1} vs {:.1} ms a preview)",
        b1,
        v1,
        v1 / b1,
        per(b1),
        per(v1)
    );
    println!(
        "{cores} cores         {:7.2} s  {:7.2} s        {:.2}x",
        bn,
        vn,
        vn / bn
    );
    let size = |ext: &str| -> u64 {
        std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == ext))
            .map(|e| e.metadata().unwrap().len())
            .sum()
    };
    let ours = |format| -> u64 {
        photos
            .iter()
            .map(|p| render(p, &preset(format), (0.5, 0.5)).unwrap().len() as u64)
            .sum()
    };
    println!(
        "bytes: WebP {} vs {} (vips), JPEG {} vs {} (vips)",
        ours(Format::Webp),
        size("webp"),
        ours(Format::Jpeg),
        size("jpg")
    );
    // AVIF alone, one core each: rav1e (speed 8) against libvips' encoder
    // (libheif with aom).
    let ba = bulwark(&photos, 1, &[Format::Avif]);
    let va = vips(&photos, &out, Some(1), &["avif"]);
    println!(
        "AVIF, one core  {:7.2} s  {:7.2} s        {:.2}x   bytes {} vs {} (vips)",
        ba,
        va,
        va / ba,
        ours(Format::Avif),
        size("avif")
    );
}
