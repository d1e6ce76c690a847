//! Pages whose templates pull their data from the models: what a page shows
//! follows the store, and what a visitor may not see never appears.

mod common;

use std::time::Duration;

use bulwark_store::{NewResource, Props, PropsChange, ResourceUpdate, Store};
use common::*;

const NEWS_SITE: &str = r#"
hostname = "news.test"
default = true

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
"#;

fn files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("news/site.toml", NEWS_SITE),
        (
            "news/templates/home.tpl",
            "{% for a in m.search(cat='text', sort='-created', pagelen=10) %}[{{ a.title }}]{% endfor %}",
        ),
        ("news/templates/page.tpl", "generic {{ rsc.title }}"),
        (
            "news/templates/page.article.tpl",
            "article {{ rsc.title }} by {% for p in rsc.o.author %}{{ p.title }}{% endfor %}; related {% for r in rsc.o.relation %}{{ r.title }}{% endfor %}; is text: {{ rsc.is_a('text') }}",
        ),
    ]
}

fn create(
    store: &Store,
    category: &str,
    title: &str,
    published: bool,
) -> bulwark_store::ResourceId {
    let mut r = NewResource::new(category, Props::new().with("title", title));
    r.published = published;
    store.create_resource(r).unwrap()
}

async fn page(s: &TestServer, path: &str) -> (u16, String) {
    let r = get(s.addr, "news.test", path).await;
    (r.status, r.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_follows_the_store_and_hides_what_visitors_may_not_see() {
    let s = start(&files(), |_| {}).await;
    let models = s.models["news"].clone();
    let store = models.store.clone();
    let ada = create(&store, "person", "Ada", true);
    let ghost = create(&store, "person", "Ghost writer", false);
    let first = create(&store, "article", "First", true);
    let draft = create(&store, "article", "Draft", false);
    let second = create(&store, "news", "Second", true);
    store.insert_edge(first, "author", ada, None).unwrap();
    store.insert_edge(first, "author", ghost, None).unwrap();
    store.insert_edge(first, "relation", draft, None).unwrap();
    store.insert_edge(first, "relation", second, None).unwrap();

    // The category template, edges in order, unpublished ones left out.
    let (status, html) = page(&s, &format!("/page/{first}")).await;
    assert_eq!(status, 200);
    assert_eq!(html, "article First by Ada; related Second; is text: True");
    // A news item falls back up the tree (news > text) to page.tpl.
    assert_eq!(
        page(&s, &format!("/page/{second}/second")).await.1,
        "generic Second"
    );
    // Unpublished or missing: 404, whichever way it is asked for.
    assert_eq!(page(&s, &format!("/page/{draft}")).await.0, 404);
    assert_eq!(page(&s, "/page/999999").await.0, 404);

    // Editing a resource changes every page that shows it.
    let ada_now = store.resource(ada).unwrap().unwrap();
    let mut update = ResourceUpdate::new(ada, ada_now.version);
    update.props = PropsChange::Merge(Props::new().with("title", "Ada Lovelace"));
    store.update_resource(update).unwrap();
    let html = wait_for(&s, &format!("/page/{first}"), "Ada Lovelace").await;
    assert!(html.contains("by Ada Lovelace"), "{html}");

    // Publishing the draft makes it appear in the related list and in searches.
    let draft_now = store.resource(draft).unwrap().unwrap();
    let mut update = ResourceUpdate::new(draft, draft_now.version);
    update.published = Some(true);
    store.update_resource(update).unwrap();
    wait_for(&s, &format!("/page/{first}"), "related DraftSecond").await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_page_is_refreshed_when_a_new_article_is_published() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    create(&store, "article", "Old news", true);
    wait_for(&s, "/", "[Old news]").await;
    create(&store, "article", "Hidden", false);
    create(&store, "news", "Fresh", true);
    // The search covers text and everything below it (article, news).
    let html = wait_for(&s, "/", "[Fresh]").await;
    assert!(!html.contains("Hidden"), "{html}");
    s.shutdown().await;
}

/// Pages are computed from the change events, which arrive just after the commit.
async fn wait_for(s: &TestServer, path: &str, needle: &str) -> String {
    let mut html = String::new();
    for _ in 0..100 {
        html = page(s, path).await.1;
        if html.contains(needle) {
            return html;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{path} never showed {needle:?}: {html}");
}
