//! The seo module's feeds (`feed.tpl`): Atom and RSS 2.0 of a site in two
//! languages, the site's and one thing's (a keyword, a person, a category),
//! read by a real feed parser (PyPI's `feedparser`), answered `304` to a
//! reader that has the current copy, and new the moment an article is.

use crate::common;

use bulwark_store::{NewResource, Props, ResourceId, Store};
use common::*;

const SITE: &str = r#"
hostname = "blog.test"
default = true
modules = ["seo"]
languages = ["en", "nl"]

[language]
urls = "prefix"

[settings]
title = "Fish & Chips"
tagline = "News from the harbour"

[[dispatch]]
name = "page"
path = "/page/{id}/{slug}"
controller = "page"
"#;

fn files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("news/site.toml", SITE),
        ("news/templates/page.tpl", "{{ rsc.title }}"),
    ]
}

/// A resource made on `day` of January 2024 (the feeds list the newest first).
fn create(store: &Store, category: &str, props: Props, published: bool, day: u32) -> ResourceId {
    let mut r = NewResource::new(category, props);
    r.published = published;
    r.created = Some(
        chrono::NaiveDate::from_ymd_opt(2024, 1, day)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc(),
    );
    store.create_resource(r).unwrap()
}

/// What `feedparser` makes of a feed: whether it found the feed malformed
/// (`bozo`), its format, and the feed's and each entry's fields the tests
/// read.
#[derive(serde::Deserialize, Debug)]
struct Parsed {
    bozo: bool,
    bozo_exception: Option<String>,
    version: String,
    title: String,
    link: String,
    language: Option<String>,
    entries: Vec<ParsedEntry>,
}

#[derive(serde::Deserialize, Debug)]
struct ParsedEntry {
    title: String,
    link: String,
    id: String,
    author: Option<String>,
    tags: Vec<String>,
    content: String,
    published: Option<String>,
    /// href, type and length of each.
    enclosures: Vec<[String; 3]>,
}

/// Runs `feedparser` on `xml` (as a feed reader would, from its bytes).
fn feedparser(xml: &str) -> Parsed {
    const SCRIPT: &str = r#"
import json, sys, feedparser
d = feedparser.parse(sys.stdin.buffer.read())
def content(e):
    if e.get("content"):
        return e.content[0].value
    return e.get("summary", "")
print(json.dumps({
    "bozo": bool(d.bozo),
    "bozo_exception": str(d.get("bozo_exception")) if d.bozo else None,
    "version": d.version,
    "title": d.feed.get("title", ""),
    "link": d.feed.get("link", ""),
    "language": d.feed.get("language"),
    "entries": [{
        "title": e.get("title", ""),
        "link": e.get("link", ""),
        "id": e.get("id", ""),
        "author": e.get("author"),
        "tags": [t.term for t in e.get("tags", [])],
        "content": content(e),
        "published": e.get("published"),
        "enclosures": [[n.get("href"), n.get("type"), str(n.get("length"))] for n in e.get("enclosures", [])],
    } for e in d.entries],
}))
"#;
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(xml.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "feedparser (run scripts/ensure-ops-tools.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn feed(s: &TestServer, path: &str) -> (RawResponse, Parsed) {
    let r = get(s.addr, "blog.test", path).await;
    assert_eq!(r.status, 200, "{path}: {}", r.text());
    let parsed = feedparser(&r.text());
    assert!(
        !parsed.bozo,
        "{path} is not a well-formed feed: {:?}\n{}",
        parsed.bozo_exception,
        r.text()
    );
    (r, parsed)
}

fn titles(p: &Parsed) -> Vec<&str> {
    p.entries.iter().map(|e| e.title.as_str()).collect()
}

/// The blog of the tests: a keyword, a person, two published articles (the
/// newer by the person, about the keyword, with text XML has no entity
/// for), a draft and a page (neither is in a feed).
struct Blog {
    harbour: ResourceId,
    ada: ResourceId,
    older: ResourceId,
    newer: ResourceId,
}

fn blog(store: &Store) -> Blog {
    let harbour = create(
        store,
        "keyword",
        Props::new().with("title", "Harbour"),
        true,
        1,
    );
    let ada = create(store, "person", Props::new().with("title", "Ada"), true, 1);
    let older = create(
        store,
        "article",
        Props::new()
            .with("title", "The old pier")
            .with("body", "<p>Gone now.</p>")
            // A podcast's episode, as the WordPress import keeps one.
            .with(
                "enclosure",
                serde_json::json!({"url": "/media/file/9", "length": 1234567, "type": "audio/mpeg"}),
            ),
        true,
        2,
    );
    let newer = create(
        store,
        "article",
        Props::new()
            .with(
                "title",
                bulwark_store::translated([("en", "Cod & chips"), ("nl", "Kabeljauw & friet")]),
            )
            .with(
                "body",
                "<p>Fresh\u{a0}today &mdash; see <a href=\"/page/1\">the menu</a>.</p><p><img src=\"/lib/cod.jpg\" alt=\"A cod\"></p>",
            ),
        true,
        3,
    );
    store.insert_edge(newer, "subject", harbour, None).unwrap();
    store.insert_edge(newer, "author", ada, None).unwrap();
    create(
        store,
        "article",
        Props::new().with("title", "A draft"),
        false,
        4,
    );
    create(
        store,
        "text",
        Props::new().with("title", "About us"),
        true,
        5,
    );
    Blog {
        harbour,
        ada,
        older,
        newer,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sites_feeds_are_atom_and_rss_a_feed_parser_reads_whole_in_each_language() {
    let s = start(&files(), |_| {}).await;
    let b = blog(&s.models["news"].store);

    let (r, atom) = feed(&s, "/en/feed").await;
    assert_eq!(
        r.header("content-type"),
        Some("application/atom+xml; charset=utf-8")
    );
    assert_eq!(atom.version, "atom10");
    assert_eq!(atom.title, "Fish & Chips");
    assert_eq!(atom.link, "http://blog.test/en/");
    assert_eq!(titles(&atom), ["Cod & chips", "The old pier"]);
    let cod = &atom.entries[0];
    assert_eq!(
        cod.link,
        format!("http://blog.test/en/page/{}/cod-chips", b.newer)
    );
    assert_eq!(cod.id, format!("http://blog.test/page/{}", b.newer));
    assert_eq!(cod.author.as_deref(), Some("Ada"));
    assert_eq!(cod.tags, ["Harbour"]);
    assert!(cod.published.is_some(), "{cod:?}");
    // The text as written (as the reader's own sanitiser writes it back),
    // its links and pictures on the site's host.
    assert!(
        cod.content.contains("Fresh&nbsp;today \u{2014} see"),
        "{cod:?}"
    );
    assert!(
        cod.content.contains(r#"href="http://blog.test/page/1""#),
        "{cod:?}"
    );
    assert!(
        cod.content
            .contains(r#"src="http://blog.test/lib/cod.jpg""#),
        "{cod:?}"
    );

    let episode = [
        "http://blog.test/media/file/9".to_owned(),
        "audio/mpeg".to_owned(),
        "1234567".to_owned(),
    ];
    assert_eq!(
        atom.entries[1].enclosures,
        std::slice::from_ref(&episode),
        "Atom"
    );
    assert!(cod.enclosures.is_empty());
    let (r, rss) = feed(&s, "/en/feed/rss").await;
    assert_eq!(rss.entries[1].enclosures, [episode], "RSS");
    assert_eq!(
        r.header("content-type"),
        Some("application/rss+xml; charset=utf-8")
    );
    assert_eq!(rss.version, "rss20");
    assert_eq!(rss.language.as_deref(), Some("en"));
    assert_eq!(titles(&rss), ["Cod & chips", "The old pier"]);
    assert_eq!(rss.entries[0].author.as_deref(), Some("Ada"));
    assert!(
        rss.entries[0]
            .content
            .contains(r#"href="http://blog.test/page/1""#),
        "{:?}",
        rss.entries[0]
    );

    // The Dutch feed: the Dutch title and the Dutch pages.
    let (_, dutch) = feed(&s, "/nl/feed").await;
    assert_eq!(titles(&dutch), ["Kabeljauw & friet", "The old pier"]);
    assert_eq!(
        dutch.entries[1].link,
        format!("http://blog.test/nl/page/{}/the-old-pier", b.older)
    );
    let (_, dutch_rss) = feed(&s, "/nl/feed/rss").await;
    assert_eq!(dutch_rss.language.as_deref(), Some("nl"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keywords_a_persons_and_a_categorys_feed_list_what_is_about_them() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let b = blog(&store);
    let category = store.category("article").unwrap().id;

    let (_, about) = feed(&s, &format!("/en/feed/about/{}", b.harbour)).await;
    assert_eq!(about.title, "Fish & Chips: Harbour");
    assert_eq!(titles(&about), ["Cod & chips"]);
    let (_, by) = feed(&s, &format!("/en/feed/about/{}/rss", b.ada)).await;
    assert_eq!(by.version, "rss20");
    assert_eq!(titles(&by), ["Cod & chips"]);
    let (_, all) = feed(&s, &format!("/en/feed/about/{category}")).await;
    assert_eq!(titles(&all), ["Cod & chips", "The old pier"]);

    // An article has no feed; neither has what is not there.
    for path in [
        format!("/en/feed/about/{}", b.older),
        "/en/feed/about/999999".to_owned(),
        "/en/feed/about/nonsense".to_owned(),
    ] {
        assert_eq!(get(s.addr, "blog.test", &path).await.status, 404, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_with_the_current_feed_gets_304_and_a_new_article_is_in_it_at_once() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let b = blog(&store);

    let first = get(s.addr, "blog.test", "/en/feed").await;
    let etag = first.header("etag").expect("an ETag").to_owned();
    let modified = first
        .header("last-modified")
        .expect("a Last-Modified")
        .to_owned();
    let by_tag = get_with(
        s.addr,
        "blog.test",
        "/en/feed",
        &format!("If-None-Match: {etag}\r\n"),
    )
    .await;
    assert_eq!(by_tag.status, 304);
    let by_date = get_with(
        s.addr,
        "blog.test",
        "/en/feed",
        &format!("If-Modified-Since: {modified}\r\n"),
    )
    .await;
    assert_eq!(by_date.status, 304);

    // A new article (about the keyword) is in the site's feed and in the
    // keyword's, and the reader's copy is no longer current.
    let fresh = create(
        &store,
        "article",
        Props::new().with("title", "Herring season"),
        true,
        6,
    );
    store
        .insert_edge(fresh, "subject", b.harbour, None)
        .unwrap();
    changes_applied(&s.models["news"]).await;
    let keyword = format!("/en/feed/about/{}", b.harbour);
    let (_, about) = feed(&s, &keyword).await;
    assert_eq!(titles(&about), ["Herring season", "Cod & chips"]);
    let revisit = get_with(
        s.addr,
        "blog.test",
        "/en/feed",
        &format!("If-None-Match: {etag}\r\n"),
    )
    .await;
    assert_eq!(revisit.status, 200);
    let (_, atom) = feed(&s, "/en/feed").await;
    assert_eq!(
        titles(&atom),
        ["Herring season", "Cod & chips", "The old pier"]
    );
}

/// A comment on `rsc` by `name`, approved or waiting, made `minutes` past noon
/// on 10 January 2024.
fn comment(store: &Store, rsc: ResourceId, name: &str, body: &str, approved: bool, minutes: u32) {
    use bulwark_module_comments::table::{self, NewComment, Status};
    table::insert(
        store,
        &NewComment {
            rsc,
            parent: None,
            user: None,
            name: name.into(),
            email: "reader@example.org".into(),
            url: None,
            body: body.into(),
            status: if approved {
                Status::Approved
            } else {
                Status::Pending
            },
            address: None,
            source: None,
            created: Some(
                chrono::NaiveDate::from_ymd_opt(2024, 1, 10)
                    .unwrap()
                    .and_hms_opt(12, minutes, 0)
                    .unwrap()
                    .and_utc(),
            ),
        },
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_comment_feeds_list_the_newest_approved_comments_of_the_site_and_of_a_page() {
    let site = SITE.replace(
        r#"modules = ["seo"]"#,
        r#"modules = ["seo", "auth", "comments"]"#,
    );
    let files = [
        ("news/site.toml", site.as_str()),
        ("news/templates/page.tpl", "{{ rsc.title }}"),
    ];
    let s = start(&files, |_| {}).await;
    let store = s.models["news"].store.clone();
    let b = blog(&store);
    comment(&store, b.older, "Jan", "First!", true, 1);
    comment(
        &store,
        b.newer,
        "Ann & Bo",
        "Lovely &amp; fresh.\n\nSecond line",
        true,
        2,
    );
    comment(&store, b.newer, "Spammer", "Waiting", false, 3);
    let draft = create(
        &store,
        "article",
        Props::new().with("title", "Hidden"),
        false,
        7,
    );
    comment(&store, draft, "Insider", "On a draft", true, 4);

    // The site's: approved comments on pages the reader may see, newest first.
    let (r, site_feed) = feed(&s, "/en/comments/feed").await;
    assert_eq!(
        r.header("content-type"),
        Some("application/atom+xml; charset=utf-8")
    );
    assert_eq!(site_feed.version, "atom10");
    assert_eq!(site_feed.title, "Comments on Fish & Chips");
    assert_eq!(
        titles(&site_feed),
        ["Ann & Bo on Cod & chips", "Jan on The old pier"]
    );
    let newest = &site_feed.entries[0];
    assert_eq!(newest.author.as_deref(), Some("Ann & Bo"));
    assert!(
        newest.link.starts_with(&format!(
            "http://blog.test/en/page/{}/cod-chips#comment-",
            b.newer
        )),
        "{newest:?}"
    );
    // The text as typed, escaped once: `&amp;` stays what the reader typed.
    assert!(
        newest
            .content
            .contains("<p>Lovely &amp;amp; fresh.</p><p>Second line</p>"),
        "{newest:?}"
    );
    let (_, rss) = feed(&s, "/nl/comments/feed/rss").await;
    assert_eq!(rss.version, "rss20");
    assert_eq!(
        titles(&rss),
        ["Ann & Bo over Kabeljauw & friet", "Jan over The old pier"]
    );

    // One page's.
    let (_, page) = feed(&s, &format!("/en/comments/feed/about/{}", b.newer)).await;
    assert_eq!(page.title, "Comments on Cod & chips");
    assert_eq!(titles(&page), ["Ann & Bo on Cod & chips"]);
    let (_, page_rss) = feed(&s, &format!("/en/comments/feed/about/{}/rss", b.older)).await;
    assert_eq!(titles(&page_rss), ["Jan on The old pier"]);

    // A page that takes no comments, one the reader may not see, and none.
    for path in [
        format!("/en/comments/feed/about/{}", b.harbour),
        format!("/en/comments/feed/about/{draft}"),
        "/en/comments/feed/about/999999".to_owned(),
    ] {
        assert_eq!(get(s.addr, "blog.test", &path).await.status, 404, "{path}");
    }

    // An approved comment is in the feeds at once (they are cached pages).
    comment(&store, b.older, "Kees", "Late", true, 5);
    changes_applied(&s.models["news"]).await;
    let (_, site_feed) = feed(&s, "/en/comments/feed").await;
    assert_eq!(site_feed.entries[0].title, "Kees on The old pier");
    let (_, page_rss) = feed(&s, &format!("/en/comments/feed/about/{}/rss", b.older)).await;
    assert_eq!(
        titles(&page_rss),
        ["Kees on The old pier", "Jan on The old pier"]
    );
}
