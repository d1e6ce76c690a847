//! Rules stored in a site's database outlive the process: a policy made
//! later from the same database (as a restart or another node makes it) puts
//! them in force, and forgetting them brings the configured rules back.

use bulwark_acl::stored::{RuleDoc, load_rules};
use bulwark_acl::{AccessPolicy, Principal, SitePolicy};
use bulwark_store::{NewResource, Props, Store, StoreConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_rules_are_in_force_after_a_restart_until_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.db");
    let store = Store::open(StoreConfig::sqlite(&path)).await.unwrap();
    let id = store
        .create_resource(NewResource::new("article", Props::new()).published(true))
        .unwrap();
    let article = store.resource(id).unwrap().unwrap();
    let anonymous = Principal::anonymous();

    let policy = SitePolicy::default();
    assert!(policy.may_see(&anonymous, &article));
    let members_only = [RuleDoc {
        group: "members".into(),
        actions: vec!["view".into()],
        content_group: Some("default".into()),
        categories: vec![],
        own: false,
    }];
    let s = store.clone();
    let stored = tokio::task::spawn_blocking(move || {
        policy.store_rules(&s, &members_only).unwrap();
        policy
    })
    .await
    .unwrap();
    assert!(stored.has_stored_rules());
    assert!(!stored.may_see(&anonymous, &article));
    drop(store);

    // "Restart": a new store and a new policy from the same file.
    let store = Store::open(StoreConfig::sqlite(&path)).await.unwrap();
    let again = SitePolicy::default();
    let s = store.clone();
    let rules = tokio::task::spawn_blocking(move || load_rules(&s).unwrap())
        .await
        .unwrap();
    assert_eq!(rules.as_ref().map(Vec::len), Some(1));
    again.set_rules(rules);
    assert!(!again.may_see(&anonymous, &article));
    assert!(again.may_see(&Principal::member(id), &article));

    let s = store.clone();
    let again = tokio::task::spawn_blocking(move || {
        again.forget_stored_rules(&s).unwrap();
        assert_eq!(load_rules(&s).unwrap(), None);
        again
    })
    .await
    .unwrap();
    assert!(!again.has_stored_rules());
    assert!(again.may_see(&anonymous, &article));
}
