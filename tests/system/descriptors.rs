//! When the process has no file descriptor left, idle connections are closed
//! first and the new visitor is served; with nothing idle to close, the visitor
//! gets a quick 503 instead of a connection that hangs while `accept` fails, and
//! the site answers normally again as soon as descriptors are free. Alone in its
//! file: it lowers the open-file limit of its own test process.

#[path = "helpers/common.rs"]
mod common;

use std::time::Duration;

use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Whether the server closed the connection (end of stream, or a reset).
async fn closed_by_server(conn: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf)).await;
    matches!(read, Ok(Ok(0) | Err(_)))
}

/// Opens files until the process may open no more, then gives one back for
/// the visitor's own socket: the server has none left to accept it with.
fn take_every_descriptor_but_one() -> Vec<std::fs::File> {
    let mut filler = Vec::new();
    while let Ok(f) = std::fs::File::open("/dev/null") {
        filler.push(f);
    }
    filler.pop();
    filler
}

/// A visitor's request while descriptors are short: its answer, or `None`
/// when the visitor itself found no descriptor for its socket.
async fn visit(addr: std::net::SocketAddr) -> Option<String> {
    let mut visitor = TcpStream::connect(addr).await.ok()?;
    let request = b"GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n";
    Some(answered_at_once(&mut visitor, request).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_descriptors_idle_connections_close_first_then_a_newcomer_gets_503() {
    let s = start(&two_sites(), |_| {}).await;
    assert_eq!(get(s.addr, "a.test", "/").await.status, 200);
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain calls that read and write the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_cur.min(2048);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }

    // Idle connections: kept alive after a request, and opened without one.
    // And one busy: its head is in, its body still arriving.
    let mut idle = Vec::new();
    for _ in 0..20 {
        idle.push(kept_alive(s.addr).await);
    }
    for _ in 0..5 {
        idle.push(TcpStream::connect(s.addr).await.unwrap());
    }
    let mut busy = TcpStream::connect(s.addr).await.unwrap();
    busy.write_all(b"POST /page/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nConnection: close\r\n\r\nx=")
        .await
        .unwrap();
    bulwark_testkit::eventually(
        "the server read the busy request so far",
        Duration::from_secs(5),
        || async { server_read_all(&busy).then_some(()) },
    )
    .await;

    let mut served = None;
    let mut filler = Vec::new();
    for _ in 0..5 {
        filler.extend(take_every_descriptor_but_one());
        if let Some(answer) = visit(s.addr).await {
            served = Some(answer);
            break;
        }
    }
    let answer = served.expect("the visitor could connect");
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "with idle connections to close, the visitor is served: {answer}"
    );
    for (i, conn) in idle.iter_mut().enumerate() {
        assert!(
            closed_by_server(conn).await,
            "idle connection {i} was closed to make room"
        );
    }
    busy.write_all(b"1").await.unwrap();
    let mut buf = Vec::new();
    busy.read_to_end(&mut buf).await.unwrap();
    assert_eq!(
        parse_response(&buf).unwrap().text(),
        "page x q=1",
        "the busy connection was left to finish"
    );
    drop((idle, busy, filler));
    bulwark_testkit::eventually(
        "the server has descriptors again",
        Duration::from_secs(5),
        || async {
            let request = b"GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n";
            let status = raw(s.addr, request).await.map(|r| r.status);
            (status == Some(200)).then_some(())
        },
    )
    .await;

    // Nothing idle to close now: the newcomer gets 503 at once.
    let mut filler = Vec::new();
    let mut refused = None;
    // The server's own background work may take the one free descriptor first:
    // then the visitor cannot connect (or finds one free), and it is tried again.
    for _ in 0..5 {
        filler.extend(take_every_descriptor_but_one());
        if let Some(head) = visit(s.addr).await
            && head.starts_with("HTTP/1.1 503")
        {
            refused = Some(head);
            break;
        }
    }
    let head = refused.expect("a visitor arriving with no descriptor left gets 503");
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 1"),
        "{head}"
    );

    drop(filler);
    bulwark_testkit::eventually("the server recovered", Duration::from_secs(5), || async {
        // Until the descriptors are back, a connection may also end unanswered.
        let request = b"GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n";
        let status = raw(s.addr, request).await.map(|r| r.status);
        (status == Some(200)).then_some(())
    })
    .await;
    s.shutdown().await;
}
