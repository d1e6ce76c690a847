//! Huge pictures take no memory to speak of (a binary of its own, so the
//! process's peak resident memory, `VmHWM` in `/proc/self/status`, is this
//! test's alone): a 12000 x 12000 JPEG and an 11000 x 11000 PNG are refused at
//! upload by the pixel limit before their pixels are read; with the limit
//! raised, ten of each uploaded at once are stripped of their metadata without
//! being decoded; and previews of all of them asked for at once stay within
//! the site's resize memory budget, a picture that alone needs more than the
//! budget getting none.

#[path = "helpers/accounts.rs"]
mod accounts;
#[path = "helpers/common.rs"]
mod common;
#[path = "helpers/media_support.rs"]
mod support;

use accounts::*;
use support::*;

const MIB: u64 = 1 << 20;

/// A baseline greyscale JPEG of `side` x `side` pixels, all one grey, with
/// EXIF holding a GPS position, built by hand: one Huffman code of one bit
/// for "no difference" and one for "end of block", so each 8 x 8 block is two
/// zero bits and the file stays small (563 KB for 12000 x 12000) while a
/// decoder that reads it whole needs 144 MB.
fn huge_jpeg(side: u16) -> Vec<u8> {
    let mut out = vec![0xFF, 0xD8];
    let segment = |out: &mut Vec<u8>, marker: u8, body: &[u8]| {
        out.extend_from_slice(&[0xFF, marker]);
        out.extend_from_slice(&((body.len() + 2) as u16).to_be_bytes());
        out.extend_from_slice(body);
    };
    // EXIF: IFD0 with a GPSInfo pointer, and a GPS IFD with GPSLatitudeRef.
    let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08\0\x01".to_vec();
    exif.extend_from_slice(&[0x88, 0x25, 0, 4, 0, 0, 0, 1, 0, 0, 0, 26, 0, 0, 0, 0]);
    exif.extend_from_slice(&[0, 1, 0, 1, 0, 2, 0, 0, 0, 2, b'N', 0, 0, 0, 0, 0, 0, 0]);
    segment(&mut out, 0xE1, &exif);
    let mut dqt = vec![0u8];
    dqt.extend_from_slice(&[1u8; 64]);
    segment(&mut out, 0xDB, &dqt);
    let [hi, lo] = side.to_be_bytes();
    segment(&mut out, 0xC0, &[8, hi, lo, hi, lo, 1, 1, 0x11, 0]);
    // DC table 0 and AC table 0: one code of length 1, for symbol 0.
    let mut one_code = [0u8; 16];
    one_code[0] = 1;
    for class in [0x00, 0x10] {
        let mut dht = vec![class];
        dht.extend_from_slice(&one_code);
        dht.push(0);
        segment(&mut out, 0xC4, &dht);
    }
    segment(&mut out, 0xDA, &[1, 1, 0x00, 0, 63, 0]);
    let blocks = (usize::from(side) / 8).pow(2);
    out.resize(out.len() + blocks * 2 / 8, 0);
    out.extend_from_slice(&[0xFF, 0xD9]);
    out
}

/// A greyscale PNG of `side` x `side` black pixels. Its data is compressed a
/// row at a time with a full flush after each, so every row compresses to the
/// same bytes and the 121 MB of an 11000 x 11000 picture need compressing
/// only once (the Adler-32 of zeros is `(n mod 65521) << 16 | 1`).
fn huge_png(side: u32) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let row = vec![0u8; side as usize + 1];
    let mut compress = Compress::new(Compression::fast(), false);
    let mut once = Vec::with_capacity(1024);
    compress
        .compress_vec(&row, &mut once, FlushCompress::Full)
        .unwrap();
    let mut zlib = vec![0x78, 0x01];
    for _ in 0..side {
        zlib.extend_from_slice(&once);
    }
    zlib.extend_from_slice(&[0x03, 0x00]); // an empty final block
    let total = u64::from(side) * (u64::from(side) + 1);
    zlib.extend_from_slice(&((((total % 65521) << 16) | 1) as u32).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let chunk = |out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]| {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    };
    let mut ihdr = side.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"tEXt", b"Author\0someone at home");
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn status_field(name: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no {name} in /proc/self/status"));
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// Forgets the peak so far: from now on `VmHWM` is the peak since this call.
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    status_field("VmRSS:")
}

fn peak_since(start: u64) -> u64 {
    status_field("VmHWM:").saturating_sub(start)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_pictures_are_refused_or_kept_without_decoding_and_previews_keep_to_the_budget() {
    let jpeg = huge_jpeg(12000);
    let png = huge_png(11000);
    assert!(jpeg.len() < 600_000 && png.len() < 2_000_000);
    // The fixtures are right: their headers say what they are.
    let header = |b: &[u8]| {
        image::ImageReader::new(std::io::Cursor::new(b))
            .with_guessed_format()
            .unwrap()
            .into_dimensions()
            .unwrap()
    };
    assert_eq!(
        (header(&jpeg), header(&png)),
        ((12000, 12000), (11000, 11000))
    );

    // The default limit, 50 megapixels: both refused, with the reason.
    let s = media_site("").await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let start = reset_peak();
    for (name, bytes) in [("huge.jpg", &jpeg), ("huge.png", &png)] {
        let (status, body) = upload(&s, Some(&ed), name, bytes).await;
        assert_eq!(status, 422, "{body}");
        assert!(body.to_string().contains("megapixels"), "{body}");
    }
    let refused = peak_since(start);
    assert!(refused < 64 * MIB, "refusing took {} MiB", refused / MIB);
    s.shutdown().await;

    // Raised to 200 megapixels, with a budget of 64 MiB for resizes: ten of
    // each at once are taken without being decoded.
    let (s, _) = media_site_counting(
        "\n[[dispatch]]\nname = \"pic\"\npath = \"/pic/{id}\"\ncontroller = \"template\"\ntemplate = \"pic.tpl\"\n\
         [media]\nmax_pixels = 200000000\nresize_memory_mb = 64\nresize_queue_ms = 60000\n",
        &[("default/templates/pic.tpl", "{{ image(id, \"medium\") }}")],
    )
    .await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let start = reset_peak();
    let uploads = (0..20).map(|i| {
        let (name, bytes) = if i % 2 == 0 {
            (format!("huge{i}.jpg"), jpeg.clone())
        } else {
            (format!("huge{i}.png"), png.clone())
        };
        let (s, ed) = (&s, &ed);
        async move { upload(s, Some(ed), &name, &bytes).await }
    });
    let made = futures_util::future::join_all(uploads).await;
    let taken = peak_since(start);
    let mut ids = Vec::new();
    for (status, body) in &made {
        assert_eq!(*status, 201, "{body}");
        let id = body["id"].as_i64().unwrap();
        let kept = store(&s)
            .resource(bulwark_store::ResourceId(id))
            .unwrap()
            .unwrap();
        assert_eq!(kept.props.0["metadata_removed"], true, "{body}");
        ids.push(id);
    }
    assert!(taken < 64 * MIB, "twenty uploads took {} MiB", taken / MIB);

    // Their previews, all asked for at once: the JPEGs are decoded at an
    // eighth of their size, within the budget; a PNG would need 121 MiB
    // decoded, more than the whole budget, and gets none.
    let start = reset_peak();
    let previews = ids.iter().map(|id| {
        let s = &s;
        async move {
            let (status, page) = get(s, &format!("/pic/{id}"), None).await;
            assert_eq!(status, 200, "{page}");
            let src = img_src(&page);
            client()
                .get(url(s, &src))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    });
    let statuses = futures_util::future::join_all(previews).await;
    let resizing = peak_since(start);
    eprintln!(
        "peak above the start: refusing {} MiB, twenty uploads {} MiB, twenty previews {} MiB",
        refused / MIB,
        taken / MIB,
        resizing / MIB
    );
    for (i, status) in statuses.iter().enumerate() {
        let expected = if i % 2 == 0 { 200 } else { 404 };
        assert_eq!(*status, expected, "preview {i}");
    }
    assert!(
        resizing < 64 * MIB + 32 * MIB,
        "twenty previews at once took {} MiB (the budget is 64 MiB)",
        resizing / MIB
    );
    s.shutdown().await;
}
