//! Two servers pointed at one PostgreSQL schema without the `cluster`
//! module: the second refuses to start and says what to do; once the first
//! stopped cleanly, another starts at once.

use crate::common;
use common::{SIGTERM, free_port, pg_url, serve, signal, starter_site};

use std::path::{Path, PathBuf};
use std::process::Command;

/// A sites folder with the starter on `schema`.
fn node(root: &Path, name: &str, schema: &str) -> PathBuf {
    let dir = root.join(name);
    let toml = starter_site(&dir.join("sites"));
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "[database]\n",
        &format!(
            "[database]\nurl = \"{}\"\nschema = \"{schema}\"\n",
            pg_url()
        ),
    );
    std::fs::write(&toml, text).unwrap();
    dir
}

#[test]
fn a_second_server_on_one_schema_without_the_cluster_module_refuses_to_start() {
    let root = tempfile::tempdir().unwrap();
    let schema = format!("shared_{}", std::process::id());
    let a = node(root.path(), "a", &schema);
    let b = node(root.path(), "b", &schema);
    let first = serve(&a, free_port());

    let out = Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .current_dir(&b)
        .env("BULWARK_ADMIN_PASSWORD", "shared-test-admin-password")
        .args([
            "serve",
            "--access-log",
            "off",
            "--listen",
            &format!("127.0.0.1:{}", free_port()),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success(), "the second server must not serve");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("another Bulwark server uses this PostgreSQL schema")
            && said.contains("Run the `cluster` module on every server")
            && said.contains(
                &a.join("sites/default")
                    .canonicalize()
                    .unwrap()
                    .display()
                    .to_string()
            ),
        "{said}"
    );

    // Stopped cleanly, the first one leaves: the second starts at once.
    let mut first = first;
    signal(first.0.id(), SIGTERM);
    assert!(first.0.wait().unwrap().success());
    let _second = serve(&b, free_port());
}
