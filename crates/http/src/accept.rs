//! Reading the request headers that list weighted choices, `Accept-Encoding`
//! and `Accept-Language` (RFC 9110, 12.4.2): one element splitter for both, so
//! they agree on what an element and its weight are.

/// The choices in one such header value, in the order written: each
/// element's token (trimmed, never empty) and the values of its `q`
/// parameters (the name in any case, the value trimmed and not yet parsed;
/// none when no weight is given). What a weight means, and what a malformed
/// one does, is for the reader to say.
pub fn weighted_choices(value: &str) -> impl Iterator<Item = (&str, impl Iterator<Item = &str>)> {
    value.split(',').filter_map(|element| {
        let mut parts = element.split(';');
        let token = parts.next()?.trim();
        let weights = parts.filter_map(|parameter| {
            let (name, value) = parameter.split_once('=')?;
            name.trim().eq_ignore_ascii_case("q").then(|| value.trim())
        });
        (!token.is_empty()).then_some((token, weights))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(value: &str) -> Vec<(&str, Vec<&str>)> {
        weighted_choices(value)
            .map(|(token, weights)| (token, weights.collect()))
            .collect()
    }

    #[test]
    fn each_element_gives_its_token_and_its_q_values_as_written() {
        assert_eq!(
            read(" nl-BE , nl;q=0.9 ,, en ; Q = 0.8;level=1;q=x ,;q=1"),
            [
                ("nl-BE", vec![]),
                ("nl", vec!["0.9"]),
                ("en", vec!["0.8", "x"]),
            ]
        );
        assert_eq!(read(""), []);
    }
}
