//! `site.toml` text through the same validation `load_site_config` runs, and a
//! valid one's rules into a router, as loading a site does.
#![no_main]

use std::path::Path;

use bulwark_site::{SiteRouter, parse_site_config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_site_config(
        Path::new("/sites/fuzz/site.toml"),
        text,
        Path::new("/sites/fuzz"),
        &["core", "seo", "push", "auth"],
    ) {
        Ok(config) => {
            assert!(!config.hostname.is_empty());
            assert_eq!(config.hostname, config.hostname.to_ascii_lowercase());
            assert!(!config.languages.is_empty());
            let _ = SiteRouter::build(&config.rules, &[]);
        }
        Err(e) => {
            // The message names the file; it is what an operator reads.
            let message = e.to_string();
            assert!(message.contains("site.toml"), "{message}");
        }
    }
});
