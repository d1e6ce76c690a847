//! The integration tests of `template`, one test binary (docs/development.md).

mod common;

mod access;
mod fragments;
mod lookups;
