//! The tail of a combined lib URL (`css/base~site~/print~1700000000.css`), as the
//! lib controller hands it to `split_lib_path` once percent-decoded, then each
//! name through the same path checks the controller uses, on a real folder.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use bulwark_site::{relative_path_is_safe, resolve_inside, split_lib_path};
use libfuzzer_sys::fuzz_target;

/// `<tmp>/outside.css` and `<tmp>/lib/css/site.css`; the root is `<tmp>/lib`.
static ROOT: LazyLock<(tempfile::TempDir, PathBuf)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temporary folder");
    std::fs::create_dir_all(dir.path().join("lib/css")).expect("lib folder");
    std::fs::write(dir.path().join("outside.css"), "secret").expect("outside file");
    std::fs::write(dir.path().join("lib/css/site.css"), "a{}").expect("lib file");
    let root = dir
        .path()
        .join("lib")
        .canonicalize()
        .expect("canonical root");
    (dir, root)
});

fuzz_target!(|data: &[u8]| {
    let Ok(tail) = std::str::from_utf8(data) else {
        return;
    };
    let Some(names) = split_lib_path(tail) else {
        return;
    };
    assert!(
        !names.is_empty() && names.len() <= 64,
        "{} names",
        names.len()
    );
    let (_, ext) = tail
        .rsplit_once('.')
        .expect("a split path has an extension");
    let root = &ROOT.1;
    for name in &names {
        assert!(
            name.ends_with(&format!(".{ext}")),
            "{name:?} lost the type {ext:?}"
        );
        if relative_path_is_safe(name) {
            assert!(
                !name
                    .split('/')
                    .any(|s| s == ".." || s == "." || s.is_empty()),
                "{name:?} passed as safe"
            );
        }
        if let Some(found) = resolve_inside(root, name) {
            assert!(found.starts_with(root), "{name:?} resolved to {found:?}");
        }
    }
});
