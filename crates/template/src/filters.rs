//! Filters of the project's own.

use std::fmt::Write;

use chrono::{DateTime, Utc};
use minijinja::{Error, ErrorKind, Value};

/// How `date` writes a moment when no format is given: `26 November 2026`.
const DATE_FORMAT: &str = "%-d %B %Y";

/// `{{ r.created|date }}`, `{{ r.modified|date("%-d %b %Y, %H:%M") }}`: an RFC 3339
/// moment (as the models give `created`, `modified`, `publication_start`...)
/// written with a chrono `strftime` format, in UTC. Nothing (none or undefined)
/// gives an empty string; text that is not a moment, or a format chrono does
/// not know, is an error that says so.
pub(crate) fn date(value: Value, format: Option<String>) -> Result<Value, Error> {
    if value.is_undefined() || value.is_none() {
        return Ok(Value::from(""));
    }
    let text = value.as_str().ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "date: expected a moment as text (RFC 3339), got {}",
                value.kind()
            ),
        )
    })?;
    let moment = DateTime::parse_from_rfc3339(text)
        .map_err(|e| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!("date: {text:?} is not an RFC 3339 moment: {e}"),
            )
        })?
        .with_timezone(&Utc);
    let format = format.as_deref().unwrap_or(DATE_FORMAT);
    let mut out = String::new();
    // `write!` reports a format chrono cannot read (`to_string` would panic).
    write!(out, "{}", moment.format(format)).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("date: {format:?} is not a strftime format chrono knows"),
        )
    })?;
    Ok(Value::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moment_is_written_as_people_read_it() {
        let at = Value::from("2026-11-26T09:05:00.123+00:00");
        assert_eq!(
            date(at.clone(), None).unwrap().as_str(),
            Some("26 November 2026")
        );
        assert_eq!(
            date(at, Some("%Y-%m-%d %H:%M".into())).unwrap().as_str(),
            Some("2026-11-26 09:05")
        );
        assert_eq!(
            date(
                Value::from("2026-11-26T10:05:00+01:00"),
                Some("%H:%M".into())
            )
            .unwrap()
            .as_str(),
            Some("09:05"),
            "in UTC"
        );
    }

    #[test]
    fn nothing_is_empty_and_nonsense_is_an_error_that_says_so() {
        assert_eq!(date(Value::UNDEFINED, None).unwrap().as_str(), Some(""));
        assert_eq!(date(Value::from(()), None).unwrap().as_str(), Some(""));
        let wrong = date(Value::from("yesterday"), None).unwrap_err();
        assert!(
            wrong.to_string().contains("not an RFC 3339 moment"),
            "{wrong}"
        );
        let format = date(Value::from("2026-11-26T09:05:00Z"), Some("%Q".into())).unwrap_err();
        assert!(
            format.to_string().contains("not a strftime format"),
            "{format}"
        );
        assert!(date(Value::from(3), None).is_err());
    }
}
