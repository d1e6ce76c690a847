//! A question the store refuses (a malformed key) is an absent value, not a
//! broken page; only the database being away or busy fails the render.

use crate::common;

use bulwark_acl::Principal;
use bulwark_template::{ModelRoot, RenderScope, SiteModels};
use minijinja::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_keys_are_absent_and_the_render_does_not_fail() {
    let site = common::site_with_template(
        "t.tpl",
        "[{{ m.config['no such key!'] }}|{{ m.config.greeting }}|{{ m.rsc['../x'].title }}|{{ m.category['?'].name }}]",
    )
    .await;
    site.store.set_config_value("greeting", "hi").unwrap();
    let scope = RenderScope::new(SiteModels::new(site.store.clone()), Principal::anonymous());
    let ctx = minijinja::context! { m => Value::from_object(ModelRoot(scope.clone())) };
    assert_eq!(site.templates.render("t.tpl", ctx).unwrap(), "[|hi||]");
    assert!(scope.failure().is_none());
}

/// A URL slug is made from the title as people read it, not as it is stored
/// (escaped), and an editor's own slug is kept whatever the title becomes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slugs_come_from_the_titles_text_or_the_editors_choice() {
    use bulwark_store::{NewResource, Props, ResourceUpdate};
    let site =
        common::site_with_template("t.tpl", "{{ m.rsc[id].slug }}|{{ m.rsc[id].page_url }}").await;
    let render = |id: bulwark_store::ResourceId| {
        let scope = RenderScope::new(
            SiteModels::new(site.store.clone()),
            Principal::administrator(id),
        );
        let ctx = minijinja::context! { m => Value::from_object(ModelRoot(scope)), id => id.0 };
        site.templates.render("t.tpl", ctx).unwrap()
    };
    let tom = site
        .store
        .create_resource(NewResource::new(
            "article",
            Props::new().with("title", "Tom & Jerry <3 \"Cheese\""),
        ))
        .unwrap();
    assert_eq!(
        render(tom),
        format!("tom-jerry-3-cheese|/page/{tom}/tom-jerry-3-cheese")
    );
    let long = site
        .store
        .create_resource(NewResource::new(
            "article",
            Props::new().with("title", "Ça va? Ünïcode — fine; ".repeat(5)),
        ))
        .unwrap();
    let slug = render(long);
    let slug = slug.split('|').next().unwrap();
    assert!(slug.starts_with("ça-va-ünïcode-fine-ça-va"), "{slug}");
    assert!(slug.chars().count() <= 60 && !slug.ends_with('-'), "{slug}");

    let version = site.store.resource(tom).unwrap().unwrap().version;
    let chosen = Props::new().with("slug", "Our cat & dog");
    site.store
        .update_resource(ResourceUpdate::new(tom, version).merge(chosen))
        .unwrap();
    assert_eq!(render(tom), format!("our-cat-dog|/page/{tom}/our-cat-dog"));
}
