//! Migrations a module brings (`Store::migrate_module`), on both backends.
//!
//! Each test migration also writes a config value, so what ran can be seen
//! through the store's API; and none uses `IF NOT EXISTS`, so running one
//! twice would fail.

use std::error::Error;

use bulwark_store::*;

on_both_backends!(
    module_migrations_apply_once_in_version_order,
    a_failing_module_migration_leaves_nothing_behind,
    modules_with_the_same_versions_do_not_collide,
    migration_lists_out_of_order_are_refused,
    nodes_migrating_at_once_apply_each_migration_once,
    a_modules_bytes_come_back_as_they_went_in,
);

const NOTES: &[Migration] = &[
    Migration {
        version: 1,
        name: "notes",
        sqlite: "CREATE TABLE notes_note (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
                 INSERT INTO config (key, value, modified) VALUES ('notes.v1', 'applied', 0);",
        postgres: "CREATE TABLE notes_note (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL);
                   INSERT INTO config (key, value, modified) VALUES ('notes.v1', 'applied', 0);",
    },
    portable(2, "author", ADD_AUTHOR),
];

const ADD_AUTHOR: &str = "ALTER TABLE notes_note ADD COLUMN author BIGINT;
    INSERT INTO config (key, value, modified) VALUES ('notes.v2', 'applied', 0);";

const NOTES_V10: Migration = portable(10, "pinned", PINNED);

const PINNED: &str = "ALTER TABLE notes_note ADD COLUMN pinned BOOLEAN;
    INSERT INTO config (key, value, modified) VALUES ('notes.v10', 'applied', 0);";

/// A migration with the same SQL on both backends.
const fn portable(version: i64, name: &'static str, sql: &'static str) -> Migration {
    Migration {
        version,
        name,
        sqlite: sql,
        postgres: sql,
    }
}

fn applied(s: &Store, marker: &str) -> bool {
    s.config_value(marker).unwrap().as_deref() == Some("applied")
}

fn module_migrations_apply_once_in_version_order(s: &Store) {
    s.migrate_module("notes", NOTES).unwrap();
    assert!(applied(s, "notes.v1") && applied(s, "notes.v2"));
    // Again: nothing runs (it would fail if it did).
    s.migrate_module("notes", NOTES).unwrap();
    // A later release adds a step: only that one runs.
    let mut newer = NOTES.to_vec();
    newer.push(NOTES_V10);
    s.migrate_module("notes", &newer).unwrap();
    assert!(applied(s, "notes.v10"));
    s.migrate_module("notes", &newer).unwrap();
}

const BROKEN_V1: Migration = portable(
    1,
    "mark",
    "INSERT INTO config (key, value, modified) VALUES ('broken.v1', 'applied', 0);",
);

fn a_failing_module_migration_leaves_nothing_behind(s: &Store) {
    let failing = Migration {
        version: 2,
        name: "tables",
        sqlite: "CREATE TABLE broken_thing (id BIGINT);
                 INSERT INTO config (key, value, modified) VALUES ('broken.v2', 'applied', 0);
                 INSERT INTO broken_no_such_table VALUES (1);",
        postgres: "CREATE TABLE broken_thing (id BIGINT);
                   INSERT INTO config (key, value, modified) VALUES ('broken.v2', 'applied', 0);
                   INSERT INTO broken_no_such_table VALUES (1);",
    };
    let err = s
        .migrate_module("broken", &[BROKEN_V1, failing])
        .unwrap_err();
    match &err {
        StoreError::Migration {
            module,
            version,
            name,
            ..
        } => assert_eq!((module.as_str(), *version, *name), ("broken", 2, "tables")),
        other => panic!("expected a migration error, got {other:?}"),
    }
    assert!(err.to_string().contains("0002_tables"), "{err}");
    assert!(
        err.source().and_then(|s| s.source()).is_some(),
        "the driver's error is kept: {err:?}"
    );
    // The step before it stays; the failed one left no table, no value and
    // no record, so its fixed version runs in full.
    assert!(applied(s, "broken.v1"));
    assert!(!applied(s, "broken.v2"));
    let fixed = Migration {
        sqlite: "CREATE TABLE broken_thing (id BIGINT);
                 INSERT INTO config (key, value, modified) VALUES ('broken.v2', 'applied', 0);",
        postgres: "CREATE TABLE broken_thing (id BIGINT);
                   INSERT INTO config (key, value, modified) VALUES ('broken.v2', 'applied', 0);",
        ..failing
    };
    s.migrate_module("broken", &[BROKEN_V1, fixed]).unwrap();
    assert!(applied(s, "broken.v2"));
}

fn modules_with_the_same_versions_do_not_collide(s: &Store) {
    let alpha = [
        portable(
            1,
            "mark",
            "INSERT INTO config (key, value, modified) VALUES ('alpha.v1', 'applied', 0);",
        ),
        portable(
            2,
            "mark",
            "INSERT INTO config (key, value, modified) VALUES ('alpha.v2', 'applied', 0);",
        ),
    ];
    let beta = [portable(
        1,
        "mark",
        "INSERT INTO config (key, value, modified) VALUES ('beta.v1', 'applied', 0);",
    )];
    s.migrate_module("alpha", &alpha).unwrap();
    s.migrate_module("beta", &beta).unwrap();
    s.migrate_module("alpha", &alpha).unwrap();
    s.migrate_module("beta", &beta).unwrap();
    assert!(applied(s, "alpha.v1") && applied(s, "alpha.v2") && applied(s, "beta.v1"));
}

fn migration_lists_out_of_order_are_refused(s: &Store) {
    let backwards = [NOTES[1], NOTES[0]];
    assert!(matches!(
        s.migrate_module("notes", &backwards),
        Err(StoreError::InvalidInput { .. })
    ));
    let twice = [NOTES[0], NOTES[0]];
    assert!(matches!(
        s.migrate_module("notes", &twice),
        Err(StoreError::InvalidInput { .. })
    ));
    // Refused before anything ran.
    assert!(!applied(s, "notes.v1"));
    assert!(matches!(
        s.migrate_module("Not A Module", NOTES),
        Err(StoreError::InvalidInput { .. })
    ));
    s.migrate_module("notes", NOTES).unwrap();
}

fn nodes_migrating_at_once_apply_each_migration_once(s: &Store) {
    let handle = tokio::runtime::Handle::current();
    let other_node = handle.block_on(Store::open(s.config().clone())).unwrap();
    let nodes = [s, &other_node, s, &other_node];
    std::thread::scope(|scope| {
        let runs: Vec<_> = nodes
            .iter()
            .map(|node| scope.spawn(move || node.migrate_module("notes", NOTES)))
            .collect();
        for run in runs {
            run.join().unwrap().unwrap();
        }
    });
    assert!(applied(s, "notes.v1") && applied(s, "notes.v2"));
}

/// Bytes (a BLOB in SQLite, a BYTEA in PostgreSQL) come back byte for byte,
/// with every value a byte can take and no text encoding in between.
fn a_modules_bytes_come_back_as_they_went_in(s: &Store) {
    s.migrate_module(
        "blobs",
        &[Migration {
            version: 1,
            name: "blobs",
            sqlite: "CREATE TABLE blobs_blob (id BIGINT PRIMARY KEY, bytes BLOB NOT NULL);",
            postgres: "CREATE TABLE blobs_blob (id BIGINT PRIMARY KEY, bytes BYTEA NOT NULL);",
        }],
    )
    .unwrap();
    let all: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
    let written = all.clone();
    s.module_write(move |sql| {
        sql.execute(
            "INSERT INTO blobs_blob (id, bytes) VALUES ($1, $2), ($3, $4)",
            &[
                1_i64.into(),
                written.into(),
                2_i64.into(),
                Vec::new().into(),
            ],
        )
    })
    .unwrap();
    let mut rows = s
        .module_read(|sql| sql.query("SELECT bytes FROM blobs_blob ORDER BY id", &[]))
        .unwrap();
    assert_eq!(rows[0].take_bytes(0), all);
    assert_eq!(rows[1].take_bytes(0), Vec::<u8>::new());
}
