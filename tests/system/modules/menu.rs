//! Menus on the starter site over real HTTP: the navigation comes from the
//! menu `main`; each visitor sees only what they may see of a menu; a cached
//! page that shows a menu is flushed when a title in it changes; the JSON API
//! gives the same tree.

use crate::common;

use std::sync::atomic::Ordering;

use bulwark_store::{NewResource, Props, ResourceId, ResourceUpdate, Store, Visibility};
use common::*;
use serde_json::json;

fn create(store: &Store, title: &str, published: bool, visibility: Visibility) -> ResourceId {
    let mut r = NewResource::new("article", Props::new().with("title", title)).published(published);
    r.visibility = visibility;
    store.create_resource(r).unwrap()
}

/// The starter's main menu, replaced by `items`.
fn set_main_menu(store: &Store, items: serde_json::Value) {
    let menu = store
        .resource_by_name("menu_main")
        .unwrap()
        .expect("the starter's main menu");
    store
        .update_resource(
            ResourceUpdate::new(menu.id, menu.version)
                .merge(Props::try_from(json!({ "menu": items })).unwrap()),
        )
        .unwrap();
}

fn nav(html: &str) -> &str {
    let start = html.find(r#"<nav id="site-nav""#).expect("the navigation");
    let end = html[start..].find("</nav>").unwrap();
    &html[start..start + end]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_navigation_shows_of_the_menu_what_each_visitor_may_see_and_follows_its_titles() {
    let s = start_starter_site(|_| {}).await;
    let models = s.models["default"].clone();
    let store = models.store.clone();

    // The starter's navigation is its main menu, made from site.toml; its
    // links keep the page's language, its titles are translated.
    let home = get(s.addr, "localhost", "/en/").await;
    assert_eq!(home.status, 200);
    let text = home.text();
    assert!(
        nav(&text).contains(r#"<a href="/en/articles">Articles</a>"#),
        "{}",
        nav(&text)
    );
    let dutch = get(s.addr, "localhost", "/nl/").await.text();
    assert!(
        nav(&dutch).contains(r#"<a href="/nl/articles">Artikelen</a>"#),
        "{}",
        nav(&dutch)
    );

    let public = create(&store, "Guide for everyone", true, Visibility::Public);
    let draft = create(&store, "Unfinished draft", false, Visibility::Public);
    let members = create(&store, "Members corner", true, Visibility::Members);
    set_main_menu(
        &store,
        json!([
            {"id": public.0, "children": [
                {"id": draft.0},
                {"title": "Docs", "url": "/docs"},
            ]},
            {"id": members.0},
            {"title": "Evil", "url": "javascript:alert(1)"},
            {"title": "Home", "url": "/"},
        ]),
    );
    changes_applied(&models).await;

    let home = get(s.addr, "localhost", "/en/").await.text();
    let shown = nav(&home);
    assert!(
        shown.contains("Guide for everyone"),
        "a public page: {shown}"
    );
    assert!(
        shown.contains(r#"<a href="/en/docs">Docs</a>"#),
        "a link under it: {shown}"
    );
    assert!(!shown.contains("Unfinished draft"), "not a draft: {shown}");
    assert!(
        !shown.contains("Members corner"),
        "not a members' page: {shown}"
    );
    assert!(
        !shown.contains("Evil") && !shown.contains("javascript"),
        "no script URL: {shown}"
    );
    let api: serde_json::Value =
        serde_json::from_slice(&get(s.addr, "localhost", "/api/menu/main").await.body).unwrap();
    let titles: Vec<&str> = api["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        ["Guide for everyone", "Home"],
        "the API sees the same: {api}"
    );
    assert_eq!(api["items"][0]["id"], public.0);
    assert_eq!(api["items"][0]["children"][0]["title"], "Docs");
    assert_eq!(get(s.addr, "localhost", "/api/menu/nope").await.status, 404);

    // The page is cached; a title in the menu changes; the page follows.
    let renders = || models.renders.load(Ordering::Relaxed);
    get(s.addr, "localhost", "/en/").await;
    let warm = renders();
    get(s.addr, "localhost", "/en/").await;
    assert_eq!(renders(), warm, "the home page comes from the page cache");
    let r = store.resource(public).unwrap().unwrap();
    store
        .update_resource(
            ResourceUpdate::new(public, r.version)
                .merge(Props::new().with("title", "Renamed guide")),
        )
        .unwrap();
    changes_applied(&models).await;
    let home = get(s.addr, "localhost", "/en/").await.text();
    assert!(
        nav(&home).contains("Renamed guide"),
        "the new title: {}",
        nav(&home)
    );
    assert!(renders() > warm, "rendered again, once the title changed");
    s.shutdown().await;
}

#[tokio::test]
async fn a_malformed_menu_section_stops_the_site_with_its_key() {
    let mut files = starter_site();
    let toml = files
        .iter_mut()
        .find(|(p, _)| p.ends_with("site.toml"))
        .unwrap();
    toml.1.push_str("\n[menu.Bad-Name]\nitems = []\n");
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in &files {
        write(&dir.path().join(path), text);
    }
    let errors = load_sites(dir.path(), Default::default())
        .await
        .err()
        .expect("a bad menu name is refused");
    let text: String = errors.iter().map(|e| e.to_string()).collect();
    assert!(text.contains("[menu.Bad-Name]"), "{text}");
}
