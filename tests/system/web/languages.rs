//! A site in English and Dutch with its languages in the URL, on SQLite and on
//! PostgreSQL: translated titles read in the page's language, a search in
//! Dutch and one in English, a resource published in one language only, the
//! redirect from `/`, links that keep the prefix, and a change to the Dutch
//! title that re-renders the Dutch page and leaves the English one cached.

use crate::common;
use crate::databases;

use std::time::Duration;

use bulwark_store::{NewResource, Props, ResourceId, ResourceUpdate, Store, translated};
use common::*;
use serde_json::json;

const WITHIN: Duration = Duration::from_secs(10);

fn site(database: &str) -> Vec<(String, String)> {
    let toml = format!(
        r#"hostname = "talen.test"
languages = ["en", "nl"]
{database}

[language]
urls = "prefix"
missing = "not_found"

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"

[[dispatch]]
name = "page"
path = "/page/{{id}}/{{slug}}"
controller = "page"

[[dispatch]]
name = "page_id"
path = "/page/{{id}}"
controller = "page"

[[dispatch]]
name = "find"
path = "/find"
controller = "template"
template = "find.tpl"
cache = false
"#
    );
    vec![
        ("news/site.toml".into(), toml),
        (
            "news/templates/home.tpl".into(),
            "{{ m.req.language }}|{{ url(\"find\") }}|{{ url(\"find\", language=\"en\") }}|\
             {{ _(\"Search\") }}|{{ _n(\"{n} article\", \"{n} articles\", 2) }}|\
             {{ _(\"Hello {name}\", name=\"<Ann>\") }}"
                .into(),
        ),
        (
            "news/translations/nl.po".into(),
            "msgid \"\"\nmsgstr \"\"\n\"Language: nl\\n\"\n\
             \"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n\n\
             msgid \"Search\"\nmsgstr \"Zoeken\"\n\n\
             msgid \"Hello {name}\"\nmsgstr \"Hallo {name}\"\n\n\
             msgid \"{n} article\"\nmsgid_plural \"{n} articles\"\n\
             msgstr[0] \"{n} artikel\"\nmsgstr[1] \"{n} artikelen\"\n"
                .into(),
        ),
        (
            "news/templates/page.tpl".into(),
            "<h1>{{ rsc.title }}</h1>{{ rsc.page_url }}|\
             {% for a in request.alternates %}{{ a.language }}={{ a.url }};{% endfor %}"
                .into(),
        ),
        (
            "news/templates/find.tpl".into(),
            "{% for r in m.search(text=q.text) %}[{{ r.title }}]{% endfor %}".into(),
        ),
    ]
}

async fn started(database: &str) -> TestServer {
    let files = site(database);
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    start(&files, |_| {}).await
}

fn create(store: &Store, props: Props) -> ResourceId {
    let mut r = NewResource::new("article", props);
    r.published = true;
    store.create_resource(r).unwrap()
}

fn renders(s: &TestServer) -> u64 {
    s.models["news"]
        .renders
        .load(std::sync::atomic::Ordering::Relaxed)
}

async fn body(s: &TestServer, path: &str) -> (u16, String) {
    let r = get(s.addr, "talen.test", path).await;
    (r.status, r.text())
}

async fn shows_every_language(database: &str) {
    let s = started(database).await;
    let store = s.models["news"].store.clone();
    let both = create(
        &store,
        Props::new().with(
            "title",
            translated([("en", "Cycling to work"), ("nl", "Fietsen naar het werk")]),
        ),
    );
    let english_only = create(
        &store,
        Props::new()
            .with("title", translated([("en", "Only in English")]))
            .with("languages", json!(["en"])),
    );
    changes_applied(&s.models["news"]).await;

    // `/` sends the visitor to their language; the prefix names it after.
    let home = get_with(
        s.addr,
        "talen.test",
        "/",
        "Accept-Language: nl-BE, en;q=0.5\r\n",
    )
    .await;
    assert_eq!(home.status, 302);
    assert_eq!(home.header("location"), Some("/nl/"));
    assert_eq!(home.header("vary"), Some("Accept-Language"));
    let (status, text) = body(&s, "/nl/").await;
    // Template texts from the site's Dutch catalog, plural forms by its rule,
    // values put in escaped.
    assert_eq!(
        (status, text.as_str()),
        (
            200,
            "nl|/nl/find|/en/find|Zoeken|2 artikelen|Hallo &lt;Ann&gt;"
        )
    );
    let english = get_with(s.addr, "talen.test", "/en/", "Accept-Language: nl\r\n").await;
    assert_eq!(
        english.text(),
        "en|/en/find|/en/find|Search|2 articles|Hello &lt;Ann&gt;",
        "the URL wins over the browser"
    );

    // The page in each language, its links with the page's prefix and slug.
    let (status, nl) = body(&s, &format!("/nl/page/{both}")).await;
    assert_eq!(status, 200, "{nl}");
    assert_eq!(
        nl,
        format!(
            "<h1>Fietsen naar het werk</h1>/nl/page/{both}/fietsen-naar-het-werk|\
             en=/en/page/{both}/cycling-to-work;nl=/nl/page/{both}/fietsen-naar-het-werk;"
        )
    );
    let (_, en) = body(&s, &format!("/en/page/{both}")).await;
    assert!(en.starts_with("<h1>Cycling to work</h1>"), "{en}");
    // Another language's slug leads to the page's own.
    let moved = get(
        s.addr,
        "talen.test",
        &format!("/en/page/{both}/fietsen-naar-het-werk"),
    )
    .await;
    assert_eq!(moved.status, 301);
    assert_eq!(
        moved.header("location").map(str::to_owned),
        Some(format!("/en/page/{both}/cycling-to-work"))
    );

    // Published in English only: the Dutch URL is not there (the site's rule).
    assert_eq!(body(&s, &format!("/en/page/{english_only}")).await.0, 200);
    assert_eq!(body(&s, &format!("/nl/page/{english_only}")).await.0, 404);

    // A Dutch word in a Dutch search, an English one in an English search.
    assert_eq!(
        body(&s, "/nl/find?text=fiets").await.1,
        "[Fietsen naar het werk]"
    );
    assert_eq!(
        body(&s, "/en/find?text=cycles").await.1,
        "[Cycling to work]"
    );
    assert_eq!(body(&s, "/en/find?text=fiets").await.1, "");
    // The JSON API searches in the language it is told.
    let api = |q: &str| {
        let q = q.to_owned();
        let addr = s.addr;
        async move {
            let r = get(addr, "talen.test", &format!("/api/search?{q}")).await;
            let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
            (r.status, v["total"].as_u64())
        }
    };
    assert_eq!(api("text=fiets&language=nl").await, (200, Some(1)));
    assert_eq!(api("text=fiets&language=en").await, (200, Some(0)));
    assert_eq!(
        api("text=fiets&language=de").await.0,
        400,
        "not a language of the site"
    );

    // A change to the Dutch title: the Dutch page renders again, the English
    // one stays cached.
    let nl_path = format!("/nl/page/{both}/fietsen-naar-het-werk");
    let en_path = format!("/en/page/{both}/cycling-to-work");
    body(&s, &nl_path).await;
    body(&s, &en_path).await;
    let warm = renders(&s);
    body(&s, &nl_path).await;
    body(&s, &en_path).await;
    assert_eq!(renders(&s), warm, "both pages come from the page cache");
    let now = store.resource(both).unwrap().unwrap();
    store
        .update_resource(
            ResourceUpdate::new(both, now.version).merge(Props::new().with(
                "title",
                translated([("en", "Cycling to work"), ("nl", "Fietsen naar kantoor")]),
            )),
        )
        .unwrap();
    bulwark_testkit::eventually("the Dutch page shows the new title", WITHIN, || async {
        let page = body(&s, &format!("/nl/page/{both}")).await.1;
        page.contains("Fietsen naar kantoor").then_some(())
    })
    .await;
    let after = renders(&s);
    let (_, en) = body(&s, &en_path).await;
    assert!(en.contains("Cycling to work"), "{en}");
    assert_eq!(
        renders(&s),
        after,
        "the English page was not rendered again"
    );

    // An error page speaks the language of the URL too.
    let (status, nl) = body(&s, "/nl/page/999999").await;
    assert_eq!(status, 404);
    assert!(nl.contains(r#"<html lang="nl">"#), "{nl}");
    assert!(nl.contains("De pagina die je zocht, is hier niet."), "{nl}");
    let (status, en) = body(&s, "/en/page/999999").await;
    assert_eq!(status, 404);
    assert!(en.contains("The page you asked for is not here."), "{en}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_language_on_sqlite() {
    shows_every_language("").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_language_on_postgresql() {
    let schema = databases::pg_schema("languages");
    shows_every_language(&format!(
        "[database]\nurl = \"{}\"\nschema = \"{schema}\"",
        databases::pg_url()
    ))
    .await;
    databases::drop_schema(&schema);
}
