//! HTML written through the JSON API: refused with a clear 422 when its shape
//! would make the sanitiser slow, and sanitised before the write takes the
//! database's writer, so a large body being cleaned holds up no other write.

use crate::common;

use std::net::SocketAddr;
use std::time::Instant;

use bulwark_store::{NewResource, Props, ResourceId, Store};
use common::*;

const SITE: &str = r#"
hostname = "news.test"
default = true

[api]
token = "secret"

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
"#;

async fn start_site() -> TestServer {
    start(
        &[
            ("news/site.toml", SITE),
            ("news/templates/home.tpl", "home"),
        ],
        |_| {},
    )
    .await
}

fn create(store: &Store, title: &str) -> ResourceId {
    store
        .create_resource(NewResource::new(
            "article",
            Props::new().with("title", title),
        ))
        .unwrap()
}

async fn patch(addr: SocketAddr, id: ResourceId, props: serde_json::Value) -> RawResponse {
    let body = serde_json::json!({ "props": props }).to_string();
    let request = format!(
        "PATCH /api/rsc/{id} HTTP/1.1\r\nHost: news.test\r\nAuthorization: Bearer secret\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    raw(addr, request.as_bytes()).await.expect("a response")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_html_is_refused_with_422_and_a_clear_message() {
    let s = start_site().await;
    let store = s.models["news"].store.clone();
    let x = create(&store, "Nested");
    // What took the sanitiser 12 s (release build) while it held the writer.
    let nested = "<div>".repeat(100_000);
    let r = patch(s.addr, x, serde_json::json!({ "body": nested })).await;
    assert_eq!(r.status, 422, "{}", r.text());
    let error: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        error["detail"],
        "body: this HTML cannot be stored: elements are nested deeper than 256 levels"
    );
    // Nothing was written; nesting within the limit is fine.
    assert_eq!(store.resource(x).unwrap().unwrap().props.get("body"), None);
    let fine = format!("{}deep{}", "<div>".repeat(200), "</div>".repeat(200));
    let r = patch(s.addr, x, serde_json::json!({ "summary": fine })).await;
    assert_eq!(r.status, 200, "{}", r.text());
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_write_completes_while_a_large_body_is_still_being_sanitised() {
    let s = start_site().await;
    let store = s.models["news"].store.clone();
    let big_one = create(&store, "Big");
    let small_one = create(&store, "Small");
    // A legal body near the size limit, with links and titles to clean: its
    // sanitising takes far longer than a small write (see the durations
    // printed below), and it used to run while holding the database's writer.
    let paragraph = r#"<p>Some <b>bold</b> and <a href="https://example.com/?a=1&amp;b=2" title="it's &quot;here&quot;">a link</a>, <abbr title="x">x</abbr>.</p>"#;
    let big = paragraph.repeat(480 * 1024 / paragraph.len());
    let started = Instant::now();
    let addr = s.addr;
    let big_write = tokio::spawn(async move {
        let r = patch(addr, big_one, serde_json::json!({ "body": big })).await;
        (r.status, started.elapsed())
    });
    // Let the big request arrive and its sanitising begin.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let small = patch(s.addr, small_one, serde_json::json!({ "title": "Quick" })).await;
    let small_done = started.elapsed();
    assert_eq!(small.status, 200, "{}", small.text());
    let (big_status, big_done) = big_write.await.unwrap();
    assert_eq!(big_status, 200);
    println!("small write done after {small_done:?}, big write after {big_done:?}");
    assert!(
        small_done < big_done,
        "the small write waited for the big one: {small_done:?} vs {big_done:?}"
    );
    s.shutdown().await;
}
