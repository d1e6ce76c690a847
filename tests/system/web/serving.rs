//! Sites, hosts, dispatch, templates and static files over real sockets.

use crate::common;

use std::io::Read;
use std::time::Duration;

use bulwark_testkit::eventually;
use bulwark_web::file_cache::REVALIDATE;
use common::*;

#[tokio::test]
async fn two_sites_are_selected_by_host_header_ignoring_case_and_port() {
    let s = start(&two_sites(), |_| {}).await;
    let a = get(s.addr, "a.test", "/").await;
    assert_eq!(a.status, 200);
    assert!(a.text().contains("site A home"), "{}", a.text());
    let b = get(s.addr, "B.Test:8080", "/").await;
    assert_eq!(b.text(), "site B home");
    // Separate static files and routes.
    assert_eq!(
        get(s.addr, "b.test", "/lib/css/a.css").await.text(),
        "/* site B */"
    );
    assert_eq!(get(s.addr, "b.test", "/page/x").await.status, 404);
    assert_eq!(get(s.addr, "a.test", "/page/x").await.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn alias_host_redirects_to_canonical_host_with_path_and_query() {
    let s = start(&two_sites(), |_| {}).await;
    let r = get(s.addr, "WWW.a.test:8000", "/page/x?y=1&z=%20").await;
    assert_eq!(r.status, 301);
    assert_eq!(
        r.header("location"),
        Some("http://a.test:8000/page/x?y=1&z=%20")
    );
    s.shutdown().await;
}

#[tokio::test]
async fn unknown_host_goes_to_the_default_site_or_404_without_one() {
    let s = start(&two_sites(), |_| {}).await;
    let r = get(s.addr, "unknown.example", "/").await;
    assert!(r.text().contains("site A home"));
    s.shutdown().await;

    let files: Vec<_> = two_sites()
        .into_iter()
        .map(|(p, t)| {
            if p == "a/site.toml" {
                (p, "hostname = \"a.test\"")
            } else {
                (p, t)
            }
        })
        .collect();
    let s = start(&files, |_| {}).await;
    assert_eq!(get(s.addr, "unknown.example", "/").await.status, 404);
    assert_eq!(get(s.addr, "b.test", "/").await.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn missing_or_malformed_host_is_a_bad_request() {
    let s = start(&two_sites(), |_| {}).await;
    let r = raw(s.addr, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(r.status, 400);
    let r = raw(
        s.addr,
        b"GET / HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    assert_eq!(r.status, 400);
    // HTTP/1.0 may omit Host: the default site answers.
    let r = raw(s.addr, b"GET / HTTP/1.0\r\n\r\n").await.unwrap();
    assert_eq!(r.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn a_site_template_overrides_a_module_template_of_the_same_name() {
    let s = start(&two_sites(), |_| {}).await;
    let a = get(s.addr, "a.test", "/robots.txt").await;
    assert_eq!(a.text(), "site A robots");
    let b = get(s.addr, "b.test", "/robots.txt").await;
    assert!(b.text().starts_with("User-agent: *"), "{}", b.text());
    assert_eq!(b.header("content-type"), Some("text/plain; charset=utf-8"));
    // 404 pages too: site A has its own, site B falls back to core's.
    let a404 = get(s.addr, "a.test", "/nope").await;
    assert_eq!(
        (a404.status, a404.text().as_str()),
        (404, "site A has no 404 page here")
    );
    let b404 = get(s.addr, "b.test", "/nope").await;
    assert!(b404.text().contains("404 Not Found"), "{}", b404.text());
    s.shutdown().await;
}

#[tokio::test]
async fn reverse_routing_query_and_redirect_rules() {
    let s = start(&two_sites(), |_| {}).await;
    let home = get(s.addr, "a.test", "/").await;
    assert!(home.text().contains("/page/hello"), "{}", home.text());
    let page = get(s.addr, "a.test", "/page/hi%20there?x=%3Cb%3E").await;
    assert_eq!(page.text(), "page hi there q=&lt;b&gt;");
    let old = get(s.addr, "a.test", "/old/abc").await;
    assert_eq!(
        (old.status, old.header("location")),
        (301, Some("/page/abc"))
    );
    s.shutdown().await;
}

#[tokio::test]
async fn head_has_the_length_and_no_body_and_other_methods_get_405() {
    let s = start(&two_sites(), |_| {}).await;
    let get_r = get(s.addr, "a.test", "/lib/css/a.css").await;
    let head = raw(
        s.addr,
        b"HEAD /lib/css/a.css HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(
        head.header("content-length"),
        get_r.header("content-length")
    );
    let del = raw(
        s.addr,
        b"DELETE /lib/css/a.css HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    assert_eq!(del.status, 405);
    assert_eq!(del.header("allow"), Some("GET, HEAD"));
    s.shutdown().await;
}

fn lib_url(html: &str) -> String {
    let start = html.find("/lib/").unwrap();
    let end = html[start..].find('"').unwrap();
    html[start..start + end].to_string()
}

#[tokio::test]
async fn combined_lib_url_concatenates_compresses_and_caches() {
    let s = start(&two_sites(), |_| {}).await;
    let home = get(s.addr, "a.test", "/").await.text();
    let url = lib_url(&home);
    assert!(
        url.starts_with("/lib/css/a~b~") && url.ends_with(".css"),
        "{url}"
    );

    let plain = get(s.addr, "a.test", &url).await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.text(), "body { color: red; }\np { margin: 0 }\n");
    assert_eq!(
        plain.header("content-type"),
        Some("text/css; charset=utf-8")
    );
    assert_eq!(
        plain.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(plain.header("vary"), Some("Accept-Encoding"));
    let last_modified = plain.header("last-modified").unwrap().to_string();

    let gz = get_with(s.addr, "a.test", &url, "Accept-Encoding: gzip\r\n").await;
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&gz.body), plain.body);

    let br = get_with(s.addr, "a.test", &url, "Accept-Encoding: gzip, br\r\n").await;
    assert_eq!(br.header("content-encoding"), Some("br"));
    let mut unbrotli = Vec::new();
    brotli::Decompressor::new(&br.body[..], 4096)
        .read_to_end(&mut unbrotli)
        .unwrap();
    assert_eq!(unbrotli, plain.body);

    let not_modified = get_with(
        s.addr,
        "a.test",
        &url,
        &format!("If-Modified-Since: {last_modified}\r\n"),
    )
    .await;
    assert_eq!(not_modified.status, 304);
    assert!(not_modified.body.is_empty());
    let old = get_with(
        s.addr,
        "a.test",
        &url,
        "If-Modified-Since: Mon, 01 Jan 2001 00:00:00 GMT\r\n",
    )
    .await;
    assert_eq!(old.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn module_lib_files_are_served_and_a_site_file_overrides_them() {
    let mut files = two_sites();
    files.push(("b/lib/css/bulwark.css", "/* b's own reset */"));
    let s = start(&files, |_| {}).await;
    let core = get(s.addr, "a.test", "/lib/css/bulwark.css").await;
    assert!(core.text().contains("box-sizing"), "{}", core.text());
    assert_eq!(
        get(s.addr, "b.test", "/lib/css/bulwark.css").await.text(),
        "/* b's own reset */"
    );
    s.shutdown().await;
}

const SECRET: &str = "TOP-SECRET-MARKER";

#[tokio::test]
async fn traversal_attempts_never_return_a_byte_from_outside() {
    let s = start(&two_sites(), |_| {}).await;
    let sites = s.sites();
    write(&sites.join("a/secret.txt"), SECRET);
    write(&sites.join("a/templates/secret.css"), SECRET);
    write(&s.dir.path().join("outside.css"), SECRET);
    std::os::unix::fs::symlink(
        s.dir.path().join("outside.css"),
        sites.join("a/lib/css/link.css"),
    )
    .unwrap();
    std::os::unix::fs::symlink(sites.join("a/secret.txt"), sites.join("a/files/link.txt")).unwrap();
    let abs = s.dir.path().join("outside.css");
    let abs = abs.to_str().unwrap();
    let attempts = [
        "/lib/../secret.txt".to_string(),
        "/lib/css/../../secret.txt".into(),
        "/lib/%2e%2e/secret.txt".into(),
        "/lib/%2E%2E/%2E%2E/templates/secret.css".into(),
        "/lib/css%2f..%2f..%2fsecret.txt".into(),
        "/lib/..%2f..%2fsecret.txt".into(),
        "/lib/..%5c..%5csecret.txt".into(),
        "/lib/..\\..\\secret.txt".into(),
        format!("/lib/{abs}"),
        format!("/lib//{}", abs.trim_start_matches('/')),
        format!("/lib/{}", abs.replace('/', "%2f")),
        "/lib/css/link.css".into(),
        "/lib/css/a~link~1.css".into(),
        "/lib/css/a~/..%2f..%2fsecret~1.txt".into(),
        "/lib/css/a.css%00.txt".into(),
        "/lib/%00/../secret.txt".into(),
        "/lib/%252e%252e/secret.txt".into(),
        "/files/../secret.txt".into(),
        "/files/%2e%2e/secret.txt".into(),
        "/files/link.txt".into(),
        format!("/files/{}", abs.replace('/', "%2F")),
        "/files/.%2e/secret.txt".into(),
    ];
    for path in &attempts {
        let req = format!("GET {path} HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n");
        let r = raw(s.addr, req.as_bytes()).await.expect("an answer");
        assert!(!r.text().contains(SECRET), "{path} leaked: {}", r.status);
        assert_eq!(r.status, 404, "{path}");
    }
    // The server is still fine.
    assert_eq!(get(s.addr, "a.test", "/lib/css/a.css").await.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn file_controller_streams_with_range_requests() {
    let s = start(&two_sites(), |_| {}).await;
    let full = get(s.addr, "a.test", "/files/doc.txt").await;
    assert_eq!(
        (full.status, full.text().as_str()),
        (200, "0123456789abcdefghij")
    );
    assert_eq!(full.header("accept-ranges"), Some("bytes"));
    let part = get_with(s.addr, "a.test", "/files/doc.txt", "Range: bytes=5-9\r\n").await;
    assert_eq!((part.status, part.text().as_str()), (206, "56789"));
    assert_eq!(part.header("content-range"), Some("bytes 5-9/20"));
    let tail = get_with(s.addr, "a.test", "/files/doc.txt", "Range: bytes=-3\r\n").await;
    assert_eq!(tail.text(), "hij");
    let bad = get_with(s.addr, "a.test", "/files/doc.txt", "Range: bytes=50-60\r\n").await;
    assert_eq!(bad.status, 416);
    assert_eq!(bad.header("content-range"), Some("bytes */20"));
    s.shutdown().await;
}

#[tokio::test]
async fn files_are_answered_from_memory_with_validators_and_follow_the_disk() {
    // A budget of 64 KiB: files up to 2 KiB are held, larger ones streamed.
    let s = start(&two_sites(), |o| o.file_memory_bytes = 64 * 1024).await;
    let files = s.sites().join("a/files");
    let first = get(s.addr, "a.test", "/files/doc.txt").await;
    let etag = first.header("etag").expect("an ETag").to_owned();
    assert!(first.header("last-modified").is_some());
    // The validator answers 304, a stale one the file; the tag decides over the date.
    let same = get_with(
        s.addr,
        "a.test",
        "/files/doc.txt",
        &format!("If-None-Match: {etag}\r\n"),
    )
    .await;
    assert_eq!((same.status, same.body.len()), (304, 0));
    let other = get_with(
        s.addr,
        "a.test",
        "/files/doc.txt",
        "If-None-Match: \"old\"\r\nIf-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n",
    )
    .await;
    assert_eq!(other.status, 200);
    // A range of a held file.
    let part = get_with(s.addr, "a.test", "/files/doc.txt", "Range: bytes=5-9\r\n").await;
    assert_eq!((part.status, part.text().as_str()), (206, "56789"));

    // Replaced on disk: served new within a second (and a new tag). A timer:
    // the file cache looks at a file again after REVALIDATE.
    write(&files.join("doc.txt"), "replaced");
    tokio::time::sleep(REVALIDATE + Duration::from_millis(100)).await;
    let new = get(s.addr, "a.test", "/files/doc.txt").await;
    assert_eq!(new.text(), "replaced");
    assert_ne!(new.header("etag"), Some(etag.as_str()));
    // Removed: gone within a second.
    std::fs::remove_file(files.join("doc.txt")).unwrap();
    tokio::time::sleep(REVALIDATE + Duration::from_millis(100)).await;
    assert_eq!(get(s.addr, "a.test", "/files/doc.txt").await.status, 404);

    // Text is sent compressed to whoever takes it; large files are streamed
    // with ranges all the same.
    write(&files.join("site.css"), &"body { color: red }\n".repeat(50));
    let css = get_with(
        s.addr,
        "a.test",
        "/files/site.css",
        "Accept-Encoding: gzip\r\n",
    )
    .await;
    assert_eq!(css.header("content-encoding"), Some("gzip"));
    let big: String = (0..5000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    write(&files.join("big.txt"), &big);
    let whole = get(s.addr, "a.test", "/files/big.txt").await;
    assert_eq!(whole.text(), big);
    let part = get_with(s.addr, "a.test", "/files/big.txt", "Range: bytes=4990-\r\n").await;
    assert_eq!((part.status, part.text().as_str()), (206, &big[4990..]));
    let tag = whole.header("etag").unwrap().to_owned();
    let same = get_with(
        s.addr,
        "a.test",
        "/files/big.txt",
        &format!("If-None-Match: {tag}\r\n"),
    )
    .await;
    assert_eq!(same.status, 304);

    // What a browser would run is only ever a download, and never sniffed.
    write(&files.join("page.html"), "<script>alert(1)</script>");
    write(
        &files.join("logo.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
    );
    for name in ["page.html", "logo.svg"] {
        let r = get(s.addr, "a.test", &format!("/files/{name}")).await;
        assert_eq!(r.status, 200);
        assert_eq!(
            r.header("content-disposition"),
            Some("attachment"),
            "{name}"
        );
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    }
    assert_eq!(
        get(s.addr, "a.test", "/files/site.css")
            .await
            .header("content-disposition"),
        None
    );
    s.shutdown().await;
}

#[tokio::test]
async fn large_lib_files_stream_from_disk() {
    let s = start(&two_sites(), |_| {}).await;
    let big = "x".repeat(2 * 1024 * 1024);
    write(&s.sites().join("a/lib/big.js"), &big);
    let r = get(s.addr, "a.test", "/lib/big.js").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), big.len());
    assert_eq!(r.header("content-length"), Some("2097152"));
    s.shutdown().await;
}

#[tokio::test]
async fn template_syntax_error_in_production_shows_the_sites_500_page() {
    let s = start(&two_sites(), |_| {}).await;
    let r = get(s.addr, "a.test", "/broken").await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (500, "site A is sorry (500)")
    );
    assert_eq!(get(s.addr, "a.test", "/").await.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn template_syntax_error_in_dev_mode_shows_file_and_line() {
    let s = start(&two_sites(), |o| o.dev = true).await;
    let r = get(s.addr, "a.test", "/broken").await;
    assert_eq!(r.status, 500);
    let text = r.text();
    assert!(text.contains("broken.tpl, line 2"), "{text}");
    assert!(text.contains("syntax error"), "{text}");
    assert_eq!(get(s.addr, "a.test", "/").await.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn a_runaway_template_is_stopped_by_fuel() {
    let s = start(&two_sites(), |o| o.fuel = 1_000_000).await;
    let started = std::time::Instant::now();
    let r = get(s.addr, "a.test", "/runaway").await;
    assert_eq!(r.status, 500);
    assert!(started.elapsed() < Duration::from_secs(5));
    s.shutdown().await;
}

#[tokio::test]
async fn dev_mode_reloads_edited_templates_and_config() {
    let s = start(&two_sites(), |o| o.dev = true).await;
    assert_eq!(get(s.addr, "b.test", "/").await.text(), "site B home");
    // Ensure a different mtime even on coarse file systems.
    tokio::time::sleep(Duration::from_millis(20)).await;
    write(
        &s.sites().join("b/templates/home.tpl"),
        "site B home, edited",
    );
    assert_eq!(
        get(s.addr, "b.test", "/").await.text(),
        "site B home, edited"
    );

    let toml = format!(
        "{SITE_B}\n[[dispatch]]\nname = \"new\"\npath = \"/new\"\ncontroller = \"template\"\ntemplate = \"home.tpl\"\n"
    );
    write(&s.sites().join("b/site.toml"), &toml);
    eventually(
        "the new rule is picked up",
        Duration::from_secs(4),
        || async { (get(s.addr, "b.test", "/new").await.status == 200).then_some(()) },
    )
    .await;
    // A broken config is refused and the running site stays. (A timer: the
    // watcher looks every 500 ms, and nothing tells that it refused.)
    write(&s.sites().join("b/site.toml"), "hostname = 5");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(get(s.addr, "b.test", "/new").await.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn post_forms_reach_the_template() {
    let s = start(&two_sites(), |_| {}).await;
    let body = "x=a+b%21";
    let req = format!(
        "POST /page/p HTTP/1.1\r\nHost: a.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let r = raw(s.addr, req.as_bytes()).await.unwrap();
    assert_eq!(r.text(), "page p q=a b!");
    s.shutdown().await;
}

/// The access log once it has `lines` lines (it is written by a thread of its own).
async fn logged(log: &std::path::Path, lines: usize) -> String {
    let what = format!("{lines} lines in the access log");
    eventually(&what, Duration::from_secs(5), || async {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        (text.lines().count() >= lines).then_some(text)
    })
    .await
}

#[tokio::test]
async fn access_log_gets_one_line_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let log2 = log.clone();
    let s = start(&two_sites(), move |o| {
        o.access_log = bulwark_http::AccessLogTarget::File(log2)
    })
    .await;
    get_with(s.addr, "a.test", "/page/x", "User-Agent: test-agent\r\n").await;
    get(s.addr, "b.test", "/nope").await;
    s.shutdown().await;
    // Written by the time the server has stopped.
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains("\"GET /page/x HTTP/1.1\" 200") && lines[0].contains("\"test-agent\""),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("\" 404 ") && lines[1].contains("b.test"),
        "{}",
        lines[1]
    );
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_access_log_and_hsts_follow_the_visitor() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let log2 = log.clone();
    let s = start(&two_sites(), move |o| {
        o.access_log = bulwark_http::AccessLogTarget::File(log2);
        o.trusted_proxies = bulwark_http::TrustedProxies::parse(&["127.0.0.0/8"]).unwrap();
    })
    .await;
    let forwarded = "X-Forwarded-For: 198.51.100.1, 203.0.113.7\r\nX-Forwarded-Proto: https\r\n";
    let resp = get_with(s.addr, "a.test", "/page/x", forwarded).await;
    assert!(resp.header("strict-transport-security").is_some());
    let resp = get(s.addr, "a.test", "/page/x").await;
    assert!(resp.header("strict-transport-security").is_none());
    s.shutdown().await;
    let text = logged(&log, 2).await;
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("203.0.113.7 - - ["), "{text}");
    assert!(lines[1].starts_with("127.0.0.1 - - ["), "{text}");
}

#[tokio::test]
async fn client_fields_in_the_access_log_are_escaped_so_no_line_or_field_can_be_forged() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let log2 = log.clone();
    let s = start(&two_sites(), move |o| {
        o.access_log = bulwark_http::AccessLogTarget::File(log2)
    })
    .await;
    let forged = "\" 200 1 \"-\" \"-\" \"a.test\" 1us";
    let requests: [Vec<u8>; 3] = [
        format!("GET /page/x HTTP/1.1\r\nHost: a.test{forged}\r\nConnection: close\r\n\r\n").into(),
        [
            format!("GET /page/x HTTP/1.1\r\nHost: a.test\r\nUser-Agent: ua{forged}\\").as_bytes(),
            b"\xff\r\nConnection: close\r\n\r\n",
        ]
        .concat(),
        b"GET /page/\"x\\ HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n".into(),
    ];
    for request in requests {
        raw(s.addr, &request).await.expect("an answer");
    }
    s.shutdown().await;
    let text = logged(&log, 3).await;
    assert!(text.is_ascii(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    for line in &lines {
        // Request line, referer, user agent and host: four quoted fields, no more.
        assert_eq!(line.matches('"').count(), 8, "{line}");
    }
    assert!(
        lines[0].contains("\"a.test\\x22 200 1 \\x22-\\x22"),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("\"ua\\x22 200 1 "), "{}", lines[1]);
    assert!(lines[1].contains("1us\\x5C\\xFF\""), "{}", lines[1]);
    assert!(
        lines[2].contains("\"GET /page/\\x22x\\x5C HTTP/1.1\""),
        "{}",
        lines[2]
    );
}

#[tokio::test]
async fn a_request_naming_its_host_twice_or_two_ways_gets_400() {
    let s = start(&two_sites(), |_| {}).await;
    let ambiguous = [
        "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: b.test\r\nHost: b.test\r\nConnection: close\r\n\r\n",
        "GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
        "GET http://a.test:8080/ HTTP/1.1\r\nHost: a.test:9090\r\nConnection: close\r\n\r\n",
    ];
    for request in ambiguous {
        let r = raw(s.addr, request.as_bytes()).await.expect("an answer");
        assert_eq!(r.status, 400, "{request:?}");
    }
    // One way of naming it is fine, absolute-form included.
    let agreeing = [
        "GET / HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
        "GET http://b.test/ HTTP/1.1\r\nConnection: close\r\n\r\n",
        "GET http://b.test/ HTTP/1.1\r\nHost: B.test\r\nConnection: close\r\n\r\n",
        "GET http://b.test:8080/ HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
    ];
    for request in agreeing {
        let r = raw(s.addr, request.as_bytes()).await.expect("an answer");
        assert_eq!(r.text(), "site B home", "{request:?}");
    }
    s.shutdown().await;
}
