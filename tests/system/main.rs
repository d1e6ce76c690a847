//! The system tests: whole sites with every module, on real sockets and real
//! databases, in one test binary (docs/development.md says where a test goes).
//! Two tests that change their whole process have binaries of their own:
//! `descriptors.rs` (lowers the open-file limit) and `memory.rs` (reads the
//! peak resident memory).

#[macro_use]
#[path = "../../crates/store/tests/common/mod.rs"]
mod databases;
#[path = "helpers/accounts.rs"]
mod accounts;
#[path = "helpers/common.rs"]
mod common;
#[path = "helpers/media_support.rs"]
mod media_support;
#[path = "helpers/push_support.rs"]
mod push_support;
#[path = "helpers/receiver.rs"]
mod receiver;
#[path = "helpers/rights_matrix.rs"]
mod rights_matrix;
#[path = "helpers/smtp.rs"]
mod smtp;
#[path = "helpers/starter_api.rs"]
mod starter_api;
#[path = "helpers/tickets.rs"]
mod tickets;

mod web {
    mod access;
    mod api;
    mod connections;
    mod database;
    mod endpoints;
    mod faults;
    mod headers;
    mod languages;
    mod limits;
    mod modules;
    mod overload;
    mod pages;
    mod rights;
    mod sanitising;
    mod serving;
    mod sessions;
    mod site_api;
    mod starter;
    mod tls;
}

mod modules {
    mod admin;
    mod auth {
        mod reset;
    }
    mod cluster;
    mod comments;
    mod feeds;
    mod forms;
    mod mail {
        mod outbox;
    }
    mod media;
    mod menu;
    mod metrics;
    mod push {
        mod access;
        mod access_matrix;
        mod transports;
    }
    mod redirects;
    mod seo;
    mod voting;
    mod webhooks;
}
