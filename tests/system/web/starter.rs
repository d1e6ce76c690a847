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
