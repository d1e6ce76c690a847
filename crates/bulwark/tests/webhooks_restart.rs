//! Webhooks across a crash: the real `bulwark` binary queues messages for a
//! receiver that is down, is killed with SIGKILL, starts again, and once the
//! receiver is up every message arrives, each once. The messages were written
//! with the changes that caused them, so nothing is lost.

use crate::common;
// (The receiver's other helpers serve the webhooks module's own tests.)
#[allow(dead_code)]
#[path = "../../../tests/system/helpers/receiver.rs"]
mod receiver;

use std::time::Duration;

use bulwark_testkit::eventually_blocking;
use common::{free_port, serve, starter_site};
use receiver::Receiver;
use serde_json::{Value, json};

const TOKEN: &str = "webhooks-restart-token";

fn call(port: u16, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
    let resp = reqwest::blocking::Client::new()
        .request(method, format!("http://127.0.0.1:{port}{path}"))
        .header("Host", "localhost")
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().unwrap_or(Value::Null))
}

#[test]
fn messages_for_a_receiver_that_is_down_survive_a_sigkill_and_arrive_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites");
    let toml = starter_site(&sites);
    let text = std::fs::read_to_string(&toml).unwrap().replacen(
        "# token = \"generated\"",
        &format!("token = \"{TOKEN}\""),
        1,
    ) + "\n[webhooks]\nretry_first_ms = 50\ntimeout_ms = 1000\n";
    std::fs::write(&toml, text).unwrap();

    // The receiver's port, with nothing listening yet.
    let hook_port = free_port();
    let port = free_port();
    let server = serve(dir.path(), port);
    let (status, hook) = call(
        port,
        reqwest::Method::POST,
        "/api/webhooks",
        json!({"url": format!("http://127.0.0.1:{hook_port}/hook"), "events": ["resource.created"]}),
    );
    assert_eq!(status, 201, "{hook}");
    let secret = hook["secret"].as_str().unwrap().to_owned();
    let made: Vec<i64> = (0..5)
        .map(|n| {
            let (status, made) = call(
                port,
                reqwest::Method::POST,
                "/api/rsc",
                json!({"category": "article", "published": true, "props": {"title": format!("While down {n}")}}),
            );
            assert_eq!(status, 201, "{made}");
            made["id"].as_i64().unwrap()
        })
        .collect();

    // Killed outright (SIGKILL): no shutdown, nothing flushed on the way out.
    let mut server = server;
    server.0.kill().unwrap();
    server.0.wait().unwrap();
    drop(server);
    let _server = serve(dir.path(), port);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let receiver = runtime.block_on(Receiver::start(
        Some(format!("127.0.0.1:{hook_port}").parse().unwrap()),
        &[],
    ));
    let got = eventually_blocking(
        "every message arrives after the restart",
        Duration::from_secs(60),
        || {
            let got = receiver.delivered();
            let ids: Vec<i64> = got
                .iter()
                .map(|r| r.json()["data"]["id"].as_i64().unwrap())
                .collect();
            made.iter().all(|m| ids.contains(m)).then_some(got)
        },
    );
    let ids: Vec<i64> = got
        .iter()
        .map(|r| r.json()["data"]["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, made, "each once, in the order they were made");
    assert!(
        got.iter().all(|r| r.signed_by(&secret)),
        "signed with the endpoint's secret"
    );
}
