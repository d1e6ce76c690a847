//! `bulwark import csv`, with the real binary on the starter site: columns
//! mapped onto properties, fields and edges (by name and by id); a dry run
//! that shows the rows and writes nothing; wrong cells named by line and
//! column with nothing written; a second import by key changing only what
//! changed.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::starter_site;
use rusqlite::Connection;
use serde_json::Value;

fn starter() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    starter_site(&dir.path().join("sites"));
    dir
}

fn bulwark(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .current_dir(dir)
        .env("BULWARK_ADMIN_PASSWORD", "csv-test-admin-password")
        .args(args)
        .output()
        .unwrap()
}

fn csv_import(dir: &Path, file: &str, more: &[&str]) -> Output {
    let mut args = vec![
        "import",
        "csv",
        "default",
        file,
        "--category",
        "article",
        "--map",
        "Name=title",
        "--map",
        "Writer=edge:author",
        "--map",
        "Internal=-",
        "--key",
        "sku",
    ];
    args.extend_from_slice(more);
    bulwark(dir, &args)
}

fn rows(db: &Connection) -> Vec<(String, bool, Value, Vec<String>)> {
    let mut q = db
        .prepare(
            "SELECT r.id, r.is_published, r.props FROM rsc r JOIN import_key k ON k.rsc_id = r.id \
             WHERE k.key LIKE 'csv:sku:A%' ORDER BY k.key",
        )
        .unwrap();
    let found: Vec<(i64, bool, String)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    found
        .into_iter()
        .map(|(id, published, props)| {
            let props: Value = serde_json::from_str(&props).unwrap();
            let mut authors: Vec<String> = db
                .prepare(
                    "SELECT o.props FROM edge e JOIN rsc p ON p.id = e.predicate_id \
                     JOIN rsc o ON o.id = e.object_id WHERE e.subject_id = ?1 AND p.name = 'author' \
                     ORDER BY e.seq",
                )
                .unwrap()
                .query_map([id], |r| r.get::<_, String>(0))
                .unwrap()
                .map(|p| {
                    let p: Value = serde_json::from_str(&p.unwrap()).unwrap();
                    p["title"].as_str().unwrap().to_owned()
                })
                .collect();
            authors.sort();
            (props["title"].as_str().unwrap().to_owned(), published, props, authors)
        })
        .collect()
}

#[test]
fn rows_become_resources_with_their_edges_and_a_second_import_changes_only_what_changed() {
    let dir = starter();
    let path = dir.path();
    // Two people to point at: one by unique name, one by id.
    let people = path.join("people.csv");
    std::fs::write(
        &people,
        "sku,Name,name\nP1,Wren Writer,wren\nP2,Quill Editor,quill\n",
    )
    .unwrap();
    let out = bulwark(
        path,
        &[
            "import",
            "csv",
            "default",
            people.to_str().unwrap(),
            "--category",
            "person",
            "--map",
            "Name=title",
            "--key",
            "sku",
            "--published",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = Connection::open(path.join("sites/default/data/site.db")).unwrap();
    let bo: i64 = db
        .query_row("SELECT id FROM rsc WHERE name = 'quill'", [], |r| r.get(0))
        .unwrap();

    let file = path.join("products.csv");
    std::fs::write(
        &file,
        format!(
            "sku,Name,price,Writer,published,Internal\n\
             A1,\"Anchor, heavy\",12.50,wren,yes,secret\n\
             A2,Rope,3,wren|{bo},no,secret\n"
        ),
    )
    .unwrap();
    let file = file.to_str().unwrap();

    // A dry run shows the rows as they would be stored, and writes nothing.
    let before: i64 = db
        .query_row("SELECT count(*) FROM rsc", [], |r| r.get(0))
        .unwrap();
    let dry = csv_import(path, file, &["--dry-run"]);
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let shown = String::from_utf8_lossy(&dry.stdout);
    assert!(shown.contains("2 rows, all well"), "{shown}");
    assert!(shown.contains("\"title\": \"Anchor, heavy\""), "{shown}");
    assert!(
        !shown.contains("secret"),
        "a column mapped to - is left out: {shown}"
    );
    let after: i64 = db
        .query_row("SELECT count(*) FROM rsc", [], |r| r.get(0))
        .unwrap();
    assert_eq!(after, before, "a dry run writes nothing");

    let out = csv_import(path, file, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = rows(&db);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, "Anchor, heavy");
    assert!(got[0].1, "published: yes");
    assert_eq!(got[0].2["price"], "12.50");
    assert_eq!(got[0].3, ["Wren Writer"]);
    assert_eq!(got[1].0, "Rope");
    assert!(!got[1].1, "published: no");
    assert_eq!(
        got[1].3,
        ["Quill Editor", "Wren Writer"],
        "by name and by id"
    );

    // The same file again: nothing changes. One cell changed: one row updated.
    let again = csv_import(path, file, &[]);
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(
        said.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["row", "0", "0", "2", "0"]),
        "{said}"
    );
    let changed = std::fs::read_to_string(file)
        .unwrap()
        .replace("12.50", "13.00");
    std::fs::write(file, changed).unwrap();
    let third = csv_import(path, file, &[]);
    let said = String::from_utf8_lossy(&third.stdout);
    assert!(
        said.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["row", "0", "1", "1", "0"]),
        "{said}"
    );
    assert_eq!(rows(&db)[0].2["price"], "13.00");
}

#[test]
fn wrong_cells_are_named_by_line_and_column_and_nothing_is_written() {
    let dir = starter();
    let path = dir.path();
    let file = path.join("bad.csv");
    std::fs::write(
        &file,
        "sku,Name,Writer,published,Internal\n\
         B1,Fine,,yes,\n\
         B2,Unknown writer,nobody,yes,\n\
         B3,Unsure,,maybe,\n",
    )
    .unwrap();
    // The site's database as it is before (made by a first look).
    assert!(bulwark(path, &["user", "list"]).status.success());
    let db = Connection::open(path.join("sites/default/data/site.db")).unwrap();
    let count = || -> i64 {
        db.query_row("SELECT count(*) FROM rsc", [], |r| r.get(0))
            .unwrap()
    };
    let before = count();
    let out = csv_import(path, file.to_str().unwrap(), &[]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("line 3, column \"Writer\": there is no resource named \"nobody\""),
        "{said}"
    );
    assert!(
        said.contains("line 4, column \"published\": \"maybe\": say true or false"),
        "{said}"
    );
    assert!(said.contains("nothing was written"), "{said}");
    assert_eq!(count(), before);

    // Rows of the wrong length are listed with every other wrong cell, each
    // with its line (not the first alone).
    std::fs::write(
        &file,
        "sku,Name,Writer,published,Internal\n\
         C1,One,,yes,\n\
         C2,Two,,yes,,extra\n\
         C3,Three,,maybe,\n\
         C4,Four\n",
    )
    .unwrap();
    let out = csv_import(path, file.to_str().unwrap(), &[]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("line 3, column \"#6\": the row has 6 cells, the header 5: 1 too many"),
        "{said}"
    );
    assert!(
        said.contains("line 4, column \"published\": \"maybe\""),
        "{said}"
    );
    assert!(
        said.contains("line 5, column \"Writer\": the row has 2 cells, the header 5: 3 missing"),
        "{said}"
    );
    assert!(said.contains("3 wrong cells"), "{said}");
    assert_eq!(count(), before);
}
