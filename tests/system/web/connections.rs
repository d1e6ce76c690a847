//! A server that stops gives its database connections back: a site's
//! PostgreSQL pool closes with the server (and not when the process ends), so a
//! stopped or reloaded site holds none of the server's connection slots.

use crate::common;
use crate::databases;

use std::time::Duration;

use bulwark_testkit::eventually;
use common::*;

/// How many connections PostgreSQL has open for `schema`'s store.
async fn open_connections(schema: &str) -> i64 {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(&databases::pg_url())
        .await
        .expect("PostgreSQL is required; `source scripts/ensure-postgres.sh`");
    sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1")
        .bind(format!("bulwark/{schema}"))
        .fetch_one(&mut c)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_server_closes_its_sites_database_connections() {
    let schema = databases::pg_schema("connections");
    let site = format!(
        "hostname = \"news.test\"\ndefault = true\n\n[database]\nurl = \"{}\"\nschema = \"{schema}\"\n\n\
         [[dispatch]]\nname = \"home\"\npath = \"/\"\ncontroller = \"template\"\ntemplate = \"home.tpl\"\n",
        databases::pg_url()
    );
    let server = start(
        &[
            ("news/site.toml", site.as_str()),
            ("news/templates/home.tpl", "home"),
        ],
        |_| {},
    )
    .await;
    assert_eq!(get(server.addr, "news.test", "/").await.status, 200);
    assert!(
        open_connections(&schema).await >= 1,
        "the site is connected"
    );
    server.shutdown().await;
    eventually("no connection left", Duration::from_secs(10), || async {
        (open_connections(&schema).await == 0).then_some(())
    })
    .await;
    databases::drop_schema(&schema);
}
