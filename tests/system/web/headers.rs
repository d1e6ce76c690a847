//! Security headers (`[headers]` in site.toml) on every kind of answer a site
//! gives: the policies on documents, `nosniff` on everything, and nothing else.

use crate::common;

use common::*;

const DEFAULT_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
                           img-src 'self' https: data:; connect-src 'self'; \
                           object-src 'none'; base-uri 'self'; form-action 'self'; \
                           frame-ancestors 'self'; \
                           frame-src 'self' https://www.youtube-nocookie.com https://player.vimeo.com";

fn assert_default_headers(r: &RawResponse, what: &str) {
    assert_eq!(
        r.header("content-security-policy"),
        Some(DEFAULT_CSP),
        "{what}"
    );
    assert_eq!(
        r.header("x-content-type-options"),
        Some("nosniff"),
        "{what}"
    );
    assert_eq!(
        r.header("referrer-policy"),
        Some("strict-origin-when-cross-origin"),
        "{what}"
    );
    assert_eq!(r.header("x-frame-options"), Some("SAMEORIGIN"), "{what}");
    // Plain HTTP: HSTS would be ignored, and is not sent.
    assert_eq!(r.header("strict-transport-security"), None, "{what}");
}

/// What every answer carries, document or not.
fn assert_no_document_headers(r: &RawResponse, what: &str) {
    assert_eq!(
        r.header("x-content-type-options"),
        Some("nosniff"),
        "{what}"
    );
    for name in [
        "content-security-policy",
        "referrer-policy",
        "x-frame-options",
        "strict-transport-security",
    ] {
        assert_eq!(r.header(name), None, "{what}: {name}");
    }
}

#[tokio::test]
async fn every_document_carries_the_default_security_headers_and_every_answer_nosniff() {
    let s = start(&two_sites(), |_| {}).await;
    let page = get(s.addr, "a.test", "/page/x").await;
    assert_eq!(page.status, 200);
    assert_default_headers(&page, "a page");
    let cached = get(s.addr, "a.test", "/page/x").await;
    assert_eq!(cached.text(), page.text());
    assert_default_headers(&cached, "the page from the cache");
    let missing = get(s.addr, "a.test", "/nope/nothing").await;
    assert_eq!(missing.status, 404);
    assert_default_headers(&missing, "a 404");
    let redirect = get(s.addr, "a.test", "/old/x").await;
    assert_eq!(redirect.status, 301, "a permanent redirect rule");
    assert_default_headers(&redirect, "a redirect rule");
    let alias = get(s.addr, "www.a.test", "/page/x").await;
    assert_eq!(alias.status, 301);
    assert_default_headers(&alias, "an alias redirect");
    // Not documents: nosniff only.
    let lib = get(s.addr, "a.test", "/lib/css/a.css").await;
    assert_eq!(lib.status, 200);
    assert_no_document_headers(&lib, "a stylesheet");
    let api = get(s.addr, "a.test", "/api/stats").await;
    assert_eq!(api.header("content-type"), Some("application/problem+json"));
    assert_no_document_headers(&api, "the API");
    s.shutdown().await;
}

/// Every header name of an answer, sorted (but `Connection`: the test client
/// asks to close, and the server says it does).
fn names(r: &RawResponse) -> Vec<&str> {
    let mut names: Vec<&str> = r
        .headers
        .keys()
        .map(String::as_str)
        .filter(|n| *n != "connection")
        .collect();
    names.sort_unstable();
    names
}

#[tokio::test]
async fn an_answer_carries_its_own_headers_and_only_those_the_site_configured() {
    let json_site = |headers: &str| {
        format!(
            "hostname = \"j.test\"\ndefault = true\n{headers}\n\
             [[dispatch]]\nname = \"json\"\npath = \"/json\"\ncontroller = \"template\"\n\
             template = \"hello.json\"\ncache = false\n"
        )
    };
    let template = r#"{{ {"message": "Hello, World!"} }}"#;
    for (headers, expected) in [
        (
            "",
            vec![
                "cache-control",
                "content-length",
                "content-type",
                "date",
                "x-content-type-options",
            ],
        ),
        (
            "[headers]\ncontent_security_policy = \"\"\nx_content_type_options = \"\"\n\
             referrer_policy = \"\"\nx_frame_options = \"\"\n",
            vec!["cache-control", "content-length", "content-type", "date"],
        ),
    ] {
        let site = json_site(headers);
        let s = start(
            &[("j/site.toml", &site), ("j/templates/hello.json", template)],
            |_| {},
        )
        .await;
        let r = get(s.addr, "j.test", "/json").await;
        assert_eq!(r.text(), r#"{"message":"Hello, World!"}"#);
        assert_eq!(names(&r), expected, "with {headers:?}");
        s.shutdown().await;
    }
}

/// Every header line of an answer but `Date`, sorted (repeated ones too).
fn all_but_date(r: &RawResponse) -> Vec<String> {
    let mut lines: Vec<String> = r
        .header_lines
        .iter()
        .filter(|l| !l.starts_with("date:"))
        .cloned()
        .collect();
    lines.sort_unstable();
    lines
}

/// `lines` (sorted header lines) with those starting with `name` replaced
/// by `with`, sorted again.
fn replacing(lines: &[String], name: &str, with: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut replaced: Vec<String> = lines
        .iter()
        .filter(|l| !l.starts_with(name))
        .cloned()
        .chain(with)
        .collect();
    replaced.sort_unstable();
    replaced
}

/// A page cache hit is answered from headers made once per page (and per
/// load of the site), not built again: they must be what the general path
/// makes, in every encoding, and follow the site's settings when it reloads.
#[tokio::test]
async fn a_cached_page_is_answered_with_the_headers_of_the_general_path_and_the_sites_settings() {
    let mut files = two_sites();
    files.retain(|(p, _)| *p != "a/templates/page.tpl");
    // A number drawn per render: the same one again is a hit.
    files.push((
        "a/templates/page.tpl",
        "page {{ slug }} {{ random(1000000000) }}",
    ));
    let s = start(&files, |_| {}).await;
    let first = get(s.addr, "a.test", "/page/x").await;
    let hit = get(s.addr, "a.test", "/page/x").await;
    assert_eq!(hit.text(), first.text(), "the second is a hit");
    assert_eq!(all_but_date(&hit), all_but_date(&first));
    let length = hit.body.len().to_string();
    let etag = hit.header("etag").expect("a validator").to_string();
    let modified = hit
        .header("last-modified")
        .expect("when it was rendered")
        .to_string();
    let mut expected = vec![
        "accept-ranges: bytes".to_string(),
        "cache-control: no-cache".into(),
        "connection: close".into(),
        format!("content-length: {length}"),
        format!("content-security-policy: {DEFAULT_CSP}"),
        "content-type: text/html; charset=utf-8".into(),
        format!("etag: {etag}"),
        format!("last-modified: {modified}"),
        "referrer-policy: strict-origin-when-cross-origin".into(),
        "vary: Accept-Encoding".into(),
        "x-content-type-options: nosniff".into(),
        "x-frame-options: SAMEORIGIN".into(),
    ];
    expected.sort_unstable();
    assert_eq!(all_but_date(&hit), expected, "a hit, as it is");
    // A range takes the general path: the same headers, and its range.
    let part = get_with(s.addr, "a.test", "/page/x", "Range: bytes=0-3\r\n").await;
    assert_eq!(part.status, 206);
    assert_eq!(part.text(), "page");
    let ranged = replacing(
        &expected,
        "content-length",
        [
            "content-length: 4".to_string(),
            format!("content-range: bytes 0-3/{length}"),
        ],
    );
    assert_eq!(all_but_date(&part), ranged, "a range");
    for (asked, encoding) in [("gzip", "gzip"), ("br", "br"), ("gzip, br", "br")] {
        let encoded = get_with(
            s.addr,
            "a.test",
            "/page/x",
            &format!("Accept-Encoding: {asked}\r\n"),
        )
        .await;
        assert_eq!(
            encoded.header("content-encoding"),
            Some(encoding),
            "{asked}"
        );
        let with_encoding = replacing(
            &expected,
            "content-length",
            [
                format!("content-encoding: {encoding}"),
                format!("content-length: {}", encoded.body.len()),
            ],
        );
        assert_eq!(all_but_date(&encoded), with_encoding, "{asked}");
    }
    // A revisit with the page's validator: 304, by the general path.
    let revisit = get_with(
        s.addr,
        "a.test",
        "/page/x",
        &format!("If-None-Match: {etag}\r\n"),
    )
    .await;
    assert_eq!(revisit.status, 304);
    assert_default_headers(&revisit, "a 304");
    // The site's policy changes; the page stays cached (its templates did
    // not change), and its next hit says the new policy.
    let site_a = format!("{SITE_A}\n[headers]\ncontent_security_policy = \"default-src 'none'\"\n");
    write(&s.sites().join("a/site.toml"), &site_a);
    s.reload().await;
    let after = get(s.addr, "a.test", "/page/x").await;
    assert_eq!(after.text(), first.text(), "still the cached page");
    assert_eq!(
        after.header("content-security-policy"),
        Some("default-src 'none'")
    );
    let reloaded = replacing(
        &expected,
        "content-security-policy",
        ["content-security-policy: default-src 'none'".to_string()],
    );
    assert_eq!(all_but_date(&after), reloaded, "after the reload");
    s.shutdown().await;
}

#[tokio::test]
async fn a_site_can_replace_a_security_header_or_turn_it_off() {
    let site_b = format!(
        "{SITE_B}\n[headers]\ncontent_security_policy = \"default-src 'none'\"\nreferrer_policy = \"\"\n"
    );
    let mut files = two_sites();
    files.retain(|(p, _)| *p != "b/site.toml");
    files.push(("b/site.toml", &site_b));
    let s = start(&files, |_| {}).await;
    let b = get(s.addr, "b.test", "/").await;
    assert_eq!(b.text(), "site B home");
    assert_eq!(
        b.header("content-security-policy"),
        Some("default-src 'none'")
    );
    assert_eq!(b.header("referrer-policy"), None);
    assert_eq!(b.header("x-content-type-options"), Some("nosniff"));
    // The other site keeps the defaults.
    assert_default_headers(&get(s.addr, "a.test", "/").await, "site A");
    s.shutdown().await;
}

#[tokio::test]
async fn the_starter_site_has_no_inline_script_style_or_event_handler() {
    let s = start_starter_site(|_| {}).await;
    for path in [
        "/en/",
        "/nl/",
        "/about",
        "/features",
        "/articles",
        "/category/article",
        "/live",
        "/contact",
        "/features/push",
        "/page/1",
        "/nope",
    ] {
        let r = get(s.addr, "localhost", path).await;
        assert_default_headers(&r, path);
        // Styled from a file, not inline (the 404 is core's error page).
        assert!(
            r.text().contains("/lib/css/bulwark"),
            "{path}: {}",
            r.text()
        );
        let html = r.text().to_ascii_lowercase();
        for script in html.split("<script").skip(1) {
            let tag = &script[..script.find('>').unwrap()];
            // A JSON data block (the scripts' texts) is not run, so the
            // policy has nothing to allow; any other script comes from a file.
            assert!(
                tag.contains(" src=") || tag.contains(r#"type="application/json""#),
                "{path}: an inline <script{tag}>"
            );
        }
        assert!(!html.contains("<style"), "{path}: an inline <style>");
        assert!(!html.contains(" style="), "{path}: a style attribute");
        let handler = event_handler_attribute(&html);
        assert!(handler.is_none(), "{path}: an event handler {handler:?}");
    }
    s.shutdown().await;
}

/// The first ` on...=` attribute in `html`, if any.
fn event_handler_attribute(html: &str) -> Option<&str> {
    html.match_indices(" on").find_map(|(i, _)| {
        let rest = &html[i + 3..];
        let name_len = rest.bytes().take_while(u8::is_ascii_lowercase).count();
        (name_len > 0 && rest[name_len..].starts_with('=')).then(|| &html[i..i + 3 + name_len + 1])
    })
}

/// A reload that changes what a render reads (a setting, a module) renders
/// every page of that site again and no page of another; one that changes
/// nothing, or only the headers added to each answer, keeps them cached.
/// Turning the `cdn` module on this way gives the pages cached before it
/// their surrogate keys at once.
#[tokio::test]
async fn a_reload_that_changes_what_a_render_reads_renders_that_sites_pages_again_and_no_other() {
    let mut files = two_sites();
    files.retain(|(p, _)| {
        !matches!(
            *p,
            "a/templates/page.tpl" | "a/templates/home.tpl" | "b/templates/home.tpl"
        )
    });
    // A number drawn per render: the same one again is the cached page.
    files.extend([
        (
            "a/templates/page.tpl",
            "{{ site.settings.title }} page {{ random(1000000000) }}",
        ),
        ("a/templates/home.tpl", "A home {{ random(1000000000) }}"),
        ("b/templates/home.tpl", "B home {{ random(1000000000) }}"),
    ]);
    let s = start(&files, |_| {}).await;
    let pages = || async {
        [
            get(s.addr, "a.test", "/page/x").await.text(),
            get(s.addr, "a.test", "/").await.text(),
            get(s.addr, "b.test", "/").await.text(),
        ]
    };
    let first = pages().await;
    assert!(first[0].starts_with("Site A page "), "{first:?}");
    assert_eq!(pages().await, first, "cached");

    s.reload().await;
    assert_eq!(
        pages().await,
        first,
        "nothing changed: nothing rendered again"
    );

    let config = s.sites().join("a/site.toml");
    write(
        &config,
        &format!("{SITE_A}\n[headers]\nreferrer_policy = \"\"\n"),
    );
    s.reload().await;
    assert_eq!(pages().await, first, "the headers are not rendered");

    write(
        &config,
        &SITE_A.replace("title = \"Site A\"", "title = \"Site A, renamed\""),
    );
    s.reload().await;
    let renamed = pages().await;
    assert!(
        renamed[0].starts_with("Site A, renamed page "),
        "{renamed:?}"
    );
    assert_ne!(renamed[1], first[1], "every page of the site");
    assert_eq!(renamed[2], first[2], "the other site's stays cached");

    // The cdn module turned on: the page cached before it goes out again
    // with the keys a cache in front purges it by.
    assert_eq!(get(s.addr, "a.test", "/page/x").await.header("xkey"), None);
    write(
        &config,
        &SITE_A
            .replace("title = \"Site A\"", "title = \"Site A, renamed\"")
            .replace(r#"modules = ["seo"]"#, r#"modules = ["seo", "cdn"]"#),
    );
    s.reload().await;
    let fronted = get(s.addr, "a.test", "/page/x").await;
    assert_ne!(fronted.text(), renamed[0], "rendered again");
    assert!(
        fronted.header("xkey").is_some(),
        "{:?}",
        all_but_date(&fronted)
    );
    assert_eq!(get(s.addr, "b.test", "/").await.text(), first[2]);
    s.shutdown().await;
}

/// Two nodes of a cluster on PostgreSQL, each with its own site.toml (as a
/// cluster is run: the same file put on every node, each node reloaded). A
/// renamed site reaches each node's cached pages when that node reloads, and
/// only then: the other node, still on its old configuration, keeps its
/// pages (they are right for it) until it reloads too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_two_nodes_each_reload_renders_its_own_pages_again() {
    let schema = crate::accounts::fresh_schema("reload_nodes");
    let (name_a, name_b) = (format!("a-{schema}"), format!("b-{schema}"));
    let a =
        crate::accounts::starter_node(&schema, &name_a, "", &[], bulwark_module_cluster::module())
            .await;
    let b =
        crate::accounts::starter_node(&schema, &name_b, "", &[], bulwark_module_cluster::module())
            .await;
    let about = |node: &TestServer| {
        let addr = node.addr;
        async move { get(addr, "localhost", "/en/about").await.text() }
    };
    let (first_a, first_b) = (about(&a).await, about(&b).await);
    assert!(first_a.contains(">Bulwark<"), "the starter's title");
    assert_eq!(about(&a).await, first_a, "cached on A");
    assert_eq!(about(&b).await, first_b, "cached on B");
    let renamed = |node: &TestServer| {
        let toml = node.sites().join("default/site.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        write(
            &toml,
            &text.replacen("title = \"Bulwark\"", "title = \"Bulwark, renamed\"", 1),
        );
    };
    renamed(&a);
    renamed(&b);

    a.reload().await;
    assert!(
        about(&a).await.contains(">Bulwark, renamed<"),
        "A renders again"
    );
    assert_eq!(
        about(&b).await,
        first_b,
        "B, not reloaded yet, keeps its page"
    );
    b.reload().await;
    assert!(
        about(&b).await.contains(">Bulwark, renamed<"),
        "B renders again"
    );
    crate::accounts::stop_nodes(vec![a, b], &schema).await;
}
