//! The conformance suite: every test here runs once on SQLite and once on
//! PostgreSQL, with the same expectations (down to ids and result order).

use crate::common;

use bulwark_store::*;
use chrono::{TimeZone, Utc};
use serde_json::json;

on_both_backends!(
    seed_tree_is_present_with_the_same_ids,
    resources_are_created_read_updated_and_deleted,
    stale_version_is_refused_as_conflict,
    text_and_html_properties_are_sanitised_on_write,
    category_tree_answers_is_a_and_below,
    category_tree_changes_are_renumbered_and_checked,
    edges_are_ordered_moved_and_deleted,
    predicates_check_allowed_categories,
    identities_store_hashes_and_look_up_keys,
    revisions_are_kept_listed_and_restored,
    an_update_that_changes_nothing_writes_nothing,
    pivot_indexes_queued_resources_and_search_finds_them,
    search_filters_combine_and_page,
    config_values_round_trip,
    change_events_name_dependency_keys_after_commit,
    change_events_say_what_happened_to_which_resources,
    failed_writes_emit_no_events_and_leave_nothing_behind,
    reopening_runs_no_migration_twice,
    deleting_resources_cascades_and_refuses_categories_in_use,
    publication_window_and_visibility_are_kept,
    deleted_resources_leave_a_tombstone,
    random_category_tree_changes_keep_the_nested_set_well_formed,
    translated_properties_are_kept_sanitised_and_searched_per_language,
);

fn article(title: &str) -> NewResource {
    NewResource::new("article", Props::new().with("title", title))
}

fn seed_tree_is_present_with_the_same_ids(s: &Store) {
    let cats = s.categories().unwrap();
    let names: Vec<&str> = cats.iter().map(|c| c.name.as_str()).collect();
    for n in [
        "meta",
        "category",
        "predicate",
        "text",
        "article",
        "news",
        "media",
        "image",
        "document",
        "person",
        "location",
        "event",
        "collection",
        "keyword",
    ] {
        assert!(names.contains(&n), "missing seed category {n}");
    }
    assert_eq!(s.category("article").unwrap().id, ResourceId(12));
    assert_eq!(s.resource_id("author").unwrap(), Some(ResourceId(101)));
    let text = s.category("text").unwrap();
    assert_eq!(text.depth, 0);
    assert_eq!(s.category("news").unwrap().depth, 1);
    let p = s.predicate("author").unwrap();
    assert_eq!(p.subject_categories, vec!["text"]);
    assert_eq!(p.object_categories, vec!["person"]);
    // First user resource gets id 1001 on both backends.
    let id = s.create_resource(article("First")).unwrap();
    assert_eq!(id, ResourceId(1001));
}

fn resources_are_created_read_updated_and_deleted(s: &Store) {
    let author = s
        .create_resource(NewResource::new(
            "person",
            Props::new().with("title", "Ann"),
        ))
        .unwrap();
    let id = s
        .create_resource(
            article("Hello")
                .named("hello_world")
                .published(true)
                .created_by(author),
        )
        .unwrap();
    let r = s.resource(id).unwrap().unwrap();
    assert_eq!(r.title(), Some("Hello"));
    assert_eq!(r.name.as_deref(), Some("hello_world"));
    assert_eq!(r.category_name, "article");
    assert_eq!(r.version, Version(1));
    assert_eq!(r.creator, Some(author));
    assert_eq!(r.modifier, Some(author));
    assert!(r.published);
    assert_eq!(s.resource_by_name("hello_world").unwrap().unwrap().id, id);
    assert_eq!(s.resource_id("hello_world").unwrap(), Some(id));
    assert_eq!(s.resource_id("nope").unwrap(), None);

    let updated = s
        .update_resource(
            ResourceUpdate::new(id, r.version)
                .merge(Props::new().with("summary", "Short").with("n", 3))
                .modified_by(author),
        )
        .unwrap();
    assert_eq!(updated.version, Version(2));
    assert_eq!(updated.title(), Some("Hello"));
    assert_eq!(updated.props.get("n"), Some(&json!(3)));
    assert!(updated.modified >= r.modified);
    assert_eq!(updated.created, r.created);

    // Merge with null removes; replace swaps the document.
    let u = s
        .update_resource(
            ResourceUpdate::new(id, updated.version)
                .merge(Props::try_from(json!({"n": null})).unwrap()),
        )
        .unwrap();
    assert_eq!(u.props.get("n"), None);
    let u = s
        .update_resource(
            ResourceUpdate::new(id, u.version).replace(Props::new().with("title", "Replaced")),
        )
        .unwrap();
    assert_eq!(u.props.0.len(), 1);
    assert_eq!(u.title(), Some("Replaced"));

    // Rename, then move to another category.
    let mut up = ResourceUpdate::new(id, u.version);
    up.name = Some(Some("renamed".into()));
    up.category = Some("news".into());
    let u = s.update_resource(up).unwrap();
    assert_eq!(u.category_name, "news");
    assert!(s.resource_by_name("hello_world").unwrap().is_none());
    assert!(s.is_a(id, "text").unwrap());

    // Names are unique.
    let err = s
        .create_resource(article("Other").named("renamed"))
        .unwrap_err();
    assert!(matches!(err, StoreError::Duplicate(_)), "{err:?}");

    s.delete_resource(id, Some(u.version)).unwrap();
    assert!(s.resource(id).unwrap().is_none());
    let err = s.delete_resource(id, None).unwrap_err();
    assert!(matches!(err, StoreError::ResourceNotFound(_)), "{err:?}");
    let err = s
        .update_resource(ResourceUpdate::new(id, u.version))
        .unwrap_err();
    assert!(matches!(err, StoreError::ResourceNotFound(_)), "{err:?}");
}

fn stale_version_is_refused_as_conflict(s: &Store) {
    let id = s.create_resource(article("v1")).unwrap();
    let v1 = s.resource(id).unwrap().unwrap().version;
    s.update_resource(ResourceUpdate::new(id, v1).merge(Props::new().with("title", "v2")))
        .unwrap();
    let err = s
        .update_resource(ResourceUpdate::new(id, v1).merge(Props::new().with("title", "lost")))
        .unwrap_err();
    match err {
        StoreError::Conflict {
            id: cid,
            expected,
            actual,
        } => {
            assert_eq!(cid, id);
            assert_eq!(expected, Version(1));
            assert_eq!(actual, Version(2));
        }
        other => panic!("expected conflict, got {other:?}"),
    }
    assert_eq!(s.resource(id).unwrap().unwrap().title(), Some("v2"));
    let err = s.delete_resource(id, Some(v1)).unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }));
    assert!(s.resource(id).unwrap().is_some());
}

fn text_and_html_properties_are_sanitised_on_write(s: &Store) {
    let id = s
        .create_resource(NewResource::new(
            "article",
            Props::try_from(json!({
                "title": "Tom & <b>Jerry</b> \"quoted\"",
                "body": "<p onclick=\"steal()\">Hi <a href=\"javascript:alert(1)\">x</a> <a href=\"https://ok.example/\">ok</a></p><script>alert(1)</script>",
                "website": "javascript:alert(1)",
                "nested": {"list": ["<img src=x onerror=alert(1)>", 5, true]}
            }))
            .unwrap(),
        ))
        .unwrap();
    let r = s.resource(id).unwrap().unwrap();
    assert_eq!(r.title(), Some("Tom &amp; Jerry &quot;quoted&quot;"));
    let body = r.props.str("body").unwrap();
    assert!(body.contains("<p>Hi "), "{body}");
    assert!(!body.contains("onclick") && !body.contains("script") && !body.contains("javascript"));
    // Attributes are written unquoted, so the value is safe inside a quoted attribute too.
    assert!(body.contains("href=https://ok.example/ "), "{body}");
    assert_eq!(r.props.str("website"), Some(""));
    assert_eq!(r.props.get("nested").unwrap()["list"][0], json!(""));
    assert_eq!(r.props.get("nested").unwrap()["list"][1], json!(5));
    // Writing back what was read changes nothing (no double escaping).
    let again = s
        .update_resource(ResourceUpdate::new(id, r.version).replace(r.props.clone()))
        .unwrap();
    assert_eq!(again.props, r.props);
}

fn category_tree_answers_is_a_and_below(s: &Store) {
    let a = s.create_resource(article("a")).unwrap();
    let p = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    assert!(s.is_a(a, "article").unwrap());
    assert!(s.is_a(a, "text").unwrap());
    assert!(!s.is_a(a, "person").unwrap());
    assert!(s.is_a(p, "person").unwrap());
    assert!(!s.is_a(p, "text").unwrap());
    assert!(matches!(
        s.is_a(a, "no_such_category"),
        Err(StoreError::UnknownCategory(_))
    ));
    let below: Vec<String> = s
        .category_and_below("text")
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(below, vec!["text", "article", "news"]);
    let text = s.category("text").unwrap();
    let news = s.category("news").unwrap();
    assert!(news.is_a(&text));
    assert!(!text.is_a(&news));
    // Categories are resources of category `category`.
    assert!(s.is_a(text.id, "category").unwrap());
    assert!(s.is_a(text.id, "meta").unwrap());
}

fn category_tree_changes_are_renumbered_and_checked(s: &Store) {
    let blog = s
        .create_category("blog_post", Some("article"), "Blog post")
        .unwrap();
    let post = s
        .create_resource(NewResource::new("blog_post", Props::new()))
        .unwrap();
    assert!(s.is_a(post, "article").unwrap());
    assert!(s.is_a(post, "text").unwrap());
    assert_eq!(s.category("blog_post").unwrap().depth, 2);
    assert_eq!(s.category("blog_post").unwrap().id, blog);

    s.move_category("blog_post", Some("event")).unwrap();
    assert!(!s.is_a(post, "text").unwrap());
    assert!(s.is_a(post, "event").unwrap());
    assert_eq!(s.category("blog_post").unwrap().depth, 1);

    // Nested sets stay well formed: children inside parents, no overlaps.
    let cats = s.categories().unwrap();
    for c in &cats {
        assert!(c.left < c.right);
        if let Some(p) = c.parent {
            let parent = cats.iter().find(|x| x.id == p).unwrap();
            assert!(c.is_a(parent));
            assert_eq!(c.depth, parent.depth + 1);
        }
    }

    // A cycle is refused and nothing changes.
    let err = s.move_category("text", Some("article")).unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");
    assert_eq!(s.category("text").unwrap().parent, None);
    let a = s.create_resource(article("still text")).unwrap();
    assert!(s.is_a(a, "text").unwrap());

    // A place among the new siblings: first, past the end (last), and back.
    let children = |s: &Store, parent: &str| -> Vec<String> {
        let p = s.category(parent).unwrap().id;
        s.categories()
            .unwrap()
            .into_iter()
            .filter(|c| c.parent == Some(p))
            .map(|c| c.name)
            .collect()
    };
    s.place_category("blog_post", Some("text"), Some(0))
        .unwrap();
    assert_eq!(children(s, "text")[0], "blog_post");
    assert!(s.is_a(post, "text").unwrap());
    s.place_category("blog_post", Some("text"), Some(1000))
        .unwrap();
    assert_eq!(children(s, "text").last().unwrap(), "blog_post");
    let others = children(s, "text");
    s.place_category("blog_post", Some("text"), Some(1))
        .unwrap();
    let now = children(s, "text");
    assert_eq!(now[1], "blog_post");
    assert_eq!(now.len(), others.len(), "{now:?}");
    let err = s
        .place_category("text", Some("blog_post"), Some(0))
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");
    assert_eq!(children(s, "text"), now, "a refused move changes nothing");

    let err = s.create_category("x", Some("no_such"), "X").unwrap_err();
    assert!(matches!(err, StoreError::UnknownCategory(_)));
    let err = s.create_category("blog_post", None, "Dup").unwrap_err();
    assert!(matches!(err, StoreError::Duplicate(_)), "{err:?}");
}

fn edges_are_ordered_moved_and_deleted(s: &Store) {
    let art = s.create_resource(article("a")).unwrap();
    let people: Vec<ResourceId> = (0..4)
        .map(|i| {
            s.create_resource(NewResource::new(
                "person",
                Props::new().with("title", format!("p{i}")),
            ))
            .unwrap()
        })
        .collect();
    for p in &people {
        s.insert_edge(art, "author", *p, None).unwrap();
    }
    assert_eq!(s.objects(art, "author").unwrap(), people);
    // Inserting again is a no-op that returns the edge.
    let e = s.insert_edge(art, "author", people[1], None).unwrap();
    assert_eq!(e.seq, 2);
    assert_eq!(s.objects(art, "author").unwrap().len(), 4);

    s.move_edge(art, "author", people[3], 0).unwrap();
    assert_eq!(
        s.objects(art, "author").unwrap(),
        vec![people[3], people[0], people[1], people[2]]
    );
    s.move_edge(art, "author", people[3], 99).unwrap();
    assert_eq!(
        s.objects(art, "author").unwrap(),
        vec![people[0], people[1], people[2], people[3]]
    );
    s.delete_edge(art, "author", people[1]).unwrap();
    assert_eq!(
        s.objects(art, "author").unwrap(),
        vec![people[0], people[2], people[3]]
    );
    assert!(matches!(
        s.delete_edge(art, "author", people[1]),
        Err(StoreError::EdgeNotFound)
    ));
    assert!(matches!(
        s.move_edge(art, "author", people[1], 0),
        Err(StoreError::EdgeNotFound)
    ));
    assert_eq!(s.subjects(people[0], "author").unwrap(), vec![art]);
    assert!(s.subjects(people[1], "author").unwrap().is_empty());

    s.insert_edge(art, "relation", people[0], None).unwrap();
    let edges = s.edges(art).unwrap();
    let preds: Vec<&str> = edges.iter().map(|e| e.predicate.as_str()).collect();
    assert_eq!(preds, vec!["author", "author", "author", "relation"]);

    // Deleting an object removes its edges.
    s.delete_resource(people[0], None).unwrap();
    assert_eq!(
        s.objects(art, "author").unwrap(),
        vec![people[2], people[3]]
    );
    assert!(s.objects(art, "relation").unwrap().is_empty());
}

fn predicates_check_allowed_categories(s: &Store) {
    let art = s.create_resource(article("a")).unwrap();
    let person = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    let img = s
        .create_resource(NewResource::new("image", Props::new()))
        .unwrap();
    // author: text -> person
    let err = s.insert_edge(person, "author", art, None).unwrap_err();
    match err {
        StoreError::PredicateNotAllowed {
            predicate,
            role,
            category,
        } => {
            assert_eq!(predicate, "author");
            assert_eq!(role, "subject");
            assert_eq!(category, "person");
        }
        other => panic!("{other:?}"),
    }
    let err = s.insert_edge(art, "author", img, None).unwrap_err();
    assert!(matches!(
        err,
        StoreError::PredicateNotAllowed { role: "object", .. }
    ));
    // depiction: any -> media (image is below media)
    s.insert_edge(art, "depiction", img, None).unwrap();
    assert!(matches!(
        s.insert_edge(art, "no_such_pred", img, None),
        Err(StoreError::UnknownPredicate(_))
    ));
    assert!(matches!(
        s.insert_edge(art, "author", ResourceId(999_999), None),
        Err(StoreError::ResourceNotFound(_))
    ));
    // A new predicate with its own rules.
    s.create_predicate("located_in", "Located in", &["event"], &["location"])
        .unwrap();
    let p = s.predicate("located_in").unwrap();
    assert_eq!(p.subject_categories, vec!["event"]);
    assert!(
        s.predicates()
            .unwrap()
            .iter()
            .any(|p| p.name == "located_in")
    );
    let ev = s
        .create_resource(NewResource::new("event", Props::new()))
        .unwrap();
    let loc = s
        .create_resource(NewResource::new("location", Props::new()))
        .unwrap();
    s.insert_edge(ev, "located_in", loc, None).unwrap();
    assert!(s.insert_edge(art, "located_in", loc, None).is_err());
    s.set_predicate_categories("located_in", &[], &["location"])
        .unwrap();
    s.insert_edge(art, "located_in", loc, None).unwrap();
    assert!(matches!(
        s.create_predicate("bad", "Bad", &["nope"], &[]),
        Err(StoreError::UnknownCategory(_))
    ));
    assert!(
        s.resource_id("bad").unwrap().is_none(),
        "half-written predicate"
    );
}

fn identities_store_hashes_and_look_up_keys(s: &Store) {
    let ann = s
        .create_resource(NewResource::new(
            "person",
            Props::new().with("title", "Ann"),
        ))
        .unwrap();
    let bob = s
        .create_resource(NewResource::new(
            "person",
            Props::new().with("title", "Bob"),
        ))
        .unwrap();
    const OTHER_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$b3RoZXJzYWx0$b3RoZXJoYXNo";
    let id = s
        .set_username_password_hash(ann, "Ann", common::PASSWORD_HASH)
        .unwrap();
    assert_eq!(id.key, "ann");
    assert_eq!(id.kind, IdentityKind::Username);
    let stored = Some((ann, common::PASSWORD_HASH.to_owned()));
    assert_eq!(s.password_hash("ann").unwrap(), stored);
    assert_eq!(s.password_hash("ANN").unwrap(), stored);
    assert_eq!(s.password_hash("nobody").unwrap(), None);
    let err = s
        .set_username_password_hash(bob, "ann", OTHER_HASH)
        .unwrap_err();
    assert!(matches!(err, StoreError::Duplicate(_)), "{err:?}");
    // A password is not a hash: the store refuses to keep it.
    let err = s
        .set_username_password_hash(ann, "ann", "correct horse")
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");
    // Changing the password replaces the hash.
    s.set_username_password_hash(ann, "ann", OTHER_HASH)
        .unwrap();
    assert_eq!(
        s.password_hash("ann").unwrap(),
        Some((ann, OTHER_HASH.to_owned()))
    );
    s.set_username_password_hash(bob, "bob", OTHER_HASH)
        .unwrap();
    let usernames: Vec<_> = s
        .identities_of_kind(IdentityKind::Username)
        .unwrap()
        .into_iter()
        .map(|i| (i.key, i.resource))
        .collect();
    assert_eq!(
        usernames,
        [("ann".to_owned(), ann), ("bob".to_owned(), bob)]
    );

    s.add_identity(ann, IdentityKind::Email, "Ann@Example.org")
        .unwrap();
    let found = s
        .find_identity(IdentityKind::Email, "ann@example.org")
        .unwrap()
        .unwrap();
    assert_eq!(found.resource, ann);
    assert!(matches!(
        s.add_identity(bob, IdentityKind::Email, "ann@example.org"),
        Err(StoreError::Duplicate(_))
    ));
    assert!(matches!(
        s.add_identity(bob, IdentityKind::Email, "not an email"),
        Err(StoreError::InvalidInput { .. })
    ));
    assert_eq!(s.identities(ann).unwrap().len(), 2);
    s.delete_identity(found.id).unwrap();
    assert!(
        s.find_identity(IdentityKind::Email, "ann@example.org")
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        s.delete_identity(found.id),
        Err(StoreError::IdentityNotFound)
    ));
    // Identities go with their resource.
    s.delete_resource(ann, None).unwrap();
    assert_eq!(s.password_hash("ann").unwrap(), None);
}

fn revisions_are_kept_listed_and_restored(s: &Store) {
    let id = s.create_resource(article("one")).unwrap();
    let r1 = s.resource(id).unwrap().unwrap();
    assert!(s.revisions(id).unwrap().is_empty());
    let r2 = s
        .update_resource(
            ResourceUpdate::new(id, r1.version).merge(Props::new().with("title", "two")),
        )
        .unwrap();
    let r3 = s
        .update_resource(
            ResourceUpdate::new(id, r2.version)
                .merge(Props::new().with("title", "three"))
                .published(true),
        )
        .unwrap();
    let revs = s.revisions(id).unwrap();
    assert_eq!(revs.len(), 2);
    assert_eq!(revs[0].version, Version(2));
    assert_eq!(revs[0].snapshot.title(), Some("two"));
    assert_eq!(revs[1].version, Version(1));
    assert_eq!(revs[1].snapshot, r1);
    let fetched = s.revision(revs[1].id).unwrap();
    assert_eq!(fetched.snapshot.title(), Some("one"));

    // The content comes back; the page stays published (version 1 was a draft).
    let restored = s
        .restore_revision(revs[1].id, r3.version, None, RestorePublication::Keep)
        .unwrap();
    assert_eq!(restored.title(), Some("one"));
    assert!(restored.published, "publication stays as it is");
    assert_eq!(restored.version, Version(4));
    assert_eq!(s.revisions(id).unwrap().len(), 3);
    // Asked for, the publication comes back too.
    let unpublished = s
        .restore_revision(revs[1].id, restored.version, None, RestorePublication::Too)
        .unwrap();
    assert!(!unpublished.published);
    assert_eq!(unpublished.version, Version(5));
    // Restoring from a stale version is a conflict like any update.
    assert!(matches!(
        s.restore_revision(revs[0].id, r3.version, None, RestorePublication::Keep),
        Err(StoreError::Conflict { .. })
    ));
    assert!(matches!(
        s.revision(987_654),
        Err(StoreError::RevisionNotFound(987_654))
    ));
}

/// An editor who opens a page and saves it unchanged: the same props (as
/// stored, or as typed and sanitised to the same bytes), the same publication.
fn an_update_that_changes_nothing_writes_nothing(s: &Store) {
    let id = s
        .create_resource(article("Tom & Jerry").published(true))
        .unwrap();
    let r1 = s.resource(id).unwrap().unwrap();
    let mut rx = s.subscribe();
    let same = s
        .update_resource(
            ResourceUpdate::new(id, r1.version)
                .merge(Props::new().with("title", "Tom & Jerry"))
                .published(true),
        )
        .unwrap();
    assert_eq!(same, r1, "nothing changed");
    assert_eq!(s.resource(id).unwrap().unwrap().version, r1.version);
    assert!(s.revisions(id).unwrap().is_empty(), "no revision");
    assert!(rx.try_recv().is_err(), "no change event");
    // Still based on the version read: a stale one is a conflict even so.
    let changed = s
        .update_resource(
            ResourceUpdate::new(id, r1.version).merge(Props::new().with("title", "Tom")),
        )
        .unwrap();
    assert_eq!(changed.version, Version(r1.version.0 + 1));
    assert!(matches!(
        s.update_resource(ResourceUpdate::new(id, r1.version).published(true)),
        Err(StoreError::Conflict { .. })
    ));
}

fn ts(y: i32, m: u32, d: u32) -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 0, 0, 0).unwrap()
}

/// The same fixture on both backends gives the same ids (1001..).
fn search_fixture(s: &Store) -> Vec<ResourceId> {
    let mut ids = Vec::new();
    let items = [
        (
            "article",
            "Rust memory safety",
            "Ownership and borrowing",
            "2024-01-10",
            true,
        ),
        (
            "article",
            "Erlang processes",
            "Lightweight processes, message passing",
            "2024-02-10",
            true,
        ),
        (
            "news",
            "Rust 2.0 released",
            "The rust team announces",
            "2024-03-10",
            true,
        ),
        (
            "news",
            "Draft: unpublished rust news",
            "secret",
            "2024-04-10",
            false,
        ),
        (
            "event",
            "RustConf",
            "A conference about Rust",
            "2024-09-10",
            true,
        ),
        ("person", "Ferris Crab", "Mascot", "2023-01-01", true),
        (
            "article",
            "Zotonic data model",
            "Everything is a resource; édition spéciale",
            "2024-05-10",
            true,
        ),
    ];
    for (cat, title, body, date, published) in items {
        let id = s
            .create_resource(
                NewResource::new(
                    cat,
                    Props::try_from(json!({
                        "title": title,
                        "body": format!("<p>{body}</p>"),
                        "date_start": date,
                        "language": "en",
                    }))
                    .unwrap(),
                )
                .published(published),
            )
            .unwrap();
        ids.push(id);
    }
    ids
}

fn pivot_indexes_queued_resources_and_search_finds_them(s: &Store) {
    s.pivot_all(100).unwrap();
    let ids = search_fixture(s);
    assert!(s.pivot_pending().unwrap() >= ids.len() as u64);
    let text_query = SearchQuery {
        text: Some("rust".into()),
        ..Default::default()
    };
    // Not indexed yet: text search does not see them.
    assert_eq!(s.search(&text_query).unwrap().total.unwrap(), 0);
    assert_eq!(s.pivot_batch(3).unwrap(), 3);
    assert_eq!(s.pivot_all(100).unwrap(), ids.len() - 3);
    assert_eq!(s.pivot_pending().unwrap(), 0);

    let found = s.search(&text_query).unwrap();
    assert_eq!(found.ids, vec![ids[0], ids[2], ids[3], ids[4]]);
    assert_eq!(found.total.unwrap(), 4);
    // Prefix and multiple words, HTML stripped, diacritics kept as written.
    let q = |t: &str| {
        s.search(&SearchQuery {
            text: Some(t.into()),
            ..Default::default()
        })
        .unwrap()
        .ids
    };
    assert_eq!(q("lightweight PROC"), vec![ids[1]]);
    assert_eq!(q("édition"), vec![ids[6]]);
    assert_eq!(q("passi"), vec![ids[1]]);
    assert!(q("p ownership").is_empty()); // the <p> tag is not a word
    assert!(q("nonexistentword").is_empty());
    // Operators and quotes are just words.
    assert_eq!(q("rust\" OR \"erlang"), Vec::<ResourceId>::new());
    assert_eq!(q("' OR 1=1 --"), Vec::<ResourceId>::new());

    // An update is re-indexed.
    let r = s.resource(ids[1]).unwrap().unwrap();
    s.update_resource(
        ResourceUpdate::new(ids[1], r.version).merge(Props::new().with("title", "Elixir actors")),
    )
    .unwrap();
    assert_eq!(s.pivot_pending().unwrap(), 1);
    s.pivot_all(100).unwrap();
    assert_eq!(q("elixir"), vec![ids[1]]);
    assert!(q("erlang").is_empty());
    // A delete leaves the index.
    s.delete_resource(ids[4], None).unwrap();
    assert_eq!(q("rustconf"), Vec::<ResourceId>::new());
}

fn search_filters_combine_and_page(s: &Store) {
    let ids = search_fixture(s);
    s.pivot_all(100).unwrap();
    let base = SearchQuery {
        categories: vec!["text".into()],
        ..Default::default()
    };
    let all_text = s.search(&base).unwrap();
    assert_eq!(all_text.ids, vec![ids[0], ids[1], ids[2], ids[3], ids[6]]);
    let articles = s
        .search(&SearchQuery {
            categories: vec!["article".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(articles.ids, vec![ids[0], ids[1], ids[6]]);
    let published = s
        .search(&SearchQuery {
            published_only: true,
            text: Some("rust".into()),
            ..base.clone()
        })
        .unwrap();
    assert_eq!(published.ids, vec![ids[0], ids[2]]);
    let two_cats = s
        .search(&SearchQuery {
            categories: vec!["news".into(), "event".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(two_cats.ids, vec![ids[2], ids[3], ids[4]]);
    // Leaving a category out leaves out what is below it too.
    let text_but_news = s
        .search(&SearchQuery {
            exclude_categories: vec!["news".into()],
            ..base.clone()
        })
        .unwrap();
    assert_eq!(text_but_news.ids, vec![ids[0], ids[1], ids[6]]);
    let no_meta = s
        .search(&SearchQuery {
            exclude_categories: vec!["meta".into()],
            limit: 1000,
            ..Default::default()
        })
        .unwrap();
    assert!(
        no_meta.ids.iter().all(|&id| !s.is_a(id, "meta").unwrap()),
        "nothing in meta or below it is found"
    );
    assert!(no_meta.ids.contains(&ids[5]), "the rest still is");
    assert!(matches!(
        s.search(&SearchQuery {
            exclude_categories: vec!["nope".into()],
            ..Default::default()
        }),
        Err(StoreError::UnknownCategory(_))
    ));

    // Date range on the pivoted date_start, sorted by it, newest first.
    let dated = s
        .search(&SearchQuery {
            date_field: DateField::DateStart,
            date_from: Some(ts(2024, 2, 1)),
            date_to: Some(ts(2024, 5, 31)),
            sort: SortKey::DateStart,
            descending: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(dated.ids, vec![ids[6], ids[3], ids[2], ids[1]]);

    // Title sort is case-insensitive and identical on both backends.
    let by_title = s
        .search(&SearchQuery {
            sort: SortKey::Title,
            limit: 100,
            ..base.clone()
        })
        .unwrap();
    assert_eq!(by_title.ids, vec![ids[3], ids[1], ids[2], ids[0], ids[6]]);

    // Paging.
    let page = |offset, limit| {
        s.search(&SearchQuery {
            offset,
            limit,
            ..base.clone()
        })
        .unwrap()
    };
    let p1 = page(0, 2);
    let p2 = page(2, 2);
    let p3 = page(4, 2);
    assert_eq!(p1.total.unwrap(), 5);
    assert_eq!(p1.ids, vec![ids[0], ids[1]]);
    assert_eq!(p2.ids, vec![ids[2], ids[3]]);
    assert_eq!(p3.ids, vec![ids[6]]);
    let uncounted = s
        .search(&SearchQuery {
            count_total: false,
            limit: 2,
            ..base.clone()
        })
        .unwrap();
    assert_eq!(uncounted.ids, p1.ids);
    assert_eq!(uncounted.total, None);

    // Edge filter: has object X via predicate P.
    let ferris = ids[5];
    s.insert_edge(ids[0], "author", ferris, None).unwrap();
    s.insert_edge(ids[2], "author", ferris, None).unwrap();
    s.insert_edge(ids[1], "relation", ferris, None).unwrap();
    let by_ferris = s
        .search(&SearchQuery {
            has_object: Some(("author".into(), ferris)),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(by_ferris.ids, vec![ids[0], ids[2]]);
    let combined = s
        .search(&SearchQuery {
            has_object: Some(("author".into(), ferris)),
            categories: vec!["news".into()],
            text: Some("released".into()),
            published_only: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(combined.ids, vec![ids[2]]);

    assert!(matches!(
        s.search(&SearchQuery {
            categories: vec!["nope".into()],
            ..Default::default()
        }),
        Err(StoreError::UnknownCategory(_))
    ));
    assert!(matches!(
        s.search(&SearchQuery {
            has_object: Some(("nope".into(), ferris)),
            ..Default::default()
        }),
        Err(StoreError::UnknownPredicate(_))
    ));
}

fn config_values_round_trip(s: &Store) {
    assert_eq!(s.config_value("site.title").unwrap(), None);
    s.set_config_value("site.title", "My site").unwrap();
    s.set_config_value("site.title", "Renamed").unwrap();
    s.set_config_value("mod_seo.noindex", "true").unwrap();
    // A secret is read by its key, and never listed.
    s.set_config_value("secret.mod_x.key", "hush").unwrap();
    assert_eq!(
        s.config_value("secret.mod_x.key").unwrap().as_deref(),
        Some("hush")
    );
    assert_eq!(
        s.config_value("site.title").unwrap().as_deref(),
        Some("Renamed")
    );
    assert_eq!(
        s.config_values().unwrap(),
        vec![
            ("mod_seo.noindex".to_owned(), "true".to_owned()),
            ("site.title".to_owned(), "Renamed".to_owned())
        ]
    );
    s.delete_config_value("site.title").unwrap();
    assert_eq!(s.config_value("site.title").unwrap(), None);
    assert!(matches!(
        s.set_config_value("Bad Key", "x"),
        Err(StoreError::InvalidInput { .. })
    ));
}

fn change_events_name_dependency_keys_after_commit(s: &Store) {
    let mut rx = s.subscribe();
    let id = s.create_resource(article("x").named("evented")).unwrap();
    let k = rx.try_recv().expect("event after create").keys;
    for want in [
        dependency::resource(id),
        dependency::resource_name("evented"),
        dependency::category("article"),
        dependency::category("text"),
        dependency::search(),
    ] {
        assert!(k.contains(&want), "{want} missing in {k:?}");
    }
    assert!(!k.contains(&dependency::category("person")));

    let person = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    let _ = rx.try_recv().unwrap();
    s.insert_edge(id, "author", person, None).unwrap();
    let k = rx.try_recv().unwrap().keys;
    assert!(k.contains(&dependency::edges(id, "author")), "{k:?}");
    assert!(k.contains(&dependency::subjects(person, "author")), "{k:?}");

    // Moving a resource to another category touches both lineages.
    let r = s.resource(id).unwrap().unwrap();
    let mut up = ResourceUpdate::new(id, r.version);
    up.category = Some("event".into());
    s.update_resource(up).unwrap();
    let k = rx.try_recv().unwrap().keys;
    assert!(
        k.contains(&dependency::category("article")) && k.contains(&dependency::category("event")),
        "{k:?}"
    );
    assert!(k.contains(&dependency::revisions(id)));

    s.pivot_all(100).unwrap();
    let k = rx.try_recv().unwrap().keys;
    assert!(k.contains(&dependency::search()));
    assert!(k.contains(&dependency::category("event")), "{k:?}");

    s.set_config_value("a.b", "c").unwrap();
    assert_eq!(rx.try_recv().unwrap().keys, vec![dependency::config("a.b")]);

    s.delete_resource(person, None).unwrap();
    let k = rx.try_recv().unwrap().keys;
    assert!(k.contains(&dependency::resource(person)));
    assert!(k.contains(&dependency::edges(id, "author")), "{k:?}");
    assert!(rx.try_recv().is_err());
}

fn change_events_say_what_happened_to_which_resources(s: &Store) {
    let changed = |id, kind| vec![ResourceChange { id, kind }];
    let mut rx = s.subscribe();

    let id = s.create_resource(article("news")).unwrap();
    assert_eq!(
        rx.try_recv().unwrap().resources,
        changed(id, ChangeKind::Inserted)
    );

    let r = s.resource(id).unwrap().unwrap();
    s.update_resource(ResourceUpdate::new(id, r.version).merge(Props::new().with("title", "new")))
        .unwrap();
    assert_eq!(
        rx.try_recv().unwrap().resources,
        changed(id, ChangeKind::Updated)
    );

    // An edge belongs to its subject: inserting, moving or deleting one
    // updates the subject, not the object.
    let person = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    let _ = rx.try_recv().unwrap();
    s.insert_edge(id, "author", person, None).unwrap();
    assert_eq!(
        rx.try_recv().unwrap().resources,
        changed(id, ChangeKind::Updated)
    );
    s.move_edge(id, "author", person, 0).unwrap();
    assert_eq!(
        rx.try_recv().unwrap().resources,
        changed(id, ChangeKind::Updated)
    );

    // Deleting the object takes the edge along: the subject lost it.
    s.delete_resource(person, None).unwrap();
    assert_eq!(
        rx.try_recv().unwrap().resources,
        vec![
            ResourceChange {
                id,
                kind: ChangeKind::Updated
            },
            ResourceChange {
                id: person,
                kind: ChangeKind::Deleted
            },
        ]
    );

    // Settings are no resource: keys only.
    s.set_config_value("site.title", "x").unwrap();
    assert_eq!(rx.try_recv().unwrap().resources, vec![]);

    let stale = s.resource(id).unwrap().unwrap().version.0 - 1;
    assert!(matches!(
        s.update_resource(ResourceUpdate::new(id, Version(stale))),
        Err(StoreError::Conflict { .. })
    ));
    assert!(matches!(
        s.delete_resource(id, Some(Version(stale))),
        Err(StoreError::Conflict { .. })
    ));
    // The first insert had noted its change when the second one failed.
    assert!(
        s.create_resources(vec![
            article("rolled back"),
            NewResource::new("no_such_category", Props::new()),
        ])
        .is_err()
    );
    assert!(rx.try_recv().is_err(), "event for a rolled-back write");

    s.delete_resource(id, None).unwrap();
    assert_eq!(
        rx.try_recv().unwrap().resources,
        changed(id, ChangeKind::Deleted)
    );
    assert!(rx.try_recv().is_err());
}

fn failed_writes_emit_no_events_and_leave_nothing_behind(s: &Store) {
    s.pivot_all(100).unwrap();
    let before = s.search(&SearchQuery::default()).unwrap().total.unwrap();
    let mut rx = s.subscribe();
    // The third one is bad: the whole batch is refused.
    let err = s
        .create_resources(vec![
            article("ok 1"),
            article("ok 2"),
            NewResource::new("no_such_category", Props::new()),
        ])
        .unwrap_err();
    assert!(matches!(err, StoreError::UnknownCategory(_)));
    assert!(rx.try_recv().is_err(), "event for a rolled-back write");
    assert_eq!(
        s.search(&SearchQuery::default()).unwrap().total.unwrap(),
        before
    );
    assert_eq!(s.pivot_pending().unwrap(), 0);
}

fn reopening_runs_no_migration_twice(s: &Store) {
    let id = s.create_resource(article("persisted")).unwrap();
    let config = s.config().clone();
    let handle = tokio::runtime::Handle::current();
    let reopened = handle.block_on(Store::open(config)).unwrap();
    assert_eq!(
        reopened.resource(id).unwrap().unwrap().title(),
        Some("persisted")
    );
    assert_eq!(
        reopened.categories().unwrap().len(),
        s.categories().unwrap().len()
    );
    assert_eq!(schema_version(), 11);
    reopened.analyze().unwrap();
}

fn deleting_resources_cascades_and_refuses_categories_in_use(s: &Store) {
    s.create_category("podcast", Some("media"), "Podcast")
        .unwrap();
    let ep = s
        .create_resource(NewResource::new("podcast", Props::new()))
        .unwrap();
    let cat = s.category("podcast").unwrap().id;
    assert!(matches!(
        s.delete_resource(cat, None),
        Err(StoreError::InUse(_))
    ));
    let text = s.category("text").unwrap().id;
    assert!(matches!(
        s.delete_resource(text, None),
        Err(StoreError::InUse(_))
    ));
    s.delete_resource(ep, None).unwrap();
    s.delete_resource(cat, None).unwrap();
    assert!(matches!(
        s.category("podcast"),
        Err(StoreError::UnknownCategory(_))
    ));
    // The tree is still well formed.
    let cats = s.categories().unwrap();
    let mut numbers: Vec<i64> = cats.iter().flat_map(|c| [c.left, c.right]).collect();
    numbers.sort();
    assert_eq!(numbers, (1..=cats.len() as i64 * 2).collect::<Vec<_>>());
    // A category resource cannot be turned into something else.
    let r = s.resource(s.category("news").unwrap().id).unwrap().unwrap();
    let mut up = ResourceUpdate::new(r.id, r.version);
    up.category = Some("article".into());
    assert!(matches!(
        s.update_resource(up),
        Err(StoreError::InvalidInput { .. })
    ));
}

fn publication_window_and_visibility_are_kept(s: &Store) {
    let group = s
        .create_resource(NewResource::new("content_group", Props::new()).named("staff"))
        .unwrap();
    let mut n = article("windowed").published(true);
    n.publication_start = Some(ts(2020, 1, 1));
    n.publication_end = Some(ts(2030, 1, 1));
    n.visibility = Visibility::Group(group);
    let id = s.create_resource(n).unwrap();
    let r = s.resource(id).unwrap().unwrap();
    assert_eq!(r.publication_start, Some(ts(2020, 1, 1)));
    assert_eq!(r.publication_end, Some(ts(2030, 1, 1)));
    assert_eq!(r.visibility, Visibility::Group(group));
    assert!(r.is_visible_at(ts(2025, 1, 1)));
    assert!(!r.is_visible_at(ts(2031, 1, 1)));

    let mut future = article("future").published(true);
    future.publication_start = Some(ts(2999, 1, 1));
    let fid = s.create_resource(future).unwrap();
    let mut members = article("members").published(true);
    members.visibility = Visibility::Members;
    let mid = s.create_resource(members).unwrap();
    assert_eq!(
        s.resource(mid).unwrap().unwrap().visibility,
        Visibility::Members
    );
    let found = s
        .search(&SearchQuery {
            published_only: true,
            categories: vec!["article".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(found.ids, vec![id, mid]);
    assert!(!found.ids.contains(&fid));
    // Scheduled: published, its start still to come (what the dashboard lists).
    let scheduled = s
        .search(&SearchQuery {
            scheduled_only: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(scheduled.ids, vec![fid]);

    // Visibility filters: anonymous visitors see public resources published
    // now, members also members-only ones, group members also their group's,
    // and a creator also their own drafts.
    let author = s
        .create_resource(NewResource::new("person", Props::new()).published(true))
        .unwrap();
    let did = s
        .create_resource(article("draft").created_by(author))
        .unwrap();
    let pid = s
        .create_resource(article("public").published(true))
        .unwrap();
    let visible = |v: VisibilityFilter| {
        s.search(&SearchQuery {
            categories: vec!["article".into()],
            visibility: v,
            ..Default::default()
        })
        .unwrap()
        .ids
    };
    let member = |groups: Vec<ResourceId>, creator: Option<ResourceId>| {
        visible(VisibilityFilter::Visible {
            members: true,
            groups,
            creator,
            editable: vec![],
        })
    };
    // What one may change is found in any state: by content group, and by
    // category with everything below it.
    let editor = |content_group: ScopeGroup, categories: &[&str]| {
        visible(VisibilityFilter::Visible {
            members: true,
            groups: vec![],
            creator: None,
            editable: vec![EditableScope {
                content_group,
                categories: categories.iter().map(|c| c.to_string()).collect(),
            }],
        })
    };
    assert_eq!(visible(VisibilityFilter::public()), vec![pid]);
    assert_eq!(member(vec![], None), vec![mid, pid]);
    assert_eq!(member(vec![group], None), vec![id, mid, pid]);
    assert_eq!(member(vec![], Some(author)), vec![mid, did, pid]);
    // (`fid` is not published yet: only those who may change it find it.)
    assert_eq!(
        editor(ScopeGroup::Default, &["text"]),
        vec![fid, mid, did, pid]
    );
    assert_eq!(editor(ScopeGroup::Default, &["person"]), vec![mid, pid]);
    assert_eq!(editor(ScopeGroup::Group(group), &[]), vec![id, mid, pid]);
    assert_eq!(editor(ScopeGroup::Any, &[]), vec![id, fid, mid, did, pid]);
    assert_eq!(
        visible(VisibilityFilter::Everything),
        vec![id, fid, mid, did, pid]
    );

    let mut bad = article("bad window");
    bad.publication_start = Some(ts(2030, 1, 1));
    bad.publication_end = Some(ts(2020, 1, 1));
    assert!(matches!(
        s.create_resource(bad),
        Err(StoreError::InvalidInput { .. })
    ));
    let mut bad = article("bad group");
    bad.visibility = Visibility::Group(ResourceId(888_888));
    assert!(matches!(
        s.create_resource(bad),
        Err(StoreError::ResourceNotFound(_))
    ));
    // A group still referenced cannot be deleted.
    assert!(matches!(
        s.delete_resource(group, None),
        Err(StoreError::InUse(_))
    ));
}

/// Nested-set invariants after every change of a random sequence of creates
/// and moves (cycles are refused and change nothing).
fn random_category_tree_changes_keep_the_nested_set_well_formed(s: &Store) {
    let mut seed: u64 = 7;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let mut names: Vec<String> = s
        .categories()
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    for step in 0..40 {
        if step % 3 == 0 {
            let parent = names[next(names.len())].clone();
            let name = format!("cat_{step}");
            s.create_category(&name, Some(&parent), &name).unwrap();
            names.push(name);
        } else {
            let who = names[next(names.len())].clone();
            let to = if next(5) == 0 {
                None
            } else {
                Some(names[next(names.len())].clone())
            };
            let before = s.categories().unwrap();
            match s.move_category(&who, to.as_deref()) {
                Ok(()) => {}
                Err(StoreError::InvalidInput { .. }) => {
                    assert_eq!(
                        s.categories().unwrap(),
                        before,
                        "a refused move changed the tree"
                    );
                }
                Err(e) => panic!("move {who} -> {to:?}: {e}"),
            }
        }
        let cats = s.categories().unwrap();
        let mut numbers: Vec<i64> = cats.iter().flat_map(|c| [c.left, c.right]).collect();
        numbers.sort();
        assert_eq!(
            numbers,
            (1..=cats.len() as i64 * 2).collect::<Vec<_>>(),
            "step {step}"
        );
        for c in &cats {
            match c.parent {
                Some(p) => {
                    let parent = cats.iter().find(|x| x.id == p).unwrap();
                    assert!(
                        c.left > parent.left && c.right < parent.right,
                        "step {step}"
                    );
                    assert_eq!(c.depth, parent.depth + 1);
                }
                None => assert_eq!(c.depth, 0),
            }
        }
    }
}

fn deleted_resources_leave_a_tombstone(s: &Store) {
    let public = s
        .create_resource(article("Public").named("old_news").published(true))
        .unwrap();
    let private = s.create_resource(article("Draft")).unwrap();
    assert_eq!(s.deletion(&public.to_string()).unwrap(), None);
    assert_eq!(s.deletion("old_news").unwrap(), None);

    s.delete_resource(public, None).unwrap();
    s.delete_resource(private, None).unwrap();
    let gone = s.deletion(&public.to_string()).unwrap().expect("tombstone");
    assert_eq!(gone.id, public);
    assert_eq!(gone.name.as_deref(), Some("old_news"));
    assert_eq!(gone.category, "article");
    assert!(gone.was_public);
    assert_eq!(s.deletion("old_news").unwrap().map(|d| d.id), Some(public));
    let draft = s
        .deletion(&private.to_string())
        .unwrap()
        .expect("tombstone");
    assert!(!draft.was_public, "a draft was never public");

    // Ids are never handed out again; a name may be, and the live resource wins.
    let again = s
        .create_resource(article("Back").named("old_news"))
        .unwrap();
    assert!(again.0 > private.0, "{again} reuses an id");
    assert_eq!(s.resource_id("old_news").unwrap(), Some(again));
    // Never-existing ids, names and malformed keys have no tombstone.
    assert_eq!(s.deletion("999999").unwrap(), None);
    assert_eq!(s.deletion("no_such_name").unwrap(), None);
    assert_eq!(s.deletion("../etc").unwrap(), None);
}

fn translated_properties_are_kept_sanitised_and_searched_per_language(s: &Store) {
    s.pivot_all(100).unwrap();
    let props = Props::new()
        .with(
            "title",
            translated([("en", "Cycling to work"), ("nl", "Fietsen naar het werk")]),
        )
        .with(
            "body",
            translated([
                ("en", "<p>Bicycles <script>x()</script>everywhere</p>"),
                ("nl", "<p>Overal <b>fietsers</b></p>"),
            ]),
        )
        .with("summary", "Amsterdam");
    let id = s
        .create_resource(NewResource::new("article", props))
        .unwrap();
    let other = s.create_resource(article("Walking in Utrecht")).unwrap();
    s.pivot_all(100).unwrap();

    // Kept per language, each cleaned as the property's own (body is HTML).
    let r = s.resource(id).unwrap().unwrap();
    assert_eq!(
        r.props.text_in("title", &["nl"]),
        Some("Fietsen naar het werk")
    );
    assert_eq!(
        r.props.text_in("body", &["en"]),
        Some("<p>Bicycles everywhere</p>"),
        "a translation is sanitised"
    );
    assert_eq!(
        r.props.text_in("body", &["nl"]),
        Some("<p>Overal <b>fietsers</b></p>")
    );
    assert_eq!(
        r.props.text_in("summary", &["nl"]),
        Some("Amsterdam"),
        "plain in every language"
    );
    assert_eq!(r.props.translated_languages(), vec!["en", "nl"]);

    let search = |text: &str, language: Option<&str>| {
        s.search(&SearchQuery {
            text: Some(text.into()),
            language: language.map(str::to_owned),
            ..Default::default()
        })
        .unwrap()
        .ids
    };
    // A Dutch word in a Dutch search, stemmed ("fiets" finds "fietsen" and
    // "fietsers"); an English one in an English search ("bicycle" finds
    // "Bicycles", "cycles" finds "Cycling": both are "cycl").
    assert_eq!(search("fiets", Some("nl")), vec![id]);
    assert_eq!(search("fietser", Some("nl")), vec![id]);
    assert_eq!(search("bicycle", Some("en")), vec![id]);
    assert_eq!(search("cycles", Some("en")), vec![id]);
    assert_eq!(
        search("cycles", None),
        Vec::<ResourceId>::new(),
        "unstemmed"
    );
    // Not across languages: the English text is not Dutch.
    assert_eq!(search("bicycle", Some("nl")), Vec::<ResourceId>::new());
    assert_eq!(search("fietsen", Some("en")), Vec::<ResourceId>::new());
    // What every language shares is found in each.
    assert_eq!(search("amsterdam", Some("nl")), vec![id]);
    // A resource with no translation is found by its words in any language.
    assert_eq!(search("utrecht", Some("nl")), vec![other]);
    // Without a language: all the words, as they are written.
    assert_eq!(search("fietsen bicycles", None), vec![id]);

    // An edit re-indexes the language it changed; a delete leaves the index.
    let r = s.resource(id).unwrap().unwrap();
    s.update_resource(ResourceUpdate::new(id, r.version).merge(Props::new().with(
        "title",
        translated([("en", "Cycling to work"), ("nl", "Wandelen")]),
    )))
    .unwrap();
    s.pivot_all(100).unwrap();
    assert_eq!(search("wandel", Some("nl")), vec![id]);
    assert_eq!(search("naar", Some("nl")), Vec::<ResourceId>::new());
    // A merge of a translated value is per language: the others stay, ""
    // removes one.
    let r = s.resource(id).unwrap().unwrap();
    let r = s
        .update_resource(
            ResourceUpdate::new(id, r.version).merge(
                Props::new()
                    .with("title", json!({"trans": {"de": "Radfahren", "en": ""}}))
                    .with("summary", json!({"trans": {"nl": "Overal"}})),
            ),
        )
        .unwrap();
    assert_eq!(
        r.props.get("title"),
        Some(&json!({"trans": {"de": "Radfahren", "nl": "Wandelen"}}))
    );
    assert_eq!(
        r.props.get("summary"),
        Some(&json!({"trans": {"nl": "Overal"}})),
        "a plain value is replaced"
    );
    s.delete_resource(id, None).unwrap();
    assert_eq!(search("wandel", Some("nl")), Vec::<ResourceId>::new());

    // Language codes and published languages are checked.
    let bad = Props::new().with("title", json!({"trans": {"Dutch!": "x"}}));
    assert!(matches!(
        s.create_resource(NewResource::new("article", bad)),
        Err(StoreError::InvalidInput { field, .. }) if field == "title"
    ));
    let bad = Props::new().with("languages", json!(["en", 7]));
    assert!(matches!(
        s.create_resource(NewResource::new("article", bad)),
        Err(StoreError::InvalidInput { field, .. }) if field == "languages"
    ));
}
