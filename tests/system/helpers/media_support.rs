//! What the media tests share: a starter site with the media module, and an
//! upload over real HTTP.

use serde_json::Value;

use crate::accounts::*;
use crate::common;

pub async fn media_site(settings: &str) -> common::TestServer {
    media_site_counting(settings, &[]).await.0
}

pub const BOUNDARY: &str = "bulwark-test-boundary-7f3a";

pub fn multipart(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nignored\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

pub async fn upload(
    s: &common::TestServer,
    who: Option<&Session>,
    name: &str,
    bytes: &[u8],
) -> (u16, Value) {
    let mut req = client()
        .post(url(s, "/media/upload"))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(multipart(name, bytes));
    if let Some(who) = who {
        req = req
            .header("cookie", &who.cookie)
            .header("x-csrf-token", &who.csrf);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// A site with the media module, and the module itself, to count resizes.
pub async fn media_site_counting(
    settings: &str,
    extra: &[(&str, &str)],
) -> (
    common::TestServer,
    std::sync::Arc<bulwark_module_media::MediaModule>,
) {
    let mut files = common::starter_site();
    for (path, text) in files.iter_mut() {
        if path == "default/site.toml" {
            assert!(
                text.contains(
                    r#""admin", "media", "menu", "redirects", "comments", "forms", "webhooks", "import", "metrics", "backup"]"#
                ),
                "the starter has media"
            );
            text.push_str(settings);
        }
    }
    let mut files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    files.extend_from_slice(extra);
    let media = bulwark_module_media::MediaModule::new();
    // This instance instead of the binary's, to count its resizes.
    let mut modules = common::modules();
    modules.retain(|m| m.manifest().name != "media");
    modules.push(media.clone());
    (
        common::start_with_modules(&files, |_| {}, modules).await,
        media,
    )
}

pub fn img_src(html: &str) -> String {
    let at = html.find("src=\"").expect("an img") + 5;
    html[at..].split('"').next().unwrap().replace("&#x2f;", "/")
}
