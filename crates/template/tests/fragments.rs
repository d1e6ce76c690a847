//! A cached fragment is shared only by principals who may see the same things:
//! whichever role renders it first, no other role is ever served that copy.

use crate::common;

use std::sync::Arc;

use bulwark_acl::Principal;
use bulwark_store::{NewResource, Props, ResourceId};
use bulwark_template::{ModelRoot, RenderScope, SiteModels, SiteTemplates};
use minijinja::Value;

const FRAGMENT: &str = "{% call cache(ttl=600) %}\
    {% for r in m.rsc[hub].o.relation %}[{{ r.title }}]{% endfor %}\
    {% endcall %}";

struct Fixture {
    _dir: tempfile::TempDir,
    templates: SiteTemplates,
    models: Arc<SiteModels>,
    hub: ResourceId,
}

async fn fixture() -> (Fixture, ResourceId, ResourceId) {
    let common::TestSite {
        dir,
        templates,
        store,
    } = common::site_with_template("list.tpl", FRAGMENT).await;
    let person = |name: &str| NewResource::new("person", Props::new().with("title", name));
    let alice = store.create_resource(person("Alice")).unwrap();
    let bob = store.create_resource(person("Bob")).unwrap();
    let article = |title: &str| NewResource::new("article", Props::new().with("title", title));
    let hub = store
        .create_resource(article("Hub").published(true))
        .unwrap();
    let public = store
        .create_resource(article("Public").published(true))
        .unwrap();
    let alices_draft = store
        .create_resource(article("Alice draft").created_by(alice))
        .unwrap();
    let secret = store.create_resource(article("Secret")).unwrap();
    for id in [public, alices_draft, secret] {
        store.insert_edge(hub, "relation", id, None).unwrap();
    }
    let fixture = Fixture {
        _dir: dir,
        templates,
        models: SiteModels::new(store),
        hub,
    };
    (fixture, alice, bob)
}

impl Fixture {
    fn render(&self, who: &Principal) -> String {
        let scope = RenderScope::new(self.models.clone(), who.clone());
        let ctx = minijinja::context! {
            hub => self.hub.0,
            m => Value::from_object(ModelRoot(scope)),
        };
        self.templates.render("list.tpl", ctx).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_roles_never_share_a_fragment_whoever_renders_it_first() {
    let (f, alice, bob) = fixture().await;
    let admin = Principal::administrator(alice);
    let everything = "[Public][Alice draft][Secret]";
    let expected = [
        (admin.clone(), everything),
        (Principal::member(alice), "[Public][Alice draft]"),
        (Principal::member(bob), "[Public]"),
        (Principal::anonymous(), "[Public]"),
    ];
    // First renders fill one fragment per profile, the most privileged first...
    for (who, html) in &expected {
        assert_eq!(f.render(who), *html, "{who:?}");
    }
    // ...and every later render is served from the cache, still per profile.
    let hits = f.models.cache.stats().hits;
    for (who, html) in expected.iter().rev() {
        assert_eq!(f.render(who), *html, "{who:?}");
    }
    assert!(f.models.cache.stats().hits >= hits + 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fragment_cached_for_visitors_never_reaches_an_administrator() {
    let (f, alice, _) = fixture().await;
    // The least privileged first this time: no role may get the visitors' copy.
    assert_eq!(f.render(&Principal::anonymous()), "[Public]");
    assert_eq!(f.render(&Principal::member(alice)), "[Public][Alice draft]");
    assert_eq!(
        f.render(&Principal::administrator(alice)),
        "[Public][Alice draft][Secret]"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_not_stored_keeps_only_what_its_fragments_read() {
    let (fixture, _, _) = fixture().await;
    let scope = RenderScope::new(fixture.models.clone(), Principal::anonymous());
    scope.forget_page_dependencies();
    let page_read = bulwark_depcache::DependencyKey::new("rsc:1");
    let fragment_read = bulwark_depcache::DependencyKey::new("rsc:2");
    scope.depend(&page_read);
    scope.begin_fragment();
    scope.depend(&fragment_read);
    let fragment: Vec<_> = scope.end_fragment().into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        fragment,
        std::slice::from_ref(&fragment_read),
        "the fragment still knows what it read"
    );
    let page: Vec<_> = scope.dependencies().into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        page,
        [fragment_read],
        "the page outside its fragment kept nothing"
    );
}
