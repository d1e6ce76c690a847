//! `bulwark import wordpress`: a real export, made by WordPress's own exporter
//! (modules/import/tests/fixtures/wordpress/make-fixture.sh), brought into the
//! starter site by the real binary; every part counted where it belongs in
//! the site's database, the old permalinks answering 301 and the pictures'
//! previews rendering over HTTP; a second import changing nothing; a file cut
//! in the middle failing with its position and leaving the site as it was.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{free_port, serve, starter_site};
use rusqlite::Connection;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../modules/import/tests/fixtures/wordpress")
}

/// A folder with the starter site, and nothing imported yet.
fn starter() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    starter_site(&dir.path().join("sites"));
    dir
}

/// `bulwark ARGS` run in `dir`, as these tests start it.
fn bulwark(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .current_dir(dir)
        .env("BULWARK_ADMIN_PASSWORD", "import-test-admin-password")
        .args(args)
        .output()
        .unwrap()
}

fn import(dir: &Path, file: &Path, more: &[&str]) -> Output {
    let file = file.to_str().unwrap();
    bulwark(
        dir,
        &[&["import", "wordpress", "default", file], more].concat(),
    )
}

/// The site as it is before any import (its database made by a first look).
fn before_any_import(dir: &Path) -> Vec<(String, i64)> {
    let out = bulwark(dir, &["user", "list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    state(&db(dir))
}

/// Imports `file` with the fixture's uploads; the report it wrote.
fn import_ok(dir: &Path, file: &Path) -> Value {
    import_with(dir, file, &[])
}

/// Imports `file` with the uploads beside it (the first fixture's for a
/// file made from it), and `more`; the report it wrote.
fn import_with(dir: &Path, file: &Path, more: &[&str]) -> Value {
    let beside = file.parent().map(|d| d.join("uploads"));
    let uploads = beside
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| fixture().join("uploads"));
    let report = dir.join("report.json");
    let mut args = vec![
        "--uploads",
        uploads.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    let out = import(dir, file, &args);
    assert!(
        out.status.success(),
        "the import failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap()
}

fn db(dir: &Path) -> Connection {
    Connection::open(dir.join("sites/default/data/site.db")).unwrap()
}

/// What the import made of WordPress item `wp_id`: its resource's
/// category, published flag, publication start and properties.
struct Imported {
    id: i64,
    category: String,
    published: bool,
    start: Option<i64>,
    created: i64,
    props: Value,
}

fn item(db: &Connection, name: &str) -> Imported {
    db.query_row(
        "SELECT r.id, c.name, r.is_published, r.publication_start, r.created, r.props \
         FROM rsc r JOIN rsc c ON c.id = r.category_id WHERE r.name = ?1",
        [name],
        |row| {
            Ok(Imported {
                id: row.get(0)?,
                category: row.get(1)?,
                published: row.get(2)?,
                start: row.get(3)?,
                created: row.get(4)?,
                props: serde_json::from_str(&row.get::<_, String>(5)?).unwrap(),
            })
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn count(db: &Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// The names of what `subject` points at with `predicate`, in order.
fn objects(db: &Connection, subject: i64, predicate: &str) -> Vec<String> {
    let mut q = db
        .prepare(
            "SELECT COALESCE(o.name, CAST(o.id AS TEXT)) FROM edge e JOIN rsc p ON p.id = e.predicate_id \
             JOIN rsc o ON o.id = e.object_id WHERE e.subject_id = ?1 AND p.name = ?2 ORDER BY e.seq",
        )
        .unwrap();
    q.query_map(rusqlite::params![subject, predicate], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Everything an import could have changed, to compare before and after.
fn state(db: &Connection) -> Vec<(String, i64)> {
    [
        "SELECT count(*) FROM rsc",
        "SELECT COALESCE(sum(version), 0) FROM rsc",
        "SELECT count(*) FROM edge",
        "SELECT count(*) FROM comment",
        "SELECT count(*) FROM redirect",
        "SELECT count(*) FROM revision",
        "SELECT count(*) FROM media_file",
    ]
    .iter()
    .map(|sql| (sql.to_string(), count(db, sql)))
    .collect()
}

fn counts(report: &Value, kind: &str) -> (u64, u64, u64, u64) {
    let c = &report["counts"][kind];
    let n = |k: &str| c[k].as_u64().unwrap_or(0);
    (n("imported"), n("updated"), n("unchanged"), n("skipped"))
}

#[test]
fn a_wordpress_export_lands_where_each_part_belongs_and_a_second_import_changes_nothing() {
    let dir = starter();
    let report = import_with(dir.path(), &fixture().join("export.xml"), &["--users"]);
    let db = db(dir.path());

    // Posts: eleven in the file (WordPress's own "Hello world!" among them), one in the trash.
    assert_eq!(counts(&report, "post"), (10, 0, 0, 1), "{report:#}");
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM rsc r JOIN rsc c ON c.id = r.category_id \
                    WHERE c.name = 'article' AND r.name LIKE 'wp\\_%' ESCAPE '\\'"
        ),
        10
    );
    assert!(item(&db, "wp_4").published, "published stays published");
    for (name, status) in [
        ("wp_11", "draft"),
        ("wp_12", "pending"),
        ("wp_13", "private"),
    ] {
        let post = item(&db, name);
        assert!(!post.published, "{status} is not published");
        assert_eq!(post.props["wordpress"]["status"], status);
    }
    let future = item(&db, "wp_14");
    assert!(future.published, "a future post is published...");
    assert_eq!(
        future.start,
        Some(1_925_020_800_000),
        "...from its date (2031-01-01 08:00 GMT)"
    );
    assert!(
        !item(&db, "wp_15").published,
        "behind a password: not published"
    );
    assert!(
        report["notes"].as_array().unwrap().iter().any(|n| n["item"]
            .as_str()
            .unwrap()
            .contains("Members only")
            && n["why"].as_str().unwrap().contains("password")),
        "the report says why: {report:#}"
    );
    assert_eq!(
        item(&db, "wp_10").props["featured"],
        true,
        "sticky is featured"
    );
    assert!(
        count(&db, "SELECT count(*) FROM rsc WHERE name = 'wp_16'") == 0,
        "the trash stays out"
    );
    assert_eq!(
        item(&db, "wp_4").created,
        1_714_550_400_000,
        "written when it was written (2024-05-01 10:00 in Amsterdam)"
    );

    // Titles and slugs beyond ASCII.
    let cyrillic = item(&db, "wp_9");
    assert_eq!(cyrillic.props["title"], "Привет, мир");
    // In English, the export's language: a Dutch translation gets its own.
    assert_eq!(
        cyrillic.props["slug"],
        serde_json::json!({"trans": {"en": "привет-мир"}})
    );
    assert_eq!(item(&db, "wp_8").props["title"], "Crème brûlée à Zürich");

    // Content: blocks without their comments, classic text with paragraphs,
    // shortcodes as figures, unknown ones kept and named, embeds as links.
    let blocks = item(&db, "wp_8").props["body"].as_str().unwrap().to_owned();
    assert!(!blocks.contains("wp:"), "{blocks}");
    assert!(
        blocks.contains("<h2") && blocks.contains("Where to eat"),
        "{blocks}"
    );
    assert!(
        blocks.contains("https://vimeo.com/76979871</a>"),
        "{blocks}"
    );
    let classic = item(&db, "wp_4").props["body"].as_str().unwrap().to_owned();
    assert!(
        classic.contains("<figcaption>Red, captioned</figcaption>"),
        "{classic}"
    );
    assert!(classic.contains("class=gallery"), "{classic}");
    assert!(classic.contains("<p>The first paragraph"), "{classic}");
    assert!(classic.contains("[contact-form-7 id="), "{classic}");
    assert!(!classic.contains("old.example.org/wp-content"), "{classic}");
    assert_eq!(report["unknown_shortcodes"]["contact-form-7"], 1);

    // Custom fields as properties, PHP's arrays decoded, WordPress's own left out.
    let fields = item(&db, "wp_4").props;
    assert_eq!(fields["mood"], "sunny");
    assert_eq!(
        fields["ratings"],
        serde_json::json!({"food": 4, "view": [5, "great"], "open": true})
    );
    assert!(fields.get("_internal_note").is_none() && fields.get("_pingme").is_none());
    assert_eq!(item(&db, "wp_22").props["phone"], "+31 20 123 4567");

    // Pages, nested and in their order.
    assert_eq!(counts(&report, "page"), (7, 0, 0, 0));
    assert_eq!(item(&db, "wp_18").category, "page");
    assert_eq!(
        objects(&db, item(&db, "wp_18").id, "subpage"),
        ["wp_21", "wp_19"],
        "About us: History (order 1), then The team (order 2)"
    );
    assert_eq!(objects(&db, item(&db, "wp_19").id, "subpage"), ["wp_20"]);

    // Authors, categories and tags, the featured image.
    assert_eq!(counts(&report, "person"), (2, 0, 0, 0));
    // Asked for, each author has an account: their login, their address, a
    // password nobody knows (they set theirs with a reset), an editor.
    assert_eq!(counts(&report, "user"), (2, 0, 0, 0));
    let bob = item(&db, "wp_author_2").id;
    let (hash, email): (String, String) = db
        .query_row(
            "SELECT u.secret, e.key FROM identity u JOIN identity e ON e.rsc_id = u.rsc_id \
             WHERE u.kind = 'username_pw' AND u.key = 'bob' AND e.kind = 'email' AND u.rsc_id = ?1",
            [bob],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert_eq!(email, "bob@example.org");
    let listed = bulwark(dir.path(), &["user", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("bob") && l.contains("authors") && !l.contains("editors")),
        "an author, not an editor: {listed}"
    );
    // What an author wrote is theirs (its creator), so the default rules
    // let them change it and nobody else's.
    let creator: Option<i64> = db
        .query_row("SELECT creator_id FROM rsc WHERE name = 'wp_8'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(creator, Some(bob));
    assert_eq!(item(&db, "wp_author_2").props["title"], "Bób Écrivain");
    assert_eq!(
        objects(&db, item(&db, "wp_8").id, "author"),
        ["wp_author_2"]
    );
    assert_eq!(counts(&report, "keyword"), (6, 0, 0, 0));
    let mut subjects = objects(&db, item(&db, "wp_4").id, "subject");
    subjects.sort();
    assert_eq!(
        subjects,
        ["wp_term_2", "wp_term_3", "wp_term_5", "wp_term_6"]
    );
    assert_eq!(
        objects(&db, item(&db, "wp_term_3").id, "broader"),
        ["wp_term_2"],
        "Local news is under News"
    );
    assert_eq!(item(&db, "wp_term_6").props["title"], "Ünïcode");
    assert_eq!(objects(&db, item(&db, "wp_8").id, "depiction"), ["wp_6"]);

    // Attachments: media with their files.
    assert_eq!(counts(&report, "attachment"), (2, 0, 0, 0));
    let red = item(&db, "wp_5");
    assert_eq!(red.category, "image");
    assert_eq!(red.props["alt"], "A red square");
    assert_eq!(red.props["width"], 400);
    assert_eq!(
        count(&db, "SELECT count(DISTINCT sha256) FROM media_file"),
        2
    );

    // Comments, threaded; the trash left out (WordPress's exporter leaves
    // spam out itself).
    assert_eq!(counts(&report, "comment"), (6, 0, 0, 1));
    let thread: Vec<(String, Option<String>, String)> = db
        .prepare(
            "SELECT c.body, p.body, c.status FROM comment c LEFT JOIN comment p ON p.id = c.parent_id \
             WHERE c.rsc_id = ?1 ORDER BY c.id",
        )
        .unwrap()
        .query_map([item(&db, "wp_4").id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        thread,
        [
            ("First! Lovely ships.".into(), None, "approved".into()),
            (
                "Thank you, One.".into(),
                Some("First! Lovely ships.".into()),
                "approved".into()
            ),
            (
                "A reply to the reply.".into(),
                Some("Thank you, One.".into()),
                "approved".into()
            ),
            ("Waiting in the queue.".into(), None, "pending".into()),
        ]
    );

    // The menu, as the menu module keeps it: the site's main menu now (the
    // starter's kept under another name, whole).
    let menu = item(&db, "menu_main").props["menu"].clone();
    let kept = item(&db, "menu_main_before_import").props;
    assert_eq!(kept["title"], "Main menu", "{kept}");
    assert_eq!(kept["menu"][0]["title"], "Home", "{kept}");
    let (about, team, news, harbour) = (
        item(&db, "wp_18").id,
        item(&db, "wp_19").id,
        item(&db, "wp_term_2").id,
        item(&db, "wp_4").id,
    );
    assert_eq!(
        menu,
        serde_json::json!([
            {"id": about, "children": [{"id": team}]},
            {"id": news},
            {"id": harbour, "title": "The harbour"},
            {"title": "Our shop", "url": "https://shop.example.org/"},
        ])
    );

    // Every old URL answers 301 to its new page; the pictures render.
    let port = free_port();
    let server = serve(dir.path(), port);
    let client = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let get = |path: &str| {
        client
            .get(format!("http://127.0.0.1:{port}{path}"))
            .header("Host", "localhost")
            .send()
            .unwrap()
    };
    for (old, new) in [
        ("/2024/05/hello-harbour/", harbour),
        ("/about/team/", team),
        ("/about/team/alice", item(&db, "wp_20").id),
        // As a browser sends it (capitals), though WordPress wrote small letters.
        (
            "/2024/05/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82-%D0%BC%D0%B8%D1%80/",
            cyrillic.id,
        ),
        ("/2024/05/hello-harbour/red-square/", red.id),
    ] {
        let answer = get(old);
        assert_eq!(answer.status(), 301, "{old}");
        assert_eq!(
            answer.headers()["location"],
            format!("/page/{new}").as_str(),
            "{old}"
        );
    }
    let preview = classic
        .split("src=")
        .nth(1)
        .and_then(|s| s.split([' ', '>']).next())
        .unwrap()
        .to_owned();
    assert!(preview.starts_with("/media/preview/"), "{preview}");
    let picture = get(&preview);
    assert_eq!(picture.status(), 200, "{preview}");
    assert_eq!(picture.headers()["content-type"], "image/jpeg");
    drop(server);

    // Again: nothing new, nothing changed.
    let before = state(&db);
    let again = import_with(dir.path(), &fixture().join("export.xml"), &["--users"]);
    for (kind, c) in again["counts"].as_object().unwrap() {
        assert_eq!(
            (c["imported"].as_u64(), c["updated"].as_u64()),
            (Some(0), Some(0)),
            "{kind} on the second import: {again:#}"
        );
    }
    assert_eq!(counts(&again, "post"), (0, 0, 10, 1));
    assert_eq!(state(&db), before);
}

#[test]
fn a_file_cut_in_the_middle_fails_with_its_position_and_leaves_the_site_as_it_was() {
    let dir = starter();
    let before = before_any_import(dir.path());

    let whole = std::fs::read_to_string(fixture().join("export.xml")).unwrap();
    let cut_at = whole.find("Привет, мир").unwrap();
    let cut = dir.path().join("cut.xml");
    std::fs::write(&cut, &whole[..cut_at]).unwrap();
    let line = whole[..cut_at].lines().count();
    let out = import(dir.path(), &cut, &[]);
    assert!(!out.status.success(), "a cut file is refused");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("line {line}, column")),
        "the error names where the file ends (line {line}): {said}"
    );
    assert!(said.contains("cut short"), "{said}");
    assert_eq!(state(&db(dir.path())), before, "nothing was written");
}

#[test]
fn an_import_that_stopped_half_way_continues_where_it_stopped() {
    let dir = starter();
    // The first half of the items, as a file that ends properly: what an
    // import that was stopped after it had written them leaves behind.
    let whole = std::fs::read_to_string(fixture().join("export.xml")).unwrap();
    let half = whole.find("<title><![CDATA[Crème brûlée").unwrap();
    let item_start = whole[..half].rfind("<item>").unwrap();
    let first = dir.path().join("first.xml");
    std::fs::write(
        &first,
        format!("{}</channel></rss>\n", &whole[..item_start]),
    )
    .unwrap();
    let report = import_ok(dir.path(), &first);
    let (first_posts, ..) = counts(&report, "post");
    assert!(first_posts > 0 && first_posts < 10, "{report:#}");

    let rest = import_ok(dir.path(), &fixture().join("export.xml"));
    let (imported, updated, unchanged, _) = counts(&rest, "post");
    assert_eq!((updated, unchanged), (0, first_posts), "{rest:#}");
    assert_eq!(imported + unchanged, 10);
    let db = db(dir.path());
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM rsc WHERE name LIKE 'wp\\_%' ESCAPE '\\'"
        ),
        10 + 7 + 2 + 2 + 6,
        "posts, pages, attachments, authors and keywords (named wp_term_, wp_author_), once each"
    );
}

#[test]
fn attachments_are_fetched_from_the_old_site_when_asked() {
    let dir = starter();
    let uploads = fixture().join("uploads");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // The old site: its uploads folder over HTTP, as a web server serves it.
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) <= 2 {
                    break;
                }
            }
            let path = line.split(' ').nth(1).unwrap_or("/");
            let file = path
                .strip_prefix("/wp-content/uploads/")
                .map(|p| uploads.join(p));
            let answer = match file.and_then(|f| std::fs::read(f).ok()) {
                Some(bytes) => [
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        bytes.len()
                    )
                    .into_bytes(),
                    bytes,
                ]
                .concat(),
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
            };
            let _ = stream.write_all(&answer);
        }
    });
    let moved = std::fs::read_to_string(fixture().join("export.xml"))
        .unwrap()
        .replace(
            "https://old.example.org/wp-content/uploads/",
            &format!("http://127.0.0.1:{port}/wp-content/uploads/"),
        );
    let file = dir.path().join("moved.xml");
    std::fs::write(&file, moved).unwrap();
    let report_file = dir.path().join("report.json");
    let out = import(
        dir.path(),
        &file,
        &["--fetch-media", "--report", report_file.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&std::fs::read(report_file).unwrap()).unwrap();
    assert_eq!(counts(&report, "attachment"), (2, 0, 0, 0), "{report:#}");
    let db = db(dir.path());
    assert_eq!(item(&db, "wp_6").props["mime"], "image/jpeg");
    assert_eq!(item(&db, "wp_6").props["width"], 640);
}

/// One more post for the fixture, in WordPress's own shape (`<item>` with
/// its postmeta), its custom field `fields`.
fn post_with_meta(id: u32, title: &str, key: &str, value: &str) -> String {
    item_of("post", id, title, "<p>Recipe.</p>", &[(key, value)])
}

/// An item of the export, of `kind` (`post`, `wp_block`), published, with
/// `content` and custom fields.
fn item_of(kind: &str, id: u32, title: &str, content: &str, meta: &[(&str, &str)]) -> String {
    let meta: String = meta
        .iter()
        .map(|(key, value)| {
            format!(
                "<wp:postmeta><wp:meta_key><![CDATA[{key}]]></wp:meta_key>\
                 <wp:meta_value><![CDATA[{value}]]></wp:meta_value></wp:postmeta>"
            )
        })
        .collect();
    format!(
        r#"<item>
		<title><![CDATA[{title}]]></title>
		<link>https://old.example.org/?p={id}</link>
		<pubDate>Mon, 06 May 2024 10:00:00 +0000</pubDate>
		<dc:creator><![CDATA[admin]]></dc:creator>
		<guid isPermaLink="false">https://old.example.org/?p={id}</guid>
		<description></description>
		<content:encoded><![CDATA[{content}]]></content:encoded>
		<excerpt:encoded><![CDATA[]]></excerpt:encoded>
		<wp:post_id>{id}</wp:post_id>
		<wp:post_date><![CDATA[2024-05-06 10:00:00]]></wp:post_date>
		<wp:post_date_gmt><![CDATA[2024-05-06 10:00:00]]></wp:post_date_gmt>
		<wp:post_name><![CDATA[post-{id}]]></wp:post_name>
		<wp:status><![CDATA[publish]]></wp:status>
		<wp:post_parent>0</wp:post_parent>
		<wp:menu_order>0</wp:menu_order>
		<wp:post_type><![CDATA[{kind}]]></wp:post_type>
		<wp:post_password><![CDATA[]]></wp:post_password>
		<wp:is_sticky>0</wp:is_sticky>
		{meta}
	</item>
"#
    )
}

/// The fixture with `items` added at the end of its channel.
fn fixture_with(dir: &Path, items: &[String]) -> PathBuf {
    let whole = std::fs::read_to_string(fixture().join("export.xml")).unwrap();
    let at = whole.rfind("</channel>").unwrap();
    let file = dir.join("more.xml");
    std::fs::write(
        &file,
        format!("{}{}{}", &whole[..at], items.concat(), &whole[at..]),
    )
    .unwrap();
    file
}

#[test]
fn a_custom_field_of_a_php_array_keeps_its_keys_in_any_language() {
    let dir = starter();
    // As WordPress serializes an array: lengths in bytes (ζάχαρη is 12).
    let recipe =
        r#"a:2:{s:12:"ζάχαρη";s:5:"200 g";s:5:"steps";a:2:{i:0;s:3:"mix";i:1;s:4:"bake";}}"#;
    let file = fixture_with(
        dir.path(),
        &[post_with_meta(
            9001,
            "Baklava<br>with honey &#8212; fresh",
            "ingredients",
            recipe,
        )],
    );
    import_ok(dir.path(), &file);
    let imported = item(&db(dir.path()), "wp_9001");
    assert_eq!(
        imported.props["ingredients"],
        serde_json::json!({"ζάχαρη": "200 g", "steps": ["mix", "bake"]}),
        "{}",
        imported.props
    );
    // A title's line break is a space, its entities decoded (and stored as text).
    assert_eq!(imported.props["title"], "Baklava with honey \u{2014} fresh");
}

#[test]
fn what_the_site_would_refuse_is_found_before_anything_is_written_and_named_by_item_and_field() {
    let dir = starter();
    let before = before_any_import(dir.path());
    // A key with a control character inside a field, and a field nested
    // deeper than the store keeps: two posts among the fixture's many.
    let control = "a:1:{s:2:\"a\u{7}\";i:1;}";
    let deep = format!("{}i:1;{}", "a:1:{i:0;".repeat(20), "}".repeat(20));
    let file = fixture_with(
        dir.path(),
        &[
            post_with_meta(9101, "Bell", "ring", control),
            post_with_meta(9102, "Deep", "layers", &deep),
        ],
    );
    let out = import(dir.path(), &file, &[]);
    assert!(!out.status.success(), "refused");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("2 items would be refused, so nothing was imported"),
        "{said}"
    );
    assert!(
        said.contains(r#"post 9101 "Bell""#) && said.contains("ring"),
        "{said}"
    );
    assert!(
        said.contains(r#"post 9102 "Deep": layers: nested too deeply"#),
        "{said}"
    );
    assert_eq!(state(&db(dir.path())), before, "nothing was written");
}

/// The text of `<tag>` in `xml` (its CDATA unwrapped), first found.
fn text_in<'a>(xml: &'a str, tag: &str) -> &'a str {
    let open = format!("<{tag}>");
    let Some(start) = xml.find(&open).map(|i| i + open.len()) else {
        return "";
    };
    let end = xml[start..]
        .find(&format!("</{tag}>"))
        .map_or(xml.len(), |e| start + e);
    let text = xml[start..end].trim();
    text.strip_prefix("<![CDATA[")
        .and_then(|t| t.strip_suffix("]]>"))
        .unwrap_or(text)
}

/// Each `<tag>...</tag>` of `xml`.
fn blocks<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    xml.split(open.as_str())
        .skip(1)
        .filter_map(|rest| rest.split(close.as_str()).next())
        .collect()
}

/// Every kind of address WordPress answered for the fixture's site, read
/// from the export itself (by id, as plain permalinks have them; category,
/// tag and author archives and their feeds; the site's feeds; date
/// archives; each attachment's file and every size WordPress made of it),
/// each with where it must go. The pretty permalinks are the first test's.
#[test]
fn every_kind_of_old_address_of_the_export_answers_one_301_to_its_new_home() {
    old_addresses_answer_301(&fixture());
}

/// The same for the blog fixture: pretty permalinks, nested categories,
/// non-ASCII tags, and a blog of three pages (`/page/2/`, `/page/3/`).
#[test]
fn every_kind_of_old_address_of_the_blog_answers_one_301_to_its_new_home() {
    old_addresses_answer_301(&blog_fixture());
}

/// Every kind of old address of the export in `fixture` (read from the
/// file, with the old site's address its own) answers one `301` to a page
/// that answers `200`.
fn old_addresses_answer_301(fixture: &Path) {
    let dir = starter();
    import_ok(dir.path(), &fixture.join("export.xml"));
    let db = db(dir.path());
    let xml = std::fs::read_to_string(fixture.join("export.xml")).unwrap();
    let old_site = text_in(&xml, "wp:base_site_url")
        .trim_end_matches('/')
        .to_owned();
    let mut published_posts: u32 = 0;
    let page = |name: &str| format!("/page/{}", item(&db, name).id);
    let mut table: Vec<(String, String)> = Vec::new();
    let mut months = std::collections::BTreeSet::new();
    for it in blocks(&xml, "item") {
        let (id, kind, status) = (
            text_in(it, "wp:post_id"),
            text_in(it, "wp:post_type"),
            text_in(it, "wp:status"),
        );
        // A post behind a password is imported unpublished: no page to go to.
        let status = match text_in(it, "wp:post_password") {
            "" => status,
            _ => "protected",
        };
        match (kind, status) {
            ("post", "publish") => {
                published_posts += 1;
                table.push((format!("/?p={id}"), page(&format!("wp_{id}"))));
                // Its comments' feed, under its permalink and by id.
                let post = item(&db, &format!("wp_{id}")).id;
                let permalink = text_in(it, "link").trim_start_matches(old_site.as_str());
                let comments = format!("/en/comments/feed/about/{post}");
                let feed = match permalink.contains('?') {
                    true => format!("/?p={id}&feed=rss2"),
                    false => format!("{}/feed/", permalink.trim_end_matches('/')),
                };
                table.push((feed, format!("{comments}/rss")));
                let date = text_in(it, "wp:post_date_gmt");
                months.insert((date[..4].to_owned(), date[5..7].to_owned()));
            }
            ("page", "publish") => {
                table.push((format!("/?page_id={id}"), page(&format!("wp_{id}"))));
                table.push((format!("/?p={id}"), page(&format!("wp_{id}"))));
            }
            ("attachment", _) => {
                let media = item(&db, &format!("wp_{id}")).id;
                table.push((format!("/?attachment_id={id}"), format!("/page/{media}")));
                let url = text_in(it, "wp:attachment_url");
                let path = url.trim_start_matches(old_site.as_str());
                table.push((path.to_owned(), format!("/media/file/{media}")));
                // Every size WordPress made: `s:4:"file";s:N:"name-WxH.ext"`.
                let folder = path.rsplit_once('/').unwrap().0;
                for size in it.split(r#"s:4:"file";"#).skip(2) {
                    let file = size.split('"').nth(1).unwrap();
                    table.push((format!("{folder}/{file}"), "/media/preview/".to_owned()));
                }
            }
            _ => {}
        }
    }
    for c in blocks(&xml, "wp:category") {
        let (id, slug, parent) = (
            text_in(c, "wp:term_id"),
            text_in(c, "wp:category_nicename"),
            text_in(c, "wp:category_parent"),
        );
        let keyword = item(&db, &format!("wp_term_{id}")).id;
        let path = match parent {
            "" => format!("/category/{slug}/"),
            parent => format!("/category/{parent}/{slug}/"),
        };
        table.push((path.clone(), format!("/page/{keyword}")));
        table.push((format!("/?cat={id}"), format!("/page/{keyword}")));
        table.push((
            format!("{path}feed/"),
            format!("/en/feed/about/{keyword}/rss"),
        ));
        table.push((
            format!("{path}feed/atom/"),
            format!("/en/feed/about/{keyword}"),
        ));
    }
    for t in blocks(&xml, "wp:tag") {
        let (id, slug) = (text_in(t, "wp:term_id"), text_in(t, "wp:tag_slug"));
        let keyword = item(&db, &format!("wp_term_{id}")).id;
        table.push((format!("/tag/{slug}/"), format!("/page/{keyword}")));
        table.push((format!("/?tag={slug}"), format!("/page/{keyword}")));
        table.push((
            format!("/tag/{slug}/feed/"),
            format!("/en/feed/about/{keyword}/rss"),
        ));
    }
    for a in blocks(&xml, "wp:author") {
        let (id, login) = (text_in(a, "wp:author_id"), text_in(a, "wp:author_login"));
        let person = item(&db, &format!("wp_author_{id}")).id;
        table.push((format!("/author/{login}/"), format!("/page/{person}")));
        table.push((format!("/?author={id}"), format!("/page/{person}")));
        table.push((
            format!("/author/{login}/feed/"),
            format!("/en/feed/about/{person}/rss"),
        ));
    }
    for (old, new) in [
        ("/feed/", "/en/feed/rss"),
        ("/feed/rss2/", "/en/feed/rss"),
        ("/feed/atom/", "/en/feed"),
        ("/?feed=rss2", "/en/feed/rss"),
        ("/?feed=atom", "/en/feed"),
        ("/comments/feed/", "/en/comments/feed/rss"),
        ("/comments/feed/atom/", "/en/comments/feed"),
        ("/?feed=comments-rss2", "/en/comments/feed/rss"),
    ] {
        table.push((old.to_owned(), new.to_owned()));
    }
    for (year, month) in &months {
        table.push((
            format!("/{year}/{month}/"),
            format!("/en/archive/{year}/{month}"),
        ));
        table.push((
            format!("/?m={year}{month}"),
            format!("/en/archive/{year}/{month}"),
        ));
        table.push((format!("/{year}/"), format!("/en/archive/{year}")));
    }
    for n in 2..=published_posts.div_ceil(10) {
        table.push((format!("/page/{n}/"), format!("/en/articles?page={n}")));
    }
    assert!(table.len() > 40, "the export has every kind: {table:?}");

    let port = free_port();
    let _server = serve(dir.path(), port);
    let client = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let get = |path: &str| {
        client
            .get(format!("http://127.0.0.1:{port}{path}"))
            .header("Host", "localhost")
            .send()
            .unwrap()
    };
    for (old, new) in &table {
        let moved = get(old);
        assert_eq!(moved.status(), 301, "{old}");
        let location = moved.headers()["location"].to_str().unwrap().to_owned();
        match new.ends_with('/') {
            true => assert!(
                location.starts_with(new.as_str()),
                "{old}: {location}, not {new}…"
            ),
            false => assert_eq!(&location, new, "{old}"),
        }
        // One move: the new address answers itself.
        let there = get(&location);
        assert_eq!(there.status(), 200, "{old} -> {location}");
    }
}

/// The server running the site while a command imports into it hears what
/// the import wrote (over its control socket, as the cluster's nodes hear
/// each other), so its sitemap, its cached pages and its redirects are right
/// at once, without a restart or a purge.
#[test]
fn a_running_server_hears_a_command_line_import_at_once() {
    let dir = starter();
    before_any_import(dir.path());
    let port = free_port();
    let _server = serve(dir.path(), port);
    let client = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let get = |path: &str| {
        client
            .get(format!("http://127.0.0.1:{port}{path}"))
            .header("Host", "localhost")
            .send()
            .unwrap()
    };
    let urls = |sitemap: &str| sitemap.matches("<loc>").count();
    let before = urls(&get("/sitemap.xml").text().unwrap());
    // Cached before the import: the list of articles, the old address's 404.
    let articles = get("/en/articles").text().unwrap();
    assert!(
        !articles.contains("Hello from the harbour"),
        "not imported yet"
    );
    assert_eq!(get("/2024/05/hello-harbour/").status(), 404);
    assert_eq!(get("/?p=4").status(), 302, "the front page, in a language");

    import_ok(dir.path(), &fixture().join("export.xml"));

    let sitemap = get("/sitemap.xml").text().unwrap();
    assert!(urls(&sitemap) > before + 10, "{before} before: {sitemap}");
    assert!(
        get("/en/articles")
            .text()
            .unwrap()
            .contains("Hello from the harbour"),
        "the cached list of articles was rendered again"
    );
    for old in ["/2024/05/hello-harbour/", "/?p=4", "/feed/"] {
        assert_eq!(get(old).status(), 301, "{old}: the new redirects are read");
    }
}

/// What bloggers' posts hold besides text: a reusable block, a map and a
/// video in frames, a script, a field given twice, links to the old site's
/// pages and files. Each arrives (a block in place, frames as the site's
/// embeds, both values, links made local), and what cannot is named in
/// the report by its post.
#[test]
fn blocks_frames_repeated_fields_and_old_links_arrive_and_what_cannot_is_reported() {
    let dir = starter();
    let block = item_of(
        "wp_block",
        9100,
        "Sign-off",
        "<!-- wp:paragraph --><p>Fair winds, the crew.</p><!-- /wp:paragraph -->",
        &[],
    );
    let unused = item_of("wp_block", 9101, "Old banner", "<p>Never used</p>", &[]);
    let content = r#"<!-- wp:paragraph --><p>See <a href="https://old.example.org/2024/05/hello-harbour/">the harbour</a> and <a href="https://old.example.org/wp-content/uploads/2024/05/red-square.png">the square</a>.</p><!-- /wp:paragraph -->
<!-- wp:html --><iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ" title="Our boat"></iframe><!-- /wp:html -->
<!-- wp:html --><script>track()</script><!-- /wp:html -->
<!-- wp:block {"ref":9100} /-->
<!-- wp:block {"ref":9199} /-->"#;
    let post = item_of(
        "post",
        9002,
        "Everything at once",
        content,
        &[("mood", "calm"), ("mood", "windy")],
    );
    let file = fixture_with(dir.path(), &[block, unused, post]);
    let report = import_ok(dir.path(), &file);
    let db = db(dir.path());
    let imported = item(&db, "wp_9002");
    assert_eq!(imported.props["mood"], serde_json::json!(["calm", "windy"]));
    let body = imported.props["body"].as_str().unwrap();
    let square = item(&db, "wp_5").id;
    // As the store writes a body back (values unquoted where they may be).
    for expected in [
        "<p>Fair winds, the crew.</p>".to_owned(),
        "<a href=/2024/05/hello-harbour/ ".to_owned(),
        format!("<a href=/media/file/{square} "),
        "<figure class=embed><a href=https://www.youtube.com/watch?v&#61;dQw4w9WgXcQ ".to_owned(),
        ">Our boat</a></figure>".to_owned(),
    ] {
        assert!(body.contains(&expected), "{expected}\nin\n{body}");
    }
    assert!(!body.contains("track()"), "{body}");
    assert!(
        db.query_row("SELECT count(*) FROM rsc WHERE name = 'wp_9100'", [], |r| r
            .get::<_, i64>(0))
            .unwrap()
            == 0,
        "a reusable block is no resource of its own"
    );
    let notes = report["notes"].to_string();
    for said in [
        "it uses reusable block 9199, which is not in the export",
        "its <script> left out",
        "reusable block 9101",
    ] {
        assert!(notes.contains(said), "{said:?} in {notes}");
    }
}

/// The second fixture: a blog as bloggers have them, made by WordPress's own
/// exporter (`fixtures/wordpress-blog/make-fixture.sh`).
fn blog_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../modules/import/tests/fixtures/wordpress-blog")
}

/// A title as WordPress's export has it, as a person reads it: entities
/// decoded, a line break a space.
fn read_as_text(html: &str) -> String {
    let text = html.replace("<br>", " ").replace("<br />", " ");
    let text = bulwark_store::html_to_plain(&text);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every item of the blog fixture, read from the file, checked where it
/// belongs: each post and page with its status, title, author, categories
/// and tags, custom fields (repeated ones, PHP arrays with Greek keys, a
/// podcast's enclosure) and comments; each attachment; the reusable block in
/// the posts that use it; each frame and embed as the site's embed; the menu.
#[test]
fn the_blog_fixture_arrives_whole_item_by_item() {
    let dir = starter();
    let xml = std::fs::read_to_string(blog_fixture().join("export.xml")).unwrap();
    let report = import_with(dir.path(), &blog_fixture().join("export.xml"), &["--users"]);
    let db = db(dir.path());
    let authors: std::collections::HashMap<String, String> = blocks(&xml, "wp:author")
        .iter()
        .map(|a| {
            (
                text_in(a, "wp:author_login").to_owned(),
                format!("wp_author_{}", text_in(a, "wp:author_id")),
            )
        })
        .collect();
    let terms: std::collections::HashMap<String, String> = blocks(&xml, "wp:category")
        .iter()
        .map(|c| {
            (
                format!("category/{}", text_in(c, "wp:category_nicename")),
                text_in(c, "wp:term_id"),
            )
        })
        .chain(blocks(&xml, "wp:tag").iter().map(|t| {
            (
                format!("post_tag/{}", text_in(t, "wp:tag_slug")),
                text_in(t, "wp:term_id"),
            )
        }))
        .map(|(k, id)| (k, format!("wp_term_{id}")))
        .collect();
    let reusable: std::collections::HashMap<String, String> = blocks(&xml, "item")
        .iter()
        .filter(|it| text_in(it, "wp:post_type") == "wp_block")
        .map(|it| {
            (
                text_in(it, "wp:post_id").to_owned(),
                read_as_text(text_in(it, "content:encoded")),
            )
        })
        .collect();
    let (mut posts, mut attachments, mut menu_items) = (0, 0, 0);
    for it in blocks(&xml, "item") {
        let (id, kind, status) = (
            text_in(it, "wp:post_id"),
            text_in(it, "wp:post_type"),
            text_in(it, "wp:status"),
        );
        let name = format!("wp_{id}");
        match kind {
            "post" | "page" => {
                posts += 1;
                let got = item(&db, &name);
                assert_eq!(
                    got.category,
                    if kind == "post" { "article" } else { "page" },
                    "{name}"
                );
                match status {
                    "publish" => assert!(got.published && got.start.is_none(), "{name} published"),
                    "future" => assert!(
                        got.published && got.start.is_some_and(|s| s > got.created - 1),
                        "{name} published from its date"
                    ),
                    _ => assert!(!got.published, "{name} ({status}) unpublished"),
                }
                let title = got.props["title"].as_str().unwrap_or("");
                assert_eq!(
                    bulwark_store::html_to_plain(title),
                    read_as_text(text_in(it, "title")),
                    "{name}'s title"
                );
                if let Some(author) = authors.get(text_in(it, "dc:creator")) {
                    assert_eq!(
                        objects(&db, got.id, "author"),
                        [author.as_str()],
                        "{name}'s author"
                    );
                }
                let mut expected: Vec<String> = it
                    .split("<category domain=\"")
                    .skip(1)
                    .filter_map(|c| {
                        let domain = c.split('"').next()?;
                        let nicename = c.split("nicename=\"").nth(1)?.split('"').next()?;
                        terms.get(&format!("{domain}/{nicename}")).cloned()
                    })
                    .collect();
                let mut subjects = objects(&db, got.id, "subject");
                expected.sort();
                subjects.sort();
                assert_eq!(subjects, expected, "{name}'s categories and tags");
                // Custom fields: every one of no underscore, each value.
                let mut fields: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
                for m in blocks(it, "wp:postmeta") {
                    let key = text_in(m, "wp:meta_key");
                    if !key.starts_with('_') {
                        fields
                            .entry(key)
                            .or_default()
                            .push(text_in(m, "wp:meta_value"));
                    }
                }
                for (key, values) in &fields {
                    let prop = &got.props[*key];
                    match (*key, values.as_slice()) {
                        ("enclosure", [value]) => {
                            let url = value.lines().next().unwrap();
                            assert_eq!(prop["url"], url, "{name}'s enclosure");
                            assert_eq!(prop["type"], value.lines().nth(2).unwrap());
                        }
                        (_, [value]) if value.starts_with("a:") => {
                            assert!(prop.is_object(), "{name}.{key}: a PHP array: {prop}");
                        }
                        (_, [value]) => assert_eq!(prop, value, "{name}.{key}"),
                        (_, values) => {
                            assert_eq!(prop, &serde_json::json!(values), "{name}.{key} given twice")
                        }
                    }
                }
                // The reusable blocks it uses, in place.
                let body = got.props["body"].as_str().unwrap_or("");
                for (block, text) in &reusable {
                    if text_in(it, "content:encoded").contains(&format!("{{\"ref\":{block}}}")) {
                        assert!(
                            read_as_text(body).contains(text.as_str()),
                            "{name} holds block {block}: {body}"
                        );
                    }
                }
                let content = text_in(it, "content:encoded");
                let frames =
                    content.matches("<iframe").count() + content.matches("<!-- wp:embed").count();
                assert_eq!(
                    body.matches("<figure class=embed>").count(),
                    frames,
                    "{name}'s embeds: {body}"
                );
                assert!(
                    !body.contains("blog.example.net/20"),
                    "{name}'s links are local: {body}"
                );
                // Its comments, each kept with its status (the export holds no spam).
                let comments = blocks(it, "wp:comment");
                let kept: i64 = db
                    .query_row(
                        "SELECT count(*) FROM comment WHERE rsc_id = ?1",
                        [got.id],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(kept, comments.len() as i64, "{name}'s comments");
            }
            "wp_block" => assert!(
                db.query_row("SELECT count(*) FROM rsc WHERE name = ?1", [&name], |r| r
                    .get::<_, i64>(
                    0
                ))
                .unwrap()
                    == 0,
                "a reusable block lives in its posts"
            ),
            "attachment" => {
                attachments += 1;
                assert_eq!(item(&db, &name).category, "image", "{name}");
            }
            "nav_menu_item" => menu_items += 1,
            other => panic!("an item of type {other} in the fixture: check it here"),
        }
    }
    assert_eq!(counts(&report, "post").0 + counts(&report, "page").0, posts);
    assert_eq!(counts(&report, "attachment").0, attachments);
    assert_eq!(counts(&report, "user").0, authors.len() as u64);
    let menu = item(&db, "menu_main").props["menu"].clone();
    let count = |items: &Value| -> usize {
        fn walk(v: &Value) -> usize {
            v.as_array()
                .map_or(0, |a| a.iter().map(|i| 1 + walk(&i["children"])).sum())
        }
        walk(items)
    };
    assert_eq!(count(&menu), menu_items, "the menu, whole: {menu}");
    assert!(
        menu.as_array().unwrap().iter().any(|i| i["url"] == "/"),
        "its Home link is this site's: {menu}"
    );
}

/// The mails in the site's outbox: recipient and text, oldest first.
fn outbox(db: &Connection) -> Vec<(String, String)> {
    let mut q = db
        .prepare("SELECT recipient, body FROM mail_outbox ORDER BY id")
        .unwrap();
    q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Accounts for the authors mail nobody unless asked (`--invite`); asked,
/// each account made gets one mail, whose link sets the password once; the
/// accounts are not mailed about the whole site's comments and form answers.
#[test]
fn authors_are_invited_only_when_asked_and_the_mailed_link_sets_their_password() {
    let file = blog_fixture().join("export.xml");
    let quiet = starter();
    before_any_import(quiet.path());
    let report = import_with(quiet.path(), &file, &["--users"]);
    assert_eq!(counts(&report, "user").0, 3, "admin, marta and joe");
    assert_eq!(counts(&report, "invitation"), (0, 0, 0, 0));
    assert_eq!(outbox(&db(quiet.path())), []);

    let dir = starter();
    before_any_import(dir.path());
    let report = import_with(dir.path(), &file, &["--users", "--invite"]);
    assert_eq!(counts(&report, "invitation"), (3, 0, 0, 0), "{report}");
    let db = db(dir.path());
    let mails = outbox(&db);
    let to: Vec<&str> = mails.iter().map(|(to, _)| to.as_str()).collect();
    assert_eq!(
        to,
        [
            "admin@blog.example.net",
            "marta@blog.example.net",
            "joe@blog.example.net"
        ]
    );
    for author in [1, 2, 3] {
        let person = item(&db, &format!("wp_author_{author}"));
        assert_eq!(person.props["mail_site_activity"], false, "{author}");
    }
    let (_, text) = &mails[1];
    assert!(text.contains(r#"with the username "marta""#), "{text}");
    let link = text
        .lines()
        .find(|l| l.starts_with("http://localhost/logon/reset/"))
        .unwrap_or_else(|| panic!("a link in {text}"));
    let token = link.rsplit('/').next().unwrap();
    assert_eq!(token.len(), 64, "{link}");

    // A second import makes no account, so mails nobody.
    let again = import_with(dir.path(), &file, &["--users", "--invite"]);
    assert_eq!(counts(&again, "invitation"), (0, 0, 0, 0));
    assert_eq!(outbox(&db).len(), 3);

    let port = free_port();
    let _server = serve(dir.path(), port);
    let client = reqwest::blocking::Client::new();
    let page = client
        .get(format!("http://127.0.0.1:{port}/logon/reset/{token}"))
        .header("Host", "localhost")
        .send()
        .unwrap();
    assert_eq!(page.status(), 200);
    let confirm = || {
        client
            .post(format!("http://127.0.0.1:{port}/api/auth/reset/confirm"))
            .header("Host", "localhost")
            .json(&serde_json::json!({"token": token, "password": "a long harbour password"}))
            .send()
            .unwrap()
    };
    let set = confirm();
    assert_eq!(set.status(), 200);
    assert_eq!(set.json::<Value>().unwrap()["username"], "marta");
    assert_eq!(confirm().status(), 410, "the link works once");
}

/// `--invite` on a site that cannot mail is refused before anything is
/// written, and says why.
#[test]
fn an_invitation_a_site_cannot_mail_is_refused_before_anything_is_written() {
    let dir = starter();
    let config = dir.path().join("sites/default/site.toml");
    let toml = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, toml.replace(r#""mail", "#, "")).unwrap();
    let before = before_any_import(dir.path());
    let file = blog_fixture().join("export.xml");
    let out = import(dir.path(), &file, &["--users", "--invite"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("this site does not enable the mail module"),
        "{stderr}"
    );
    assert_eq!(state(&db(dir.path())), before, "nothing written");

    // And the flag means nothing without accounts to invite.
    let out = import(dir.path(), &file, &["--invite"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--users"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
