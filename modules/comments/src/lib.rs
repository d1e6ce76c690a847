//! The comments module (docs/comments.md): visitors and users comment on
//! resources whose category takes comments (`[comments] categories`),
//! threaded, moderated, and kept out of bots' reach.
//!
//! - **Stored** in the table `comment` ([`table`]), each with its status:
//!   pending, approved, spam or deleted. Who waits for a moderator is the
//!   site's rule (`[comments] moderation`: all, first-time writers, none);
//!   editors' own comments never wait, and one with more links than
//!   `max_links` is held as spam.
//! - **Bots** meet the auth module's defences for visitors' posts (a
//!   honeypot, a minimum fill time, posts per minute per address, see
//!   `bulwark_module_auth::visitor_posts`): one caught is answered as a person
//!   whose comment waits for a moderator, and nothing is stored.
//! - **Shown** by templates through `m.comments(id)` (the approved ones, in
//!   thread order) and `m.comments.count(id)`, read like any model value: the
//!   page depends on the resource's comments key ([`table::comments_key`]),
//!   which only a change of its approved comments flushes. So an article page
//!   stays in the page cache for anonymous visitors through comments on other
//!   articles and through comments waiting for moderation, and is rendered
//!   once again when one of its own is approved.
//! - **Live**: every node that hears of that flush publishes
//!   `comments/{id}` over push, to the clients that may see the resource;
//!   the starter's comment list is a `live()` block on that topic, so an open
//!   page shows an approved comment without a reload.
//! - **Told**: the resource's authors and the editors (or `[comments]
//!   notify`) get a mail through the mail module's queue.
//! - A form controller (`comment_post`, for browsers without script), the
//!   JSON endpoints (`/api/comments`, [`api`]) and the admin's Comments screen
//!   (bulk moderation) share one way in ([`posting`]).

mod api;
mod model;
mod page;
mod posting;
pub mod settings;
pub mod table;

use std::sync::{Arc, OnceLock};

use include_dir::{Dir, include_dir};

use bulwark_site::ModuleManifest;
use bulwark_store::Migration;
use bulwark_web::events::{CacheFlushed, GatherMetrics, MenuItem};
use bulwark_web::{Api, Controller, Metric, Module, ModuleError, SiteNotifier, SiteSetup};

use settings::CommentSettings;

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

pub const PRIORITY: i32 = 480;

const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "comments",
    sqlite: include_str!("../migrations/sqlite/0001_comments.sql"),
    postgres: include_str!("../migrations/postgres/0001_comments.sql"),
}];

/// The push topic an open page hears of resource `id`'s comments on.
pub fn topic(id: bulwark_store::ResourceId) -> String {
    format!("comments/{id}")
}

pub struct Comments;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(Comments)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "comments",
            PRIORITY,
            &["auth"],
            Some(&TEMPLATES),
            Some(&LIB),
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api::api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

/// What a site's comment handlers share.
pub(crate) struct SiteComments {
    pub settings: CommentSettings,
    pub notifier: SiteNotifier,
    /// Where links in mails start (`https://example.org`).
    pub origin: String,
}

impl Module for Comments {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api::api())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings = CommentSettings::parse(site.settings())?;
        site.models().add_model(
            "comments",
            model::comments_model(settings.categories.clone()),
        );
        let comments = Arc::new(SiteComments {
            settings,
            notifier: site.notifier(),
            origin: site.site().config.origin(),
        });
        site.provide(comments.clone());
        site.add_controller("comment_post", move |options| {
            page::PostController::new(comments.clone(), options)
                .map(|c| Box::new(c) as Box<dyn Controller>)
        });
        let told = posting::LiveComments::new(
            site.notifier(),
            site.models().store.clone(),
            site.policy().clone(),
        );
        site.observers()
            .on_notify(PRIORITY, move |flushed: &CacheFlushed| {
                told.flushed(&flushed.keys);
            });
        let counted = site.models().store.clone();
        site.observers().on_fold(
            PRIORITY,
            move |_: &GatherMetrics, mut metrics: Vec<Metric>| {
                match table::counts(&counted) {
                    Ok(counts) => metrics.extend(counts.into_iter().map(|(status, n)| {
                        Metric::gauge(
                            "bulwark_comments",
                            "Comments by status: pending (waiting for moderation), approved, \
                             spam, deleted.",
                            n as f64,
                        )
                        .with("status", status.as_str())
                    })),
                    Err(e) => tracing::warn!("comments: counting them for /metrics: {e}"),
                }
                metrics
            },
        );
        site.add_admin_menu_item(
            PRIORITY,
            MenuItem::screen("Comments", "/admin/comments", "admin_comments.tpl"),
        );
        Ok(())
    }
}
