//! The accounts module's own tables, sessions and second factors, on SQLite
//! and PostgreSQL; and a database made before the module owned them (by the
//! core store's migration 7 and as identity rows) keeps every row.

use crate::databases as common;

use bulwark_module_auth::second_factor::{self, SecondFactorCheck};
use bulwark_module_auth::second_factor_table as factors;
use bulwark_module_auth::session_table::{self as sessions, Session, session_key};
use bulwark_module_auth::totp::{TotpKey, unix_now};
use bulwark_store::{
    NewResource, Props, ResourceId, SqlParam, Store, StoreConfig, StoreError, dependency,
};
use chrono::{TimeZone, Utc};
use sha2::{Digest, Sha256};

on_both_backends!(
    sessions_are_stored_listed_and_ended,
    ending_a_session_names_its_key_in_the_change_event,
    second_factors_keep_their_shape_and_are_used_once,
);

/// The module's migrations, as a site that enables it runs them.
fn migrate(s: &Store) {
    bulwark_module_auth::migrate(s).unwrap();
}

fn person(s: &Store, title: &str) -> ResourceId {
    s.create_resource(NewResource::new(
        "person",
        Props::new().with("title", title),
    ))
    .unwrap()
}

fn sessions_are_stored_listed_and_ended(s: &Store) {
    migrate(s);
    let (ada, bob) = (person(s, "Ada"), person(s, "Bob"));
    let now = Utc.with_ymd_and_hms(2026, 11, 24, 12, 0, 0).unwrap();
    let session = |n: u8, who: ResourceId, persistent: bool| Session {
        id_hash: format!("{n:02x}").repeat(32),
        person: who,
        csrf_token: format!("csrf{n}"),
        created: now,
        last_seen: now,
        expires: now + chrono::Duration::days(30),
        persistent,
        user_agent: Some("Ua/1 ".repeat(100)),
        address: Some("127.0.0.1".into()),
    };
    for (n, who, persistent) in [(1, ada, false), (2, ada, true), (3, bob, false)] {
        sessions::create(s, &session(n, who, persistent), None).unwrap();
    }
    let one = sessions::find(s, &"01".repeat(32)).unwrap().unwrap();
    assert_eq!(one.person, ada);
    assert_eq!(one.csrf_token, "csrf1");
    assert_eq!(one.expires, now + chrono::Duration::days(30));
    assert_eq!(
        one.user_agent.unwrap().len(),
        256,
        "a long User-Agent is cut"
    );
    assert!(sessions::find(s, "not a hash").unwrap().is_none());
    assert!(matches!(
        sessions::create(
            s,
            &Session {
                id_hash: "short".into(),
                ..session(4, ada, false)
            },
            None
        ),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(matches!(
        sessions::create(s, &session(4, ResourceId(999_999), false), None),
        Err(StoreError::ResourceNotFound(_))
    ));
    assert_eq!(sessions::of_person(s, ada).unwrap().len(), 2);
    // Activity, then the sweep: the idle one without "keep me logged in" goes.
    sessions::touch(s, &"02".repeat(32), now + chrono::Duration::hours(2)).unwrap();
    let later = now + chrono::Duration::hours(2);
    let removed = sessions::delete_ended(
        s,
        later,
        later - chrono::Duration::hours(1),
        later - chrono::Duration::days(14),
    )
    .unwrap();
    assert_eq!(removed, 2, "the idle sessions of Ada and Bob");
    assert!(sessions::find(s, &"02".repeat(32)).unwrap().is_some());
    // A logon replaces the browser's earlier session in one transaction.
    sessions::create(s, &session(5, ada, false), Some(&"02".repeat(32))).unwrap();
    assert!(sessions::find(s, &"02".repeat(32)).unwrap().is_none());
    sessions::create(s, &session(7, ada, false), None).unwrap();
    let ended = sessions::delete_all_of(s, ada, Some(&"05".repeat(32))).unwrap();
    assert_eq!(ended, vec!["07".repeat(32)]);
    assert_eq!(sessions::of_person(s, ada).unwrap().len(), 1);
    assert!(sessions::delete(s, &"05".repeat(32)).unwrap());
    assert!(!sessions::delete(s, &"05".repeat(32)).unwrap());
    // A person's sessions go with them.
    sessions::create(s, &session(6, bob, false), None).unwrap();
    s.delete_resource(bob, None).unwrap();
    assert!(sessions::find(s, &"06".repeat(32)).unwrap().is_none());
}

fn ending_a_session_names_its_key_in_the_change_event(s: &Store) {
    migrate(s);
    let ada = person(s, "Ada");
    let now = Utc::now();
    let id_hash = "ab".repeat(32);
    sessions::create(
        s,
        &Session {
            id_hash: id_hash.clone(),
            person: ada,
            csrf_token: "csrf".into(),
            created: now,
            last_seen: now,
            expires: now + chrono::Duration::days(1),
            persistent: false,
            user_agent: None,
            address: None,
        },
        None,
    )
    .unwrap();
    let mut events = s.subscribe();
    assert!(sessions::delete(s, &id_hash).unwrap());
    let keys = events
        .try_recv()
        .expect("a change event for the ended session")
        .keys;
    assert!(keys.contains(&session_key(&id_hash)), "{keys:?}");
}

fn second_factors_keep_their_shape_and_are_used_once(s: &Store) {
    migrate(s);
    let (ann, bob) = (person(s, "Ann"), person(s, "Bob"));
    const SECRET: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
    const OTHER: &str = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    let hash = |n: u8| format!("{n:02x}").repeat(32);
    // Secrets and codes in plain text are refused.
    for bad in [
        "",
        "GEZDGNBVGY3TQOJQ",
        "gezdgnbvgy3tqojqgezdgnbvgy3tqojq",
        "GEZDGNBVGY3TQOJQ GEZDGNBVGY3TQOJ",
    ] {
        let err = factors::set_pending_totp_secret(s, ann, bad).unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidInput { .. }),
            "{bad:?}: {err:?}"
        );
    }
    let err = factors::activate_totp_secret(s, ann, SECRET, 1, &["0123-4567-89ab-cdef".to_owned()])
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");

    assert!(
        !factors::activate_totp_secret(s, ann, SECRET, 1, &[]).unwrap(),
        "nothing pending"
    );
    let mut events = s.subscribe();
    factors::set_pending_totp_secret(s, ann, OTHER).unwrap();
    let keys = events.try_recv().expect("a change event").keys;
    assert!(keys.contains(&dependency::identity(ann)), "{keys:?}");
    factors::set_pending_totp_secret(s, ann, SECRET).unwrap();
    assert_eq!(
        factors::pending_totp_secret(s, ann).unwrap().as_deref(),
        Some(SECRET)
    );
    assert_eq!(factors::totp_secret(s, ann).unwrap(), None);
    assert!(
        !factors::activate_totp_secret(s, ann, OTHER, 1, &[]).unwrap(),
        "replaced"
    );
    let codes = [hash(1), hash(2), hash(3)];
    assert!(factors::activate_totp_secret(s, ann, SECRET, 100, &codes).unwrap());
    assert!(
        !factors::activate_totp_secret(s, ann, SECRET, 100, &codes).unwrap(),
        "once"
    );
    assert_eq!(factors::pending_totp_secret(s, ann).unwrap(), None);
    let active = factors::totp_secret(s, ann).unwrap().unwrap();
    assert_eq!((active.secret.as_str(), active.last_step), (SECRET, 100));
    assert!(!format!("{active:?}").contains(SECRET));
    assert_eq!(factors::recovery_code_count(s, ann).unwrap(), 3);
    // A second factor is not a way to log on by itself: no identity row.
    assert!(s.identities(ann).unwrap().is_empty());

    // A step is accepted once, and only after the last one.
    assert!(!factors::advance_totp_step(s, ann, &active, 100).unwrap());
    assert!(factors::advance_totp_step(s, ann, &active, 101).unwrap());
    assert!(
        !factors::advance_totp_step(s, ann, &active, 102).unwrap(),
        "read before the 101"
    );
    assert_eq!(
        factors::totp_secret(s, ann).unwrap().unwrap().last_step,
        101
    );

    // Recovery codes: each once, only the person's own.
    assert_eq!(
        factors::use_recovery_code_hash(s, bob, &hash(1)).unwrap(),
        None
    );
    assert_eq!(
        factors::use_recovery_code_hash(s, ann, &hash(1)).unwrap(),
        Some(2)
    );
    assert_eq!(
        factors::use_recovery_code_hash(s, ann, &hash(1)).unwrap(),
        None
    );
    assert_eq!(
        factors::use_recovery_code_hash(s, ann, "not a hash").unwrap(),
        None
    );
    assert_eq!(factors::recovery_code_count(s, ann).unwrap(), 2);
    assert!(factors::replace_recovery_code_hashes(s, ann, &[hash(4)]).unwrap());
    assert_eq!(
        factors::use_recovery_code_hash(s, ann, &hash(2)).unwrap(),
        None
    );
    assert_eq!(
        factors::use_recovery_code_hash(s, ann, &hash(4)).unwrap(),
        Some(0)
    );
    assert!(
        !factors::replace_recovery_code_hashes(s, bob, &[hash(5)]).unwrap(),
        "no TOTP"
    );
    assert_eq!(factors::recovery_code_count(s, bob).unwrap(), 0);

    assert!(factors::remove_second_factor(s, ann).unwrap());
    assert!(!factors::remove_second_factor(s, ann).unwrap());
    assert_eq!(factors::totp_secret(s, ann).unwrap(), None);
    // They go with their person.
    factors::set_pending_totp_secret(s, bob, SECRET).unwrap();
    assert!(factors::activate_totp_secret(s, bob, SECRET, 7, &[hash(6)]).unwrap());
    s.delete_resource(bob, None).unwrap();
    assert_eq!(factors::totp_secret(s, bob).unwrap(), None);
    assert_eq!(factors::recovery_code_count(s, bob).unwrap(), 0);
}

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/before-auth-tables"
);

/// What the fixture's maker wrote down (`fixtures/before-auth-tables/*.toml`).
#[derive(serde::Deserialize)]
struct Made {
    session_token: String,
    ada: i64,
    bob: i64,
    ada_secret: String,
    ada_recovery_codes: Vec<String>,
    bob_pending_secret: String,
}

fn made(file: &str) -> Made {
    toml::from_str(&std::fs::read_to_string(format!("{FIXTURE}/{file}")).unwrap()).unwrap()
}

/// Opens the old database with today's code, as a site start does (the core's
/// migrations, then the module's), and checks every row made before.
fn keeps_everything(s: &Store, made: &Made) {
    let (ada, bob) = (ResourceId(made.ada), ResourceId(made.bob));
    migrate(s);

    // The session: found by its cookie token's hash, as it was.
    let id_hash = hex::encode(Sha256::digest(made.session_token.as_bytes()));
    let session = sessions::find(s, &id_hash)
        .unwrap()
        .expect("the session made before the move");
    assert_eq!(session.person, ada);
    assert_eq!(
        session.expires,
        Utc.with_ymd_and_hms(2036, 11, 25, 12, 0, 0).unwrap()
    );
    assert!(session.persistent);
    assert_eq!(session.user_agent.as_deref(), Some("Fixture/1.0"));

    // Ada's second factor: a code from her app and her recovery codes work.
    assert!(second_factor::has_second_factor(s, ada).unwrap());
    assert_eq!(factors::recovery_code_count(s, ada).unwrap(), 10);
    let now = unix_now();
    let code = TotpKey::from_base32(&made.ada_secret).unwrap().code_at(now);
    assert_eq!(
        second_factor::verify_second_factor_at(s, ada, &code, now).unwrap(),
        SecondFactorCheck::Accepted
    );
    assert_eq!(
        second_factor::verify_second_factor_at(s, ada, &made.ada_recovery_codes[3], now).unwrap(),
        SecondFactorCheck::AcceptedRecoveryCode { remaining: 9 }
    );
    // Bob's enrolment waits for its code still.
    assert_eq!(
        factors::pending_totp_secret(s, bob).unwrap().as_deref(),
        Some(made.bob_pending_secret.as_str())
    );
    assert!(!second_factor::has_second_factor(s, bob).unwrap());

    // The identity table holds ways to log on only; the passwords still work
    // there (the username and its hash).
    for person in [ada, bob] {
        let identities = s.identities(person).unwrap();
        assert_eq!(identities.len(), 1, "{identities:?}");
    }
    assert!(s.password_hash("ada").unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_made_before_the_move_keeps_its_sessions_and_second_factors_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(format!("{FIXTURE}/site.db"), dir.path().join("site.db")).unwrap();
    let store = Store::open(StoreConfig::sqlite(dir.path().join("site.db")))
        .await
        .unwrap();
    let made = made("sqlite.toml");
    tokio::task::spawn_blocking(move || keeps_everything(&store, &made))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_made_before_the_move_keeps_its_sessions_and_second_factors_on_postgres() {
    let schema = common::pg_schema("before_the_move");
    let dump = std::fs::read_to_string(format!("{FIXTURE}/postgres.sql"))
        .unwrap()
        .replace("auth_before_move", &schema);
    {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&common::pg_url())
            .await
            .expect("PostgreSQL is required for this test");
        sqlx::raw_sql(sqlx::AssertSqlSafe(dump))
            .execute(&mut c)
            .await
            .unwrap();
    }
    let config = StoreConfig::postgres(&common::pg_url(), Some(&schema));
    let db = common::postgres_with(config, schema).await;
    let made = made("postgres.toml");
    common::blocking(&db, move |s| keeps_everything(s, &made)).await;
}

/// After the move the module's ledger lists the tables it took over, so a
/// later start runs neither migration again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_module_ledger_records_the_tables_it_took_over() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(format!("{FIXTURE}/site.db"), dir.path().join("site.db")).unwrap();
    let store = Store::open(StoreConfig::sqlite(dir.path().join("site.db")))
        .await
        .unwrap();
    tokio::task::spawn_blocking(move || {
        migrate(&store);
        let versions: Vec<(i64, String)> = store
            .module_read(|sql| {
                Ok(sql
                    .query(
                        "SELECT version, name FROM module_migration WHERE module = $1 ORDER BY version",
                        &[SqlParam::from("auth")],
                    )?
                    .iter()
                    .map(|r| (r.int(0), r.text(1)))
                    .collect())
            })
            .unwrap();
        let names: Vec<&str> = versions.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "password_reset",
                "api_tokens",
                "sessions",
                "second_factor",
                "user_groups",
                "throttle",
                "unpublished_groups"
            ]
        );
    })
    .await
    .unwrap();
}
