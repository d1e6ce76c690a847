//! `Accept-Language` header values (any bytes a header may hold) against a
//! site's languages.
#![no_main]

use bulwark_web::pick_language;
use http::header::ACCEPT_LANGUAGE;
use http::{HeaderMap, HeaderValue};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = HeaderValue::from_bytes(data) else {
        return;
    };
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT_LANGUAGE, value);
    let languages: Vec<String> = ["en", "nl", "pt-br", "de"].map(String::from).into();
    let index = pick_language(&languages, &headers);
    assert!(index < languages.len());
    if index > 0 {
        let header = String::from_utf8_lossy(data).to_ascii_lowercase();
        let primary = languages[index].split('-').next().unwrap_or_default();
        assert!(
            header.contains(primary),
            "{:?} picked from {header:?}",
            languages[index]
        );
    }
    assert_eq!(pick_language(&languages[..1], &headers), 0);
});
