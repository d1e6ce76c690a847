//! Test databases: a fresh SQLite file in a temp dir, or a fresh PostgreSQL
//! schema named after the test (with a random suffix, so tests run in
//! parallel), dropped again when the test ends.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use bulwark_store::{Store, StoreConfig};

pub fn pg_url() -> String {
    std::env::var("BULWARK_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

pub fn unique_suffix() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let x = t
        ^ ((std::process::id() as u64) << 32)
        ^ N.fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!("{:x}", x & 0xffff_ffff_ffff)
}

pub struct TestDb {
    pub store: Store,
    pub config: StoreConfig,
    _dir: Option<tempfile::TempDir>,
    schema: Option<String>,
}

impl TestDb {
    pub fn new(
        store: Store,
        config: StoreConfig,
        dir: Option<tempfile::TempDir>,
        schema: Option<String>,
    ) -> Self {
        TestDb {
            store,
            config,
            _dir: dir,
            schema,
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(schema) = self.schema.take() {
            drop_schema(&schema);
        }
    }
}

pub fn drop_schema(schema: &str) {
    let url = pg_url();
    let schema = schema.to_owned();
    // Drop runs inside the test's runtime: use a thread with its own.
    let _ = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            use sqlx::Connection;
            if let Ok(mut c) = sqlx::PgConnection::connect(&url).await {
                let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                    "DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"
                )))
                .execute(&mut c)
                .await;
            }
        });
    })
    .join();
}

pub fn sqlite_config() -> (StoreConfig, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::sqlite(dir.path().join("site.db"));
    (config, dir)
}

pub fn pg_schema(test: &str) -> String {
    let mut name: String = test
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    name.truncate(40);
    format!("t_{name}_{}", unique_suffix())
}

pub fn pg_config(test: &str) -> (StoreConfig, String) {
    let schema = pg_schema(test);
    let config = StoreConfig::postgres(&pg_url(), Some(&schema));
    (config, schema)
}

pub async fn sqlite() -> TestDb {
    let (config, dir) = sqlite_config();
    let store = Store::open(config.clone())
        .await
        .expect("open SQLite store");
    TestDb {
        store,
        config,
        _dir: Some(dir),
        schema: None,
    }
}

/// Never skips: an unreachable PostgreSQL fails the test with a clear message.
pub async fn postgres(test: &str) -> TestDb {
    let (config, schema) = pg_config(test);
    postgres_with(config, schema).await
}

pub async fn postgres_with(config: StoreConfig, schema: String) -> TestDb {
    let store = match Store::open(config.clone()).await {
        Ok(s) => s,
        Err(e) => panic!(
            "PostgreSQL is required for this test and was not usable at {} ({e}). \
             Start it, or `source scripts/ensure-postgres.sh`, or set BULWARK_TEST_PG_URL.",
            pg_url()
        ),
    };
    TestDb {
        store,
        config,
        _dir: None,
        schema: Some(schema),
    }
}

/// Run a synchronous test body against a store on a blocking thread (where
/// the store's synchronous API belongs).
pub async fn blocking<F>(db: &TestDb, f: F)
where
    F: FnOnce(&Store) + Send + 'static,
{
    let s = db.store.clone();
    if let Err(e) = tokio::task::spawn_blocking(move || f(&s)).await {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Instantiate each listed `fn(&Store)` once per backend.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = $crate::databases::sqlite().await;
                    $crate::databases::blocking(&db, super::$name).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = $crate::databases::postgres(stringify!($name)).await;
                    $crate::databases::blocking(&db, super::$name).await;
                }
            )*
        }
    };
}

/// A well-formed argon2id PHC string: the store only keeps password hashes
/// (the accounts module makes and checks them), so any will do.
pub const PASSWORD_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$2L0mYyVwrE+1uyI1xZfW/pDnPGKmj2b1nI7oT0Uw0YI";
