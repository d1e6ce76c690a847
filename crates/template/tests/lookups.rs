//! A question the store refuses (a malformed key) is an absent value, not a
//! broken page; only the database being away or busy fails the render.

mod common;

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
