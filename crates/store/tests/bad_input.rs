//! Bad input gets a clear error and leaves nothing half-written; SQL
//! metacharacters are data in every string field.

use crate::common;

use bulwark_store::*;
use serde_json::json;

on_both_backends!(
    invalid_json_properties_are_refused,
    unknown_category_is_refused_and_nothing_is_written,
    edges_to_missing_resources_or_disallowed_categories_are_refused,
    over_long_values_are_refused,
    text_of_nested_tags_is_refused_before_it_is_parsed,
    sql_metacharacters_are_data_in_every_string_field,
);

/// Everything a failed write could have left behind.
fn footprint(s: &Store) -> (u64, u64, usize, usize) {
    (
        s.search(&SearchQuery::default()).unwrap().total.unwrap(),
        s.pivot_pending().unwrap(),
        s.categories().unwrap().len(),
        s.config_values().unwrap().len(),
    )
}

fn invalid_json_properties_are_refused(s: &Store) {
    for bad in [
        "{not json",
        "",
        "[1, 2]",
        "\"a string\"",
        "42",
        "{\"a\": }",
        "{\"a\": 1} trailing",
    ] {
        match Props::from_json(bad) {
            Err(StoreError::InvalidInput { field, .. }) => assert_eq!(field, "props"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    assert!(Props::try_from(json!([1])).is_err());
    let before = footprint(s);
    // Property names are restricted too: they end up in templates.
    for key in ["", "has space", "<script>", "a\"b", "x".repeat(65).as_str()] {
        let props = Props::try_from(json!({ key: "v" })).unwrap();
        let err = s
            .create_resource(NewResource::new("article", props))
            .unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidInput { .. }),
            "{key:?}: {err:?}"
        );
    }
    // Nesting is bounded.
    let mut deep = json!("x");
    for _ in 0..40 {
        deep = json!({ "k": deep });
    }
    let err = s
        .create_resource(NewResource::new(
            "article",
            Props::try_from(json!({ "d": deep })).unwrap(),
        ))
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");
    assert_eq!(footprint(s), before);
}

fn unknown_category_is_refused_and_nothing_is_written(s: &Store) {
    let before = footprint(s);
    let err = s
        .create_resource(NewResource::new("no_such_category", Props::new()))
        .unwrap_err();
    assert_eq!(err.to_string(), "unknown category \"no_such_category\"");
    let id = s
        .create_resource(NewResource::new("article", Props::new()))
        .unwrap();
    let r = s.resource(id).unwrap().unwrap();
    let mut up = ResourceUpdate::new(id, r.version).merge(Props::new().with("title", "changed"));
    up.category = Some("nope".into());
    assert!(matches!(
        s.update_resource(up),
        Err(StoreError::UnknownCategory(_))
    ));
    let after = s.resource(id).unwrap().unwrap();
    assert_eq!(after, r, "a failed update changed the resource");
    assert!(
        s.revisions(id).unwrap().is_empty(),
        "a failed update left a revision"
    );
    s.delete_resource(id, None).unwrap();
    s.pivot_all(100).unwrap();
    let (total, _, cats, cfg) = footprint(s);
    assert_eq!((total, cats, cfg), (before.0, before.2, before.3));
}

fn edges_to_missing_resources_or_disallowed_categories_are_refused(s: &Store) {
    let art = s
        .create_resource(NewResource::new("article", Props::new()))
        .unwrap();
    let person = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    let missing = ResourceId(424_242);
    let err = s.insert_edge(art, "author", missing, None).unwrap_err();
    assert_eq!(err.to_string(), "resource 424242 (object) not found");
    let err = s.insert_edge(missing, "author", person, None).unwrap_err();
    assert_eq!(err.to_string(), "resource 424242 (subject) not found");
    let err = s.insert_edge(person, "author", person, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "predicate \"author\" does not allow subject of category \"person\""
    );
    let err = s
        .insert_edge(art, "author", person, Some(missing))
        .unwrap_err();
    assert!(matches!(err, StoreError::ResourceNotFound(_)));
    assert!(s.edges(art).unwrap().is_empty());
    assert!(s.edges(person).unwrap().is_empty());
}

fn over_long_values_are_refused(s: &Store) {
    let before = footprint(s);
    let long_name = "a".repeat(81);
    let err = s
        .create_resource(NewResource::new("article", Props::new()).named(&long_name))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::InvalidInput { ref field, .. } if field == "name"),
        "{err:?}"
    );
    assert!(s.resource_by_name(&long_name).unwrap().is_none());
    let ok_name = "a".repeat(80);
    s.create_resource(NewResource::new("article", Props::new()).named(&ok_name))
        .unwrap();

    let huge = "x".repeat(600 * 1024);
    let err = s
        .create_resource(NewResource::new("article", Props::new().with("body", huge)))
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");
    // Many medium strings that add up past the document limit.
    let mut p = Props::new();
    for i in 0..5 {
        p = p.with(&format!("part{i}"), "y".repeat(300 * 1024));
    }
    let err = s
        .create_resource(NewResource::new("article", p))
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");

    let user = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    assert!(matches!(
        s.set_username_password_hash(user, &"u".repeat(81), common::PASSWORD_HASH),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(matches!(
        s.set_username_password_hash(user, "fine", &format!("$x$y${}", "h".repeat(600))),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(matches!(
        s.add_identity(
            user,
            IdentityKind::Email,
            &format!("{}@example.org", "e".repeat(250))
        ),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(matches!(
        s.set_config_value(&"k".repeat(121), "v"),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(matches!(
        s.set_config_value("k", &"v".repeat(64 * 1024 + 1)),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(matches!(
        s.create_category(&"c".repeat(81), None, "Long"),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(s.identities(user).unwrap().is_empty());
    let (_, _, cats, cfg) = footprint(s);
    assert_eq!((cats, cfg), (before.2, before.3));
}

const SQL_METACHARACTERS: &[&str] = &[
    "'; DROP TABLE rsc; --",
    "\"; DROP TABLE rsc; --",
    "' OR '1'='1",
    "1; DELETE FROM identity",
    "Robert'); DROP TABLE students;--",
    "%_%",
    "\\",
    "\\'",
    "$1",
    "?1",
    ":name",
    "@var",
    "`backtick`",
    "/* comment */",
    "-- comment",
    "';COMMIT;BEGIN;--",
    "E'\\x41'",
    "$$ dollar quoted $$",
    "NULL",
    "a\u{0}b",
    "ünïcødé ✓ 🦀",
    "MATCH \"x\" OR NEAR(a b)",
    "x:* & !y | z",
];

fn sql_metacharacters_are_data_in_every_string_field(s: &Store) {
    let user = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    for (i, m) in SQL_METACHARACTERS.iter().enumerate() {
        // Properties (text and nested).
        let id = s
            .create_resource(NewResource::new(
                "article",
                Props::try_from(json!({ "title": format!("t{i} {m}"), "meta": { "raw": m } }))
                    .unwrap(),
            ))
            .unwrap();
        let r = s.resource(id).unwrap().unwrap();
        assert!(r.title().unwrap().starts_with(&format!("t{i} ")), "{m:?}");

        // Names: refused by the format rules, never an SQL error.
        match s.create_resource(NewResource::new("article", Props::new()).named(m)) {
            Err(StoreError::InvalidInput { .. }) => {}
            other => panic!("name {m:?}: {other:?}"),
        }
        assert!(s.resource_by_name(m).unwrap().is_none());
        assert!(s.resource_id(m).unwrap().is_none());

        // Category, predicate, config key: clear errors.
        assert!(matches!(
            s.create_resource(NewResource::new(m, Props::new())),
            Err(StoreError::UnknownCategory(_))
        ));
        assert!(matches!(
            s.insert_edge(id, m, user, None),
            Err(StoreError::UnknownPredicate(_))
        ));
        assert!(matches!(
            s.set_config_value(m, "v"),
            Err(StoreError::InvalidInput { .. })
        ));

        // Config values are stored verbatim (NUL is refused: PostgreSQL
        // cannot store it in text, so neither backend accepts it).
        let key = format!("test.meta{i}");
        if m.contains('\0') {
            assert!(matches!(
                s.set_config_value(&key, m),
                Err(StoreError::InvalidInput { .. })
            ));
        } else {
            s.set_config_value(&key, m).unwrap();
            assert_eq!(s.config_value(&key).unwrap().as_deref(), Some(*m));
        }

        // Identities: usernames without spaces round trip; others are refused.
        match s.set_username_password_hash(user, m, common::PASSWORD_HASH) {
            Ok(ident) => {
                assert_eq!(ident.key, m.to_lowercase());
                assert_eq!(
                    s.password_hash(m).unwrap(),
                    Some((user, common::PASSWORD_HASH.to_owned()))
                );
            }
            Err(StoreError::InvalidInput { .. }) => {}
            Err(e) => panic!("username {m:?}: {e}"),
        }
        assert!(matches!(
            s.add_identity(user, IdentityKind::Email, m),
            Err(StoreError::InvalidInput { .. })
        ));
        assert!(s.find_identity(IdentityKind::Email, m).unwrap().is_none());

        // Search text and categories.
        s.search(&SearchQuery {
            text: Some(m.to_string()),
            ..Default::default()
        })
        .unwrap();
        assert!(matches!(
            s.search(&SearchQuery {
                categories: vec![m.to_string()],
                ..Default::default()
            }),
            Err(StoreError::UnknownCategory(_))
        ));
    }
    // Every table is still there and whole.
    s.pivot_all(100).unwrap();
    let problems = s.check_consistency().unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    let found = s
        .search(&SearchQuery {
            text: Some("DROP TABLE rsc".into()),
            limit: 100,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(found.total.unwrap(), 2);
    assert_eq!(s.categories().unwrap().len(), 17);
}

fn text_of_nested_tags_is_refused_before_it_is_parsed(s: &Store) {
    let before = footprint(s);
    // 400 KB of nested tags in a text property and in a URL: the parser that
    // drops markup from text would take seconds over it.
    for key in ["title", "website"] {
        let nested = "<b>".repeat(130_000);
        let err = s
            .create_resource(NewResource::new("article", Props::new().with(key, nested)))
            .unwrap_err();
        assert!(
            matches!(err, StoreError::HtmlTooComplex { ref field, .. } if field == key),
            "{key}: {err:?}"
        );
    }
    assert_eq!(footprint(s), before, "nothing written");
    // Text with a few tags and angle brackets is text as ever.
    let id = s
        .create_resource(NewResource::new(
            "article",
            Props::new().with("title", "<b>1 < 2</b> & 3 > 2"),
        ))
        .unwrap();
    let title = s
        .resource(id)
        .unwrap()
        .unwrap()
        .props
        .str("title")
        .unwrap()
        .to_owned();
    assert_eq!(title, "1 &lt; 2 &amp; 3 &gt; 2");
}
