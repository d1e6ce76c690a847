//! Previews: an image scaled (and cropped) to a named preset of the site's,
//! made on demand, kept on disk, and served under a signed URL so that nobody
//! can ask for sizes the site did not name.
//!
//! - `image(id, "thumbnail")` in a template writes the `<img>`: the signed URL,
//!   a `srcset` with the preset at twice the size (`thumbnail@2x`) when the
//!   original is large enough, `width` and `height`, `alt` (the title),
//!   `loading="lazy"`.
//! - `GET /media/preview/{id}/{preset}/{signature}`: the preview, made by a
//!   small pool of resize workers off the async workers. A request that waits
//!   for a worker longer than the queue deadline gets 503 with `Retry-After`,
//!   so a rush on new previews never slows pages and other files. Requests for
//!   one preview share one resize (single flight). The URL names the image's
//!   content (its hash is signed), so a changed image has new URLs and a
//!   preview can be cached for good (`immutable`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use image::metadata::Orientation;
use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, Error, ErrorKind, State};
use serde::Deserialize;
use sha2::Sha256;
use tokio::sync::Semaphore;

use crate::clean::sideways;

use bulwark_acl::AccessPolicy;
use bulwark_store::{Store, StoreError};
use bulwark_web::{Outcome, RequestCtx, busy_response};

use crate::originals::{Missing, Originals};

/// The config key of the site's signing key (a dotted key: Bulwark's own).
const KEY_SETTING: &str = "secret.media.preview_key";
/// Where the key was kept before secret settings were hidden from managers:
/// moved at the first start, so previews keep their URLs.
const OLD_KEY_SETTING: &str = "media.preview_key";

/// `[media.presets.<name>]`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub width: u32,
    pub height: u32,
    /// Fill the box exactly, cutting what sticks out (else fit inside it).
    #[serde(default)]
    pub crop: bool,
    #[serde(default)]
    pub format: Format,
    /// JPEG quality, 1 to 100.
    #[serde(default = "default_quality")]
    pub quality: u8,
}

fn default_quality() -> u8 {
    82
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Jpeg,
    Png,
    /// Lossy WebP, with libwebp.
    Webp,
    /// AVIF, with `rav1e` (through `image` and `ravif`): the smallest, and the
    /// slowest to make.
    Avif,
}

impl Format {
    fn mime(self) -> &'static str {
        match self {
            Format::Jpeg => "image/jpeg",
            Format::Png => "image/png",
            Format::Webp => "image/webp",
            Format::Avif => "image/avif",
        }
    }
    fn extension(self) -> &'static str {
        match self {
            Format::Jpeg => "jpg",
            Format::Png => "png",
            Format::Webp => "webp",
            Format::Avif => "avif",
        }
    }
}

/// The presets a site has when `[media.presets]` names none.
pub fn default_presets() -> BTreeMap<String, Preset> {
    let preset = |width, height, crop| Preset {
        width,
        height,
        crop,
        format: Format::Jpeg,
        quality: default_quality(),
    };
    BTreeMap::from([
        ("thumbnail".to_owned(), preset(200, 200, true)),
        ("medium".to_owned(), preset(800, 800, false)),
        ("large".to_owned(), preset(1600, 1600, false)),
    ])
}

/// A site's previews: its presets, key, workers and what is being made.
pub struct Previews {
    pub presets: BTreeMap<String, Preset>,
    key: Vec<u8>,
    workers: Semaphore,
    /// The memory all resizes at once may take, in KiB: each holds what its
    /// decoded picture needs (`decode_cost`) while it runs.
    memory: Semaphore,
    memory_kib: u32,
    queue_deadline: Duration,
    /// Single flight: one resize per preview however many ask at once.
    making: moka::future::Cache<PathBuf, PathBuf>,
    /// Resizes done, and requests refused for want of a worker.
    pub resizes: AtomicU64,
    pub refused: AtomicU64,
}

impl Previews {
    pub fn new(
        presets: BTreeMap<String, Preset>,
        key: Vec<u8>,
        workers: usize,
        queue_deadline: Duration,
        memory_bytes: u64,
    ) -> Previews {
        let memory_kib = u32::try_from(memory_bytes / 1024)
            .unwrap_or(u32::MAX)
            .clamp(1, Semaphore::MAX_PERMITS as u32);
        Previews {
            presets,
            key,
            workers: Semaphore::new(workers.max(1)),
            memory: Semaphore::new(memory_kib as usize),
            memory_kib,
            queue_deadline,
            making: moka::future::Cache::builder()
                .max_capacity(10_000)
                .time_to_live(Duration::from_secs(60))
                .build(),
            resizes: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
    }

    /// The signature of preview `preset` of resource `id` whose file is
    /// `sha256`, cropped around `focus`: a new focus is a new URL.
    fn sign(&self, id: i64, preset: &str, sha256: &str, focus: (f64, f64)) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("any key");
        mac.update(format!("{id}\n{preset}\n{sha256}").as_bytes());
        if focus != (0.5, 0.5) {
            mac.update(format!("\n{:.3},{:.3}", focus.0, focus.1).as_bytes());
        }
        hex::encode(&mac.finalize().into_bytes()[..12])
    }

    /// A preset by name; `name@2x` is `name` at twice the size (for screens
    /// with twice the pixels), which `image()` offers in `srcset`.
    pub fn preset(&self, name: &str) -> Option<Preset> {
        if let Some(p) = self.presets.get(name) {
            return Some(*p);
        }
        let base = self.presets.get(name.strip_suffix("@2x")?)?;
        Some(Preset {
            width: (base.width * 2).min(8000),
            height: (base.height * 2).min(8000),
            ..*base
        })
    }

    pub fn url(&self, id: i64, preset: &str, sha256: &str, focus: (f64, f64)) -> String {
        format!(
            "/media/preview/{id}/{preset}/{}",
            self.sign(id, preset, sha256, focus)
        )
    }
}

/// The site's signing key, made the first time.
pub fn signing_key(store: &Store) -> Result<Vec<u8>, StoreError> {
    if let Some(key) = store.config_value(KEY_SETTING)? {
        return Ok(key.into_bytes());
    }
    if let Some(old) = store.config_value(OLD_KEY_SETTING)? {
        store.set_config_value(KEY_SETTING, &old)?;
        store.delete_config_value(OLD_KEY_SETTING)?;
        return Ok(old.into_bytes());
    }
    // Another node may make one at the same moment: the first one stored wins.
    let key = hex::encode(rand::random::<[u8; 32]>());
    Ok(store
        .config_value_or_insert(KEY_SETTING, &key)?
        .into_bytes())
}

/// The size a preset gives an image of `width` x `height`: inside its box,
/// or (cropped) the box, or the largest of its shape the image has; never
/// larger than the image.
fn fitted(preset: &Preset, width: u32, height: u32) -> (u32, u32) {
    if width == 0 || height == 0 {
        return (preset.width, preset.height);
    }
    let (pw, ph) = (preset.width as f64, preset.height as f64);
    let (w, h) = (width as f64, height as f64);
    let (w, h) = if preset.crop {
        let k = (w / pw).min(h / ph).min(1.0);
        (pw * k, ph * k)
    } else {
        let k = (pw / w).min(ph / h).min(1.0);
        (w * k, h * k)
    };
    ((w.round() as u32).max(1), (h.round() as u32).max(1))
}

/// Where a crop is centred, from the resource's `focus_x` and `focus_y`
/// (fractions of the width and height, 0 to 1; the middle when not set),
/// rounded so that it signs the same every time.
pub fn focus(x: Option<f64>, y: Option<f64>) -> (f64, f64) {
    let part = |v: Option<f64>| {
        let v = v.filter(|v| v.is_finite()).unwrap_or(0.5).clamp(0.0, 1.0);
        (v * 1000.0).round() / 1000.0
    };
    (part(x), part(y))
}

/// A picture of the library as a template sees it: looked up through the
/// model (`m.rsc`), so the access rules apply and the page depends on it.
struct Picture {
    id: i64,
    sha256: String,
    width: u32,
    height: u32,
    focus: (f64, f64),
    /// Its own `alt` text, else its title: stored text, so already escaped
    /// and safe inside a quoted attribute as it is.
    alt: String,
}

impl Picture {
    /// `id`'s picture, if it is an image the visitor may see.
    fn find(state: &State, id: &Value) -> Option<Picture> {
        let r = state
            .lookup("m")
            .and_then(|m| m.get_attr("rsc").ok())
            .and_then(|rsc| rsc.get_item(id).ok())
            .filter(|r| !r.is_undefined() && !r.is_none())?;
        let text = |k: &str| {
            r.get_attr(k)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
        };
        let number = |k: &str| {
            r.get_attr(k)
                .ok()
                .and_then(|v| i64::try_from(v).ok())
                .and_then(|n| u32::try_from(n).ok())
        };
        let fraction = |k: &str| r.get_attr(k).ok().and_then(|v| f64::try_from(v).ok());
        if !text("mime").is_some_and(|m| m.starts_with("image/")) {
            return None;
        }
        Some(Picture {
            id: r.get_attr("id").ok().and_then(|v| i64::try_from(v).ok())?,
            sha256: text("sha256")?,
            width: number("width").unwrap_or(0),
            height: number("height").unwrap_or(0),
            focus: focus(fraction("focus_x"), fraction("focus_y")),
            alt: text("alt")
                .filter(|a| !a.trim().is_empty())
                .or_else(|| text("title"))
                .unwrap_or_default(),
        })
    }
}

/// A value (decoded, as `stored_tags` gives them) written inside a
/// double-quoted attribute.
pub(crate) fn attribute(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// The library picture a stored `<img>` shows, from its `src`: one of this
/// site's previews (`/media/preview/{id}/...`, as the editor inserts them) or
/// files (`/media/file/{id}`, as the WordPress import writes them).
fn library_id(src: &str) -> Option<i64> {
    let rest = src
        .strip_prefix("/media/preview/")
        .or_else(|| src.strip_prefix("/media/file/"))?;
    rest.split(['/', '?', '#']).next()?.parse().ok()
}

/// `pictures(html)`: a stored HTML value (an article's body) with each
/// picture of the library in it written as a responsive `<img>`: `srcset`
/// with every preset that keeps the picture's shape (and each at twice the
/// size), `sizes` from the width the editor gave it, `width` and `height` in
/// its current proportions, lazy loading. The `alt` the editor gave is kept
/// (an empty one: a decorative picture); without one, the picture's own.
/// A picture the visitor may not see (unpublished, deleted) is left out;
/// any other `<img>` stays as it is.
fn pictures(previews: &Previews, state: &State, html: &str) -> Value {
    // Most texts have no picture of the library: no scan at all.
    if !html.contains("/media/") {
        return Value::from_safe_string(html.to_owned());
    }
    let mut out = String::with_capacity(html.len() + 256);
    let mut copied = 0;
    for tag in bulwark_store::stored_tags(html, "img") {
        let Some(id) = tag.attr("src").and_then(library_id) else {
            continue;
        };
        out.push_str(&html[copied..tag.span.start]);
        copied = tag.span.end;
        let Some(p) = Picture::find(state, &Value::from(id)) else {
            continue;
        };
        out.push_str(&responsive_img(previews, &p, &tag));
    }
    if copied == 0 {
        return Value::from_safe_string(html.to_owned());
    }
    out.push_str(&html[copied..]);
    Value::from_safe_string(out)
}

fn responsive_img(previews: &Previews, p: &Picture, tag: &bulwark_store::StoredTag) -> String {
    let mut candidates: Vec<(u32, String)> = previews
        .presets
        .iter()
        .filter(|(_, preset)| !preset.crop)
        .flat_map(|(name, _)| [name.clone(), format!("{name}@2x")])
        .filter_map(|name| {
            let preset = previews.preset(&name)?;
            let (w, _) = fitted(&preset, p.width, p.height);
            Some((w, previews.url(p.id, &name, &p.sha256, p.focus)))
        })
        .collect();
    candidates.sort_by_key(|(w, _)| *w);
    candidates.dedup_by_key(|(w, _)| *w);
    // The width it is shown at: as the editor gave it, never wider than the
    // picture; the height in the picture's proportions now.
    let largest = candidates.last().map_or(p.width, |(w, _)| *w);
    let shown = tag
        .attr("width")
        .and_then(|w| w.parse::<u32>().ok())
        .filter(|w| *w > 0)
        .unwrap_or(largest)
        .min(p.width.max(1));
    let high = if p.width > 0 {
        (f64::from(shown) * f64::from(p.height) / f64::from(p.width)).round() as u32
    } else {
        tag.attr("height")
            .and_then(|h| h.parse().ok())
            .unwrap_or(shown)
    };
    let src = candidates
        .iter()
        .find(|(w, _)| *w >= shown)
        .or(candidates.last())
        .map_or_else(|| format!("/media/file/{}", p.id), |(_, url)| url.clone());
    let srcset = candidates
        .iter()
        .map(|(w, url)| format!("{url} {w}w"))
        .collect::<Vec<_>>()
        .join(", ");
    let alt = tag.attr("alt").map_or_else(|| p.alt.clone(), attribute);
    let class = tag
        .attr("class")
        .map(|c| format!(r#" class="{}""#, attribute(c)))
        .unwrap_or_default();
    format!(
        r#"<img src="{src}" srcset="{srcset}" sizes="(max-width: {shown}px) 100vw, {shown}px" width="{shown}" height="{high}" alt="{alt}"{class} loading="lazy" decoding="async">"#
    )
}

/// `image(id, preset)`: the `<img>` of a preview, or nothing for what is not
/// an image the visitor may see. Its `alt` is the picture's own `alt` text,
/// else its title; `image(id, preset, alt="")` overrides it (an empty one for
/// a picture beside its own title, which would otherwise be read twice).
/// `image_url(id, preset)`: the path of that preview alone (for `og:image`,
/// or a script), or an empty string. And `pictures(html)`, above.
pub fn register(env: &mut Environment<'static>, previews: Arc<Previews>) {
    let for_urls = previews.clone();
    env.add_function(
        "image_url",
        move |state: &State, id: Value, preset: String| -> Result<Value, Error> {
            if for_urls.preset(&preset).is_none() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("image_url(): no preset {preset:?}"),
                ));
            }
            Ok(Picture::find(state, &id).map_or(Value::from(""), |p| {
                Value::from(for_urls.url(p.id, &preset, &p.sha256, p.focus))
            }))
        },
    );
    let for_pictures = previews.clone();
    env.add_function("pictures", move |state: &State, html: Value| -> Value {
        match html.as_str() {
            Some(text) => pictures(&for_pictures, state, text),
            None => html,
        }
    });
    env.add_function(
        "image",
        move |state: &State, id: Value, preset: String, kwargs: Kwargs| -> Result<Value, Error> {
            let alt_given: Option<String> = kwargs.get("alt")?;
            kwargs.assert_all_used()?;
            let Some(settings) = previews.presets.get(&preset) else {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "image(): no preset {preset:?}; the site has {}",
                        previews.presets.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            let Some(p) = Picture::find(state, &id) else {
                return Ok(Value::from(""));
            };
            let (w, h) = fitted(settings, p.width, p.height);
            let alt = alt_given.unwrap_or(p.alt);
            let src = previews.url(p.id, &preset, &p.sha256, p.focus);
            // Twice the pixels, when the original has them to give.
            let double = format!("{preset}@2x");
            let srcset = match previews.preset(&double) {
                Some(twice) if fitted(&twice, p.width, p.height).0 > w => format!(
                    r#" srcset="{src} 1x, {} 2x""#,
                    previews.url(p.id, &double, &p.sha256, p.focus)
                ),
                _ => String::new(),
            };
            Ok(Value::from_safe_string(format!(
                r#"<img src="{src}"{srcset} width="{w}" height="{h}" alt="{}" loading="lazy" decoding="async">"#,
                alt.replace('"', "&quot;").replace('<', "&lt;")
            )))
        },
    );
}

/// `GET /media/preview/{id}/{preset}/{signature}`.
pub async fn serve(req: &RequestCtx<'_>, previews: &Previews, originals: &Originals) -> Outcome {
    let (Some(preset_name), Some(signature)) = (req.arg("preset"), req.arg("signature")) else {
        return Outcome::NotFound;
    };
    let Some(preset) = previews.preset(preset_name) else {
        return Outcome::NotFound;
    };
    let resource = match crate::visible_media(req).await {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    let (id, sha256) = (
        resource.id.0,
        resource.props.str("sha256").unwrap_or_default(),
    );
    let fraction = |k: &str| resource.props.0.get(k).and_then(|v| v.as_f64());
    let focus = focus(fraction("focus_x"), fraction("focus_y"));
    // A signature for another preset, image or version of it names nothing.
    let expected = previews.sign(id, preset_name, sha256, focus);
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        expected.as_bytes(),
        signature.as_bytes(),
    )) {
        return Outcome::NotFound;
    }
    if !resource
        .props
        .str("mime")
        .is_some_and(|m| m.starts_with("image/"))
    {
        return Outcome::NotFound;
    }
    let media = &originals.dir;
    let focused = if preset.crop && focus != (0.5, 0.5) {
        format!("-at-{:.3}-{:.3}", focus.0, focus.1)
    } else {
        String::new()
    };
    let target = media.join("previews").join(&sha256[..2]).join(format!(
        "{sha256}-{preset_name}{focused}.{}",
        preset.format.extension()
    ));
    let made = previews
        .making
        .try_get_with(
            target.clone(),
            make(previews, preset, focus, originals, sha256, target),
        )
        .await;
    let path = match made {
        Ok(path) => path,
        Err(e) => {
            return match *e {
                MakeError::Busy => Outcome::Response(busy_response()),
                MakeError::Missing(ref missing) => {
                    crate::missing_file(resource.id, missing.clone())
                }
                MakeError::Failed(ref why) => {
                    tracing::warn!("preview {preset_name} of {id}: {why}");
                    Outcome::NotFound
                }
            };
        }
    };
    let public = req
        .site
        .policy()
        .may_see(&bulwark_acl::Principal::anonymous(), &resource);
    let cache_control = if public {
        "public, max-age=31536000, immutable"
    } else {
        "private, max-age=31536000, immutable"
    };
    let content_type = http::HeaderValue::from_static(preset.format.mime());
    crate::held(req, path, sha256, content_type, cache_control, false).await
}

#[derive(Debug)]
enum MakeError {
    /// No worker came free within the queue deadline.
    Busy,
    /// The original could not be had.
    Missing(Missing),
    Failed(String),
}

/// The preview at `target`, made from `source` if it is not there yet.
async fn make(
    previews: &Previews,
    preset: Preset,
    focus: (f64, f64),
    originals: &Originals,
    sha256: &str,
    target: PathBuf,
) -> Result<PathBuf, MakeError> {
    if tokio::fs::try_exists(&target).await.unwrap_or(false) {
        return Ok(target);
    }
    let source = originals.local(sha256).await.map_err(MakeError::Missing)?;
    let Ok(permit) =
        tokio::time::timeout(previews.queue_deadline, previews.workers.acquire()).await
    else {
        previews.refused.fetch_add(1, Ordering::Relaxed);
        return Err(MakeError::Busy);
    };
    let _permit = permit.map_err(|e| MakeError::Failed(e.to_string()))?;
    // What decoding the picture will take, from its header alone: held from
    // the budget while it runs, waited for like a worker.
    let header = source.clone();
    let cost = tokio::task::spawn_blocking(move || decode_cost(&header, &preset))
        .await
        .map_err(|e| MakeError::Failed(e.to_string()))?
        .map_err(|e| MakeError::Failed(e.to_string()))?;
    let kib = u32::try_from(cost.div_ceil(1024)).unwrap_or(u32::MAX);
    if kib > previews.memory_kib {
        return Err(MakeError::Failed(format!(
            "decoding it would take {} MiB; [media] resize_memory_mb allows {}",
            cost >> 20,
            previews.memory_kib >> 10
        )));
    }
    let Ok(memory) =
        tokio::time::timeout(previews.queue_deadline, previews.memory.acquire_many(kib)).await
    else {
        previews.refused.fetch_add(1, Ordering::Relaxed);
        return Err(MakeError::Busy);
    };
    let _memory = memory.map_err(|e| MakeError::Failed(e.to_string()))?;
    previews.resizes.fetch_add(1, Ordering::Relaxed);
    let out = target.clone();
    tokio::task::spawn_blocking(move || resize(&source, &out, &preset, focus))
        .await
        .map_err(|e| MakeError::Failed(e.to_string()))?
        .map_err(|e| MakeError::Failed(e.to_string()))?;
    Ok(target)
}

/// Decodes, scales (and crops), encodes; written whole or not at all.
/// `focus`: the point of the picture a crop keeps in view, as fractions of
/// its width and height (the middle when the resource names none).
pub fn resize(
    source: &Path,
    target: &Path,
    preset: &Preset,
    focus: (f64, f64),
) -> Result<(), RenderFailed> {
    let encoded = render(source, preset, focus)?;
    let dir = target.parent().ok_or("no folder")?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let tmp = target.with_extension("part");
    std::fs::write(&tmp, &encoded).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, target).map_err(|e| RenderFailed(e.to_string()))
}

/// The preview's bytes: decoded (a JPEG at the smallest scale its decoder
/// can give that is still large enough: 1/2, 1/4 or 1/8, which is most of
/// what makes libvips fast), resized with `fast_image_resize` (Lanczos3, SIMD),
/// encoded in the preset's format.
/// Why a preview could not be made (a picture that cannot be read, a size
/// out of range, an encoder's refusal), for the log.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RenderFailed(String);

impl From<String> for RenderFailed {
    fn from(why: String) -> RenderFailed {
        RenderFailed(why)
    }
}

impl From<&str> for RenderFailed {
    fn from(why: &str) -> RenderFailed {
        RenderFailed(why.to_owned())
    }
}

pub fn render(source: &Path, preset: &Preset, focus: (f64, f64)) -> Result<Vec<u8>, RenderFailed> {
    let (img, (ow, oh)) = decode(source, preset)?;
    // The size from the original's; the crop in the decoded picture's pixels.
    let (w, h) = fitted(preset, ow, oh);
    let (sw, sh) = (img.width(), img.height());
    let crop = preset.crop.then(|| {
        // The largest box of the preset's shape inside the picture, placed
        // around the focus as far as the edges allow.
        let scale = (sw as f64 / preset.width as f64).min(sh as f64 / preset.height as f64);
        let (cw, ch) = (preset.width as f64 * scale, preset.height as f64 * scale);
        let left = (focus.0.clamp(0.0, 1.0) * sw as f64 - cw / 2.0).clamp(0.0, sw as f64 - cw);
        let top = (focus.1.clamp(0.0, 1.0) * sh as f64 - ch / 2.0).clamp(0.0, sh as f64 - ch);
        (left, top, cw, ch)
    });
    let scaled = if (w, h) == (sw, sh) && crop.is_none_or(|c| c.2 as u32 == sw && c.3 as u32 == sh)
    {
        img
    } else {
        let mut out = image::DynamicImage::new(w, h, img.color());
        let mut options = fast_image_resize::ResizeOptions::new().resize_alg(
            fast_image_resize::ResizeAlg::Convolution(fast_image_resize::FilterType::Lanczos3),
        );
        if let Some((left, top, cw, ch)) = crop {
            options = options.crop(left, top, cw, ch);
        }
        fast_image_resize::Resizer::new()
            .resize(&img, &mut out, &options)
            .map_err(|e| e.to_string())?;
        out
    };
    let mut out = Vec::new();
    let quality = preset.quality.clamp(1, 100);
    match preset.format {
        Format::Jpeg => {
            // `jpeg-encoder` rather than the `image` crate's encoder, which
            // keeps colour at full resolution: about 40% larger than libjpeg
            // at the same quality. Here, as libjpeg does by default: colour at
            // half resolution below quality 90, averaged. Not its optimised
            // Huffman tables (about 14% smaller still): with them it writes
            // each colour component in a scan of its own, valid but rare, and
            // the `image` crate's own decoder (zune-jpeg 0.5.15) reads such a
            // file in the wrong colours. One interleaved scan, as here, is
            // what every decoder reads.
            let mut encoder = jpeg_encoder::Encoder::new(&mut out, quality);
            encoder.set_chroma_subsampling_method(jpeg_encoder::ChromaSubsamplingMethod::Average);
            let (w, h) = (to_u16(scaled.width())?, to_u16(scaled.height())?);
            if scaled.color().has_color() {
                encoder.encode(
                    scaled.to_rgb8().as_raw(),
                    w,
                    h,
                    jpeg_encoder::ColorType::Rgb,
                )
            } else {
                encoder.encode(
                    scaled.to_luma8().as_raw(),
                    w,
                    h,
                    jpeg_encoder::ColorType::Luma,
                )
            }
            .map_err(|e| e.to_string())?
        }
        Format::Png => scaled
            .write_with_encoder(image::codecs::png::PngEncoder::new(&mut out))
            .map_err(|e| e.to_string())?,
        Format::Webp => {
            // Lossy, with libwebp: the `image` crate writes lossless WebP
            // only, several times larger for photos.
            let (w, h) = (scaled.width(), scaled.height());
            let encoded = if scaled.color().has_alpha() {
                webp::Encoder::from_rgba(scaled.to_rgba8().as_raw(), w, h).encode(quality as f32)
            } else {
                webp::Encoder::from_rgb(scaled.to_rgb8().as_raw(), w, h).encode(quality as f32)
            };
            out = encoded.to_vec();
        }
        Format::Avif => {
            // Speed 8 of 10: a 400 px preview in tens of milliseconds with
            // most of the size gain of the slower settings.
            let encoder =
                image::codecs::avif::AvifEncoder::new_with_speed_quality(&mut out, 8, quality);
            if scaled.color().has_alpha() {
                scaled.to_rgba8().write_with_encoder(encoder)
            } else {
                scaled.to_rgb8().write_with_encoder(encoder)
            }
            .map_err(|e| e.to_string())?
        }
    }
    Ok(out)
}

/// A side in the range a JPEG can hold.
fn to_u16(side: u32) -> Result<u16, String> {
    u16::try_from(side).map_err(|_| format!("{side} pixels is too large for a JPEG"))
}

/// A picture as read, and the original's size.
type Read = (image::DynamicImage, (u32, u32));

/// How much of a picture of `size` (upright) `preset` needs: covering its
/// box (a crop), or fitting in it.
fn needed_scale(preset: &Preset, (sw, sh): (f64, f64)) -> f64 {
    let (bw, bh) = (preset.width as f64, preset.height as f64);
    if preset.crop {
        (bw / sw).max(bh / sh)
    } else {
        (bw / sw).min(bh / sh)
    }
}

/// The scale `jpeg-decoder` decodes at for `need`: the smallest of 1/8, 1/4,
/// 1/2 and 1 that still gives it.
fn jpeg_scale(need: f64) -> f64 {
    [0.125, 0.25, 0.5]
        .into_iter()
        .find(|s| *s >= need)
        .unwrap_or(1.0)
}

/// The bytes a preview of `source` takes while it is made, from the picture's
/// header alone: the decoded picture (a JPEG at the scale it is decoded at,
/// twice over for the decoder's own planes), once more when it must be turned,
/// and the preview.
pub fn decode_cost(source: &Path, preset: &Preset) -> Result<u64, RenderFailed> {
    use image::ImageDecoder;
    let reader = image::ImageReader::open(source)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| e.to_string())?;
    let format = reader.format();
    let mut decoder = reader.into_decoder().map_err(|e| e.to_string())?;
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let (w, h) = decoder.dimensions();
    let upright = if sideways(orientation) {
        (h, w)
    } else {
        (w, h)
    };
    let full = decoder.total_bytes();
    let decoded = if format == Some(image::ImageFormat::Jpeg) {
        let scale = jpeg_scale(needed_scale(
            preset,
            (f64::from(upright.0), f64::from(upright.1)),
        ));
        (full as f64 * scale * scale) as u64 * 2
    } else {
        full
    };
    let turned = if orientation == Orientation::NoTransforms {
        0
    } else {
        decoded
    };
    let preview = u64::from(preset.width) * u64::from(preset.height) * 4 * 2;
    Ok(decoded + turned + preview)
}

/// The source picture upright (turned as its EXIF orientation says), a JPEG
/// decoded straight at a reduced scale when the preset needs no more pixels
/// than that; and the original's upright size. Other formats are decoded
/// whole, within the limit `decode_cost` allowed for.
fn decode(source: &Path, preset: &Preset) -> Result<Read, String> {
    let (_, _, orientation) = crate::clean::header(source).ok_or("not a picture")?;
    let turn = sideways(orientation);
    let upright = |(w, h): (u32, u32)| if turn { (h, w) } else { (w, h) };
    let file = std::fs::File::open(source).map_err(|e| e.to_string())?;
    let mut reader = std::io::BufReader::new(file);
    let mut magic = [0u8; 3];
    std::io::Read::read_exact(&mut reader, &mut magic).map_err(|e| e.to_string())?;
    std::io::Seek::rewind(&mut reader).map_err(|e| e.to_string())?;
    let mut read = None;
    if magic == [0xFF, 0xD8, 0xFF] {
        let fit =
            |(sw, sh): (f64, f64)| needed_scale(preset, if turn { (sh, sw) } else { (sw, sh) });
        read = read_jpeg(&mut reader, fit)?;
        if read.is_none() {
            std::io::Seek::rewind(&mut reader).map_err(|e| e.to_string())?;
        }
    }
    let (mut img, size) = match read {
        Some(read) => read,
        None => {
            let mut reader = image::ImageReader::new(reader)
                .with_guessed_format()
                .map_err(|e| e.to_string())?;
            let mut limits = image::Limits::default();
            limits.max_alloc = Some(decode_cost(source, preset).map_err(|e| e.0)?);
            reader.limits(limits);
            let img = reader.decode().map_err(|e| e.to_string())?;
            let size = (img.width(), img.height());
            (img, size)
        }
    };
    img.apply_orientation(orientation);
    Ok((img, upright(size)))
}

/// A JPEG's pixels, read with `jpeg-decoder`, and its size. `scale` says,
/// from the size, how much of it is needed: under 1, the picture is decoded
/// straight at the smallest of 1/2, 1/4 or 1/8 that still gives that.
/// `None` for a JPEG it gives neither as RGB nor grey (CMYK): the `image`
/// crate reads those.
///
/// Every JPEG goes through here rather than the `image` crate's decoder
/// (zune-jpeg 0.5.15): that one reads a baseline JPEG whose colour components
/// come in scans of their own (valid, if rare: libjpeg writes it when told
/// to) in the wrong colours.
fn read_jpeg(
    reader: impl std::io::BufRead,
    scale: impl FnOnce((f64, f64)) -> f64,
) -> Result<Option<Read>, String> {
    let mut decoder = jpeg_decoder::Decoder::new(reader);
    decoder.read_info().map_err(|e| e.to_string())?;
    let info = decoder.info().ok_or("a JPEG without a header")?;
    if !matches!(
        info.pixel_format,
        jpeg_decoder::PixelFormat::RGB24 | jpeg_decoder::PixelFormat::L8
    ) {
        return Ok(None);
    }
    let (sw, sh) = (f64::from(info.width), f64::from(info.height));
    let need = scale((sw, sh));
    let (w, h) = if need < 1.0 {
        let want = |n: f64| ((n * need).ceil() as u16).max(1);
        decoder
            .scale(want(sw), want(sh))
            .map_err(|e| e.to_string())?
    } else {
        (info.width, info.height)
    };
    let pixels = decoder.decode().map_err(|e| e.to_string())?;
    let (w, h) = (u32::from(w), u32::from(h));
    let img = match info.pixel_format {
        jpeg_decoder::PixelFormat::L8 => {
            image::GrayImage::from_raw(w, h, pixels).map(image::DynamicImage::ImageLuma8)
        }
        _ => image::RgbImage::from_raw(w, h, pixels).map(image::DynamicImage::ImageRgb8),
    }
    .ok_or("a JPEG shorter than its header says")?;
    Ok(Some((img, (u32::from(info.width), u32::from(info.height)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_fits_an_image_inside_its_box_or_fills_it() {
        let fit = Preset {
            width: 800,
            height: 800,
            crop: false,
            format: Format::Jpeg,
            quality: 80,
        };
        assert_eq!(fitted(&fit, 1600, 1200), (800, 600));
        assert_eq!(fitted(&fit, 300, 200), (300, 200), "never larger");
        let fill = Preset {
            crop: true,
            width: 200,
            height: 100,
            ..fit
        };
        assert_eq!(fitted(&fill, 1600, 1200), (200, 100));
        assert_eq!(
            fitted(&fill, 100, 300),
            (100, 50),
            "its shape, never larger"
        );
    }

    #[test]
    fn a_crop_keeps_the_focus_in_view_and_a_jpeg_is_decoded_small() {
        // A 1200 x 600 picture: black, with a white square at the far right.
        let img = image::RgbImage::from_fn(1200, 600, |x, y| {
            if x >= 1100 && (250..350).contains(&y) {
                image::Rgb([255, 255, 255])
            } else {
                image::Rgb([0, 0, 0])
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("wide.jpg");
        img.save(&source).unwrap();
        let square = Preset {
            width: 100,
            height: 100,
            crop: true,
            format: Format::Png,
            quality: 90,
        };
        let brightest = |focus| {
            let bytes = render(&source, &square, focus).unwrap();
            let out = image::load_from_memory(&bytes).unwrap().to_luma8();
            assert_eq!(out.dimensions(), (100, 100));
            out.pixels().map(|p| p.0[0] as u32).max().unwrap()
        };
        assert!(brightest((0.5, 0.5)) < 40, "the middle has no square");
        assert!(brightest((0.95, 0.5)) > 200, "the focus brings it in");
        // Fitted and in the other formats: the size of the box, right bytes.
        for format in [Format::Jpeg, Format::Webp] {
            let fit = Preset {
                crop: false,
                format,
                ..square
            };
            let bytes = render(&source, &fit, (0.5, 0.5)).unwrap();
            let out = image::load_from_memory(&bytes).unwrap();
            assert_eq!((out.width(), out.height()), (100, 50), "{format:?}");
        }
        // AVIF: nothing here decodes it (that takes dav1d), so its container
        // is read: the brand and the picture's size (`ispe`).
        let avif = Preset {
            crop: false,
            format: Format::Avif,
            ..square
        };
        let bytes = render(&source, &avif, (0.5, 0.5)).unwrap();
        assert_eq!(&bytes[4..12], b"ftypavif");
        let ispe = bytes.windows(4).position(|w| w == b"ispe").expect("ispe") + 8;
        let size = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!((size(ispe), size(ispe + 4)), (100, 50));
    }

    #[test]
    fn a_jpeg_preview_is_written_as_libjpeg_would() {
        let dir = tempfile::tempdir().unwrap();
        let red = dir.path().join("red.png");
        image::RgbImage::from_pixel(300, 200, image::Rgb([200, 30, 40]))
            .save(&red)
            .unwrap();
        let grey = dir.path().join("grey.png");
        image::GrayImage::from_pixel(300, 200, image::Luma([120]))
            .save(&grey)
            .unwrap();
        let preset = |quality| Preset {
            width: 150,
            height: 150,
            crop: false,
            format: Format::Jpeg,
            quality,
        };
        // The frame header (SOF0): its component count, and the first
        // component's sampling (0x22: colour is kept at half resolution);
        // and the components in the first scan (SOS): all, interleaved.
        let marker = |bytes: &[u8], code: u8| {
            bytes
                .windows(2)
                .position(|w| w == [0xff, code])
                .expect("marker")
        };
        let frame = |bytes: &[u8]| {
            let at = marker(bytes, 0xc0);
            (bytes[at + 9], bytes[at + 11])
        };
        let bytes = render(&red, &preset(82), (0.5, 0.5)).unwrap();
        assert_eq!(frame(&bytes), (3, 0x22), "4:2:0 below quality 90");
        assert_eq!(bytes[marker(&bytes, 0xda) + 4], 3, "one interleaved scan");
        let out = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!(out.dimensions(), (150, 100));
        let [r, g, b] = out.get_pixel(75, 50).0;
        assert!(r > 180 && g < 60 && b < 70, "still red: {r} {g} {b}");
        let bytes = render(&red, &preset(95), (0.5, 0.5)).unwrap();
        assert_eq!(frame(&bytes), (3, 0x11), "full colour at 90 and above");
        let bytes = render(&grey, &preset(82), (0.5, 0.5)).unwrap();
        assert_eq!(frame(&bytes).0, 1, "a grey picture stays grey");

        // A source whose colour components come in scans of their own (as
        // `jpeg-encoder` writes with optimised tables), its colour at half
        // resolution: read in its colours,
        // scaled down on reading (a 150 px box) or not (400 px).
        let separate = dir.path().join("separate.jpg");
        let mut encoder = jpeg_encoder::Encoder::new_file(&separate, 82).unwrap();
        encoder.set_optimized_huffman_tables(true);
        let red_pixels = [200u8, 30, 40].repeat(300 * 200);
        encoder
            .encode(&red_pixels, 300, 200, jpeg_encoder::ColorType::Rgb)
            .unwrap();
        let source = std::fs::read(&separate).unwrap();
        assert_eq!(source[marker(&source, 0xda) + 4], 1, "a scan per component");
        for side in [150, 400] {
            let boxed = Preset {
                width: side,
                height: side,
                ..preset(82)
            };
            let bytes = render(&separate, &boxed, (0.5, 0.5)).unwrap();
            let out = image::load_from_memory(&bytes).unwrap().to_rgb8();
            let [r, g, b] = out.get_pixel(10, 10).0;
            assert!(r > 180 && g < 60 && b < 70, "{side} px: {r} {g} {b}");
        }
    }
}
