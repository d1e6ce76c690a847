//! What the binary's tests share (each test file uses part of it).
#![allow(dead_code)]

use std::net::TcpListener;

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub const SIGHUP: i32 = 1;
pub const SIGTERM: i32 = 15;
pub const SIGCONT: i32 = 18;
pub const SIGSTOP: i32 = 19;

/// Sends `sig` to the process `pid` (a child the test started).
pub fn signal(pid: u32, sig: i32) {
    unsafe extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    // SAFETY: sends a signal to a child process of the test; no memory is shared.
    assert_eq!(unsafe { kill(pid as i32, sig) }, 0);
}
