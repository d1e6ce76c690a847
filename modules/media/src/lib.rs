//! The media module (`media`): uploads, and the files behind media resources
//! (docs/media.md).
//!
//! `POST /media/upload` takes a `multipart/form-data` body with a `file`
//! field, streamed to disk as it arrives (never whole in memory) while its
//! SHA-256 is computed and its size held to `[media] max_bytes`. What the file
//! is comes from its bytes, never its name or the browser's word: a PNG named
//! `cat.jpg` is a PNG, and an HTML page is refused whatever it is called.
//! Files are kept by content hash in the site's `data/media/files/`, so two
//! uploads of one file share it. Each upload makes a media resource (category
//! `image`, `document`, `video` or `audio`, all under `media`) with its
//! metadata: `mime`, `size`, `sha256`, `original_name`, and `width` and
//! `height` for images. The access rules decide who may upload (the insert
//! right on the category) and who may fetch the file (`GET
//! /media/file/{id}`: whoever may see the resource).
//!
//! An image's metadata is cut out of the file without decoding it (`clean.rs`),
//! so a phone's photo does not give away where it was taken
//! (`metadata_removed: true`); its orientation stays. A picture over
//! `[media] max_pixels` is refused from its header; previews are made within
//! a memory budget all resizes share (`preview.rs`).
//!
//! Deleting a media resource removes its file when no other resource uses it
//! (the `media_file` table knows which resource uses which file), on every
//! node.
//!
//! A site may hold its media to a quota (`[media] quota_bytes`): an upload
//! is admitted in one transaction that counts what is stored and records the
//! file under a reservation, one admission at a time on every node, so
//! uploads arriving together cannot pass the quota between them.
//!
//! On several nodes (PostgreSQL) each file is kept in the database too, and
//! a node fetches what it lacks: `originals.rs`. Previews: `preview.rs`.

mod clean;
mod embed;
mod import;
mod originals;
mod preview;
mod serve;
mod settings;
mod upload;
mod weigh;

use serve::*;
use settings::*;
use upload::*;
use weigh::*;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};

use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{ChangeKind, Migration, Store, StoreError};
use bulwark_web::events::{AdminMenu, GatherFigures, GatherMetrics, MenuItem, ResourceChanged};
use include_dir::{Dir, include_dir};

use bulwark_web::{Api, Controller, Module, ModuleError, SiteSetup};
pub use import::MediaImport;
use originals::Originals;
pub use preview::{Format, Preset, Previews, RenderFailed, default_presets, focus, render};
pub use upload::{Imported, accept_form_file};

pub const PRIORITY: i32 = 350;

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "media_file",
        sqlite: include_str!("../migrations/common/0001_media_file.sql"),
        postgres: include_str!("../migrations/common/0001_media_file.sql"),
    },
    Migration {
        version: 2,
        name: "media_file_size",
        sqlite: include_str!("../migrations/common/0002_media_file_size.sql"),
        postgres: include_str!("../migrations/common/0002_media_file_size.sql"),
    },
    Migration {
        version: 3,
        name: "media_blob",
        sqlite: include_str!("../migrations/sqlite/0003_media_blob.sql"),
        postgres: include_str!("../migrations/postgres/0003_media_blob.sql"),
    },
    Migration {
        version: 4,
        name: "media_file_reserved",
        sqlite: include_str!("../migrations/common/0004_media_file_reserved.sql"),
        postgres: include_str!("../migrations/common/0004_media_file_reserved.sql"),
    },
];

/// Among this module's observers.
const OBSERVER_PRIORITY: i32 = 500;

#[derive(Default)]
pub struct MediaModule {
    /// Each site's preview signing key, read when its store opened.
    keys: Mutex<HashMap<String, Vec<u8>>>,
    /// Each site's previews, as last loaded.
    previews: Mutex<HashMap<String, Arc<Previews>>>,
}

impl MediaModule {
    pub fn new() -> Arc<MediaModule> {
        Arc::new(MediaModule::default())
    }

    /// The resizes made for `site` since it last loaded.
    pub fn resizes(&self, site: &str) -> u64 {
        self.previews
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(site)
            .map_or(0, |p| p.resizes.load(Ordering::Relaxed))
    }
}

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    MediaModule::new()
}

/// The admin's media library (`admin_media.tpl`, shown by the admin module
/// when both are enabled) and its script.
static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "media",
            PRIORITY,
            &[],
            Some(&TEMPLATES),
            Some(&LIB),
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for MediaModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn open_store(&self, site: &Site, store: &Store) -> Result<(), StoreError> {
        for (name, title) in CATEGORIES {
            if store.category(name).is_err() {
                store.create_category(name, Some("media"), title)?;
            }
        }
        let media = site.dir.join("data").join("media");
        weigh_files(store, &media)?;
        originals::remove_stale_partials(&media.join("tmp"));
        originals::forget_stale_reservations(store)?;
        let key = preview::signing_key(store)?;
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(site.name().to_string(), key);
        Ok(())
    }

    fn setup(&self, setup: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        // The media library in the admin's menu, after "New", as a screen of
        // this module's (the admin shows it when the site enables both).
        setup.observers().on_fold(
            OBSERVER_PRIORITY,
            |_: &AdminMenu, mut items: Vec<MenuItem>| {
                let after_new = items
                    .iter()
                    .position(|i| i.url == "/admin/new")
                    .map_or(items.len(), |i| i + 1);
                items.insert(
                    after_new,
                    MenuItem {
                        label: "Media".into(),
                        url: "/admin/media".into(),
                        parent: None,
                        screen: Some("admin_media.tpl".into()),
                    },
                );
                items
            },
        );
        let settings = Arc::new(Settings::read(setup.settings())?);
        let store = setup.models().store.clone();
        let in_database = settings
            .files_in_database
            .unwrap_or(store.backend_name() == "postgres");
        let originals = Arc::new(Originals::new(
            setup.site().dir.join("data").join("media"),
            store,
            in_database,
        ));
        if in_database {
            // Files kept before this node kept them in the database, and
            // files other nodes deleted while this one was down.
            let originals = originals.clone();
            tokio::spawn(async move {
                originals.keep_unkept().await;
                originals.sweep_soon();
            });
        }
        let site_name = setup.site().name().to_string();
        let key = self
            .keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&site_name)
            .cloned()
            .ok_or_else(|| ModuleError::new("media", "the site's store was not opened"))?;
        let previews = Arc::new(Previews::new(
            settings.presets.clone(),
            key,
            settings.resize_workers,
            settings.resize_queue,
            settings.resize_memory_bytes,
        ));
        self.previews
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(site_name, previews.clone());
        let for_templates = previews.clone();
        setup.add_template_extension(move |env| {
            preview::register(env, for_templates.clone());
            embed::register(env);
        });
        let for_figures = previews.clone();
        setup.observers().on_fold(
            OBSERVER_PRIORITY,
            move |_: &GatherFigures, mut figures: bulwark_web::Figures| {
                let p = &for_figures;
                figures.more.insert(
                    "media_resizes".to_owned(),
                    p.resizes.load(Ordering::Relaxed),
                );
                figures.refused.insert(
                    "media_resizes".to_owned(),
                    p.refused.load(Ordering::Relaxed),
                );
                figures
            },
        );
        let for_metrics = previews.clone();
        setup.observers().on_fold(
            OBSERVER_PRIORITY,
            move |_: &GatherMetrics, mut metrics: Vec<bulwark_web::Metric>| {
                let p = &for_metrics;
                metrics.push(bulwark_web::Metric::counter(
                    "bulwark_media_resizes_total",
                    "Previews made from an original (resized and encoded).",
                    p.resizes.load(Ordering::Relaxed),
                ));
                metrics.push(bulwark_web::refused(
                    "media_resizes",
                    p.refused.load(Ordering::Relaxed),
                ));
                metrics
            },
        );
        let forgetting = originals.clone();
        setup
            .observers()
            .on_notify(OBSERVER_PRIORITY, move |c: &ResourceChanged| {
                if c.kind == ChangeKind::Deleted {
                    let (originals, id) = (forgetting.clone(), c.id);
                    tokio::task::spawn_blocking(move || originals.forget(id));
                }
            });
        let media = Arc::new(Media {
            settings,
            previews,
            originals,
        });
        setup.provide(media.clone());
        setup.add_controller("media", move |options| {
            MediaController::from_rule(options, media.clone())
                .map(|c| Box::new(c) as Box<dyn Controller>)
        });
        Ok(())
    }
}
