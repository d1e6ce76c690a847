//! The integration tests of `notify`, one test binary (docs/development.md).

mod delivery;
