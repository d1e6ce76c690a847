//! PHP's `serialize()` format, as WordPress keeps arrays in custom fields
//! (`a:2:{s:4:"food";i:4;...}`), read into JSON.
//!
//! Our own: the crates for this format deserialize into Rust types through
//! serde and refuse what does not fit one; a custom field can be any shape,
//! and the whole format is six value kinds.

use serde_json::{Map, Value};

/// The value `text` serializes, or `None` when it is not PHP's format (then
/// the field is kept as the text it is).
pub fn unserialize(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let value = read(bytes, &mut at, 0)?;
    (at == bytes.len()).then_some(value)
}

/// How deep arrays may nest.
const MAX_DEPTH: usize = 32;

fn read(b: &[u8], at: &mut usize, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let kind = *b.get(*at)?;
    if kind == b'N' {
        expect(b, at, b"N;")?;
        return Some(Value::Null);
    }
    *at += 1;
    expect(b, at, b":")?;
    match kind {
        b'b' => {
            let n = until(b, at, b';')?;
            Some(Value::Bool(n == "1"))
        }
        b'i' => until(b, at, b';')?.parse::<i64>().ok().map(Value::from),
        b'd' => {
            let n = until(b, at, b';')?.parse::<f64>().ok()?;
            serde_json::Number::from_f64(n).map(Value::Number)
        }
        b's' => {
            let len: usize = until(b, at, b':')?.parse().ok()?;
            expect(b, at, b"\"")?;
            let text = b.get(*at..at.checked_add(len)?)?;
            *at += len;
            expect(b, at, b"\";")?;
            Some(Value::String(String::from_utf8_lossy(text).into_owned()))
        }
        b'a' => read_array(b, at, depth),
        b'O' => {
            // O:8:"stdClass":2:{...}: the class's name is dropped.
            let len: usize = until(b, at, b':')?.parse().ok()?;
            *at = at.checked_add(len + 3)?;
            read_array(b, at, depth)
        }
        _ => None,
    }
}

/// `2:{key;value;key;value}`: a list when the keys are 0, 1, 2..., else an
/// object.
fn read_array(b: &[u8], at: &mut usize, depth: usize) -> Option<Value> {
    let count: usize = until(b, at, b':')?.parse().ok()?;
    expect(b, at, b"{")?;
    let mut pairs = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let key = match read(b, at, depth + 1)? {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            _ => return None,
        };
        pairs.push((key, read(b, at, depth + 1)?));
    }
    expect(b, at, b"}")?;
    let is_list = pairs
        .iter()
        .enumerate()
        .all(|(i, (k, _))| k.parse::<usize>() == Ok(i));
    Some(match is_list {
        true => Value::Array(pairs.into_iter().map(|(_, v)| v).collect()),
        false => Value::Object(pairs.into_iter().collect::<Map<_, _>>()),
    })
}

fn expect(b: &[u8], at: &mut usize, what: &[u8]) -> Option<()> {
    if b.get(*at..*at + what.len())? == what {
        *at += what.len();
        Some(())
    } else {
        None
    }
}

fn until<'a>(b: &'a [u8], at: &mut usize, end: u8) -> Option<&'a str> {
    let rest = b.get(*at..)?;
    let n = rest.iter().position(|&c| c == end)?;
    *at += n + 1;
    std::str::from_utf8(&rest[..n]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_array_with_names_is_an_object_and_one_without_a_list() {
        let text =
            r#"a:3:{s:4:"food";i:4;s:4:"view";a:2:{i:0;i:5;i:1;s:5:"great";}s:4:"open";b:1;}"#;
        assert_eq!(
            unserialize(text),
            Some(json!({"food": 4, "view": [5, "great"], "open": true}))
        );
    }

    #[test]
    fn string_lengths_count_bytes() {
        assert_eq!(unserialize(r#"s:5:"Züri";"#), Some(json!("Züri")));
        assert_eq!(unserialize("d:1.5;"), Some(json!(1.5)));
        assert_eq!(unserialize("N;"), Some(Value::Null));
    }

    #[test]
    fn an_object_keeps_its_fields() {
        let text = r#"O:8:"stdClass":1:{s:1:"a";i:1;}"#;
        assert_eq!(unserialize(text), Some(json!({"a": 1})));
    }

    #[test]
    fn plain_text_and_broken_values_are_not_serialized() {
        assert_eq!(unserialize("sunny"), None);
        assert_eq!(unserialize(r#"s:10:"short";"#), None);
        assert_eq!(unserialize(r#"a:1:{i:0;i:1;"#), None);
        assert_eq!(unserialize("i:1;trailing"), None);
    }
}
