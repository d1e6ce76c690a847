//! The starter site (`sites/default`) as visitors and attackers meet it.

use crate::common;

use common::*;

/// The link of the first card of a list page (an article's page).
fn first_card_link(html: &str) -> String {
    html.split(r#"<article class="card">"#)
        .nth(1)
        .and_then(|card| card.split(r#"href=""#).nth(1))
        .and_then(|rest| rest.split('"').next())
        .expect("a card links its article")
        .to_owned()
}

#[tokio::test]
async fn a_page_number_that_is_not_a_whole_number_shows_the_first_page() {
    let s = start_starter_site(|_| {}).await;
    let first = get(s.addr, "localhost", "/articles?page=1").await;
    assert_eq!(first.status, 200);
    for page in [
        "abc",
        "-1",
        "0",
        "99999999999999999999999",
        "2.5",
        "",
        "1e3",
    ] {
        for path in ["/articles", "/category/article"] {
            let r = get(s.addr, "localhost", &format!("{path}?page={page}")).await;
            assert_eq!(r.status, 200, "{path}?page={page}: {}", r.text());
        }
        let r = get(s.addr, "localhost", &format!("/articles?page={page}")).await;
        assert_eq!(r.text(), first.text(), "page={page}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn lists_show_when_and_by_whom_and_an_article_describes_itself_to_link_previews() {
    let s = start_starter_site(|_| {}).await;
    let list = get(s.addr, "localhost", "/articles").await;
    assert_eq!(list.status, 200);
    let html = list.text();
    let cards = html.matches(r#"<article class="card">"#).count();
    assert!(cards >= 5, "the demo articles are listed: {cards}");
    assert_eq!(
        html.matches(r#"<p class="meta"><time datetime=""#).count(),
        cards,
        "every card has its date, machine-readable: {html}"
    );
    assert!(
        html.contains("&middot; by Ada Lovelace") || html.contains("&middot; by Alan Turing"),
        "and its authors: {html}"
    );

    // An article's page: a description and Open Graph tags from the resource.
    let href = first_card_link(&html);
    let page = get(s.addr, "localhost", &href).await;
    assert_eq!(page.status, 200);
    let page = page.text();
    let title = html
        .split(&format!(r#"<a href="{href}">"#))
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .expect("the card's title");
    assert!(
        page.contains(&format!(r#"<meta property="og:title" content="{title}">"#)),
        "og:title is the article's title {title:?}"
    );
    assert!(
        page.contains(r#"<meta name="description" content=""#),
        "a description"
    );
    assert!(page.contains(r#"<meta property="og:type" content="article">"#));
    s.shutdown().await;
}

#[tokio::test]
async fn a_wrong_slug_moves_to_the_page_and_an_unknown_feature_is_not_found() {
    let s = start_starter_site(|_| {}).await;
    let list = get(s.addr, "localhost", "/articles").await.text();
    let href = first_card_link(&list);
    // `/en/page/{id}/{slug}`: the starter puts the language in its URLs.
    let id = href.split('/').nth(3).unwrap();
    // The canonical URL answers; an old or wrong slug moves there, query and all.
    assert_eq!(get(s.addr, "localhost", &href).await.status, 200);
    let moved = get(
        s.addr,
        "localhost",
        &format!("/page/{id}/an-old-slug?from=mail"),
    )
    .await;
    assert_eq!(moved.status, 301);
    assert_eq!(
        moved.header("location"),
        Some(format!("{href}?from=mail").as_str())
    );
    // A template rule that takes a name says when the name is unknown.
    assert_eq!(
        get(s.addr, "localhost", "/features/depcache").await.status,
        200
    );
    let unknown = get(s.addr, "localhost", "/features/no-such-feature").await;
    assert_eq!(unknown.status, 404, "{}", unknown.text());
    s.shutdown().await;
}

#[tokio::test]
async fn every_starter_page_has_one_canonical_link_and_its_language_alternates() {
    let s = start_starter_site(|_| {}).await;
    let list = get(s.addr, "localhost", "/en/articles").await.text();
    let article = first_card_link(&list);
    let bare = article.trim_start_matches("/en");
    for page in [
        "/",
        "/about",
        "/features",
        "/features/push",
        "/articles",
        "/category/article",
        "/live",
        "/contact",
        bare,
    ] {
        for lang in ["en", "nl"] {
            let path = if page == "/" {
                format!("/{lang}/")
            } else {
                format!("/{lang}{page}")
            };
            let r = get(s.addr, "localhost", &path).await;
            assert_eq!(r.status, 200, "{path}");
            let html = r.text();
            assert!(
                html.contains(&format!("<html lang=\"{lang}\">")),
                "{path}: lang"
            );
            assert_eq!(
                html.matches(r#"<link rel="canonical" href=""#).count(),
                1,
                "{path}: one canonical link"
            );
            assert!(
                html.contains(&format!(
                    r#"<link rel="canonical" href="http://localhost{path}">"#
                )),
                "{path}: canonical is itself: {html}"
            );
            for alt in ["en", "nl", "x-default"] {
                assert!(
                    html.contains(&format!(
                        r#"<link rel="alternate" hreflang="{alt}" href="http://localhost/"#
                    )),
                    "{path}: hreflang {alt}"
                );
            }
        }
    }
    // Asked without a language, a page names its canonical URL with one.
    let plain = get(s.addr, "localhost", "/about").await.text();
    assert!(plain.contains(r#"<link rel="canonical" href="http://localhost/en/about">"#));
    s.shutdown().await;
}

#[tokio::test]
async fn a_mistyped_address_gets_the_sites_own_404_page_in_the_visitors_language() {
    let s = start_starter_site(|_| {}).await;
    for (path, heading, lang) in [
        ("/en/no-such-page", "<h1>Not found</h1>", "en"),
        ("/nl/no-such-page", "<h1>Niet gevonden</h1>", "nl"),
        ("/features/no-such-feature", "<h1>Not found</h1>", "en"),
    ] {
        let page = get(s.addr, "localhost", path).await;
        assert_eq!(page.status, 404, "{path}");
        let html = page.text();
        assert!(html.contains(heading), "{path}: {html}");
        assert!(
            html.contains(&format!(r#"<html lang="{lang}">"#)),
            "{path}: {html}"
        );
        // The site's header and navigation, a search, and not for indexing.
        assert!(html.contains(r#"<nav id="site-nav""#), "{path}: {html}");
        assert!(html.contains(r#"role="search""#), "{path}: {html}");
        assert!(
            html.contains(r#"<meta name="robots" content="noindex">"#),
            "{path}"
        );
        assert!(!html.contains(r#"rel="canonical""#), "{path}: no canonical");
    }
    // A client that asks for JSON still gets a problem.
    let json = get_with(
        s.addr,
        "localhost",
        "/en/no-such-page",
        "Accept: application/json\r\n",
    )
    .await;
    assert_eq!(json.status, 404);
    assert!(
        json.text()
            .contains(r#""type":"urn:bulwark:problem:not-found""#)
    );
    s.shutdown().await;
}

#[tokio::test]
async fn visitors_search_the_site_and_the_sitemap_lists_the_front_and_list_pages() {
    let s = start_starter_site(|_| {}).await;
    let found = get(s.addr, "localhost", "/en/search?q=the").await;
    assert_eq!(found.status, 200);
    let html = found.text();
    let cards = html.matches(r#"<article class="card">"#).count();
    assert!(cards > 0, "{html}");
    assert!(
        html.contains(&format!(r#"role="status">{cards} pages found for “the”."#))
            || html.contains(r#"pages found for “the”."#),
        "{html}"
    );
    assert!(
        html.contains("<h2><a href=\"/en/page/"),
        "cards under the h1: {html}"
    );
    let nothing = get(s.addr, "localhost", "/nl/search?q=zzzqqq").await.text();
    assert!(nothing.contains("0 pagina&#x27;s gevonden"), "{nothing}");

    let sitemap = get(s.addr, "localhost", "/sitemap.xml").await.text();
    for page in [
        "/en/",
        "/nl/",
        "/en/articles",
        "/nl/articles",
        "/en/features",
        "/en/about",
    ] {
        assert!(
            sitemap.contains(&format!("<loc>http://localhost{page}</loc>")),
            "{page} in {sitemap}"
        );
    }
    assert!(
        sitemap.contains(
            r#"<xhtml:link rel="alternate" hreflang="nl" href="http://localhost/nl/articles"/>"#
        ),
        "{sitemap}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn the_front_page_describes_itself_to_link_previews() {
    let s = start_starter_site(|_| {}).await;
    let html = get(s.addr, "localhost", "/en/").await.text();
    for tag in [
        r#"<meta name="description" content="Fast pages that stay up when everyone arrives at once.">"#,
        r#"<meta property="og:type" content="website">"#,
        r#"<meta property="og:url" content="http://localhost/en/">"#,
    ] {
        assert!(html.contains(tag), "{tag} in {html}");
    }
    // Headings in order: the cards of the first list are one below the h1.
    let first_h = |level: &str| html.find(&format!("<{level}")).unwrap_or(usize::MAX);
    assert!(first_h("h2") < first_h("h3"), "an h2 before any h3");
    s.shutdown().await;
}

/// The paths the cards of a list page link to, in order.
fn card_links(html: &str) -> Vec<String> {
    html.split(r#"<article class="card">"#)
        .skip(1)
        .filter_map(|card| card.split(r#"<h2><a href=""#).nth(1)?.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyword_person_and_date_archive_pages_list_their_articles_newest_first_paged() {
    use bulwark_store::{NewResource, Props};
    let s = start_starter_site(|_| {}).await;
    let store = s.models["default"].store.clone();
    let mut keyword = NewResource::new("keyword", Props::new().with("title", "Harbour"));
    keyword.published = true;
    let keyword = store.create_resource(keyword).unwrap();
    let mut person = NewResource::new("person", Props::new().with("title", "Grace"));
    person.published = true;
    let person = store.create_resource(person).unwrap();
    // Twelve articles of March 2024 about the harbour, by Grace; one of
    // February by nobody about nothing; a draft of March.
    let mut march = Vec::new();
    for day in 1..=12 {
        let mut a = NewResource::new(
            "article",
            Props::new().with("title", format!("Harbour news {day}")),
        );
        a.published = true;
        a.created = chrono::NaiveDate::from_ymd_opt(2024, 3, day)
            .and_then(|d| d.and_hms_opt(9, 0, 0))
            .map(|t| t.and_utc());
        let id = store.create_resource(a).unwrap();
        store.insert_edge(id, "subject", keyword, None).unwrap();
        store.insert_edge(id, "author", person, None).unwrap();
        march.push(id);
    }
    let mut february = NewResource::new("article", Props::new().with("title", "Quiet month"));
    february.published = true;
    february.created = chrono::NaiveDate::from_ymd_opt(2024, 2, 10)
        .and_then(|d| d.and_hms_opt(9, 0, 0))
        .map(|t| t.and_utc());
    store.create_resource(february).unwrap();
    let mut draft = NewResource::new("article", Props::new().with("title", "Unfinished"));
    draft.created = chrono::NaiveDate::from_ymd_opt(2024, 3, 20)
        .and_then(|d| d.and_hms_opt(9, 0, 0))
        .map(|t| t.and_utc());
    store.create_resource(draft).unwrap();
    changes_applied(&s.models["default"]).await;

    let newest_first = |ids: &[bulwark_store::ResourceId]| -> Vec<String> {
        ids.iter()
            .rev()
            .map(|id| format!("/en/page/{id}/harbour-news-"))
            .collect()
    };
    let expected = newest_first(&march);
    let pages = [
        format!("/en/page/{keyword}/harbour"),
        format!("/en/page/{person}/grace"),
        "/en/archive/2024/03".to_owned(),
    ];
    for path in &pages {
        let first = get(s.addr, "localhost", path).await;
        assert_eq!(first.status, 200, "{path}");
        let html = first.text();
        let links = card_links(&html);
        assert_eq!(links.len(), 10, "{path}: ten a page: {links:?}");
        for (link, want) in links.iter().zip(&expected[..10]) {
            assert!(
                link.starts_with(want),
                "{path}: {link} where {want}… was due"
            );
        }
        assert!(
            html.contains(&format!(r#"href="{path}?page=2" rel="next""#)),
            "{path}: a pager: {html}"
        );
        let second = get(s.addr, "localhost", &format!("{path}?page=2"))
            .await
            .text();
        let links = card_links(&second);
        assert_eq!(links.len(), 2, "{path}?page=2: {links:?}");
        assert!(
            links[1].starts_with(&expected[11]),
            "{path}?page=2: {links:?}"
        );
    }
    // A year's archive holds February's article too; a month that is no
    // month is not found; the Dutch archive says so in Dutch.
    let year = get(s.addr, "localhost", "/en/archive/2024?page=2")
        .await
        .text();
    assert_eq!(card_links(&year).len(), 3, "{year}");
    assert!(year.contains("Quiet month"), "{year}");
    for path in [
        "/en/archive/2024/13",
        "/en/archive/abc",
        "/en/archive/2024/0",
    ] {
        assert_eq!(get(s.addr, "localhost", path).await.status, 404, "{path}");
    }
    let dutch = get(s.addr, "localhost", "/nl/archive/2024/03").await.text();
    assert!(dutch.contains("maart 2024"), "{dutch}");
    // A keyword's page names its feed for readers to find.
    let html = get(s.addr, "localhost", &pages[0]).await.text();
    assert!(
        html.contains(&format!(
            r#"<link rel="alternate" type="application/atom+xml" title="Bulwark: Harbour" href="/en/feed/about/{keyword}">"#
        )),
        "{html}"
    );
    s.shutdown().await;
}
