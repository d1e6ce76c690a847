//! The integration tests of `auth`, one test binary (docs/development.md).

#[macro_use]
#[path = "../../../crates/store/tests/common/mod.rs"]
mod databases;

mod accounts;
mod second_factor;
mod tables;
