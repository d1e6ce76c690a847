//! Backups taken while a writer keeps writing are consistent snapshots, and
//! restore into an empty database only.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bulwark_store::*;
use bulwark_testkit::eventually_blocking;

/// Fill a store, start a writer hammering one resource (each update adds a
/// revision), take a backup in the middle, and return what was written.
fn backup_during_writes(s: &Store, dest: &std::path::Path) -> ResourceId {
    s.create_resources(
        (0..300)
            .map(|i| {
                NewResource::new(
                    "article",
                    Props::new().with("title", format!("backupdoc {i}")),
                )
            })
            .collect(),
    )
    .unwrap();
    let hot = s
        .create_resource(NewResource::new("article", Props::new().with("n", 0)))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let s = s.clone();
        let (stop, written) = (stop.clone(), written.clone());
        std::thread::spawn(move || {
            // Each update writes a new value (an update that changes
            // nothing writes nothing): version v holds n = v - 1.
            let mut n = 1;
            while !stop.load(Ordering::Relaxed) {
                let r = s.resource(hot).unwrap().unwrap();
                s.update_resource(
                    ResourceUpdate::new(hot, r.version).merge(Props::new().with("n", n)),
                )
                .unwrap();
                n += 1;
                written.store(n as u64, Ordering::Relaxed);
            }
        })
    };
    // The backup starts and ends while the writer writes.
    let written_more_than = |n: u64| {
        eventually_blocking("the writer wrote again", Duration::from_secs(10), || {
            (written.load(Ordering::Relaxed) > n).then_some(())
        })
    };
    written_more_than(0);
    s.backup(dest).unwrap();
    written_more_than(written.load(Ordering::Relaxed));
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    hot
}

/// The restored copy is internally consistent: the hot resource's revision
/// count matches its version exactly (no half-applied update).
fn verify_restored(restored: &Store, hot: ResourceId) {
    let problems = restored.check_consistency().unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    let r = restored.resource(hot).unwrap().unwrap();
    let revs = restored.revisions(hot).unwrap().len() as i64;
    assert_eq!(revs, r.version.0 - 1, "snapshot is not consistent");
    assert_eq!(
        r.props.get("n").and_then(|v| v.as_i64()),
        Some(r.version.0 - 1)
    );
    let total = restored
        .search(&SearchQuery::default())
        .unwrap()
        .total
        .unwrap();
    assert_eq!(total, 23 + 301);
    restored.pivot_all(500).unwrap();
    let found = restored
        .search(&SearchQuery {
            text: Some("backupdoc".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(found.total.unwrap(), 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_backup_while_writing_restores_consistently() {
    let db = common::sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("backup.db");
    let d = dest.clone();
    let s = db.store.clone();
    let hot = tokio::task::spawn_blocking(move || backup_during_writes(&s, &d))
        .await
        .unwrap();
    // Restoring over an existing database is refused.
    let err = Store::restore(&dest, db.config.clone()).await.unwrap_err();
    assert!(matches!(err, StoreError::Backup { .. }), "{err:?}");
    let mut target = db.config.clone();
    target.database = Database::Sqlite {
        path: dir.path().join("restored.db"),
    };
    let restored = Store::restore(&dest, target).await.unwrap();
    tokio::task::spawn_blocking(move || verify_restored(&restored, hot))
        .await
        .unwrap();
    // A second backup to the same file is refused, not overwritten.
    let s = db.store.clone();
    let err = tokio::task::spawn_blocking(move || s.backup(&dest))
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, StoreError::Backup { .. }));
}

async fn pg_admin(sql: String) {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(&common::pg_url())
        .await
        .unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&mut c)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_backup_while_writing_restores_consistently() {
    let db = common::postgres("backup").await;
    let Database::Postgres {
        schema: Some(schema),
        ..
    } = &db.config.database
    else {
        unreachable!()
    };
    let schema = schema.clone();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("backup.sql");
    let d = dest.clone();
    let s = db.store.clone();
    let hot = tokio::task::spawn_blocking(move || backup_during_writes(&s, &d))
        .await
        .unwrap();

    // Restoring over the live schema is refused.
    let err = Store::restore(&dest, db.config.clone()).await.unwrap_err();
    assert!(matches!(err, StoreError::Backup { .. }), "{err:?}");

    // Restore into a new, empty database.
    let dbname = format!("bulwark_restore_{}", common::unique_suffix());
    pg_admin(format!("CREATE DATABASE \"{dbname}\"")).await;
    let base = common::pg_url();
    let (prefix, _) = base.rsplit_once('/').unwrap();
    let url = format!("{prefix}/{dbname}");
    let target = StoreConfig::postgres(&url, Some(&schema));
    let result = async {
        let restored = Store::restore(&dest, target).await.unwrap();
        tokio::task::spawn_blocking(move || verify_restored(&restored, hot)).await
    }
    .await;
    pg_admin(format!("DROP DATABASE IF EXISTS \"{dbname}\" WITH (FORCE)")).await;
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }

    // Put back into the live schema while it serves: what was written after
    // the backup goes, and every cache hears that anything changed.
    let s = db.store.clone();
    let mut events = s.subscribe();
    let after = tokio::task::spawn_blocking(move || {
        let after = s
            .create_resource(NewResource::new(
                "article",
                Props::new().with("title", "after the backup"),
            ))
            .unwrap();
        s.restore_in_place(&dest).unwrap();
        (s, after)
    });
    let (s, after) = after.await.unwrap();
    let everything = async {
        loop {
            if events.recv().await.unwrap().everything {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), everything)
        .await
        .expect("an everything event");
    tokio::task::spawn_blocking(move || {
        assert!(
            s.resource(after).unwrap().is_none(),
            "written after the backup"
        );
        verify_restored(&s, hot);
        // New resources get new ids: the sequences went on from the restored ones.
        let next = s
            .create_resource(NewResource::new("article", Props::new()))
            .unwrap();
        assert!(next.0 > hot.0);
    })
    .await
    .unwrap();
}
