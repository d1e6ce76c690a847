//! The search filter a policy computes lets through exactly the resources its
//! `may_see` allows, on a real store: lists page fully and show nothing hidden.

use bulwark_acl::{AccessPolicy, Principal, SiteLookups, SitePolicy};
use bulwark_store::{NewResource, Props, ResourceId, SearchQuery, Store, StoreConfig, Visibility};
use chrono::{Duration, Utc};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_search_filter_finds_exactly_what_may_be_seen() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(StoreConfig::sqlite(dir.path().join("site.db")))
        .await
        .unwrap();
    let person = |title: &str| {
        store
            .create_resource(
                NewResource::new("person", Props::new().with("title", title)).published(true),
            )
            .unwrap()
    };
    let (ada, bob) = (person("Ada"), person("Bob"));
    let group = store
        .create_resource(NewResource::new("content_group", Props::new()).named("staff"))
        .unwrap();
    // Every combination of publication, window, visibility and creator.
    let now = Utc::now();
    let windows = [
        (false, None, None),
        (true, None, None),
        (true, Some(now + Duration::days(1)), None),
        (true, None, Some(now - Duration::days(1))),
    ];
    let visibilities = [
        Visibility::Public,
        Visibility::Members,
        Visibility::Group(group),
    ];
    let mut articles = Vec::new();
    for (published, start, end) in windows {
        for visibility in visibilities {
            for creator in [None, Some(ada)] {
                let mut n = NewResource::new("article", Props::new().with("title", "a"))
                    .published(published);
                n.publication_start = start;
                n.publication_end = end;
                n.visibility = visibility;
                n.creator = creator;
                articles.push(store.create_resource(n).unwrap());
            }
        }
    }
    let policy = SitePolicy::default();
    policy.refresh(SiteLookups::load(&store).unwrap());
    for who in [
        Principal::anonymous(),
        Principal::member(ada),
        Principal::member(bob),
        Principal::in_default_group(bob, "managers"),
        Principal::administrator(bob),
    ] {
        let found = store
            .search(&SearchQuery {
                categories: vec!["article".into()],
                visibility: policy.search_filter(&who),
                limit: 1000,
                ..SearchQuery::default()
            })
            .unwrap()
            .ids;
        let seen: Vec<ResourceId> = articles
            .iter()
            .copied()
            .filter(|id| policy.may_see(&who, &store.resource(*id).unwrap().unwrap()))
            .collect();
        assert!(!seen.is_empty(), "{who:?} sees something");
        assert_eq!(found, seen, "{who:?}");
    }
}
