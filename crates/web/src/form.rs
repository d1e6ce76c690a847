//! Form bodies and query strings (`application/x-www-form-urlencoded`), read
//! with `form_urlencoded` (the `url` crate's): `+` is a space, `%XX` a byte.

/// The fields of a form body (or query string), decoded, in order.
pub fn parse_form(bytes: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(bytes).into_owned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_plus_and_percent() {
        assert_eq!(
            parse_form(b"a=1+2&b=%C3%A9&c"),
            vec![
                ("a".into(), "1 2".into()),
                ("b".into(), "é".into()),
                ("c".into(), "".into())
            ]
        );
    }
}
