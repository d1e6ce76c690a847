//! Which of a site's languages a visitor gets.

use http::HeaderMap;
use http::header::ACCEPT_LANGUAGE;

/// The index (in `languages`) of the first of the visitor's `Accept-Language`
/// preferences that the site has (`nl-BE` matches `nl`), else 0, the site's first.
/// `q=0` means "not this one".
pub fn pick_language(languages: &[String], headers: &HeaderMap) -> usize {
    if languages.len() < 2 {
        return 0;
    }
    let Some(header) = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()) else {
        return 0;
    };
    for (wanted, quality) in accept_language::parse_with_quality(header) {
        if quality <= 0.0 {
            continue;
        }
        let wanted = wanted.to_ascii_lowercase();
        let primary = wanted.split('-').next().unwrap_or("");
        if let Some(index) = languages
            .iter()
            .position(|l| *l == wanted)
            .or_else(|| languages.iter().position(|l| l == primary))
        {
            return index;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn pick(languages: &[&str], header: &str) -> usize {
        let languages: Vec<String> = languages.iter().map(|l| l.to_string()).collect();
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT_LANGUAGE, HeaderValue::from_str(header).unwrap());
        pick_language(&languages, &headers)
    }

    #[test]
    fn a_regional_preference_matches_its_language_and_q_zero_refuses() {
        assert_eq!(pick(&["en", "nl"], "nl-BE, en;q=0.5"), 1);
        assert_eq!(pick(&["en", "nl"], "nl;q=0, en"), 0);
        assert_eq!(pick(&["en", "nl"], "fr"), 0);
    }
}
