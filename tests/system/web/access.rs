//! One access rule on every surface: a resource a visitor may not see is absent
//! from template renders, searches, pages, the JSON API and the sitemap, and a
//! private property is absent from templates, pages and the API, because every
//! one of them asks the site's one `AccessPolicy` with the request's `Principal`.

use crate::common;

use bulwark_acl::{AccessPolicy, Principal, SitePolicy};
use bulwark_store::{NewResource, Props, ResourceId, Store, Visibility};
use common::*;

const SITE: &str = r#"
hostname = "news.test"
default = true
modules = ["seo"]

[[dispatch]]
name = "list"
path = "/list"
controller = "template"
template = "list.tpl"

[[dispatch]]
name = "one"
path = "/one/{id}"
controller = "template"
template = "one.tpl"
"#;

fn files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("news/site.toml", SITE),
        (
            "news/templates/list.tpl",
            "{% set found = m.search(cat='article', pagelen=50, total=true) %}\
             total={{ found.total }};{% for a in found.items %}[{{ a.title }}]{% endfor %}",
        ),
        (
            "news/templates/one.tpl",
            "{% set r = m.rsc[id] %}[{{ r.title }}|{{ r.email }}]",
        ),
        (
            "news/templates/page.tpl",
            "page {{ rsc.title }} {{ rsc.email }}",
        ),
    ]
}

fn article(store: &Store, title: &str, tweak: impl FnOnce(&mut NewResource)) -> ResourceId {
    let mut r = NewResource::new(
        "article",
        Props::new()
            .with("title", title)
            .with("email", format!("{}@example.org", title.to_lowercase())),
    )
    .published(true);
    tweak(&mut r);
    store.create_resource(r).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_visitor_may_not_see_is_absent_on_every_surface() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let group = store
        .create_resource(NewResource::new("content_group", Props::new()).named("staff"))
        .unwrap();
    let shown = article(&store, "Shown", |_| {});
    let hidden = [
        article(&store, "Draft", |r| r.published = false),
        article(&store, "Members", |r| r.visibility = Visibility::Members),
        article(&store, "Grouped", |r| {
            r.visibility = Visibility::Group(group)
        }),
        article(&store, "Future", |r| {
            r.publication_start = Some(chrono::Utc::now() + chrono::Duration::days(1))
        }),
    ];
    // The rule itself, as the site's policy states it.
    let policy = SitePolicy::default();
    let visitor = Principal::anonymous();
    let may_see = |id| policy.may_see(&visitor, &store.resource(id).unwrap().unwrap());
    assert!(may_see(shown));
    assert!(hidden.iter().all(|id| !may_see(*id)));

    // A template search: the store filtered, so the total counts only what may be
    // seen (pages stay full).
    let list = get(s.addr, "news.test", "/list").await.text();
    assert_eq!(list, "total=1;[Shown]");

    // A template lookup by id: absent, and the private property undefined.
    let one = |id: ResourceId| {
        let addr = s.addr;
        async move { get(addr, "news.test", &format!("/one/{id}")).await.text() }
    };
    assert_eq!(one(shown).await, "[Shown|]");
    for id in hidden {
        assert_eq!(one(id).await, "[|]", "{id:?}");
    }

    // A resource's page.
    let page = get(s.addr, "news.test", &format!("/page/{shown}")).await;
    assert_eq!(page.status, 200);
    assert!(!page.text().contains("@example.org"), "{}", page.text());
    for id in hidden {
        let page = get(s.addr, "news.test", &format!("/page/{id}")).await;
        assert_eq!(page.status, 404, "{id:?}");
    }

    // The JSON API.
    let api = get(s.addr, "news.test", &format!("/api/rsc/{shown}")).await;
    assert_eq!(api.status, 200);
    let v: serde_json::Value = serde_json::from_slice(&api.body).unwrap();
    assert_eq!(v["props"]["title"], "Shown");
    assert_eq!(v["props"].get("email"), None, "{v}");
    for id in hidden {
        let api = get(s.addr, "news.test", &format!("/api/rsc/{id}")).await;
        assert_eq!(api.status, 404, "{id:?}");
    }

    // The sitemap.
    let sitemap = get(s.addr, "news.test", "/sitemap.xml").await;
    assert_eq!(sitemap.status, 200);
    let xml = sitemap.text();
    assert!(xml.contains(&format!("/page/{shown}/shown</loc>")), "{xml}");
    for id in hidden {
        assert!(!xml.contains(&format!("/page/{id}/")), "{id:?}: {xml}");
    }
    s.shutdown().await;
}
