//! Uploads over real HTTP on the starter site with the media module: the type
//! comes from the content, limits and rights are kept with a clear answer,
//! files are kept once per content, and a file is served to whoever may see
//! its resource.

use crate::accounts;
use crate::common;

use crate::media_support as support;

use accounts::*;
use bulwark_testkit::eventually;
use support::*;

/// A PNG of noise (it does not compress much).
fn png(width: u32, height: u32) -> Vec<u8> {
    let mut seed = 0x2545_f491_u32;
    let img = image::RgbImage::from_fn(width, height, |_, _| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let [a, b, c, _] = seed.to_le_bytes();
        image::Rgb([a, b, c])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_uploads_an_image_named_wrongly_and_it_is_what_its_bytes_say() {
    let s = media_site("").await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let bytes = png(3, 2);

    let (status, made) = upload(&s, Some(&ed), "holiday/../cat.jpg", &bytes).await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["mime"], "image/png", "from the bytes, not the name");
    assert_eq!(made["category"], "image");
    assert_eq!(
        (made["width"].as_u64(), made["height"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(made["size"], bytes.len());
    let id = made["id"].as_i64().unwrap();
    let r = store(&s)
        .resource(bulwark_store::ResourceId(id))
        .unwrap()
        .unwrap();
    assert_eq!(r.category_name, "image");
    assert_eq!(r.props.str("original_name"), Some("cat.jpg"));
    assert_eq!(r.props.str("sha256"), made["sha256"].as_str());
    // On SQLite (one node) a file is kept on the disk only.
    assert_eq!(blob_parts(&store(&s), made["sha256"].as_str().unwrap()), 0);

    // Served as what it is, to anyone who may see it.
    let resp = client()
        .get(url(&s, &format!("/media/file/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "image/png");
    assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
    assert_eq!(resp.bytes().await.unwrap().as_ref(), bytes.as_slice());
    // A range of it.
    let resp = client()
        .get(url(&s, &format!("/media/file/{id}")))
        .header("range", "bytes=0-7")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 206);
    assert_eq!(resp.bytes().await.unwrap().as_ref(), &bytes[..8]);

    // The same bytes again: a second resource, one file.
    let (status, again) = upload(&s, Some(&ed), "copy.png", &bytes).await;
    assert_eq!(status, 201, "{again}");
    assert_ne!(again["id"], made["id"]);
    let media = s.sites().join("default/data/media");
    assert_eq!(files_under(&media.join("files")).len(), 1);
    assert!(
        files_under(&media.join("tmp")).is_empty(),
        "nothing left behind"
    );

    // Unpublished: gone for anonymous visitors, there for the editor.
    let version = r.version;
    store(&s)
        .update_resource(bulwark_store::ResourceUpdate::new(r.id, version).published(false))
        .unwrap();
    let resp = client()
        .get(url(&s, &format!("/media/file/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let (status, _) = get(&s, &format!("/media/file/{id}"), Some(&ed.cookie)).await;
    assert_eq!(status, 200);
    // Deleting one of the two keeps the shared file; deleting the other removes it.
    let ids = [id, again["id"].as_i64().unwrap()];
    let gone = |s: &common::TestServer| {
        files_under(&s.sites().join("default/data/media/files")).is_empty()
    };
    store(&s)
        .delete_resource(bulwark_store::ResourceId(ids[0]), None)
        .unwrap();
    until_forgotten(&s, ids[0]).await;
    assert!(!gone(&s), "the other resource still uses it");
    let (status, _) = get(&s, &format!("/media/file/{}", ids[1]), None).await;
    assert_eq!(status, 200);
    store(&s)
        .delete_resource(bulwark_store::ResourceId(ids[1]), None)
        .unwrap();
    eventually("the last one took the file along", WITHIN, || async {
        gone(&s).then_some(())
    })
    .await;
    for bad in ["0", "-1", "x", "99999"] {
        let resp = client()
            .get(url(&s, &format!("/media/file/{bad}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404, "{bad}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_that_break_a_rule_are_refused_with_the_reason_and_leave_nothing() {
    let s = media_site("\n[media]\nmax_bytes = 2000\n").await;
    add_user(&s, "ed", "editors").await;
    add_user(&s, "mia", "members").await;
    let (ed, mia) = (session(&s, "ed").await, session(&s, "mia").await);
    let small = png(2, 2);

    // Who: nobody, a member, a session without its CSRF token.
    assert_eq!(upload(&s, None, "a.png", &small).await.0, 401);
    let (status, body) = upload(&s, Some(&mia), "a.png", &small).await;
    assert_eq!(status, 403, "{body}");
    let no_csrf = Session {
        cookie: ed.cookie.clone(),
        csrf: "wrong".into(),
    };
    assert_eq!(upload(&s, Some(&no_csrf), "a.png", &small).await.0, 403);

    // What: HTML whatever its name, a fake image, nothing, too much.
    let (status, body) = upload(
        &s,
        Some(&ed),
        "photo.png",
        b"<!doctype html><script>alert(1)</script>",
    )
    .await;
    assert_eq!(status, 415, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("photo.png"),
        "{body}"
    );
    let mut fake = small.clone();
    fake.truncate(20);
    let (status, body) = upload(&s, Some(&ed), "broken.png", &fake).await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = upload(&s, Some(&ed), "empty.png", b"").await;
    assert_eq!(status, 400, "{body}");
    let large = png(200, 200);
    assert!(large.len() > 2000);
    let (status, body) = upload(&s, Some(&ed), "large.png", &large).await;
    assert_eq!(status, 413, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("2000"), "{body}");

    // How: not multipart, no file field, a form cut short.
    let resp = client()
        .post(url(&s, "/media/upload"))
        .header("cookie", &ed.cookie)
        .header("x-csrf-token", &ed.csrf)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 415);
    let resp = client()
        .post(url(&s, "/media/upload"))
        .header("cookie", &ed.cookie)
        .header("x-csrf-token", &ed.csrf)
        .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
        .body(format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--{BOUNDARY}--\r\n"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let mut cut = multipart("cut.png", &small);
    cut.truncate(cut.len() - 30);
    let resp = client()
        .post(url(&s, "/media/upload"))
        .header("cookie", &ed.cookie)
        .header("x-csrf-token", &ed.csrf)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(cut)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);

    // Nothing of any of them was kept, and the site still takes a good one.
    let media = s.sites().join("default/data/media");
    assert!(files_under(&media).is_empty(), "{:?}", files_under(&media));
    assert_eq!(upload(&s, Some(&ed), "ok.png", &small).await.0, 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictures_in_a_text_are_written_responsive_and_one_the_visitor_may_not_see_is_left_out() {
    let (s, _media) = media_site_counting(
        "\n[[dispatch]]\nname = \"text\"\npath = \"/text/{id}\"\ncontroller = \"template\"\ntemplate = \"text.tpl\"\n",
        &[("default/templates/text.tpl", "{{ pictures(m.rsc[id].body) }}")],
    )
    .await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let (status, made) = upload(&s, Some(&ed), "quay.png", &png(1800, 1200)).await;
    assert_eq!(status, 201, "{made}");
    let shown = made["id"].as_i64().unwrap();
    let (status, made) = upload(&s, Some(&ed), "draft.png", &png(400, 300)).await;
    assert_eq!(status, 201, "{made}");
    let hidden = made["id"].as_i64().unwrap();
    let r = store(&s)
        .resource(bulwark_store::ResourceId(hidden))
        .unwrap()
        .unwrap();
    store(&s)
        .update_resource(bulwark_store::ResourceUpdate::new(r.id, r.version).published(false))
        .unwrap();
    // As the editor inserts them: a figure with the medium preview's URL (any
    // signature: the picture is found by its id), the width it is shown at
    // and the words for it; and as the WordPress import writes them.
    let body = format!(
        r#"<p>Boats.</p><figure class="picture align-right size-small"><img src="/media/preview/{shown}/medium/0123" alt="Boats at the quay &amp; the market" width="320" height="1"><figcaption>Morning</figcaption></figure><p><img src="/media/file/{hidden}" alt="a draft"></p><p><img src="/lib/images/logo.png" alt="ours"></p>"#
    );
    let article = store(&s)
        .create_resource(
            bulwark_store::NewResource::new(
                "article",
                bulwark_store::Props::new()
                    .with("title", "Harbour")
                    .with("body", body),
            )
            .published(true),
        )
        .unwrap();
    let (status, page) = get(&s, &format!("/text/{}", article.0), None).await;
    assert_eq!(status, 200, "{page}");

    let img = page
        .split("<figure")
        .nth(1)
        .and_then(|f| f.split("<img ").nth(1))
        .map(|i| i.split('>').next().unwrap().to_owned())
        .expect("the figure's img");
    // Every preset that keeps the picture's shape, and each at twice its size,
    // no wider than the picture (1800 px): medium 800, large 1600, medium@2x
    // 1600 (the same width, once), large@2x 1800.
    let srcset = img
        .split("srcset=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let widths: Vec<&str> = srcset
        .split(", ")
        .map(|c| c.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(widths, ["800w", "1600w", "1800w"], "{srcset}");
    assert!(
        srcset
            .split(", ")
            .all(|c| c.starts_with(&format!("/media/preview/{shown}/"))),
        "{srcset}"
    );
    assert!(
        img.contains(r#"sizes="(max-width: 320px) 100vw, 320px""#),
        "{img}"
    );
    assert!(
        img.contains(r#"width="320" height="213""#),
        "in the picture's proportions: {img}"
    );
    assert!(
        img.contains(r#"alt="Boats at the quay &amp; the market""#),
        "{img}"
    );
    assert!(img.contains(r#"loading="lazy""#), "{img}");
    // Its src is a preview that answers, the smallest at least as wide.
    let src = img_src(&format!("<img {img}>"));
    assert!(
        src.starts_with(&format!("/media/preview/{shown}/medium/")),
        "{src}"
    );
    let resp = client().get(url(&s, &src)).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{src}");
    assert!(page.contains("<figcaption>Morning</figcaption>"), "{page}");

    // The unpublished picture is not on the page for a visitor; another
    // picture (not the library's) stays as it was written.
    assert!(!page.contains(&format!("/media/file/{hidden}")), "{page}");
    assert!(!page.contains("a draft"), "{page}");
    assert!(page.contains("/lib/images/logo.png"), "{page}");

    // A picture's own page shows the picture (large), not only its title.
    let (status, own) = get(&s, &format!("/page/{shown}"), None).await;
    assert_eq!(status, 200, "{own}");
    assert!(
        own.contains(&format!(
            r#"<figure class="depiction"><img src="/media/preview/{shown}/large/"#
        )),
        "{own}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_is_made_once_for_a_rush_signed_and_kept() {
    let (s, media) = media_site_counting(
        "\n[[dispatch]]\nname = \"pic\"\npath = \"/pic/{id}\"\ncontroller = \"template\"\ntemplate = \"pic.tpl\"\n",
        &[("default/templates/pic.tpl", "{{ image(id, \"thumbnail\") }}|{{ image(id, \"medium\") }}")],
    )
    .await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let (status, made) = upload(&s, Some(&ed), "big.png", &png(640, 480)).await;
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().unwrap();

    // The template writes the img with its size, alt and lazy loading.
    let (status, page) = get(&s, &format!("/pic/{id}"), None).await;
    assert_eq!(status, 200, "{page}");
    let (thumb, medium) = page.split_once('|').unwrap();
    assert!(thumb.contains(r#"width="200" height="200""#), "{thumb}");
    assert!(
        medium.contains(r#"width="640" height="480""#),
        "never larger: {medium}"
    );
    assert!(
        thumb.contains(r#"loading="lazy""#) && thumb.contains(r#"alt="big.png""#),
        "{thumb}"
    );
    let src = img_src(thumb);
    assert!(
        src.starts_with(&format!("/media/preview/{id}/thumbnail/")),
        "{src}"
    );
    // Twice the pixels for screens that have them, when the original has them.
    let srcset = thumb
        .split("srcset=\"")
        .nth(1)
        .expect("a srcset")
        .split('"')
        .next()
        .unwrap()
        .replace("&#x2f;", "/");
    let double = srcset
        .split(", ")
        .nth(1)
        .unwrap()
        .trim_end_matches(" 2x")
        .to_owned();
    assert!(
        double.starts_with(&format!("/media/preview/{id}/thumbnail@2x/")),
        "{srcset}"
    );
    assert!(
        !medium.contains("srcset"),
        "a 640 px original has no 1280 px to give: {medium}"
    );

    // 500 at once for the new preview: one resize, all answered.
    let before = media.resizes("default");
    let rush: Vec<_> = (0..500)
        .map(|_| {
            let u = url(&s, &src);
            tokio::spawn(async move { client().get(u).send().await.unwrap().status().as_u16() })
        })
        .collect();
    for r in rush {
        assert_eq!(r.await.unwrap(), 200);
    }
    assert_eq!(
        media.resizes("default") - before,
        1,
        "one resize for the rush"
    );
    let resp = client().get(url(&s, &double)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let twice = image::load_from_memory(&resp.bytes().await.unwrap()).unwrap();
    assert_eq!((twice.width(), twice.height()), (400, 400));
    let before = before + 1;
    let resp = client().get(url(&s, &src)).send().await.unwrap();
    assert_eq!(resp.headers()["content-type"], "image/jpeg");
    assert!(
        resp.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    let bytes = resp.bytes().await.unwrap();
    let decoded = image::load_from_memory(&bytes).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (200, 200));
    let kept = files_under(&s.sites().join("default/data/media/previews"));
    assert_eq!(kept.len(), 2, "both kept on disk: {kept:?}");

    // A signature changed by one character, or moved to another preset or
    // resource, names nothing.
    let mut tampered = src.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == '0' { '1' } else { '0' });
    let other_preset = src.replace("/thumbnail/", "/large/");
    let other_id = src.replace(&format!("/{id}/"), &format!("/{}/", id + 1));
    for bad in [
        tampered,
        other_preset,
        other_id,
        format!("/media/preview/{id}/huge/{}", "0".repeat(24)),
    ] {
        let resp = client().get(url(&s, &bad)).send().await.unwrap();
        assert_eq!(resp.status(), 404, "{bad}");
    }
    assert_eq!(
        media.resizes("default") - before,
        1,
        "no resize for any of them"
    );
    // A validator: the browser's copy is current.
    let resp = client().get(url(&s, &src)).send().await.unwrap();
    let etag = resp.headers()["etag"].clone();
    let resp = client()
        .get(url(&s, &src))
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 304);

    // Deleting the image takes its file and every preview along.
    store(&s)
        .delete_resource(bulwark_store::ResourceId(id), None)
        .unwrap();
    let left = || files_under(&s.sites().join("default/data/media"));
    eventually("the file and its previews are gone", WITHIN, || async {
        left().is_empty().then_some(())
    })
    .await;
    // A timer: the file cache looks at a file it holds again after REVALIDATE.
    tokio::time::sleep(bulwark_web::file_cache::REVALIDATE + std::time::Duration::from_millis(100))
        .await;
    let resp = client().get(url(&s, &src)).send().await.unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saturated_resize_pool_answers_503_while_pages_keep_their_speed() {
    // One worker and a deadline of 1 ms: the second of two new previews asked
    // at once waits past it.
    let (s, _media) = media_site_counting(
        "\n[media]\nresize_workers = 1\nresize_queue_ms = 1\n[media.presets.big]\nwidth = 3000\nheight = 3000\n[media.presets.big2]\nwidth = 2900\nheight = 2900\n\n[[dispatch]]\nname = \"pic\"\npath = \"/pic/{id}\"\ncontroller = \"template\"\ntemplate = \"pic.tpl\"\n",
        &[("default/templates/pic.tpl", "{{ image(id, \"big\") }}|{{ image(id, \"big2\") }}")],
    )
    .await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let (status, made) = upload(&s, Some(&ed), "huge.png", &png(2400, 2400)).await;
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().unwrap();
    let (_, page) = get(&s, &format!("/pic/{id}"), None).await;
    let (a, b) = page.split_once('|').unwrap();
    let (a, b) = (img_src(a), img_src(b));
    let ask = |src: String| {
        let u = url(&s, &src);
        tokio::spawn(async move { client().get(u).send().await.unwrap() })
    };
    let (first, second) = (ask(a), ask(b));
    // While the worker resizes, a page is answered as ever.
    assert_eq!(get(&s, "/about", None).await.0, 200);
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    let statuses = [first.status().as_u16(), second.status().as_u16()];
    assert!(statuses.contains(&503), "{statuses:?}");
    assert!(statuses.contains(&200), "{statuses:?}");
    let busy = if first.status() == 503 {
        &first
    } else {
        &second
    };
    assert!(busy.headers().contains_key("retry-after"));
}

/// A JPEG of `width` x `height` with an EXIF block: orientation `orientation`
/// and a GPS pointer, as a phone writes it.
fn jpeg_with_exif(width: u32, height: u32, orientation: u16) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, _| image::Rgb([(x * 60) as u8, 0, 0]));
    let mut plain = std::io::Cursor::new(Vec::new());
    img.write_to(&mut plain, image::ImageFormat::Jpeg).unwrap();
    with_exif(&plain.into_inner(), orientation)
}

/// `plain` (a JPEG) with EXIF metadata: an orientation and a location.
fn with_exif(plain: &[u8], orientation: u16) -> Vec<u8> {
    // TIFF, big-endian: IFD0 with Orientation (0x0112) and GPSInfo (0x8825).
    let mut tiff = b"MM\x00\x2a\x00\x00\x00\x08".to_vec();
    tiff.extend_from_slice(&2u16.to_be_bytes());
    tiff.extend_from_slice(&[0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1]);
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    tiff.extend_from_slice(&[0x88, 0x25, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 38]);
    tiff.extend_from_slice(&[0, 0, 0, 0]);
    // The GPS IFD: GPSLatitudeRef "N".
    tiff.extend_from_slice(&1u16.to_be_bytes());
    tiff.extend_from_slice(&[0x00, 0x01, 0x00, 0x02, 0, 0, 0, 2, b'N', 0, 0, 0]);
    tiff.extend_from_slice(&[0, 0, 0, 0]);
    let mut app1 = b"Exif\x00\x00".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = plain[..2].to_vec();
    out.extend_from_slice(&[0xff, 0xe1]);
    out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&plain[2..]);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photo_keeps_its_pixels_and_orientation_and_loses_its_location() {
    let (s, _) = media_site_counting(
        "\n[[dispatch]]\nname = \"pic\"\npath = \"/pic/{id}\"\ncontroller = \"template\"\ntemplate = \"pic.tpl\"\n",
        &[("default/templates/pic.tpl", "{{ image(id, \"medium\") }}")],
    )
    .await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let photo = jpeg_with_exif(8, 4, 6);
    assert!(photo.windows(2).any(|w| w == [0x88, 0x25]), "a GPS tag");
    let (status, made) = upload(&s, Some(&ed), "phone.jpg", &photo).await;
    assert_eq!(status, 201, "{made}");
    // Orientation 6 is a quarter turn: 8 x 4 as stored, 4 x 8 upright.
    assert_eq!(
        (made["width"].as_u64(), made["height"].as_u64()),
        (Some(4), Some(8))
    );
    assert_eq!(made["mime"], "image/jpeg");
    let id = made["id"].as_i64().unwrap();
    let resp = client()
        .get(url(&s, &format!("/media/file/{id}")))
        .send()
        .await
        .unwrap();
    let kept = resp.bytes().await.unwrap();
    // The location is gone; the EXIF left holds the orientation alone.
    assert!(!kept.windows(2).any(|w| w == [0x88, 0x25]), "no GPS tag");
    let mut decoder = image::ImageReader::new(std::io::Cursor::new(&kept))
        .with_guessed_format()
        .unwrap()
        .into_decoder()
        .unwrap();
    use image::ImageDecoder;
    let exif = decoder.exif_metadata().unwrap().unwrap();
    assert_eq!(exif.len(), 26, "one tag: {exif:?}");
    assert_eq!(
        decoder.orientation().unwrap(),
        image::metadata::Orientation::Rotate90
    );
    // The pixels are the uploaded ones (nothing was decoded and encoded again).
    let pixels = |b: &[u8]| image::load_from_memory(b).unwrap().to_rgb8();
    assert_eq!(pixels(&kept), pixels(&photo));
    assert_eq!(made["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(made["size"], kept.len(), "the kept file's own size");
    assert!(kept.len() < photo.len());
    let r = store(&s)
        .resource(bulwark_store::ResourceId(id))
        .unwrap()
        .unwrap();
    assert_eq!(r.props.0["metadata_removed"], true);

    // A photo whose colour components come in scans of their own (valid, if
    // rare), its colour at half resolution: its preview is upright and red.
    let mut separate = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut separate, 82);
    encoder.set_optimized_huffman_tables(true);
    encoder
        .encode(
            &[200u8, 30, 40].repeat(300 * 200),
            300,
            200,
            jpeg_encoder::ColorType::Rgb,
        )
        .unwrap();
    let (status, made) = upload(&s, Some(&ed), "red.jpg", &with_exif(&separate, 6)).await;
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().unwrap();
    let (status, page) = get(&s, &format!("/pic/{id}"), None).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(r#"width="200" height="300""#), "{page}");
    let resp = client().get(url(&s, &img_src(&page))).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let preview = image::load_from_memory(&resp.bytes().await.unwrap())
        .unwrap()
        .to_rgb8();
    assert_eq!(preview.dimensions(), (200, 300));
    let [r, g, b] = preview.get_pixel(100, 150).0;
    assert!(r > 180 && g < 60 && b < 70, "still red: {r} {g} {b}");

    // A picture without metadata is kept byte for byte.
    let plain = png(5, 3);
    let (_, made) = upload(&s, Some(&ed), "plain.png", &plain).await;
    let id = made["id"].as_i64().unwrap();
    let resp = client()
        .get(url(&s, &format!("/media/file/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.bytes().await.unwrap().as_ref(), plain.as_slice());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_follow_the_uploaders_groups_and_the_site_keeps_its_quota() {
    let small = png(2, 2);
    let other = png(3, 3);
    let large = png(100, 100);
    let quota = small.len() + other.len() / 2;
    let s = media_site(&format!(
        "\n[media]\nmax_bytes = 2000\nquota_bytes = {quota}\n\
         [media.groups.editors]\ntypes = [\"image/png\"]\n\
         [media.groups.managers]\nmax_bytes = 100000\n"
    ))
    .await;
    add_user(&s, "ed", "editors").await;
    add_user(&s, "max", "managers").await;
    let (ed, max) = (session(&s, "ed").await, session(&s, "max").await);

    // An editor is held to the site's size; a manager has their group's.
    let (status, body) = upload(&s, Some(&ed), "large.png", &large).await;
    assert_eq!(status, 413, "{body}");
    assert!(large.len() > 2000 && large.len() as u64 > quota as u64);
    // Editors may only upload PNG; a manager (an editor too) has the site's types.
    let gif = {
        let mut out = std::io::Cursor::new(Vec::new());
        image::RgbImage::new(2, 2)
            .write_to(&mut out, image::ImageFormat::Gif)
            .unwrap();
        out.into_inner()
    };
    let (status, body) = upload(&s, Some(&ed), "a.gif", &gif).await;
    assert_eq!(status, 415, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .ends_with("cannot be uploaded here: only pictures (PNG) can."),
        "{body}"
    );

    // The quota: the first file fits, a second does not, the same file again
    // takes no room, and deleting makes room.
    let (status, first) = upload(&s, Some(&ed), "small.png", &small).await;
    assert_eq!(status, 201, "{first}");
    let (status, body) = upload(&s, Some(&max), "other.png", &other).await;
    assert_eq!(status, 507, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("quota"), "{body}");
    let (status, again) = upload(&s, Some(&ed), "again.png", &small).await;
    assert_eq!(status, 201, "{again}");
    let (status, _) = upload(&s, Some(&max), "large.png", &large).await;
    assert_eq!(
        status, 507,
        "over the quota, though not over the manager's size"
    );
    for made in [&first, &again] {
        let id = made["id"].as_i64().unwrap();
        store(&s)
            .delete_resource(bulwark_store::ResourceId(id), None)
            .unwrap();
        until_forgotten(&s, id).await;
    }
    let (status, _) = upload(&s, Some(&max), "other.png", &other).await;
    assert_eq!(status, 201, "room again after deleting");
    assert!(
        files_under(&s.sites().join("default/data/media/tmp")).is_empty(),
        "nothing of the refused uploads is left"
    );
}

/// Six different PNGs of about one size, and the largest's size: any two of
/// them fit in twice that, no three do.
fn six_files_of_which_two_fit() -> (Vec<Vec<u8>>, usize) {
    let files: Vec<Vec<u8>> = [(40, 40), (40, 41), (41, 40), (41, 41), (40, 42), (42, 40)]
        .iter()
        .map(|&(w, h)| png(w, h))
        .collect();
    let largest = files.iter().map(Vec::len).max().unwrap();
    let smallest = files.iter().map(Vec::len).min().unwrap();
    assert!(2 * largest < 3 * smallest, "any two fit, no three");
    (files, largest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_arriving_together_cannot_pass_the_quota_between_them() {
    // Six different files of about one size; the quota holds two of them.
    let (files, largest) = six_files_of_which_two_fit();
    let s = media_site(&format!("\n[media]\nquota_bytes = {}\n", 2 * largest)).await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;

    let names: Vec<String> = (0..files.len()).map(|i| format!("{i}.png")).collect();
    let answers = futures_util::future::join_all(
        names
            .iter()
            .zip(&files)
            .map(|(name, bytes)| upload(&s, Some(&ed), name, bytes)),
    )
    .await;
    let statuses: Vec<u16> = answers.iter().map(|(status, _)| *status).collect();
    assert_eq!(
        statuses.iter().filter(|&&s| s == 201).count(),
        2,
        "{answers:?}"
    );
    assert_eq!(
        statuses.iter().filter(|&&s| s == 507).count(),
        4,
        "{answers:?}"
    );
    let kept = files_under(&s.sites().join("default/data/media/files"));
    assert_eq!(kept.len(), 2, "only what was taken is kept: {kept:?}");
    let stored: u64 = kept.iter().map(|p| p.metadata().unwrap().len()).sum();
    assert!(stored <= 2 * largest as u64);
    assert!(files_under(&s.sites().join("default/data/media/tmp")).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_recorded_before_sizes_were_are_weighed_when_the_store_opens() {
    use bulwark_web::Module;
    let (s, media) = media_site_counting("", &[]).await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let bytes = png(20, 20);
    let (status, made) = upload(&s, Some(&ed), "a.png", &bytes).await;
    assert_eq!(status, 201, "{made}");
    let store = store(&s);
    let sizes = |store: &bulwark_store::Store| {
        store
            .module_read(|sql| sql.query("SELECT size FROM media_file", &[]))
            .unwrap()
            .iter()
            .map(|r| r.int(0))
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes(&store), [bytes.len() as i64]);
    // As the table was before it had sizes; then the site starts again.
    store
        .module_write(|sql| sql.execute("UPDATE media_file SET size = 0", &[]))
        .unwrap();
    let manifests: Vec<_> = common::modules()
        .iter()
        .map(|m| m.manifest().clone())
        .collect();
    let site = bulwark_site::Site::load(&s.sites().join("default"), false, &manifests).unwrap();
    let reopened = store.clone();
    tokio::task::spawn_blocking(move || media.open_store(&site, &reopened))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sizes(&store), [bytes.len() as i64]);
}

/// A node of the starter site on PostgreSQL `schema` with `settings`, and
/// a page that shows an image's thumbnail: each node has its own `data/`
/// folder, as on its own machine.
async fn node(schema: &str, name: &str, settings: &str) -> common::TestServer {
    let pic = "\n[[dispatch]]\nname = \"pic\"\npath = \"/pic/{id}\"\n\
               controller = \"template\"\ntemplate = \"pic.tpl\"\n";
    starter_node(
        schema,
        name,
        &format!("{pic}{settings}"),
        &[(
            "default/templates/pic.tpl",
            "{{ image(id, \"thumbnail\") }}",
        )],
        bulwark_module_cluster::module(),
    )
    .await
}

/// How long the media module may take to act on a deletion (it does so on a
/// blocking thread after the change event, or in a sweep a second later).
const WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits until the media module has recorded the deletion of resource `id`:
/// its record of the file is gone (and the file too, if it was the last).
async fn until_forgotten(s: &common::TestServer, id: i64) {
    let store = store(s);
    eventually(
        "the media module forgot the deleted resource",
        WITHIN,
        || {
            let store = store.clone();
            async move {
                let records = store
                    .run(move |s| {
                        s.module_read(|sql| {
                            sql.query_one(
                                "SELECT count(*) FROM media_file WHERE rsc_id = $1",
                                &[id.into()],
                            )
                        })
                    })
                    .await
                    .unwrap()
                    .map_or(0, |r| r.int(0));
                (records == 0).then_some(())
            }
        },
    )
    .await;
}

/// `GET /media/file/{id}` as `who`.
async fn file_as(s: &common::TestServer, id: i64, who: &Session) -> reqwest::Response {
    client()
        .get(url(s, &format!("/media/file/{id}")))
        .header("cookie", &who.cookie)
        .send()
        .await
        .unwrap()
}

fn blob_parts(store: &bulwark_store::Store, sha256: &str) -> i64 {
    store
        .module_read(|sql| {
            sql.query_one(
                "SELECT count(*) FROM media_blob WHERE sha256 = $1",
                &[sha256.into()],
            )
        })
        .unwrap()
        .map_or(0, |r| r.int(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_uploaded_to_one_node_is_served_by_every_node_and_deleted_from_all() {
    let schema = fresh_schema("media_nodes");
    let a = node(&schema, &format!("a-{schema}"), "").await;
    let b = node(&schema, &format!("b-{schema}"), "").await;
    add_user(&a, "ed", "editors").await;
    let ed_a = session(&a, "ed").await;
    // More than one part in the database: 1 MiB each.
    let bytes = png(900, 500);
    assert!(bytes.len() > 1024 * 1024, "{}", bytes.len());
    let (status, made) = upload(&a, Some(&ed_a), "wide.png", &bytes).await;
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().unwrap();
    let sha256 = made["sha256"].as_str().unwrap().to_owned();
    assert_eq!(blob_parts(&store(&a), &sha256), 2);
    let on_disk = |s: &common::TestServer| {
        files_under(&s.sites().join("default/data/media"))
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&sha256))
            })
            .count()
    };
    assert_eq!((on_disk(&a), on_disk(&b)), (1, 0));

    // Node B has never seen the file: it fetches it from the database, whole.
    let ed_b = session(&b, "ed").await;
    let resp = file_as(&b, id, &ed_b).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "image/png");
    assert_eq!(resp.bytes().await.unwrap(), bytes);
    assert_eq!(on_disk(&b), 1);

    // And makes its previews from it.
    let (status, page) = get(&b, &format!("/pic/{id}"), None).await;
    assert_eq!(status, 200, "{page}");
    let resp = client().get(url(&b, &img_src(&page))).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "image/jpeg");
    assert_eq!(on_disk(&b), 2);

    let (a_store, shared_id) = (store(&a), bulwark_store::ResourceId(id));
    tokio::task::spawn_blocking(move || a_store.delete_resource(shared_id, None))
        .await
        .unwrap()
        .unwrap();
    // Gone from the database and from both nodes' disks.
    eventually("the file is gone from both nodes", WITHIN, || async {
        (on_disk(&a) == 0 && on_disk(&b) == 0).then_some(())
    })
    .await;
    assert_eq!(blob_parts(&store(&b), &sha256), 0);

    // The node that records a deletion removes its copy; a node that finds
    // the record gone (another node took it first) sweeps its disk. As if
    // another node had recorded this one's deletion: both nodes sweep.
    let (status, made) = upload(&a, Some(&ed_a), "second.png", &png(40, 30)).await;
    assert_eq!(status, 201, "{made}");
    let second = made["id"].as_i64().unwrap();
    let sha256 = made["sha256"].as_str().unwrap().to_owned();
    let resp = file_as(&b, second, &ed_b).await;
    assert_eq!(resp.status(), 200);
    let count = |s: &common::TestServer| {
        files_under(&s.sites().join("default/data/media/files"))
            .into_iter()
            .filter(|p| p.ends_with(&sha256))
            .count()
    };
    assert_eq!((count(&a), count(&b)), (1, 1));
    let gone = sha256.clone();
    store(&a)
        .module_write(move |sql| {
            sql.execute("DELETE FROM media_file WHERE rsc_id = $1", &[second.into()])?;
            sql.execute("DELETE FROM media_blob WHERE sha256 = $1", &[gone.into()])
        })
        .unwrap();
    let b_store = store(&b);
    tokio::task::spawn_blocking(move || {
        b_store.delete_resource(bulwark_store::ResourceId(second), None)
    })
    .await
    .unwrap()
    .unwrap();
    eventually("both nodes swept the file", WITHIN, || async {
        (count(&a) == 0 && count(&b) == 0).then_some(())
    })
    .await;

    // A file the database lost (by hand) and this node never had: 404.
    let (status, made) = upload(&a, Some(&ed_a), "third.png", &png(30, 30)).await;
    assert_eq!(status, 201, "{made}");
    let third = made["id"].as_i64().unwrap();
    store(&a)
        .module_write(|sql| sql.execute("DELETE FROM media_blob", &[]))
        .unwrap();
    let resp = file_as(&b, third, &ed_b).await;
    assert_eq!(resp.status(), 404);

    stop_nodes(vec![a, b], &schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_to_two_nodes_at_once_cannot_pass_the_quota_between_them() {
    // Six different files of about one size, three to each node at once;
    // the quota holds two of them.
    let (files, largest) = six_files_of_which_two_fit();
    let quota = format!("\n[media]\nquota_bytes = {}\n", 2 * largest);
    let schema = fresh_schema("media_quota");
    let a = node(&schema, &format!("a-{schema}"), &quota).await;
    let b = node(&schema, &format!("b-{schema}"), &quota).await;
    add_user(&a, "ed", "editors").await;
    let (ed_a, ed_b) = (session(&a, "ed").await, session(&b, "ed").await);

    let names: Vec<String> = (0..files.len()).map(|i| format!("{i}.png")).collect();
    let answers = futures_util::future::join_all(names.iter().zip(&files).enumerate().map(
        |(i, (name, bytes))| {
            let (node, who) = if i % 2 == 0 { (&a, &ed_a) } else { (&b, &ed_b) };
            upload(node, Some(who), name, bytes)
        },
    ))
    .await;
    let statuses: Vec<u16> = answers.iter().map(|(status, _)| *status).collect();
    assert_eq!(
        (
            statuses.iter().filter(|&&s| s == 201).count(),
            statuses.iter().filter(|&&s| s == 507).count()
        ),
        (2, 4),
        "{answers:?}"
    );
    let recorded: Vec<(i64, Option<i64>)> = store(&a)
        .module_read(|sql| sql.query("SELECT size, reserved_at FROM media_file", &[]))
        .unwrap()
        .iter()
        .map(|r| (r.int(0), r.opt_int(1)))
        .collect();
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    assert!(recorded.iter().all(|(_, reserved)| reserved.is_none()));
    assert!(recorded.iter().map(|(size, _)| *size).sum::<i64>() <= 2 * largest as i64);
    stop_nodes(vec![a, b], &schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_signing_key_is_shown_to_no_manager_and_no_template() {
    let (s, _) = media_site_counting(
        "\n[[dispatch]]\nname = \"conf\"\npath = \"/conf\"\ncontroller = \"template\"\ntemplate = \"conf.tpl\"\n",
        &[(
            "default/templates/conf.tpl",
            "[{{ m.config[\"secret.media.preview_key\"] }}][{{ m.config[\"media.preview_key\"] }}]",
        )],
    )
    .await;
    let key = store(&s)
        .config_value("secret.media.preview_key")
        .unwrap()
        .expect("made when the site started");
    assert_eq!(key.len(), 64);
    add_user(&s, "max", "managers").await;
    let max = session(&s, "max").await;
    let (status, body, _) = call(&s, &As::Session(&max), "GET", "/api/config", None, None).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.to_string().contains(&key), "{body}");
    let (status, page) = get(&s, "/conf", None).await;
    assert_eq!((status, page.trim()), (200, "[][]"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_uploads_left_by_a_crash_go_when_the_site_starts() {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in common::starter_site() {
        common::write(&dir.path().join(&path), &text);
    }
    let site_dir = dir.path().join("default");
    let tmp = site_dir.join("data/media/tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let (stale, fresh) = (tmp.join("0-crashed"), tmp.join("1-arriving"));
    std::fs::write(&stale, b"half a picture").unwrap();
    std::fs::write(&fresh, b"a picture on its way").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    // The site's store opens, as when the server starts (or `bulwark user`).
    let modules = common::modules();
    let manifests: Vec<_> = modules.iter().map(|m| m.manifest().clone()).collect();
    let site = std::sync::Arc::new(bulwark_site::Site::load(&site_dir, false, &manifests).unwrap());
    bulwark_web::open_site_store(&site, &modules).await.unwrap();
    assert!(!stale.exists(), "the crashed upload's part is gone");
    assert!(fresh.exists(), "one in progress stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sites_token_uploads_within_the_sites_limits() {
    let token = "a-site-token-for-scripts-0123456789".to_owned();
    let mut files = common::starter_site();
    for (path, text) in files.iter_mut() {
        if path == "default/site.toml" {
            *text = text.replace("# token = \"generated\"", &format!("token = \"{token}\""));
            assert!(text.contains(&token));
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let s = common::start(&files, |_| {}).await;
    let send = |token: String| {
        client()
            .post(url(&s, "/media/upload"))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .header("authorization", format!("Bearer {token}"))
            .body(multipart("from-a-script.png", &png(4, 4)))
            .send()
    };
    let resp = send(token).await.unwrap();
    assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
    let resp = send("not-the-token".to_owned()).await.unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_is_shown_in_the_browser_only_when_an_editor_uploaded_it() {
    let pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
    let disposition = |s: &common::TestServer, id: i64| {
        let url = url(s, &format!("/media/file/{id}"));
        async move {
            let resp = client().get(url).send().await.unwrap();
            assert_eq!(resp.status(), 200);
            resp.headers()
                .get("content-disposition")
                .map(|v| v.to_str().unwrap().to_owned())
        }
    };
    let s = media_site("").await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let (status, made) = upload(&s, Some(&ed), "report.pdf", pdf).await;
    assert_eq!(status, 201, "{made}");
    let by_editor = made["id"].as_i64().unwrap();
    assert_eq!(
        disposition(&s, by_editor).await,
        None,
        "an editor's PDF is shown"
    );
    // One that someone else uploaded (a member the rules let upload): downloaded.
    let store = store(&s);
    let other = {
        let r = store
            .resource(bulwark_store::ResourceId(by_editor))
            .unwrap()
            .unwrap();
        let mut update = bulwark_store::ResourceUpdate::new(r.id, r.version);
        update.props = bulwark_store::PropsChange::Merge(
            bulwark_store::Props::new().with("uploaded_by_editor", false),
        );
        store.update_resource(update).unwrap();
        by_editor
    };
    let said = disposition(&s, other).await.expect("a Content-Disposition");
    assert!(said.starts_with("attachment"), "{said}");
    s.shutdown().await;

    // `pdf_inline = "never"`: even an editor's is downloaded.
    let s = media_site("\n[media]\npdf_inline = \"never\"\n").await;
    add_user(&s, "ed", "editors").await;
    let ed = session(&s, "ed").await;
    let (_, made) = upload(&s, Some(&ed), "report.pdf", pdf).await;
    let said = disposition(&s, made["id"].as_i64().unwrap())
        .await
        .expect("a Content-Disposition");
    assert!(said.starts_with("attachment"), "{said}");
}
