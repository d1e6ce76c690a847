//! Pages whose templates pull their data from the models: what a page shows
//! follows the store, and what a visitor may not see never appears.

use crate::common;

use std::time::Duration;

use bulwark_store::{NewResource, Props, PropsChange, ResourceUpdate, Store};
use bulwark_testkit::eventually;
use common::*;

/// How long a change may take to show: generous, it is only reached when it never does.
const WITHIN: Duration = Duration::from_secs(10);

const NEWS_SITE: &str = r#"
hostname = "news.test"
default = true

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
"#;

fn files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("news/site.toml", NEWS_SITE),
        (
            "news/templates/home.tpl",
            "{% for a in m.search(cat='text', sort='-created', pagelen=10) %}[{{ a.title }}]{% endfor %}",
        ),
        ("news/templates/page.tpl", "generic {{ rsc.title }}"),
        (
            "news/templates/page.article.tpl",
            "article {{ rsc.title }} by {% for p in rsc.o.author %}{{ p.title }}{% endfor %}; related {% for r in rsc.o.relation %}{{ r.title }}{% endfor %}; is text: {{ rsc.is_a('text') }}",
        ),
    ]
}

fn create(
    store: &Store,
    category: &str,
    title: &str,
    published: bool,
) -> bulwark_store::ResourceId {
    let mut r = NewResource::new(category, Props::new().with("title", title));
    r.published = published;
    store.create_resource(r).unwrap()
}

async fn page(s: &TestServer, path: &str) -> (u16, String) {
    let r = get(s.addr, "news.test", path).await;
    (r.status, r.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_follows_the_store_and_hides_what_visitors_may_not_see() {
    let s = start(&files(), |_| {}).await;
    let models = s.models["news"].clone();
    let store = models.store.clone();
    let ada = create(&store, "person", "Ada", true);
    let ghost = create(&store, "person", "Ghost writer", false);
    let first = create(&store, "article", "First", true);
    let draft = create(&store, "article", "Draft", false);
    let second = create(&store, "news", "Second", true);
    store.insert_edge(first, "author", ada, None).unwrap();
    store.insert_edge(first, "author", ghost, None).unwrap();
    store.insert_edge(first, "relation", draft, None).unwrap();
    store.insert_edge(first, "relation", second, None).unwrap();

    // The category template, edges in order, unpublished ones left out.
    let (status, html) = page(&s, &format!("/page/{first}")).await;
    assert_eq!(status, 200);
    assert_eq!(html, "article First by Ada; related Second; is text: True");
    // A news item falls back up the tree (news > text) to page.tpl.
    assert_eq!(
        page(&s, &format!("/page/{second}/second")).await.1,
        "generic Second"
    );
    // Unpublished or missing: 404, whichever way it is asked for.
    assert_eq!(page(&s, &format!("/page/{draft}")).await.0, 404);
    assert_eq!(page(&s, "/page/999999").await.0, 404);

    // Editing a resource changes every page that shows it.
    let ada_now = store.resource(ada).unwrap().unwrap();
    let mut update = ResourceUpdate::new(ada, ada_now.version);
    update.props = PropsChange::Merge(Props::new().with("title", "Ada Lovelace"));
    store.update_resource(update).unwrap();
    let html = wait_for(&s, &format!("/page/{first}"), "Ada Lovelace").await;
    assert!(html.contains("by Ada Lovelace"), "{html}");

    // Publishing the draft makes it appear in the related list and in searches.
    let draft_now = store.resource(draft).unwrap().unwrap();
    let mut update = ResourceUpdate::new(draft, draft_now.version);
    update.published = Some(true);
    store.update_resource(update).unwrap();
    wait_for(&s, &format!("/page/{first}"), "related DraftSecond").await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_page_is_refreshed_when_a_new_article_is_published() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    create(&store, "article", "Old news", true);
    wait_for(&s, "/", "[Old news]").await;
    create(&store, "article", "Hidden", false);
    create(&store, "news", "Fresh", true);
    // The search covers text and everything below it (article, news).
    let html = wait_for(&s, "/", "[Fresh]").await;
    assert!(!html.contains("Hidden"), "{html}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_resource_is_gone_and_one_never_shown_stays_not_found() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let mut named = NewResource::new("article", Props::new().with("title", "Retired"));
    named.published = true;
    let retired = store.create_resource(named.named("retired")).unwrap();
    let draft = create(&store, "article", "Never published", false);
    // Cached while it exists...
    assert_eq!(page(&s, &format!("/page/{retired}")).await.0, 200);
    assert_eq!(page(&s, "/page/retired").await.0, 200);
    assert_eq!(page(&s, &format!("/page/{draft}")).await.0, 404);

    store.delete_resource(retired, None).unwrap();
    store.delete_resource(draft, None).unwrap();
    // ...and gone once deleted, by id and by name, cache or not.
    let path = format!("/page/{retired}/retired");
    let status = eventually("the deleted page is no longer served", WITHIN, || async {
        let status = page(&s, &path).await.0;
        (status != 200).then_some(status)
    })
    .await;
    assert_eq!(status, 410);
    let (status, html) = page(&s, "/page/retired").await;
    assert_eq!(status, 410);
    assert!(html.contains("Gone"), "{html}");
    assert_eq!(page(&s, &format!("/api/rsc/{retired}")).await.0, 410);
    // A visitor never saw the draft, so it never existed for them.
    assert_eq!(page(&s, &format!("/page/{draft}")).await.0, 404);
    assert_eq!(page(&s, &format!("/api/rsc/{draft}")).await.0, 404);
    assert_eq!(page(&s, "/page/999999").await.0, 404);

    // A new resource taking the name wins over the tombstone.
    let mut again = NewResource::new("article", Props::new().with("title", "Back again"));
    again.published = true;
    store.create_resource(again.named("retired")).unwrap();
    wait_for(&s, "/page/retired", "Back again").await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_never_appears_through_an_include_or_a_cached_fragment() {
    let site = format!(
        "{NEWS_SITE}
[[dispatch]]
name = \"inc\"
path = \"/inc/{{id}}\"
controller = \"template\"
template = \"inc.tpl\"

[[dispatch]]
name = \"frag\"
path = \"/frag/{{id}}\"
controller = \"template\"
template = \"frag.tpl\"
"
    );
    let mut files = files();
    files[0].1 = &site;
    files.push(("news/templates/show.tpl", "<{{ m.rsc[id].title }}>"));
    files.push(("news/templates/inc.tpl", "{% include 'show.tpl' %}"));
    files.push((
        "news/templates/frag.tpl",
        "{% call cache(ttl=600) %}{% include 'show.tpl' %}{% endcall %}",
    ));
    let s = start(&files, |_| {}).await;
    let store = s.models["news"].store.clone();
    let draft = create(&store, "article", "Draft", false);
    for route in ["inc", "frag"] {
        assert_eq!(
            page(&s, &format!("/{route}/{draft}")).await,
            (200, "<>".into())
        );
    }
    let now = store.resource(draft).unwrap().unwrap();
    let mut update = ResourceUpdate::new(draft, now.version);
    update.published = Some(true);
    store.update_resource(update).unwrap();
    for route in ["inc", "frag"] {
        wait_for(&s, &format!("/{route}/{draft}"), "<Draft>").await;
    }
    s.shutdown().await;
}

/// Pages are computed from the change events, which arrive just after the commit.
async fn wait_for(s: &TestServer, path: &str, needle: &str) -> String {
    let what = format!("{path} shows {needle:?}");
    eventually(&what, WITHIN, || async {
        let html = page(s, path).await.1;
        html.contains(needle).then_some(html)
    })
    .await
}

fn renders(s: &TestServer) -> u64 {
    s.models["news"]
        .renders
        .load(std::sync::atomic::Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_a_resource_re_renders_exactly_the_pages_that_showed_it() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let x = create(&store, "article", "Ex", true);
    let y = create(&store, "article", "Why", true);
    changes_applied(&s.models["news"]).await;
    let (px, py) = (format!("/page/{x}"), format!("/page/{y}"));
    assert!(page(&s, &px).await.1.contains("Ex"));
    assert!(page(&s, &py).await.1.contains("Why"));
    let warm = renders(&s);
    for _ in 0..5 {
        page(&s, &px).await;
        page(&s, &py).await;
    }
    assert_eq!(renders(&s), warm, "cached pages render nothing");

    let now = store.resource(x).unwrap().unwrap();
    let mut update = ResourceUpdate::new(x, now.version);
    update.props = PropsChange::Merge(Props::new().with("title", "Ex, edited"));
    store.update_resource(update).unwrap();
    wait_for(&s, &px, "Ex, edited").await;
    page(&s, &py).await;
    assert_eq!(
        renders(&s),
        warm + 1,
        "only the page that showed the resource renders again"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_for_an_uncached_page_cause_one_render() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let x = create(&store, "article", "Rush", true);
    changes_applied(&s.models["news"]).await;
    let path = format!("/page/{x}");
    let before = renders(&s);
    let mut tasks = Vec::new();
    for _ in 0..300 {
        let addr = s.addr;
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            get(addr, "news.test", &path).await.status
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), 200);
    }
    assert_eq!(renders(&s), before + 1);
    s.shutdown().await;
}

async fn stats(s: &TestServer) -> serde_json::Value {
    let r = get_with(
        s.addr,
        "news.test",
        "/api/stats",
        "Authorization: Bearer secret\r\n",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_are_compiled_before_the_first_visitor_arrives() {
    let site = format!("{NEWS_SITE}\n[api]\ntoken = \"secret\"\n");
    let mut files = files();
    files[0].1 = &site;
    let s = start(&files, |_| {}).await;
    let store = s.models["news"].store.clone();
    let x = create(&store, "article", "Rush", true);
    let compiled = stats(&s).await["template_compiles"].as_u64().unwrap();
    assert!(compiled >= 4, "{compiled} templates compiled at start");
    // A rush of logged-in visitors (no page cache): many renders, no compiling.
    let mut tasks = Vec::new();
    for path in [
        format!("/page/{x}"),
        "/".to_string(),
        "/nowhere".to_string(),
    ] {
        for _ in 0..30 {
            let (addr, path) = (s.addr, path.clone());
            tasks.push(tokio::spawn(async move {
                get_with(addr, "news.test", &path, "Cookie: bulwark_session=abc\r\n")
                    .await
                    .status
            }));
        }
    }
    for t in tasks {
        assert!(matches!(t.await.unwrap(), 200 | 404));
    }
    assert!(renders(&s) >= 60);
    assert_eq!(stats(&s).await["template_compiles"], compiled);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_opted_out_rules_bypass_the_page_cache() {
    let mut files = files();
    let site = format!(
        "{NEWS_SITE}\n[[dispatch]]\nname = \"fresh\"\npath = \"/fresh\"\ncontroller = \"template\"\ntemplate = \"home.tpl\"\ncache = false\n"
    );
    files[0] = ("news/site.toml", &site);
    let s = start(&files, |_| {}).await;
    page(&s, "/").await;
    let warm = renders(&s);
    page(&s, "/").await;
    assert_eq!(renders(&s), warm);
    get_with(
        s.addr,
        "news.test",
        "/",
        "Cookie: theme=dark; bulwark_session=abc\r\n",
    )
    .await;
    get_with(s.addr, "news.test", "/", "Cookie: bulwark_session=abc\r\n").await;
    assert_eq!(renders(&s), warm + 2, "a session always gets a fresh page");
    page(&s, "/fresh").await;
    page(&s, "/fresh").await;
    assert_eq!(renders(&s), warm + 4, "cache = false renders every time");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_pages_are_served_compressed() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let long = "words ".repeat(400);
    let mut r = NewResource::new("article", Props::new().with("title", long.as_str()));
    r.published = true;
    let id = store.create_resource(r).unwrap();
    let path = format!("/page/{id}");
    let plain = get(s.addr, "news.test", &path).await;
    let gz = get_with(s.addr, "news.test", &path, "Accept-Encoding: gzip\r\n").await;
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&gz.body), plain.body);
    assert!(gz.body.len() < plain.body.len() / 4);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fragment_is_cached_until_what_it_shows_changes() {
    let mut files = files();
    let site = format!(
        "{NEWS_SITE}\n[[dispatch]]\nname = \"frag\"\npath = \"/frag\"\ncontroller = \"template\"\ntemplate = \"frag.tpl\"\ncache = false\n"
    );
    files[0] = ("news/site.toml", &site);
    files.push((
        "news/templates/frag.tpl",
        "{% call cache(ttl=3600) %}{{ m.rsc[q.id|int].title }} {{ random(1000000000) }}{% endcall %}|{{ random(1000000000) }}",
    ));
    let s = start(&files, |_| {}).await;
    let store = s.models["news"].store.clone();
    let x = create(&store, "article", "Frag", true);
    changes_applied(&s.models["news"]).await;
    let path = format!("/frag?id={x}");
    let first = page(&s, &path).await.1;
    let second = page(&s, &path).await.1;
    let (frag1, outer1) = first.split_once('|').unwrap();
    let (frag2, outer2) = second.split_once('|').unwrap();
    assert!(frag1.starts_with("Frag "), "{first}");
    assert_eq!(frag1, frag2, "the fragment comes from the cache");
    assert_ne!(outer1, outer2, "the rest of the page is rendered each time");

    let now = store.resource(x).unwrap().unwrap();
    let mut update = ResourceUpdate::new(x, now.version);
    update.props = PropsChange::Merge(Props::new().with("title", "Frag 2"));
    store.update_resource(update).unwrap();
    let html = wait_for(&s, &path, "Frag 2 ").await;
    let (frag3, _) = html.split_once('|').unwrap();
    assert_ne!(
        frag3.rsplit(' ').next(),
        frag1.rsplit(' ').next(),
        "re-rendered after the change"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_reads_visible_resources_and_refuses_changes_without_a_token() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let mut r = NewResource::new(
        "article",
        Props::new()
            .with("title", "Shown")
            .with("email", "me@example.org"),
    );
    r.published = true;
    let shown = store.create_resource(r).unwrap();
    let hidden = create(&store, "article", "Hidden", false);
    let r = get(s.addr, "news.test", &format!("/api/rsc/{shown}")).await;
    assert_eq!(r.status, 200);
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["props"]["title"], "Shown");
    assert_eq!(v["props"].get("email"), None, "private by default: {v}");
    assert_eq!(
        get(s.addr, "news.test", &format!("/api/rsc/{hidden}"))
            .await
            .status,
        404
    );
    let patch = format!(
        "PATCH /api/rsc/{shown} HTTP/1.1\r\nHost: news.test\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    );
    // Nobody logged on and no token: the client is told to authenticate.
    assert_eq!(raw(s.addr, patch.as_bytes()).await.unwrap().status, 401);
    assert_eq!(get(s.addr, "news.test", "/api/stats").await.status, 403);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m_req_shows_the_request() {
    let mut files = files();
    let site = format!(
        "{NEWS_SITE}\n[[dispatch]]\nname = \"req\"\npath = \"/req\"\ncontroller = \"template\"\ntemplate = \"req.tpl\"\n"
    );
    files[0] = ("news/site.toml", &site);
    files.push((
        "news/templates/req.tpl",
        "{{ m.req.path }} {{ m.req.query }} {{ m.req.is_anonymous }}",
    ));
    let s = start(&files, |_| {}).await;
    // minijinja escapes `/` in HTML output.
    assert_eq!(page(&s, "/req?a=1").await.1, "&#x2f;req a=1 True");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_language_gets_its_own_cached_page() {
    let mut files = files();
    let site = format!(
        "languages = [\"en\", \"nl\"]\n{NEWS_SITE}\n[[dispatch]]\nname = \"lang\"\npath = \"/lang\"\ncontroller = \"template\"\ntemplate = \"lang.tpl\"\n"
    );
    files[0] = ("news/site.toml", &site);
    files.push((
        "news/templates/lang.tpl",
        "{% call cache(ttl=60) %}{{ m.req.language }}{% endcall %}",
    ));
    let s = start(&files, |_| {}).await;
    let ask = |accept: &'static str| {
        let addr = s.addr;
        async move {
            let header = format!("Accept-Language: {accept}\r\n");
            get_with(addr, "news.test", "/lang", &header).await.text()
        }
    };
    let before = renders(&s);
    for _ in 0..3 {
        assert_eq!(ask("nl-BE,nl;q=0.9,en;q=0.5").await, "nl");
        assert_eq!(ask("en-GB").await, "en");
        assert_eq!(ask("fr, de;q=0.5").await, "en", "the site's first language");
        assert_eq!(ask("fr, NL;q=0.1").await, "nl");
        assert_eq!(ask("fr, nl;q=0").await, "en", "q=0 refuses a language");
    }
    let r = get_with(s.addr, "news.test", "/lang", "Accept-Language: nl\r\n").await;
    assert_eq!(r.header("content-language"), Some("nl"));
    assert!(
        r.header("vary").unwrap_or("").contains("Accept-Language"),
        "{:?}",
        r.headers
    );
    // One render per language, each then served from the cache.
    assert_eq!(renders(&s), before + 2);
    s.shutdown().await;
}

async fn rush_after_an_edit(grace: bool, headers: &'static str) -> (Vec<String>, u64) {
    let mut files = files();
    let site = format!(
        "{NEWS_SITE}\n[page_cache]\ngrace = {grace}\n\n[[dispatch]]\nname = \"slowshow\"\npath = \"/slowshow\"\ncontroller = \"template\"\ntemplate = \"slowshow.tpl\"\n"
    );
    files[0] = ("news/site.toml", &site);
    files.push((
        "news/templates/slowshow.tpl",
        "{% for i in range(300) %}{% for j in range(1000) %}{% endfor %}{% endfor %}{{ m.rsc[q.id|int].title }}",
    ));
    let s = start(&files, |_| {}).await;
    let store = s.models["news"].store.clone();
    let x = create(&store, "article", "Old", true);
    let path = format!("/slowshow?id={x}");
    assert_eq!(page(&s, &path).await.1, "Old");
    let before = renders(&s);
    let now = store.resource(x).unwrap().unwrap();
    let mut update = ResourceUpdate::new(x, now.version);
    update.props = PropsChange::Merge(Props::new().with("title", "New"));
    store.update_resource(update).unwrap();
    changes_applied(&s.models["news"]).await;
    let mut rush = Vec::new();
    for _ in 0..20 {
        let (addr, path) = (s.addr, path.clone());
        rush.push(tokio::spawn(async move {
            get_with(addr, "news.test", &path, headers).await.text()
        }));
    }
    let mut bodies = Vec::new();
    for r in rush {
        bodies.push(r.await.unwrap());
    }
    let rendered = renders(&s) - before;
    assert_eq!(page(&s, &path).await.1, "New");
    s.shutdown().await;
    (bodies, rendered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grace_never_serves_a_deleted_page_after_its_410_rendered() {
    let mut files = files();
    files.retain(|(name, _)| !name.ends_with("page.article.tpl"));
    files.push((
        "news/templates/page.article.tpl",
        "{% for i in range(300) %}{% for j in range(1000) %}{% endfor %}{% endfor %}{{ rsc.title }}",
    ));
    let s = start(&files, |_| {}).await;
    let store = s.models["news"].store.clone();
    let x = create(&store, "article", "Doomed", true);
    let path = format!("/page/{x}");
    assert_eq!(page(&s, &path).await, (200, "Doomed".to_string()));
    store.delete_resource(x, None).unwrap();
    changes_applied(&s.models["news"]).await;
    let rush = || async {
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (addr, path) = (s.addr, path.clone());
            tasks.push(tokio::spawn(async move {
                get(addr, "news.test", &path).await.status
            }));
        }
        let mut statuses = Vec::new();
        for t in tasks {
            statuses.push(t.await.unwrap());
        }
        statuses
    };
    // The first rush may get the old page while the first 410 renders (grace)...
    let first = rush().await;
    assert!(first.iter().all(|s| *s == 200 || *s == 410), "{first:?}");
    // ...after that, never again.
    for _ in 0..3 {
        let statuses = rush().await;
        assert!(statuses.iter().all(|s| *s == 410), "{statuses:?}");
    }
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_grace_a_rush_on_a_changed_page_gets_the_old_version_during_one_render() {
    let (bodies, rendered) = rush_after_an_edit(true, "").await;
    assert_eq!(rendered, 1);
    assert!(
        bodies.iter().all(|b| b == "Old" || b == "New"),
        "{bodies:?}"
    );
    assert!(
        bodies.iter().any(|b| b == "Old"),
        "grace serves the previous version: {bodies:?}"
    );
}

/// A live element fetching its page because the page's data changed (and a
/// reload) says `Cache-Control: no-cache`: it must get the new version, not
/// the one it replaces, and still costs no render of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_grace_a_request_that_says_no_cache_waits_for_the_one_render() {
    let (bodies, rendered) = rush_after_an_edit(true, "Cache-Control: no-cache\r\n").await;
    assert_eq!(rendered, 1);
    assert!(bodies.iter().all(|b| b == "New"), "{bodies:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_grace_a_rush_waits_for_the_one_render() {
    let (bodies, rendered) = rush_after_an_edit(false, "").await;
    assert_eq!(rendered, 1);
    assert!(bodies.iter().all(|b| b == "New"), "{bodies:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_patches_without_if_match_all_apply_and_a_stale_if_match_conflicts() {
    let site = format!("{NEWS_SITE}\n[api]\ntoken = \"secret\"\n");
    let mut files = files();
    files[0].1 = &site;
    let s = start(&files, |_| {}).await;
    let store = s.models["news"].store.clone();
    let x = create(&store, "article", "Counted", true);
    let patch = |field: String, extra: &str| {
        let body = format!("{{\"props\": {{\"{field}\": 1}}}}");
        format!(
            "PATCH /api/rsc/{x} HTTP/1.1\r\nHost: news.test\r\nAuthorization: Bearer secret\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let mut writers = Vec::new();
    for w in 0..4 {
        let addr = s.addr;
        let requests: Vec<String> = (0..40).map(|i| patch(format!("w{w}_{i}"), "")).collect();
        writers.push(tokio::spawn(async move {
            let mut statuses = Vec::new();
            for r in requests {
                statuses.push(raw(addr, r.as_bytes()).await.unwrap().status);
            }
            statuses
        }));
    }
    for w in writers {
        let statuses = w.await.unwrap();
        assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    }
    let r = store.resource(x).unwrap().unwrap();
    assert!(
        (0..4).all(|w| (0..40).all(|i| r.props.get(&format!("w{w}_{i}")).is_some())),
        "every write applied"
    );
    // With If-Match naming an old version: a real conflict.
    let stale = raw(
        s.addr,
        patch("late".into(), "If-Match: \"1\"\r\n").as_bytes(),
    )
    .await
    .unwrap();
    assert_eq!(stale.status, 409, "{}", stale.text());
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_page_carries_a_validator_and_a_revisit_with_it_gets_304() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let id = create(&store, "article", "First", true);
    let first = get(s.addr, "news.test", "/").await;
    assert_eq!(first.status, 200);
    let etag = first.header("etag").expect("an ETag").to_string();
    assert!(etag.starts_with("\"p"), "{etag}");
    // From the cache, the same page and the same tag.
    let again = get(s.addr, "news.test", "/").await;
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    let if_none_match = format!("If-None-Match: {etag}\r\n");
    let revisit = get_with(s.addr, "news.test", "/", &if_none_match).await;
    assert_eq!(revisit.status, 304, "the browser's copy is current");
    assert!(revisit.body.is_empty());
    // The page changes: the old tag no longer matches.
    let now = store.resource(id).unwrap().unwrap();
    let mut update = ResourceUpdate::new(id, now.version);
    update.props = PropsChange::Merge(Props::new().with("title", "Changed"));
    store.update_resource(update).unwrap();
    wait_for(&s, "/", "[Changed]").await;
    let revisit = get_with(s.addr, "news.test", "/", &if_none_match).await;
    assert_eq!(revisit.status, 200, "a changed page is sent whole");
    assert_ne!(revisit.header("etag"), Some(etag.as_str()));
    s.shutdown().await;
}
