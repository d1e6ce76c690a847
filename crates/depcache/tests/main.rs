//! The integration tests of `depcache`, one test binary (docs/development.md).

mod cache;
mod flight;
mod properties;
mod stress;
