//! The integration tests of `bulwark`, one test binary (docs/development.md).

mod common;

mod accounts;
mod acme;
mod backup;
mod cli;
mod disk_full;
mod export_import;
mod import_csv;
mod import_wordpress;
mod metrics;
mod shared_database;
mod translations;
mod varnish;
mod webhooks_restart;
