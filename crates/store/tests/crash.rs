//! Crash safety: a process doing acknowledged writes is killed with SIGKILL;
//! after reopening, every acknowledged write is there and the database is
//! consistent. Both backends.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bulwark_store::*;

/// Run the child until it has acknowledged at least `min_acks` writes, kill
/// it, and return every line it printed (acknowledgements written before the
/// kill included).
fn run_and_kill(args: &[&str], min_acks: usize) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bulwark-store-crash-child"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start child");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while lines
        .iter()
        .filter(|l: &&String| l.starts_with("created"))
        .count()
        < min_acks
    {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(l) => lines.push(l),
            Err(_) if Instant::now() < deadline => {}
            Err(_) => panic!("child made no progress: {lines:?}"),
        }
    }
    // SIGKILL in the middle of the stream of writes.
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    lines
}

fn verify(store: &Store, lines: &[String]) {
    let mut created: HashMap<i64, i64> = HashMap::new();
    let mut versions: HashMap<i64, i64> = HashMap::new();
    for l in lines {
        let parts: Vec<&str> = l.split(' ').collect();
        match parts[0] {
            "created" => {
                created.insert(parts[1].parse().unwrap(), parts[2].parse().unwrap());
            }
            "updated" => {
                versions.insert(parts[1].parse().unwrap(), parts[2].parse().unwrap());
            }
            _ => {}
        }
    }
    assert!(!created.is_empty());
    for (id, seq) in &created {
        let r = store
            .resource(ResourceId(*id))
            .unwrap()
            .unwrap_or_else(|| panic!("acknowledged resource {id} lost"));
        assert_eq!(r.props.get("seq").and_then(|v| v.as_i64()), Some(*seq));
        if let Some(v) = versions.get(id) {
            assert!(r.version.0 >= *v, "acknowledged update of {id} lost");
            assert_eq!(r.props.get("updated"), Some(&serde_json::json!(true)));
        }
    }
    let problems = store.check_consistency().unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    // The database is writable and the pivot queue drains.
    store.pivot_all(500).unwrap();
    store
        .create_resource(NewResource::new("article", Props::new()))
        .unwrap();
    eprintln!(
        "{}: {} acknowledged creates, {} updates verified",
        store.backend_name(),
        created.len(),
        versions.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_every_acknowledged_write_after_sigkill() {
    let (config, _dir) = common::sqlite_config();
    let Database::Sqlite { path } = &config.database else {
        unreachable!()
    };
    let path = path.to_str().unwrap().to_owned();
    for round in 0..3 {
        let p = path.clone();
        let lines =
            tokio::task::spawn_blocking(move || run_and_kill(&["sqlite", &p], 50 + round * 50))
                .await
                .unwrap();
        let store = Store::open(config.clone()).await.unwrap();
        let s = store.clone();
        tokio::task::spawn_blocking(move || verify(&s, &lines))
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_every_acknowledged_write_after_sigkill() {
    let (config, schema) = common::pg_config("crash");
    let db = common::postgres_with(config.clone(), schema.clone()).await;
    let url = common::pg_url();
    for round in 0..2 {
        let (u, sc) = (url.clone(), schema.clone());
        let lines = tokio::task::spawn_blocking(move || {
            run_and_kill(&["postgres", &u, &sc], 50 + round * 50)
        })
        .await
        .unwrap();
        let store = Store::open(config.clone()).await.unwrap();
        let s = store.clone();
        tokio::task::spawn_blocking(move || verify(&s, &lines))
            .await
            .unwrap();
    }
    drop(db);
}
