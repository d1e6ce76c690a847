//! The hub and client tasks, without HTTP.

use std::sync::Arc;
use std::time::Duration;

use bulwark_acl::Principal;
use bulwark_push::*;
use bulwark_store::ResourceId;

const WAIT: Duration = Duration::from_secs(2);

fn hub_with(tweak: impl FnOnce(&mut PushConfig)) -> Arc<Hub> {
    let mut config = PushConfig {
        batch_interval: Duration::from_millis(10),
        ..PushConfig::default()
    };
    tweak(&mut config);
    Hub::new(config, Arc::new(OpenAcl))
}

/// Waits until the hub's `stats` satisfy `done`.
async fn until_stats(hub: &Hub, what: &str, done: impl Fn(&Stats) -> bool) {
    bulwark_testkit::eventually(what, WAIT, || async { done(&hub.stats()).then_some(()) }).await;
}

/// Polls `f` once: `None` if it is still pending.
async fn poll_once<F: std::future::Future + Unpin>(f: F) -> Option<F::Output> {
    let mut f = f;
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
            std::task::Poll::Ready(out) => Some(out),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

fn messages(batch: &Batch) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(&batch.body).unwrap();
    v["messages"].as_array().unwrap().clone()
}

async fn next(c: &ClientHandle) -> Batch {
    c.next_batch(WAIT, Encoding::Identity)
        .await
        .unwrap()
        .expect("a batch")
}

#[tokio::test]
async fn a_recovering_subscription_gets_messages_not_yet_dispatched_once() {
    // A long batch window keeps the publications in the dispatcher while the
    // new client recovers them from history: it must not get them twice.
    let hub = hub_with(|c| c.batch_interval = Duration::from_millis(300));
    let first = hub.connect().unwrap();
    let position = first
        .subscribe("doc/1", None, false)
        .await
        .unwrap()
        .position
        .unwrap();
    for i in 0..3 {
        hub.publish("doc/1", &format!("{i}")).unwrap();
    }
    let second = hub.connect().unwrap();
    let reply = second
        .subscribe("doc/1", Some(position), false)
        .await
        .unwrap();
    assert_eq!(reply.recovery, Recovery::Recovered);
    let mut payloads = Vec::new();
    while let Ok(Some(batch)) = second
        .next_batch(Duration::from_millis(700), Encoding::Identity)
        .await
    {
        payloads.extend(
            messages(&batch)
                .iter()
                .map(|m| m["payload"].as_i64().unwrap()),
        );
    }
    assert_eq!(payloads, [0, 1, 2]);
    // Later publications still arrive.
    hub.publish("doc/1", "3").unwrap();
    let later = messages(&next(&second).await);
    assert_eq!(later[0]["payload"], 3);
}

#[tokio::test]
async fn a_subscription_gets_only_what_is_published_after_it_even_if_dispatched_later() {
    // A long batch window keeps the publications in the dispatcher while the
    // clients subscribe: published before, they are not news for them.
    let hub = hub_with(|c| c.batch_interval = Duration::from_millis(300));
    hub.publish("doc/1", "0").unwrap();
    hub.publish("doc/2", "0").unwrap();
    let exact = hub.connect().unwrap();
    exact.subscribe("doc/1", None, false).await.unwrap();
    let wildcard = hub.connect().unwrap();
    wildcard.subscribe("doc/+", None, false).await.unwrap();
    hub.publish("doc/1", "1").unwrap();
    for client in [&exact, &wildcard] {
        let got = messages(&next(client).await);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0]["payload"], 1);
    }
}

#[tokio::test]
async fn wildcard_subscriptions_receive_matching_topics_only() {
    let hub = hub_with(|_| {});
    let c = hub.connect().unwrap();
    c.subscribe("site/chat/+", None, false).await.unwrap();
    hub.publish("site/chat/lobby", r#"{"n":1}"#).unwrap();
    hub.publish("site/other", r#"{"n":2}"#).unwrap();
    hub.publish("site/chat/lobby/deep", r#"{"n":3}"#).unwrap();
    let got = messages(&next(&c).await);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["topic"], "site/chat/lobby");
    assert_eq!(got[0]["payload"]["n"], 1);
    assert!(
        c.next_batch(Duration::from_millis(100), Encoding::Identity)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn publications_within_the_interval_arrive_as_one_batch_shared_between_clients() {
    let hub = hub_with(|c| c.batch_interval = Duration::from_millis(50));
    let mut clients = Vec::new();
    for _ in 0..20 {
        let c = hub.connect().unwrap();
        c.subscribe("news", None, false).await.unwrap();
        clients.push(c);
    }
    for i in 0..5 {
        hub.publish("news", &format!("{{\"i\":{i}}}")).unwrap();
    }
    let mut bodies = Vec::new();
    for c in &clients {
        let b = next(c).await;
        assert_eq!(b.count, 5);
        bodies.push(b.body);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
    let stats = hub.stats();
    assert_eq!(stats.encodings_needed, 20);
    assert_eq!(stats.encodings_computed, 1, "{stats:?}");
    assert_eq!(stats.batches, 1);
    // Every message waited for the batch window, and not much longer.
    assert!(stats.delivery_p50_us >= 40_000, "{stats:?}");
    assert!(stats.delivery_max_us < 5_000_000, "{stats:?}");
}

#[tokio::test]
async fn without_an_interval_a_burst_goes_out_in_one_batch_and_a_lone_message_alone() {
    // The default: no window. The test runs on one thread, so the dispatcher
    // gets its turn only when the test awaits: the burst of five is all there
    // is when it looks, as a burst published while a batch goes out would be.
    let hub = Hub::new(PushConfig::default(), Arc::new(OpenAcl));
    assert_eq!(PushConfig::default().batch_interval, Duration::ZERO);
    let client = hub.connect().unwrap();
    client.subscribe("news", None, false).await.unwrap();
    for i in 0..5 {
        hub.publish("news", &format!("{{\"i\":{i}}}")).unwrap();
    }
    assert_eq!(next(&client).await.count, 5);
    assert_eq!(hub.stats().batches, 1);
    hub.publish("news", "{\"i\":5}").unwrap();
    assert_eq!(next(&client).await.count, 1);
    assert_eq!(hub.stats().batches, 2);
}

#[tokio::test]
async fn a_resubscribing_client_recovers_exactly_what_it_missed() {
    let hub = hub_with(|_| {});
    let first = hub.connect().unwrap();
    let reply = first.subscribe("rsc/42", None, false).await.unwrap();
    let position = reply.position.unwrap();
    for i in 1..=3 {
        hub.publish("rsc/42", &format!("{i}")).unwrap();
    }
    // A new client (say, after the old one expired) resumes from the position.
    let second = hub.connect().unwrap();
    let reply = second
        .subscribe("rsc/42", Some(position), false)
        .await
        .unwrap();
    assert_eq!(reply.recovery, Recovery::Recovered);
    let got = messages(&next(&second).await);
    let payloads: Vec<i64> = got.iter().map(|m| m["payload"].as_i64().unwrap()).collect();
    assert_eq!(payloads, [1, 2, 3]);
    assert_eq!(
        reply.position.unwrap().offset,
        got[2]["offset"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn resuming_beyond_the_history_or_from_another_epoch_is_reported() {
    let hub = hub_with(|c| c.history_size = 2);
    let c = hub.connect().unwrap();
    let position = c
        .subscribe("t", None, false)
        .await
        .unwrap()
        .position
        .unwrap();
    for i in 0..5 {
        hub.publish("t", &i.to_string()).unwrap();
    }
    let late = hub.connect().unwrap();
    assert_eq!(
        late.subscribe("t", Some(position), false)
            .await
            .unwrap()
            .recovery,
        Recovery::Gap
    );
    let other_epoch = Position {
        epoch: position.epoch ^ 1,
        offset: 0,
    };
    let r = late.subscribe("t", Some(other_epoch), false).await.unwrap();
    assert_eq!(r.recovery, Recovery::EpochChanged);
}

#[tokio::test]
async fn a_snapshot_delivers_the_latest_message_at_once() {
    let hub = hub_with(|_| {});
    hub.publish("weather", r#""rain""#).unwrap();
    hub.publish("weather", r#""sun""#).unwrap();
    let c = hub.connect().unwrap();
    c.subscribe("weather", None, true).await.unwrap();
    let got = messages(&next(&c).await);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["payload"], "sun");
}

#[tokio::test]
async fn resuming_with_the_id_and_token_keeps_subscriptions_and_waiting_messages() {
    let hub = hub_with(|_| {});
    let c = hub.connect().unwrap();
    c.subscribe("a", None, false).await.unwrap();
    let id = c.id().as_str().to_string();
    let token = c.token().to_string();
    drop(c);
    hub.publish("a", "1").unwrap();
    until_stats(&hub, "the message waits in the client's inbox", |s| {
        s.delivered == 1
    })
    .await;
    // The id alone, or with another token, is not the client.
    let anonymous = Principal::anonymous();
    let wrong = format!("{:032x}", 7);
    for token in ["", "nonsense", wrong.as_str()] {
        assert_eq!(
            hub.resume(&id, token, &anonymous).err(),
            Some(PushError::UnknownClient)
        );
    }
    let again = hub.resume(&id, &token, &anonymous).unwrap();
    assert_eq!(again.id().as_str(), id);
    assert_eq!(messages(&next(&again).await).len(), 1);
    // Another principal cannot take the client over, even with its token.
    assert_eq!(
        hub.resume(&id, &token, &Principal::member(ResourceId(666)))
            .err(),
        Some(PushError::UnknownClient)
    );
}

#[tokio::test]
async fn a_client_no_transport_came_back_for_expires_before_the_idle_timeout() {
    let hub = hub_with(|c| {
        c.client_idle_timeout = Duration::from_secs(60);
        c.unclaimed_client_timeout = Duration::from_millis(100);
    });
    let unclaimed = hub.connect().unwrap();
    let claimed = hub.connect().unwrap();
    // A transport attaches to one of them (and goes again).
    assert!(
        claimed
            .next_batch(Duration::from_millis(10), Encoding::Identity)
            .await
            .unwrap()
            .is_none()
    );
    let ids = [unclaimed.id().clone(), claimed.id().clone()];
    let tokens = [unclaimed.token().to_string(), claimed.token().to_string()];
    drop((unclaimed, claimed));
    until_stats(&hub, "the unclaimed client expired", |s| s.clients == 1).await;
    let anonymous = Principal::anonymous();
    assert!(hub.resume(ids[0].as_str(), &tokens[0], &anonymous).is_err());
    assert!(hub.resume(ids[1].as_str(), &tokens[1], &anonymous).is_ok());
}

#[tokio::test]
async fn a_client_publishing_past_its_rate_is_refused_with_the_time_to_wait() {
    let hub = hub_with(|c| {
        c.client_publish = Rate {
            per_second: 1.0,
            burst: 3,
        }
    });
    let c = hub.connect().unwrap();
    for _ in 0..3 {
        c.publish("a", "1").unwrap();
    }
    match c.publish("a", "1") {
        Err(PushError::PublishingTooFast { retry_after_ms }) => {
            assert!((1..=1000).contains(&retry_after_ms), "{retry_after_ms}")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Another client has its own budget; the server's own API has none.
    assert!(hub.connect().unwrap().publish("a", "1").is_ok());
    for _ in 0..10 {
        hub.publish("a", "1").unwrap();
    }
}

/// Admits members only: a message about a members-only resource.
#[derive(Debug)]
struct MembersOnly;

impl Audience for MembersOnly {
    fn admits(&self, principal: &Principal) -> bool {
        !principal.is_anonymous()
    }
}

#[tokio::test]
async fn a_message_with_an_audience_reaches_only_the_principals_it_admits() {
    let hub = hub_with(|_| {});
    let visitor = hub.connect().unwrap();
    let member = hub.connect_as(&Principal::member(ResourceId(5))).unwrap();
    let position = visitor
        .subscribe("rsc/1", None, false)
        .await
        .unwrap()
        .position;
    for c in [&visitor, &member] {
        c.subscribe("rsc/+", None, false).await.unwrap();
    }
    hub.publish_for("rsc/1", "\"members\"", Arc::new(MembersOnly))
        .unwrap();
    hub.publish("rsc/2", "\"everyone\"").unwrap();
    let got = messages(&next(&visitor).await);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["payload"], "everyone");
    let got = messages(&next(&member).await);
    assert_eq!(got.len(), 2, "{got:?}");
    // Nor from history: recovering, or as a snapshot.
    let late = hub.connect().unwrap();
    late.subscribe("rsc/1", position, false).await.unwrap();
    late.subscribe("rsc/2", None, true).await.unwrap();
    let got = messages(&next(&late).await);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["topic"], "rsc/2");
}

#[tokio::test]
async fn a_newer_transport_takes_over_from_an_older_one() {
    let hub = hub_with(|_| {});
    let c = hub.connect().unwrap();
    c.subscribe("a", None, false).await.unwrap();
    let mut old = std::pin::pin!(c.next_batch(Duration::from_secs(5), Encoding::Identity));
    // Polled once, the old transport is the client's waiter.
    assert!(poll_once(old.as_mut()).await.is_none());
    let newer = {
        let c = c.clone();
        tokio::spawn(async move {
            c.next_batch(Duration::from_secs(5), Encoding::Identity)
                .await
        })
    };
    assert_eq!(
        old.await.err(),
        Some(PushError::Superseded),
        "the old transport is told to end"
    );
    hub.publish("a", "1").unwrap();
    assert_eq!(newer.await.unwrap().unwrap().unwrap().count, 1);
}

#[tokio::test]
async fn idle_clients_expire_and_their_task_ends() {
    let hub = hub_with(|c| c.client_idle_timeout = Duration::from_millis(100));
    let c = hub.connect().unwrap();
    c.subscribe("a", None, false).await.unwrap();
    let id = c.id().as_str().to_string();
    let token = c.token().to_string();
    drop(c);
    assert_eq!(hub.stats().clients, 1);
    until_stats(&hub, "the idle client expired", |s| s.clients == 0).await;
    assert_eq!(
        hub.resume(&id, &token, &Principal::anonymous()).err(),
        Some(PushError::UnknownClient),
        "an expired id is not revived"
    );
}

#[tokio::test]
async fn a_batch_handed_over_but_never_received_goes_back_to_the_client() {
    let hub = hub_with(|c| c.batch_interval = Duration::from_millis(2));
    let c = hub.connect().unwrap();
    c.subscribe("a", None, false).await.unwrap();
    {
        let mut waiting = std::pin::pin!(c.batch(Encoding::Identity));
        // Polled once: the client task now holds it as its waiter.
        assert!(
            tokio::time::timeout(Duration::from_millis(20), waiting.as_mut())
                .await
                .is_err()
        );
        hub.publish("a", "1").unwrap();
        // The dispatcher hands the batch over; nobody polls `waiting` again.
        until_stats(&hub, "the batch was handed over", |s| s.delivered == 1).await;
    }
    let batch = c
        .next_batch(WAIT, Encoding::Identity)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(batch.count, 1);
    assert!(!batch.lost);
}

#[tokio::test]
async fn an_abandoned_client_on_a_busy_topic_still_expires() {
    let hub = hub_with(|c| {
        c.client_idle_timeout = Duration::from_millis(100);
        c.batch_interval = Duration::from_millis(2);
    });
    let c = hub.connect().unwrap();
    c.subscribe("busy", None, false).await.unwrap();
    drop(c);
    // Deliveries keep arriving faster than the idle check's period; they are not
    // activity of the client's.
    let publisher = {
        let hub = hub.clone();
        tokio::spawn(async move {
            loop {
                hub.publish("busy", "1").unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    until_stats(&hub, "the abandoned client expired", |s| s.clients == 0).await;
    publisher.abort();
}

#[tokio::test]
async fn an_overflowing_inbox_drops_the_oldest_and_says_so() {
    let hub = hub_with(|c| c.inbox_size = 3);
    let c = hub.connect().unwrap();
    c.subscribe("a", None, false).await.unwrap();
    for i in 0..10 {
        hub.publish("a", &i.to_string()).unwrap();
    }
    until_stats(&hub, "all ten reached the inbox", |s| s.delivered == 10).await;
    let b = next(&c).await;
    assert!(b.lost);
    let payloads: Vec<i64> = messages(&b)
        .iter()
        .map(|m| m["payload"].as_i64().unwrap())
        .collect();
    assert_eq!(payloads, [7, 8, 9]);
    assert_eq!(hub.stats().lost, 7);
}

struct PrivateAcl;

impl PushAcl for PrivateAcl {
    fn may_subscribe(&self, _: &Principal, filter: &TopicFilter) -> bool {
        !filter.as_str().starts_with("private/")
    }
    fn may_read(&self, principal: &Principal, topic: &Topic) -> bool {
        !topic.as_str().starts_with("private/") || principal.is_administrator()
    }
    fn may_publish(&self, principal: &Principal, topic: &Topic) -> bool {
        topic.as_str().starts_with("chat/") || principal.is_administrator()
    }
}

#[tokio::test]
async fn the_acl_decides_subscribing_reading_and_publishing() {
    let hub = Hub::new(
        PushConfig {
            batch_interval: Duration::from_millis(10),
            ..PushConfig::default()
        },
        Arc::new(PrivateAcl),
    );
    let c = hub.connect().unwrap();
    assert!(matches!(
        c.subscribe("private/x", None, false).await,
        Err(PushError::Forbidden(_))
    ));
    // A wildcard that would cover private topics never delivers them.
    c.subscribe("#", None, false).await.unwrap();
    hub.publish("private/secret", r#""no""#).unwrap();
    hub.publish("public/news", r#""yes""#).unwrap();
    let got = messages(&next(&c).await);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["topic"], "public/news");
    assert!(matches!(
        c.publish("news", "1"),
        Err(PushError::Forbidden(_))
    ));
    assert!(c.publish("chat/lobby", "1").is_ok());
    // An administrator's client reads them, and publishes anywhere.
    let admin = hub
        .connect_as(&Principal::administrator(ResourceId(1)))
        .unwrap();
    admin.subscribe("+/secret", None, false).await.unwrap();
    hub.publish("private/secret", r#""for admins""#).unwrap();
    let got = messages(&next(&admin).await);
    assert_eq!(got[0]["topic"], "private/secret");
    assert!(admin.publish("news", "1").is_ok());
}

#[tokio::test]
async fn limits_give_clear_errors() {
    let hub = hub_with(|c| {
        c.max_clients = 2;
        c.max_subscriptions = 2;
        c.max_message_bytes = 16;
    });
    let c = hub.connect().unwrap();
    let _second = hub.connect().unwrap();
    assert_eq!(hub.connect().err(), Some(PushError::TooManyClients(2)));
    c.subscribe("a", None, false).await.unwrap();
    c.subscribe("b", None, false).await.unwrap();
    c.subscribe("a", None, false).await.unwrap(); // the same again is fine
    assert_eq!(
        c.subscribe("c", None, false).await.err(),
        Some(PushError::TooManySubscriptions(2))
    );
    assert!(matches!(
        hub.publish("a", &format!("\"{}\"", "x".repeat(40))),
        Err(PushError::TooLarge { .. })
    ));
    assert!(matches!(
        hub.publish("a", "{not json"),
        Err(PushError::BadPayload(_))
    ));
    assert!(matches!(
        hub.publish("a/+", "1"),
        Err(PushError::BadTopic(_))
    ));
}

#[tokio::test]
async fn gzip_batches_decode_to_the_identity_body() {
    use std::io::Read;
    let hub = hub_with(|_| {});
    let c = hub.connect().unwrap();
    c.subscribe("a", None, false).await.unwrap();
    let text = "hello ".repeat(400);
    hub.publish("a", &format!("{{\"text\":\"{text}\"}}"))
        .unwrap();
    let gz = c.next_batch(WAIT, Encoding::Gzip).await.unwrap().unwrap();
    assert_eq!(gz.encoding, Encoding::Gzip);
    assert!(gz.body.len() < text.len() / 4, "{} bytes", gz.body.len());
    let mut plain = String::new();
    flate2::read::GzDecoder::new(&gz.body[..])
        .read_to_string(&mut plain)
        .unwrap();
    assert!(plain.contains(&text));
}

#[tokio::test]
async fn brotli_batches_are_served_as_brotli_and_decode_to_the_identity_body() {
    use std::io::Read;
    let hub = hub_with(|_| {});
    let c = hub.connect().unwrap();
    c.subscribe("a", None, false).await.unwrap();
    let text = "hello ".repeat(400);
    // One message (its body made with the message) and then a set of two (the cache).
    hub.publish("a", &format!("{{\"text\":\"{text}\"}}"))
        .unwrap();
    let one = c.next_batch(WAIT, Encoding::Brotli).await.unwrap().unwrap();
    hub.publish("a", &format!("{{\"text\":\"{text}\"}}"))
        .unwrap();
    hub.publish("a", &format!("{{\"text\":\"{text}\"}}"))
        .unwrap();
    let two = c.next_batch(WAIT, Encoding::Brotli).await.unwrap().unwrap();
    for (batch, count) in [(one, 1), (two, 2)] {
        assert_eq!(batch.encoding, Encoding::Brotli);
        assert!(
            batch.body.len() < text.len() / 4,
            "{} bytes",
            batch.body.len()
        );
        let mut plain = String::new();
        brotli::Decompressor::new(&batch.body[..], 4096)
            .read_to_string(&mut plain)
            .unwrap();
        assert_eq!(plain.matches(&text).count(), count);
    }
}

#[tokio::test]
async fn small_batches_stay_uncompressed_even_when_gzip_is_accepted() {
    let hub = hub_with(|_| {});
    let c = hub.connect().unwrap();
    c.subscribe("a", None, false).await.unwrap();
    hub.publish("a", r#"{"text":"hello"}"#).unwrap();
    let batch = c.next_batch(WAIT, Encoding::Gzip).await.unwrap().unwrap();
    assert_eq!(batch.encoding, Encoding::Identity);
    let body: serde_json::Value = serde_json::from_slice(&batch.body).unwrap();
    assert_eq!(body["messages"][0]["payload"]["text"], "hello");
}

#[tokio::test]
async fn replayed_messages_stay_out_of_the_delivery_latency() {
    let hub = hub_with(|c| c.batch_interval = Duration::from_millis(5));
    let first = hub.connect().unwrap();
    let position = first
        .subscribe("old", None, false)
        .await
        .unwrap()
        .position
        .unwrap();
    first.subscribe("marker", None, false).await.unwrap();
    hub.publish("old", "1").unwrap();
    hub.publish("snap", "2").unwrap();
    hub.publish("marker", "3").unwrap();
    // Dispatched in order: once the marker is out, so are the others.
    until_stats(&hub, "the marker was dispatched", |s| s.delivered == 2).await;
    // Recovered and snapshot messages are old news: they arrive, but do not
    // count as delivery latency.
    let late = hub.connect().unwrap();
    late.subscribe("old", Some(position), false).await.unwrap();
    late.subscribe("snap", None, true).await.unwrap();
    assert_eq!(next(&late).await.count, 2);
    assert_eq!(hub.stats().delivery_max_us, 0, "{:?}", hub.stats());
    // A live message does count.
    hub.publish("old", "3").unwrap();
    assert_eq!(next(&late).await.count, 1);
    let stats = hub.stats();
    assert!(
        stats.delivery_max_us > 0 && stats.delivery_max_us < 300_000,
        "{stats:?}"
    );
}
