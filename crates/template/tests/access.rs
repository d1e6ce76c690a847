//! The access policy decides on every read: resources a principal may not see are
//! absent whichever way a template reaches them, properties they may not read are
//! undefined, and each decision is asked once per render.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bulwark_acl::{AccessPolicy, Action, Principal, SitePolicy, VisibilityFilter, default_rules};
use bulwark_store::{NewResource, Props, Resource, ResourceId, Visibility};
use bulwark_template::{ModelRoot, RenderScope, SiteModels, SiteTemplates};
use minijinja::Value;

const TEMPLATE: &str = "{% set p = m.rsc[id] %}[{{ p.title }}|{{ p.email }}|{{ p | length }}]\
    {% for r in m.rsc[hub].o.relation %}({{ r.title }}){% endfor %}";

struct Site1 {
    _dir: tempfile::TempDir,
    templates: SiteTemplates,
    models: Arc<SiteModels>,
    person: ResourceId,
    hub: ResourceId,
}

async fn site() -> Site1 {
    let common::TestSite {
        dir,
        templates,
        store,
    } = common::site_with_template("t.tpl", TEMPLATE).await;
    let person = store
        .create_resource(
            NewResource::new(
                "person",
                Props::new()
                    .with("title", "Ada")
                    .with("email", "ada@example.org"),
            )
            .published(true),
        )
        .unwrap();
    let hub = store
        .create_resource(
            NewResource::new("article", Props::new().with("title", "Hub")).published(true),
        )
        .unwrap();
    let news = store
        .create_resource(
            NewResource::new("news", Props::new().with("title", "News")).published(true),
        )
        .unwrap();
    store.insert_edge(hub, "relation", person, None).unwrap();
    store.insert_edge(hub, "relation", news, None).unwrap();
    Site1 {
        _dir: dir,
        templates,
        models: SiteModels::new(store),
        person,
        hub,
    }
}

impl Site1 {
    fn render(&self, who: Principal, policy: Arc<dyn AccessPolicy>) -> String {
        let scope = RenderScope::for_site(
            self.models.clone(),
            who,
            policy,
            Arc::new(|_, _| None),
            None,
        );
        let ctx = minijinja::context! {
            id => self.person.0,
            hub => self.hub.0,
            m => Value::from_object(ModelRoot(scope)),
        };
        self.templates.render("t.tpl", ctx).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_properties_are_undefined_for_visitors_only() {
    let s = site().await;
    let policy: Arc<dyn AccessPolicy> = Arc::new(SitePolicy::default());
    // Anonymous: no email, and it is not even listed among the properties.
    let anon = s.render(Principal::anonymous(), policy.clone());
    assert!(anon.starts_with("[Ada||"), "{anon}");
    let member = s.render(Principal::member(s.person), policy.clone());
    assert!(member.starts_with("[Ada|ada@example.org|"), "{member}");
    let listed = |html: &str| {
        html[html.rfind('|').unwrap() + 1..html.find(']').unwrap()]
            .parse::<usize>()
            .unwrap()
    };
    assert_eq!(listed(&member), listed(&anon) + 1);
    // A site that hides nothing.
    let open: Arc<dyn AccessPolicy> = Arc::new(SitePolicy::new(default_rules(), vec![]));
    assert!(
        s.render(Principal::anonymous(), open)
            .starts_with("[Ada|ada@example.org|")
    );
}

/// A site's own rule: nobody outside the newsroom sees news items.
#[derive(Debug, Default)]
struct NoNews {
    asked: AtomicUsize,
}

impl AccessPolicy for NoNews {
    fn may(&self, _who: &Principal, action: Action, r: &Resource) -> bool {
        self.asked.fetch_add(1, Ordering::Relaxed);
        action == Action::View && r.category_name != "news"
    }
    fn may_insert(&self, _who: &Principal, _category: &str, _v: Visibility) -> bool {
        false
    }
    fn may_read(&self, _who: &Principal, _r: &Resource, _property: &str) -> bool {
        true
    }
    fn search_filter(&self, _who: &Principal) -> VisibilityFilter {
        VisibilityFilter::Everything
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_policy_hides_resources_through_edges_and_is_asked_once_per_render() {
    let s = site().await;
    let policy = Arc::new(NoNews::default());
    let html = s.render(Principal::administrator(s.person), policy.clone());
    assert!(html.ends_with("(Ada)"), "the news item is absent: {html}");
    // Ada is read twice (directly and through the edge), the hub and the news item
    // once each: three decisions.
    assert_eq!(policy.asked.load(Ordering::Relaxed), 3);
}
