//! The integration tests of `acl`, one test binary (docs/development.md).

mod search_filter;
mod stored_rules;
