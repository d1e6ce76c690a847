//! The integration tests of `store`, one test binary (docs/development.md).

#[macro_use]
mod common;
// `on_both_backends!` reaches the test databases by this name in every crate.
use common as databases;

mod backup;
mod bad_input;
mod concurrency;
mod conformance;
mod crash;
mod migrations;
mod pivot_task;
mod publication;
mod unavailable;
mod xss;
