//! The SEO module: `robots.txt` (a template a site may override), `sitemap.xml`
//! (a controller kind of its own, `controller = "sitemap"`), and canonical links
//! for templates (`{{ canonical_link() }}` in a page's `<head>`).
//!
//! It is written the way any module is: a manifest (its `module.toml` rules and
//! templates) and a [`Module::setup`] that adds a controller kind, a template
//! function and an observer, touching no core file (docs/architecture.md walks
//! through it).

mod canonical;
mod sitemap;

use std::sync::{Arc, OnceLock};

use include_dir::{Dir, include_dir};

use bulwark_site::ModuleManifest;
use bulwark_web::events::{CacheFlushed, ResourceChanged};
use bulwark_web::{Module, ModuleError, SiteSetup};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

pub const PRIORITY: i32 = 500;

pub struct Seo;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(Seo)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "seo",
            PRIORITY,
            &[],
            Some(&TEMPLATES),
            None,
            include_str!("../module.toml"),
        );
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for Seo {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings = sitemap::SeoSettings::parse(site.settings())?;
        let pages: Arc<[String]> = settings.sitemap_pages.into();
        let cache = Arc::new(sitemap::SitemapCache::default());
        let for_rules = cache.clone();
        site.add_controller("sitemap", move |options| {
            sitemap::SitemapController::new(options, for_rules.clone(), pages.clone())
                .map(|c| Box::new(c) as Box<dyn bulwark_web::Controller>)
        });
        // Any change may add, drop or move a page: build the sitemap again;
        // so may one that says anything may have changed (a restore, a
        // command's import told to the running server, a purge).
        let everything = cache.clone();
        site.observers()
            .on_notify(500, move |_: &ResourceChanged| cache.forget());
        site.observers()
            .on_notify(500, move |flushed: &CacheFlushed| {
                if flushed.all {
                    everything.forget();
                }
            });
        let config = &site.site().config;
        let origin = canonical::Origin::new(&config.hostname, config.tls.is_some());
        site.add_template_extension(move |env| canonical::register(env, origin.clone()));
        Ok(())
    }
}
