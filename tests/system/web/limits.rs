//! Bad and hostile input: every case gets an answer or a closed connection, and the
//! server keeps serving everybody else.

use crate::common;

use std::time::{Duration, Instant};

use bulwark_testkit::eventually;
use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn still_serving(s: &TestServer) {
    let r = get(s.addr, "a.test", "/page/ok").await;
    assert_eq!(r.status, 200, "a normal request failed");
}

/// The answer to `request`, which the server must give and then close.
async fn answered_and_closed(s: &TestServer, request: &[u8]) -> RawResponse {
    let r = raw(s.addr, request).await.unwrap_or_else(|| {
        panic!(
            "{:?}: closed without an answer",
            String::from_utf8_lossy(&request[..request.len().min(60)])
        )
    });
    assert_eq!(r.header("connection"), Some("close"));
    r
}

/// A request whose head takes about `kib` KiB: one large header.
fn head_of(kib: usize) -> String {
    format!(
        "GET /page/ok HTTP/1.1\r\nHost: a.test\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "a".repeat(kib * 1024 - 80)
    )
}

#[tokio::test]
async fn malformed_request_lines_get_400_and_the_connection_closes() {
    let s = start(&two_sites(), |_| {}).await;
    let garbage: [&[u8]; 9] = [
        b"GARBAGE\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\nHost: a.test\r\n\r\n",
        b"G(T / HTTP/1.1\r\nHost: a.test\r\n\r\n",
        b"GET /\x00 HTTP/1.1\r\nHost: a.test\r\n\r\n",
        b"GET /a b HTTP/1.1\r\nHost: a.test\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost a.test\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n",
        // TLS spoken to the plain port.
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
    ];
    for request in garbage {
        let r = answered_and_closed(&s, request).await;
        assert_eq!(r.status, 400, "{:?}", String::from_utf8_lossy(request));
    }
    still_serving(&s).await;
    s.shutdown().await;
}

#[tokio::test]
async fn http2_without_tls_is_closed_and_nothing_crashes() {
    let s = start(&two_sites(), |_| {}).await;
    // "Prior knowledge" HTTP/2: plain connections speak HTTP/1.1 only.
    assert!(
        raw(s.addr, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .is_none()
    );
    still_serving(&s).await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_head_over_64_kib_sent_at_once_gets_431_and_the_connection_closes() {
    let s = start(&two_sites(), |_| {}).await;
    assert_eq!(
        raw(s.addr, head_of(63).as_bytes()).await.unwrap().status,
        200
    );
    for kib in [70, 110] {
        let r = answered_and_closed(&s, head_of(kib).as_bytes()).await;
        assert_eq!(r.status, 431, "a head of {kib} KiB");
    }
    still_serving(&s).await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_one_mebibyte_head_gets_431() {
    let s = start(&two_sites(), |_| {}).await;
    let r = answered_and_closed(&s, head_of(1024).as_bytes()).await;
    assert_eq!(r.status, 431);
    still_serving(&s).await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_big_head_sent_slowly_gets_431() {
    let s = start(&two_sites(), |_| {}).await;
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    let head = head_of(80);
    // 4 KiB every 20 ms: the head grows past the limit well within the header timeout.
    for piece in head.as_bytes().chunks(4096) {
        if conn.write_all(piece).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut answer))
        .await
        .expect("the server must answer and close");
    let r = parse_response(&answer).expect("an answer before the close");
    assert_eq!(r.status, 431);
    still_serving(&s).await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_request_with_more_than_100_headers_gets_431_and_one_with_100_is_served() {
    let s = start(&two_sites(), |_| {}).await;
    let with_headers = |count: usize| {
        // Host and Connection count too.
        let extra: String = (0..count - 2).map(|i| format!("X-H{i}: v\r\n")).collect();
        format!("GET /page/ok HTTP/1.1\r\nHost: a.test\r\n{extra}Connection: close\r\n\r\n")
    };
    assert_eq!(
        raw(s.addr, with_headers(100).as_bytes())
            .await
            .unwrap()
            .status,
        200
    );
    for count in [101, 500] {
        let r = answered_and_closed(&s, with_headers(count).as_bytes()).await;
        assert_eq!(r.status, 431, "{count} headers");
    }
    still_serving(&s).await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_body_over_the_limit_gets_413_declared_or_chunked() {
    let s = start(&two_sites(), |o| o.max_body_bytes = 1024).await;
    let declared = "POST /page/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\n";
    let r = raw(s.addr, declared.as_bytes()).await.unwrap();
    assert_eq!(r.status, 413);
    assert_eq!(r.header("connection"), Some("close"));

    let chunk = "a".repeat(600);
    let chunked = format!(
        "POST /page/x HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n258\r\n{chunk}\r\n258\r\n{chunk}\r\n0\r\n\r\n"
    );
    let r = raw(s.addr, chunked.as_bytes()).await.unwrap();
    assert_eq!(r.status, 413);

    let small = "x=1";
    let ok = format!(
        "POST /page/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{small}",
        small.len()
    );
    assert_eq!(
        raw(s.addr, ok.as_bytes()).await.unwrap().text(),
        "page x q=1"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_gets_408_and_the_connection_closes() {
    let s = start(&two_sites(), |o| o.body_timeout = Duration::from_secs(1)).await;
    let started = Instant::now();
    let mut stalled = TcpStream::connect(s.addr).await.unwrap();
    // The head announces 100 bytes; 10 come, the rest never does.
    stalled
        .write_all(
            b"POST /page/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 100\r\n\r\nx=12345678",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut answer))
        .await
        .expect("the server must end the connection, not wait for ever")
        .unwrap();
    let r = parse_response(&answer).expect("an answer before the close");
    assert_eq!(r.status, 408);
    assert!(started.elapsed() < Duration::from_secs(5));
    // Other visitors were served all along, and are after it.
    assert_eq!(get(s.addr, "a.test", "/").await.status, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn a_slowloris_client_is_cut_off_while_others_are_served() {
    let s = start(&two_sites(), |o| {
        o.header_read_timeout = Duration::from_secs(2)
    })
    .await;
    let mut slow = TcpStream::connect(s.addr).await.unwrap();
    let started = Instant::now();
    let addr = s.addr;
    let slow_task = tokio::spawn(async move {
        // One byte every half second: this head would take half a minute to arrive.
        for byte in b"GET / HTTP/1.1\r\nHost: a.test\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n" {
            if slow.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let mut buf = [0u8; 64];
            if let Ok(Ok(0)) = tokio::time::timeout(Duration::from_millis(1), slow.read(&mut buf)).await {
                break;
            }
        }
        started.elapsed()
    });
    // Normal requests succeed meanwhile, and quickly.
    for _ in 0..5 {
        let t = Instant::now();
        let r = get(addr, "a.test", "/page/ok").await;
        assert_eq!(r.status, 200);
        assert!(t.elapsed() < Duration::from_secs(1));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let cut_after = tokio::time::timeout(Duration::from_secs(20), slow_task)
        .await
        .unwrap()
        .unwrap();
    assert!(
        cut_after < Duration::from_secs(6),
        "slow client kept for {cut_after:?}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed_after_the_timeout() {
    let s = start(&two_sites(), |o| {
        o.header_read_timeout = Duration::from_secs(1)
    })
    .await;
    let mut conn = kept_alive(s.addr).await;
    let mut buf = vec![0u8; 4096];
    let t = Instant::now();
    let n = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf))
        .await
        .unwrap()
        .unwrap_or(0);
    assert_eq!(n, 0, "expected the server to close the idle connection");
    assert!(t.elapsed() < Duration::from_secs(3));
    s.shutdown().await;
}

#[tokio::test]
async fn keep_alive_and_pipelined_requests_are_answered_in_order() {
    let s = start(&two_sites(), |_| {}).await;
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(
        b"GET /page/one HTTP/1.1\r\nHost: a.test\r\n\r\nGET /page/two HTTP/1.1\r\nHost: a.test\r\n\r\nGET /page/three HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let mut buf = Vec::new();
    conn.read_to_end(&mut buf).await.unwrap();
    let text = String::from_utf8_lossy(&buf);
    let one = text.find("page one").unwrap();
    let two = text.find("page two").unwrap();
    let three = text.find("page three").unwrap();
    assert!(one < two && two < three);
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 3);
    s.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_idle_keep_alive_connections_at_once() {
    let s = start(&two_sites(), |o| o.shutdown_grace = Duration::from_secs(10)).await;
    let mut conn = kept_alive(s.addr).await;
    let mut buf = vec![0u8; 4096];
    let t = Instant::now();
    s.shutdown().await;
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "shutdown waited {:?} for an idle connection",
        t.elapsed()
    );
    let n = tokio::time::timeout(Duration::from_secs(2), conn.read(&mut buf))
        .await
        .expect("closed, not left hanging")
        .unwrap_or(0);
    assert_eq!(n, 0);
}

#[tokio::test]
async fn shutdown_lets_a_request_in_flight_finish_and_stops_accepting() {
    let s = start(&two_sites(), |_| {}).await;
    let addr = s.addr;
    // A request whose head is complete but whose body is still arriving.
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(b"POST /page/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nConnection: close\r\n\r\nx=")
        .await
        .unwrap();
    bulwark_testkit::eventually(
        "the server read the request so far",
        Duration::from_secs(5),
        || async { server_read_all(&conn).then_some(()) },
    )
    .await;
    let stopping = tokio::spawn(s.shutdown());
    bulwark_testkit::eventually(
        "no longer accepting after shutdown",
        Duration::from_secs(5),
        || async { TcpStream::connect(addr).await.is_err().then_some(()) },
    )
    .await;
    conn.write_all(b"1").await.unwrap();
    let mut buf = Vec::new();
    conn.read_to_end(&mut buf).await.unwrap();
    assert_eq!(parse_response(&buf).unwrap().text(), "page x q=1");
    stopping.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_holding_connections_open_gets_503_and_others_are_served() {
    let s = start(&two_sites(), |o| o.max_connections_per_address = Some(5)).await;
    let port = s.addr.port();
    let from = |ip: &str| {
        let ip: std::net::IpAddr = ip.parse().unwrap();
        async move {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.bind((ip, 0).into()).unwrap();
            socket.connect(([127, 0, 0, 1], port).into()).await.unwrap()
        }
    };
    // Five silent connections from one address: its share.
    let mut silent = Vec::new();
    for _ in 0..5 {
        silent.push(from("127.0.0.1").await);
    }
    // A sixth from it is answered 503 at once.
    let mut sixth = from("127.0.0.1").await;
    let head = answered_at_once(&mut sixth, b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 1"),
        "{head}"
    );
    // Another address is served as ever.
    let mut other = from("127.0.0.2").await;
    other
        .write_all(b"GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    other.read_to_end(&mut answer).await.unwrap();
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
    // The first address's connections close: it is served again.
    drop(silent);
    eventually(
        "the address is served again",
        Duration::from_secs(5),
        || async {
            let mut again = from("127.0.0.1").await;
            again
                .write_all(b"GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
                .await
                .ok()?;
            let mut answer = Vec::new();
            again.read_to_end(&mut answer).await.ok()?;
            String::from_utf8_lossy(&answer)
                .starts_with("HTTP/1.1 200")
                .then_some(())
        },
    )
    .await;
    s.shutdown().await;
}
