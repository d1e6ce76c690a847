//! Translated properties: one value per language, kept in the resource's
//! document like any other property.
//!
//! A text property (`title`, `summary`, `body`, `slug`, an alt text...) holds
//! either a plain string, the same in every language, or a *translated value*:
//!
//! ```json
//! {"title": {"trans": {"en": "Bicycles", "nl": "Fietsen"}}}
//! ```
//!
//! an object whose only key is `trans`, mapping language codes (`en`,
//! `pt-br`) to strings. Nothing else changes: revisions, exports, backups and
//! the JSON API keep the document as it is; the sanitiser cleans each
//! language's text as the property's own (a translated `body` is HTML in
//! every language); the pivot indexes each language on its own, stemmed the
//! way that language is ([`stem_words`]); readers pick a language with a
//! fallback order ([`Props::text_in`]).
//!
//! Which languages a resource is *published* in is the `languages` property,
//! a list of codes; without it, every language the site has.

use serde_json::{Map, Value};

/// The key that marks a translated value.
pub const TRANS: &str = "trans";

/// The property that lists the languages a resource is published in.
pub const PUBLISHED_LANGUAGES: &str = "languages";

/// The translations of `value` by language, when it is a translated value.
pub fn translations(value: &Value) -> Option<&Map<String, Value>> {
    match value {
        Value::Object(map) if map.len() == 1 => map.get(TRANS)?.as_object(),
        _ => None,
    }
}

/// Whether an object is a translated value.
pub(crate) fn is_translated(map: &Map<String, Value>) -> bool {
    map.len() == 1 && map.get(TRANS).is_some_and(Value::is_object)
}

/// [`translations`], to change them in place.
pub(crate) fn translations_mut(map: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    if map.len() != 1 {
        return None;
    }
    map.get_mut(TRANS)?.as_object_mut()
}

/// A translated value of `texts`, `(language, text)` pairs.
pub fn translated<'a>(texts: impl IntoIterator<Item = (&'a str, &'a str)>) -> Value {
    let map: Map<String, Value> = texts
        .into_iter()
        .map(|(lang, text)| (lang.to_owned(), Value::from(text)))
        .collect();
    let mut outer = Map::new();
    outer.insert(TRANS.to_owned(), Value::Object(map));
    Value::Object(outer)
}

/// Whether `code` is a language code as sites name them: two or three
/// lower-case letters, optionally a region (`pt-br`, `zh-hant`).
pub fn is_language_code(code: &str) -> bool {
    let mut parts = code.split('-');
    let primary = parts.next().unwrap_or("");
    (2..=3).contains(&primary.len())
        && primary.bytes().all(|b| b.is_ascii_lowercase())
        && parts.all(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// The text of `value` in the first of `languages` that has a non-empty one;
/// a plain string is the same in every language. `None` when none of the
/// languages has it (a translated value with only other languages).
pub fn text_in<'a>(value: &'a Value, languages: &[&str]) -> Option<&'a str> {
    match translations(value) {
        Some(map) => languages.iter().find_map(|lang| {
            map.get(*lang)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        }),
        None => value.as_str(),
    }
}

/// The text of `value` in any language: a plain string, or the first
/// non-empty translation (by language code), for readers that know no
/// language (the admin's lists, logs, a sort key).
pub fn any_text(value: &Value) -> Option<&str> {
    match translations(value) {
        Some(map) => map
            .values()
            .filter_map(Value::as_str)
            .find(|s| !s.is_empty()),
        None => value.as_str(),
    }
}

/// The Snowball stemmer for a language code, where there is one: the same
/// algorithms PostgreSQL's text search configurations use, here for both
/// backends, so SQLite stems Dutch as PostgreSQL does.
fn stemmer(language: &str) -> Option<rust_stemmers::Stemmer> {
    use rust_stemmers::Algorithm::*;
    let primary = language.split('-').next().unwrap_or(language);
    let algorithm = match primary {
        "ar" => Arabic,
        "da" => Danish,
        "nl" => Dutch,
        "en" => English,
        "fi" => Finnish,
        "fr" => French,
        "de" => German,
        "el" => Greek,
        "hu" => Hungarian,
        "it" => Italian,
        "no" | "nb" | "nn" => Norwegian,
        "pt" => Portuguese,
        "ro" => Romanian,
        "ru" => Russian,
        "es" => Spanish,
        "sv" => Swedish,
        "ta" => Tamil,
        "tr" => Turkish,
        _ => return None,
    };
    Some(rust_stemmers::Stemmer::create(algorithm))
}

/// Normalised words (see `pivot::normalise_words`), each reduced to its stem
/// in `language` where a stemmer exists for it: Dutch "fietsen" indexes as
/// `fiets`, English "bicycles" as `bicycl`.
pub(crate) fn stem_words(words: &str, language: &str) -> String {
    let Some(stemmer) = stemmer(language) else {
        return words.to_owned();
    };
    let mut out = String::with_capacity(words.len());
    for word in words.split(' ').filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&stemmer.stem(word));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Props;
    use serde_json::json;

    #[test]
    fn a_translated_value_is_read_in_the_first_language_that_has_it() {
        let v = json!({"trans": {"en": "Bicycles", "nl": "Fietsen", "de": ""}});
        assert_eq!(text_in(&v, &["nl", "en"]), Some("Fietsen"));
        assert_eq!(
            text_in(&v, &["de", "en"]),
            Some("Bicycles"),
            "empty is missing"
        );
        assert_eq!(text_in(&v, &["fr"]), None);
        assert_eq!(any_text(&v), Some("Bicycles"));
        assert_eq!(text_in(&json!("Plain"), &["nl"]), Some("Plain"));
        assert!(translations(&json!({"trans": {}, "other": 1})).is_none());
    }

    #[test]
    fn language_codes_are_lower_case_with_an_optional_region() {
        for good in ["en", "nl", "pt-br", "zh-hant", "gsw"] {
            assert!(is_language_code(good), "{good}");
        }
        for bad in ["", "e", "EN", "english", "en_", "en-", "../x"] {
            assert!(!is_language_code(bad), "{bad}");
        }
    }

    #[test]
    fn words_are_stemmed_in_their_language_and_left_alone_without_a_stemmer() {
        assert_eq!(stem_words("fietsen lopen", "nl"), "fiets lop");
        assert_eq!(stem_words("bicycles running", "en"), "bicycl run");
        assert_eq!(stem_words("bicycles", "xx"), "bicycles");
    }

    #[test]
    fn published_languages_default_to_all() {
        let props = Props::new().with("languages", json!(["en"]));
        assert!(props.published_in("en"));
        assert!(!props.published_in("nl"));
        assert!(Props::new().published_in("nl"));
    }
}
