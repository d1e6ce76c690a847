//! Passwords never reach the database in plain text: search every byte the
//! store wrote (SQLite files, a PostgreSQL dump) for the password.

mod common;

use bulwark_store::*;

const PASSWORD: &str = "Plaintext-Canary-7f3a9c";

fn set_password(s: &Store) {
    let u = s
        .create_resource(NewResource::new("person", Props::new()))
        .unwrap();
    s.set_username_password(u, "canary", PASSWORD).unwrap();
    assert_eq!(s.check_password("canary", PASSWORD).unwrap(), Some(u));
}

fn assert_absent(bytes: &[u8], what: &str) {
    assert!(
        !bytes
            .windows(PASSWORD.len())
            .any(|w| w == PASSWORD.as_bytes()),
        "password found in {what}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_files_hold_no_plaintext_password() {
    let db = common::sqlite().await;
    common::blocking(&db, set_password).await;
    let Database::Sqlite { path } = &db.config.database else {
        unreachable!()
    };
    let dir = path.parent().unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        assert_absent(&std::fs::read(&p).unwrap(), &p.display().to_string());
        checked += 1;
    }
    assert!(checked >= 2, "expected the database and its WAL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_dump_holds_no_plaintext_password() {
    let db = common::postgres("no_plaintext").await;
    common::blocking(&db, set_password).await;
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.sql");
    let d = dump.clone();
    db.store.run(move |s| s.backup(&d)).await.unwrap();
    let bytes = std::fs::read(&dump).unwrap();
    assert!(String::from_utf8_lossy(&bytes).contains("$argon2id$"));
    assert_absent(&bytes, "the dump");
}
