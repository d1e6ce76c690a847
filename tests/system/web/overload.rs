//! Overload: renders beyond the site's capacity get a fast 503 with Retry-After,
//! while cached pages and static files keep being served, and service resumes when
//! the rush is over.

use crate::common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::*;

const SITE: &str = r#"
hostname = "slow.test"
default = true

[[dispatch]]
name = "slow"
path = "/slow"
controller = "template"
template = "slow.tpl"
cache = false

[[dispatch]]
name = "cached"
path = "/cached"
controller = "template"
template = "cached.tpl"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excess_renders_get_a_fast_503_and_cached_pages_keep_flowing() {
    let files = [
        ("slow/site.toml", SITE),
        (
            "slow/templates/slow.tpl",
            "{% for i in range(500) %}{% for j in range(1000) %}{% endfor %}{% endfor %}done",
        ),
        ("slow/templates/cached.tpl", "cached page"),
        ("slow/lib/app.css", "body{}"),
    ];
    let s = start(&files, |o| {
        o.render_limits = bulwark_web::RenderLimits {
            concurrency: 1,
            queue_timeout: Duration::from_millis(100),
        };
    })
    .await;
    assert_eq!(
        get(s.addr, "slow.test", "/cached").await.text(),
        "cached page"
    );

    let renders = || s.models["slow"].renders.load(Ordering::Relaxed);
    let before = renders();
    let mut rush = Vec::new();
    for _ in 0..24 {
        let addr = s.addr;
        rush.push(tokio::spawn(async move {
            let t = Instant::now();
            let r = get(addr, "slow.test", "/slow").await;
            (
                r.status,
                r.header("retry-after").map(str::to_string),
                t.elapsed(),
            )
        }));
    }
    bulwark_testkit::eventually(
        "a render of the rush runs",
        Duration::from_secs(5),
        || async { (renders() > before).then_some(()) },
    )
    .await;
    // Meanwhile, cached pages and static files answer quickly.
    for path in ["/cached", "/lib/app.css"] {
        let t = Instant::now();
        assert_eq!(get(s.addr, "slow.test", path).await.status, 200);
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{path} took {:?}",
            t.elapsed()
        );
    }
    let mut ok = 0;
    let mut busy = 0;
    for r in rush {
        let (status, retry_after, took) = r.await.unwrap();
        match status {
            200 => ok += 1,
            503 => {
                busy += 1;
                assert_eq!(retry_after.as_deref(), Some("1"));
                assert!(
                    took < Duration::from_secs(2),
                    "a 503 must be fast: {took:?}"
                );
            }
            other => panic!("unexpected status {other}"),
        }
    }
    assert!(ok >= 1 && busy >= 1, "ok {ok}, busy {busy}");

    // The rush is over (a render frees its slot before it answers): normal
    // service.
    let r = get(s.addr, "slow.test", "/slow").await;
    assert_eq!((r.status, r.text().as_str()), (200, "done"));
    s.shutdown().await;
}

/// Text that compresses slowly: words in a pseudo-random order.
fn script(seed: u64, len: usize) -> String {
    let words = [
        "function ",
        "var ",
        "return ",
        "{",
        "}",
        "(x)",
        ";\n",
        "if (a) ",
        "else ",
    ];
    let mut x = seed;
    let mut out = String::with_capacity(len + 32);
    while out.len() < len {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push_str(words[(x >> 60) as usize % words.len()]);
        out.push_str(&(x % 1000).to_string());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_lib_combination_beyond_the_build_limit_gets_503_while_built_ones_are_served() {
    let big1 = script(1, 150_000);
    let big2 = script(2, 150_000);
    let files = [
        ("slow/site.toml", SITE),
        ("slow/templates/slow.tpl", "slow"),
        ("slow/templates/cached.tpl", "cached"),
        ("slow/lib/js/a.js", "var a;"),
        ("slow/lib/js/b.js", "var b;"),
        ("slow/lib/js/big1.js", big1.as_str()),
        ("slow/lib/js/big2.js", big2.as_str()),
    ];
    let s = start(&files, |o| {
        o.lib_limits = bulwark_web::LibLimits {
            concurrency: 1,
            memory_bytes: 1 << 30,
            queue_timeout: Duration::from_millis(100),
        };
    })
    .await;
    let built = get(s.addr, "slow.test", "/lib/js/a~b~1.js").await;
    assert_eq!(built.status, 200);
    assert_eq!(built.text(), "var a;\nvar b;\n");

    // Two combinations nobody asked for yet, each taking far longer than the
    // queue deadline to compress: one builds, the other is refused.
    let addr = s.addr;
    let first = tokio::spawn(async move { get(addr, "slow.test", "/lib/js/big1~big2~1.js").await });
    let second =
        tokio::spawn(async move { get(addr, "slow.test", "/lib/js/big2~big1~1.js").await });
    // Meanwhile, the combination already built is served at once.
    let t = Instant::now();
    assert_eq!(
        get(s.addr, "slow.test", "/lib/js/a~b~1.js").await.status,
        200
    );
    assert!(t.elapsed() < Duration::from_secs(5));
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    let mut statuses = [first.status, second.status];
    statuses.sort();
    assert_eq!(statuses, [200, 503], "one builds, one is refused");
    let refused = if first.status == 503 { &first } else { &second };
    assert_eq!(refused.header("retry-after"), Some("1"));

    // Once the builder is free, the refused combination builds too.
    let again = if first.status == 503 {
        "/lib/js/big1~big2~1.js"
    } else {
        "/lib/js/big2~big1~1.js"
    };
    let r = get(s.addr, "slow.test", again).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), big1.len() + big2.len() + 2);
    s.shutdown().await;
}
