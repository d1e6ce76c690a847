//! Tickets for visitors' posts in tests (`bulwark_module_auth::visitor_posts`):
//! a fresh one as `/api/form-ticket` gives it, and one issued a while ago
//! under the site's own key, as a person's page holds it after typing.
//! Included by the tests of the modules that take visitors' posts.

use std::time::Duration;

use crate::common::TestServer;

/// A ticket from `GET /api/form-ticket?for=TARGET` of site `default`.
pub async fn fresh_ticket(s: &TestServer, target: &str) -> String {
    let resp = reqwest::Client::new()
        .get(format!("http://{}/api/form-ticket", s.addr))
        .query(&[("for", target)])
        .header("Host", "localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let answer: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    answer["ticket"].as_str().unwrap().to_owned()
}

/// A ticket for posts to `target` (`form:12`, `comments:42`) issued `age`
/// ago under site `default`'s key, as the auth module makes them.
pub async fn aged_ticket(s: &TestServer, target: &str, age: Duration) -> String {
    fresh_ticket(s, target).await; // the site makes its key the first time
    let key = s.models["default"]
        .store
        .run(|s| s.config_value("secret.auth.form_ticket_key"))
        .await
        .unwrap()
        .expect("the auth module made its ticket key");
    let issued = chrono::Utc::now().timestamp_millis() as u64 - age.as_millis() as u64;
    bulwark_module_auth::visitor_posts::ticket_at(key.as_bytes(), target, issued)
}
