//! Test helper for the crash-safety test: writes resources as fast as it can
//! and prints one line per *acknowledged* (committed) write, until it is
//! killed. Not part of the product.
//!
//! Usage: `bulwark-store-crash-child sqlite PATH`
//!        `bulwark-store-crash-child postgres URL SCHEMA`

use std::io::Write;

use bulwark_store::{NewResource, Props, ResourceUpdate, Store, StoreConfig};

#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let config = match args.get(1).map(String::as_str) {
        Some("sqlite") => StoreConfig::sqlite(&args[2]),
        Some("postgres") => StoreConfig::postgres(&args[2], Some(&args[3])),
        _ => {
            eprintln!("usage: bulwark-store-crash-child sqlite PATH | postgres URL SCHEMA");
            std::process::exit(2);
        }
    };
    let store = Store::open(config).await.expect("open store");
    tokio::task::spawn_blocking(move || {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        writeln!(out, "ready").unwrap();
        out.flush().unwrap();
        let mut n: i64 = 0;
        loop {
            n += 1;
            let id = store
                .create_resource(NewResource::new(
                    "article",
                    Props::new()
                        .with("title", format!("crash {n}"))
                        .with("seq", n),
                ))
                .expect("create");
            // Printed only after the commit returned: an acknowledged write.
            writeln!(out, "created {} {n}", id.0).unwrap();
            out.flush().unwrap();
            let r = store.resource(id).unwrap().unwrap();
            let updated = store
                .update_resource(
                    ResourceUpdate::new(id, r.version).merge(Props::new().with("updated", true)),
                )
                .expect("update");
            writeln!(out, "updated {} {}", id.0, updated.version.0).unwrap();
            out.flush().unwrap();
        }
    })
    .await
    .unwrap();
}
