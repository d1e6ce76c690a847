//! Whether a link or redirect target stays on this site, as a browser reads
//! it: the one check every path-only target goes through (redirect rules,
//! `next` after logon, menus, canonical links), so none of them can be
//! talked into sending a visitor to another host.

/// `true` for a path of this site: it starts with one `/`. A browser takes
/// a `\` for a `/` in a URL (so `/\evil.example` is the host
/// `evil.example`, like `//evil.example`) and drops tabs and newlines (so
/// `/<tab>/evil.example` is too): backslashes are read as slashes here, and
/// control characters refuse a target outright.
pub fn is_site_path(url: &str) -> bool {
    if url.chars().any(char::is_control) {
        return false;
    }
    let mut chars = url.chars().map(|c| if c == '\\' { '/' } else { c });
    chars.next() == Some('/') && chars.next() != Some('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_one_that_no_browser_reads_as_another_host() {
        for path in ["/", "/about", "/a/b?c=d", "/a\\b", "/nl/"] {
            assert!(is_site_path(path), "{path}");
        }
        for other in [
            "",
            "about",
            "//evil.example",
            "/\\evil.example",
            "\\/evil.example",
            "\\\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "https://evil.example",
            "javascript:alert(1)",
        ] {
            assert!(!is_site_path(other), "{other:?}");
        }
    }
}
