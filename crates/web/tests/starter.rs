//! The starter site (`sites/default`) as visitors and attackers meet it.

mod common;

use common::*;

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
