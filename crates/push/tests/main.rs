//! The integration tests of `push`, one test binary (docs/development.md).

mod hub;
