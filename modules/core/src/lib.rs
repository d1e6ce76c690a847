//! The core module: present in every site and looked up last. It brings the
//! templates every site starts from (`error.tpl`, `page.tpl`, ...), the base CSS,
//! the dispatch rules for static files, uploads, resource pages and the JSON API,
//! and the demo content a new site can start with (`[database] demo_content`).

mod api;
mod demo;

use std::sync::{Arc, OnceLock};

use include_dir::{Dir, include_dir};

use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{Store, StoreError};
use bulwark_web::{Api, Module};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

/// Core comes after every other module: any module or site overrides it.
pub const PRIORITY: i32 = 1000;

pub struct Core;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(Core)
}

/// Core's manifest alone (templates and rules), for tools and tests that load
/// sites without running them.
pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "core",
            PRIORITY,
            &[],
            Some(&TEMPLATES),
            Some(&LIB),
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api::api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for Core {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api::api())
    }

    fn open_store(&self, site: &Site, store: &Store) -> Result<(), StoreError> {
        if site.config.database.demo_content {
            demo::create_demo_content(store)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_brings_lib_and_file_rules_and_the_error_template() {
        let core = manifest();
        assert!(core.rules.iter().any(|r| r.name == "lib"));
        assert!(core.rules.iter().any(|r| r.name == "file"));
        assert!(bulwark_site::embedded_file(core.templates.unwrap(), "error.tpl").is_some());
    }
}
