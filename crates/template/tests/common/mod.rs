//! A site folder with one template, and an SQLite store, in a temporary folder.

use std::sync::Arc;

use bulwark_site::Site;
use bulwark_store::{Store, StoreConfig};
use bulwark_template::{SiteTemplates, TemplateOptions};

pub struct TestSite {
    /// Removed when the test ends (kept alive by holding it).
    #[allow(dead_code)]
    pub dir: tempfile::TempDir,
    pub templates: SiteTemplates,
    pub store: Store,
}

pub async fn site_with_template(name: &str, text: &str) -> TestSite {
    let dir = tempfile::tempdir().unwrap();
    let site_dir = dir.path().join("s");
    std::fs::create_dir_all(site_dir.join("templates")).unwrap();
    std::fs::write(site_dir.join("site.toml"), "hostname = \"s.test\"").unwrap();
    std::fs::write(site_dir.join("templates").join(name), text).unwrap();
    let site = Arc::new(Site::load(&site_dir, false, &[]).unwrap());
    let store = Store::open(StoreConfig::sqlite(dir.path().join("site.db")))
        .await
        .unwrap();
    TestSite {
        templates: SiteTemplates::new(site, TemplateOptions::default()),
        store,
        dir,
    }
}
