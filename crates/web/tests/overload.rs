//! Overload: renders beyond the site's capacity get a fast 503 with Retry-After,
//! while cached pages and static files keep being served, and service resumes when
//! the rush is over.

mod common;

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
    tokio::time::sleep(Duration::from_millis(50)).await;
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

    // The rush is over: normal service.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = get(s.addr, "slow.test", "/slow").await;
    assert_eq!((r.status, r.text().as_str()), (200, "done"));
    s.shutdown().await;
}
