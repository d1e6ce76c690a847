//! The seo module as a site uses it: a controller kind (`sitemap`), template
//! functions (`canonical_url`, `canonical_link`) and an observer (the sitemap
//! follows the store), all brought by the module without any core change.

#[path = "../../../crates/web/tests/common/mod.rs"]
mod common;

use std::time::Duration;

use bulwark_store::{NewResource, Props, Store};
use common::*;

const SITE: &str = r#"
hostname = "news.test"
aliases = ["www.news.test"]
default = true
modules = ["seo"]

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
"#;

fn files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("news/site.toml", SITE),
        (
            "news/templates/home.tpl",
            "<head>{{ canonical_link() }}</head>{{ canonical_url(path='/x?y=1') }}",
        ),
    ]
}

fn create(store: &Store, title: &str, published: bool) -> bulwark_store::ResourceId {
    let mut r = NewResource::new("article", Props::new().with("title", title));
    r.published = published;
    store.create_resource(r).unwrap()
}

async fn sitemap(s: &TestServer) -> RawResponse {
    get(s.addr, "news.test", "/sitemap.xml").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sitemap_lists_what_visitors_may_see_and_follows_the_store() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let public = create(&store, "Public", true);
    let draft = create(&store, "Draft", false);
    let r = sitemap(&s).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    let xml = r.text();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(
        xml.contains(&format!("<loc>http://news.test/page/{public}</loc>")),
        "{xml}"
    );
    assert!(!xml.contains(&format!("/page/{draft}<")), "{xml}");

    // A new page appears once the change has gone round (the observer forgot
    // the built sitemap); until then the old one may be served.
    let later = create(&store, "Later", true);
    let wanted = format!("<loc>http://news.test/page/{later}</loc>");
    bulwark_testkit::eventually(
        "the sitemap lists the new page",
        Duration::from_secs(5),
        || async { sitemap(&s).await.text().contains(&wanted).then_some(()) },
    )
    .await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canonical_links_name_the_canonical_host_without_the_query() {
    let s = start(&files(), |_| {}).await;
    let r = get(s.addr, "news.test", "/?utm_source=feed").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.text(),
        r#"<head><link rel="canonical" href="http://news.test/"></head>http://news.test/x"#
    );
    s.shutdown().await;
}

#[tokio::test]
async fn robots_txt_points_at_the_sitemap() {
    let s = start(&files(), |_| {}).await;
    let r = get(s.addr, "news.test", "/robots.txt").await;
    assert_eq!(r.status, 200);
    assert!(
        r.text().contains("Sitemap: http://news.test/sitemap.xml"),
        "{}",
        r.text()
    );
    s.shutdown().await;
}

/// The errors that stop a site with this `site.toml` from loading.
async fn load_errors(site_toml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("news/site.toml"), site_toml);
    let errors = load_sites(dir.path(), Default::default())
        .await
        .err()
        .expect("the site must not load");
    errors.iter().map(|e| e.to_string()).collect()
}

#[tokio::test]
async fn a_sitemap_rule_with_bad_options_stops_the_site_with_the_rule_named() {
    let text = load_errors(&format!(
        "{SITE}\n[[dispatch]]\nname = \"big\"\npath = \"/big.xml\"\ncontroller = \"sitemap\"\nlimit = 0\n"
    ))
    .await;
    assert!(
        text.contains("news/site.toml") && text.contains("\"big\"") && text.contains("limit"),
        "{text}"
    );
}

#[tokio::test]
async fn a_controller_kind_of_a_module_the_site_does_not_enable_is_unknown() {
    let text = load_errors(
        &(SITE.replace("modules = [\"seo\"]", "")
            + "\n[[dispatch]]\nname = \"map\"\npath = \"/map.xml\"\ncontroller = \"sitemap\"\n"),
    )
    .await;
    assert!(
        text.contains("unknown controller \"sitemap\"") && text.contains("template"),
        "{text}"
    );
}
