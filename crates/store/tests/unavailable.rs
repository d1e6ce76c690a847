//! A database that cannot be reached says so, and every database failure
//! keeps the driver's error as its source.

use crate::common;

use std::error::Error;

use bulwark_store::{Store, StoreConfig, StoreError};

/// The driver's error somewhere in the chain below `err`.
fn driver_error<E: Error + 'static>(err: &StoreError) -> Option<&E> {
    let mut next = err.source();
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<E>() {
            return Some(found);
        }
        next = e.source();
    }
    None
}

#[tokio::test]
async fn opening_postgres_at_a_closed_port_says_the_database_is_unreachable() {
    let config = StoreConfig::postgres("postgres://bulwark:s3cret@127.0.0.1:1/x", None);
    let err = Store::open(config).await.unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    let message = err.to_string();
    for says in ["down or unreachable", "127.0.0.1:1", "\"x\"", "running"] {
        assert!(message.contains(says), "{says:?} missing in {message}");
    }
    assert!(
        !message.contains("s3cret"),
        "the password leaked: {message}"
    );
    assert!(driver_error::<sqlx::Error>(&err).is_some(), "{err:?}");
}

#[tokio::test]
async fn opening_a_postgres_database_that_does_not_exist_says_the_database_is_unreachable() {
    let url = common::pg_url();
    let (server, _) = url.rsplit_once('/').expect("a URL with a database");
    let config = StoreConfig::postgres(&format!("{server}/bulwark_no_such_database"), None);
    let err = Store::open(config).await.unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert!(
        err.to_string().contains("bulwark_no_such_database"),
        "{err}"
    );
}

#[tokio::test]
async fn opening_sqlite_where_no_file_can_be_made_keeps_the_driver_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no_such_dir").join("site.db");
    let err = Store::open(StoreConfig::sqlite(&path)).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(err.to_string().contains("no_such_dir"), "{err}");
    assert!(driver_error::<rusqlite::Error>(&err).is_some(), "{err:?}");
}
