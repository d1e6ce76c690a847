//! When the process has no file descriptor left, a new visitor gets a quick 503
//! instead of a connection that hangs while `accept` fails; the site answers
//! normally again as soon as descriptors are free. Alone in its file: it lowers
//! the open-file limit of its own test process.

mod common;

use std::time::Duration;

use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_descriptors_a_new_connection_gets_503_and_the_site_recovers() {
    let s = start(&two_sites(), |_| {}).await;
    assert_eq!(get(s.addr, "a.test", "/").await.status, 200);

    // Take every descriptor the process may still open, then give one back for
    // the visitor's own socket: the server has none left to accept it with.
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
    let mut filler = Vec::new();
    let mut refused = None;
    // The server's own background work may take the one free descriptor first:
    // then the visitor cannot connect (or finds one free), and it is tried again.
    for _ in 0..5 {
        while let Ok(f) = std::fs::File::open("/dev/null") {
            filler.push(f);
        }
        filler.pop();
        let Ok(mut visitor) = TcpStream::connect(s.addr).await else {
            continue;
        };
        visitor
            .write_all(b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), visitor.read_to_end(&mut answer))
            .await
            .expect("answered at once, not left hanging")
            .unwrap();
        let head = String::from_utf8_lossy(&answer).into_owned();
        if head.starts_with("HTTP/1.1 503") {
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
