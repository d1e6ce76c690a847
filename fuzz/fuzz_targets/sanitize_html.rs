//! Stored HTML through the sanitiser: what comes out is safe in element content
//! and in a quoted attribute, and sanitising it again changes nothing.
#![no_main]

use bulwark_store::sanitize_html_value;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(html) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(clean) = sanitize_html_value(html) else {
        return;
    };
    assert!(!clean.contains(['"', '\'']), "a raw quote in {clean:?}");
    let lower = clean.to_ascii_lowercase();
    for tag in [
        "<script", "<style", "<iframe", "<object", "<embed", "<svg", "<math",
    ] {
        assert!(!lower.contains(tag), "{tag} in {clean:?}");
    }
    let again = sanitize_html_value(&clean).expect("clean HTML is accepted again");
    assert_eq!(again, clean, "sanitising twice differs from once");
});
