//! A form as an editor defines it (the `fields` property of a resource of
//! the category `form`), and what a visitor's answers must be to be taken.
//!
//! A field is `{"name", "label", "type", "required", "help", "options",
//! "min", "max"}`; the types are `text`, `textarea`, `email`, `number`,
//! `date`, `choice` (one of `options`), `multiple` (any of them), `checkbox`
//! and `file`. A definition that cannot be read (a field without a name, a
//! name used twice, a choice without options) is said so in words
//! ([`check_definition`]): the admin's form builder shows it before it saves,
//! the page shows no form and no visitor's answers are taken with it.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use bulwark_module_mail::looks_like_address;

/// Characters a one-line answer may have, and a long one.
pub const MAX_TEXT: usize = 500;
pub const MAX_TEXTAREA: usize = 10_000;
/// Fields a form may have.
pub const MAX_FIELDS: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    Text,
    Textarea,
    Email,
    Number,
    Date,
    Choice,
    Multiple,
    Checkbox,
    File,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    pub name: String,
    pub label: String,
    #[serde(rename = "type")]
    pub kind: FieldType,
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// A form's fields, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    pub fields: Vec<Field>,
}

/// Why a `fields` property is no form definition (its `Display` is for the
/// editor).
#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    #[error("the form's fields cannot be read: {0}")]
    Unreadable(#[from] serde_json::Error),
    #[error("a form has at most {MAX_FIELDS} fields")]
    TooMany,
    /// Field `number` (from 1), labelled `label`, is wrong.
    #[error("field {number} ({label:?}): {problem}")]
    Field {
        number: usize,
        label: String,
        problem: FieldProblem,
    },
}

/// What is wrong with one field of a definition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldProblem {
    #[error("its name is a-z, 0-9 and _ (not first), at most 40")]
    Name,
    #[error("the name {0:?} is used twice")]
    NameTwice(String),
    #[error("give it a label")]
    NoLabel,
    #[error("a choice needs options")]
    NoOptions,
    #[error("its minimum is above its maximum")]
    MinAboveMax,
}

/// A form's definition from its `fields` property: none (or null) is a form
/// without fields.
pub fn read_definition(fields: Option<&Value>) -> Result<Definition, DefinitionError> {
    match fields {
        None | Some(Value::Null) => Ok(Definition { fields: Vec::new() }),
        Some(fields) => check_definition(fields),
    }
}

/// Reads and checks a `fields` property: the definition, or what is wrong
/// with it.
pub fn check_definition(fields: &Value) -> Result<Definition, DefinitionError> {
    let fields: Vec<Field> = serde_json::from_value(fields.clone())?;
    if fields.len() > MAX_FIELDS {
        return Err(DefinitionError::TooMany);
    }
    let mut seen = std::collections::HashSet::new();
    for (n, f) in fields.iter().enumerate() {
        let problem = if f.name.is_empty()
            || f.name.len() > 40
            || !f
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            || f.name.starts_with('_')
        {
            Some(FieldProblem::Name)
        } else if !seen.insert(f.name.as_str()) {
            Some(FieldProblem::NameTwice(f.name.clone()))
        } else if f.label.trim().is_empty() {
            Some(FieldProblem::NoLabel)
        } else if matches!(f.kind, FieldType::Choice | FieldType::Multiple)
            && f.options.iter().all(|o| o.trim().is_empty())
        {
            Some(FieldProblem::NoOptions)
        } else if matches!((f.min, f.max), (Some(min), Some(max)) if min > max) {
            Some(FieldProblem::MinAboveMax)
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(DefinitionError::Field {
                number: n + 1,
                label: f.label.clone(),
                problem,
            });
        }
    }
    Ok(Definition { fields })
}

impl Definition {
    /// Whether a file field is among them (the form is then sent as
    /// `multipart/form-data`).
    pub fn takes_files(&self) -> bool {
        self.fields.iter().any(|f| f.kind == FieldType::File)
    }

    /// The answers from what was sent (`sent`: every value by name, in order;
    /// `files`: the file fields that came with a file, and what it became),
    /// or each wrong field with what is wrong, in words for the visitor.
    pub fn answers(
        &self,
        sent: &[(String, String)],
        files: &BTreeMap<String, i64>,
    ) -> Result<BTreeMap<String, Value>, BTreeMap<String, String>> {
        let mut answers = BTreeMap::new();
        let mut wrong = BTreeMap::new();
        for f in &self.fields {
            let values: Vec<&str> = sent
                .iter()
                .filter(|(k, _)| *k == f.name)
                .map(|(_, v)| v.trim())
                .filter(|v| !v.is_empty())
                .collect();
            match answer(f, &values, files.get(&f.name).copied()) {
                Ok(Some(value)) => {
                    answers.insert(f.name.clone(), value);
                }
                Ok(None) if f.required => {
                    wrong.insert(f.name.clone(), required_message(f.kind).to_owned());
                }
                Ok(None) => {}
                Err(why) => {
                    wrong.insert(f.name.clone(), why);
                }
            }
        }
        if wrong.is_empty() {
            Ok(answers)
        } else {
            Err(wrong)
        }
    }
}

fn required_message(kind: FieldType) -> &'static str {
    match kind {
        FieldType::Checkbox => "tick this to go on",
        FieldType::Choice | FieldType::Multiple => "choose one",
        FieldType::File => "add a file",
        _ => "fill this in",
    }
}

/// One field's answer: `None` when nothing was given.
fn answer(f: &Field, values: &[&str], file: Option<i64>) -> Result<Option<Value>, String> {
    let one = values.first().copied();
    Ok(match f.kind {
        FieldType::Text | FieldType::Textarea => {
            let max = if f.kind == FieldType::Text {
                MAX_TEXT
            } else {
                MAX_TEXTAREA
            };
            match one {
                Some(text) if text.chars().count() > max => {
                    return Err(format!("at most {max} characters"));
                }
                Some(text) => Some(json!(text.replace("\r\n", "\n"))),
                None => None,
            }
        }
        FieldType::Email => match one {
            Some(email) if looks_like_address(email) => Some(json!(email)),
            Some(_) => return Err("give an e-mail address such as ann@example.org".into()),
            None => None,
        },
        FieldType::Number => match one {
            Some(text) => {
                let n: f64 = text
                    .replace(',', ".")
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or_else(|| "give a number".to_owned())?;
                if f.min.is_some_and(|min| n < min) {
                    return Err(format!("at least {}", f.min.unwrap_or_default()));
                }
                if f.max.is_some_and(|max| n > max) {
                    return Err(format!("at most {}", f.max.unwrap_or_default()));
                }
                // 41, not 41.0, when it is whole.
                if n.fract() == 0.0 && n.abs() < 1e15 {
                    Some(json!(n as i64))
                } else {
                    Some(json!(n))
                }
            }
            None => None,
        },
        FieldType::Date => match one {
            Some(text) => {
                let date = NaiveDate::parse_from_str(text, "%Y-%m-%d")
                    .map_err(|_| "give a date as year-month-day, such as 2026-05-31".to_owned())?;
                Some(json!(date.format("%Y-%m-%d").to_string()))
            }
            None => None,
        },
        FieldType::Choice => match one {
            Some(choice) if f.options.iter().any(|o| o == choice) => Some(json!(choice)),
            Some(_) => return Err("choose one of the options".into()),
            None => None,
        },
        FieldType::Multiple => {
            if let Some(other) = values.iter().find(|v| !f.options.iter().any(|o| o == *v)) {
                return Err(format!("{other:?} is not one of the options"));
            }
            let mut chosen: Vec<&str> = f
                .options
                .iter()
                .map(String::as_str)
                .filter(|o| values.contains(o))
                .collect();
            chosen.dedup();
            (!chosen.is_empty()).then(|| json!(chosen))
        }
        FieldType::Checkbox => one.map(|_| json!(true)),
        FieldType::File => file.map(|id| json!(id)),
    })
}

/// An answer as a person reads it, for the mail and the CSV file.
pub fn as_text(f: &Field, value: Option<&Value>) -> String {
    match (f.kind, value) {
        (_, None) => String::new(),
        (FieldType::Checkbox, Some(_)) => "yes".to_owned(),
        (FieldType::Multiple, Some(Value::Array(items))) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        (_, Some(Value::String(s))) => s.clone(),
        (_, Some(Value::Number(n))) => n.to_string(),
        (_, Some(other)) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contact() -> Definition {
        check_definition(&json!([
            {"name": "name", "label": "Name", "type": "text", "required": true},
            {"name": "email", "label": "E-mail", "type": "email", "required": true},
            {"name": "age", "label": "Age", "type": "number", "min": 0, "max": 130},
            {"name": "day", "label": "Day", "type": "date"},
            {"name": "topic", "label": "Topic", "type": "choice", "options": ["Sales", "Help"]},
            {"name": "likes", "label": "Likes", "type": "multiple", "options": ["A", "B", "C"]},
            {"name": "agree", "label": "I agree", "type": "checkbox", "required": true},
        ]))
        .unwrap()
    }

    fn sent(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn good_answers_are_taken_as_their_types() {
        let answers = contact()
            .answers(
                &sent(&[
                    ("name", " Ann "),
                    ("email", "ann@example.org"),
                    ("age", "41,5"),
                    ("day", "2026-05-31"),
                    ("topic", "Help"),
                    ("likes", "C"),
                    ("likes", "A"),
                    ("agree", "on"),
                ]),
                &BTreeMap::new(),
            )
            .unwrap();
        assert_eq!(answers["name"], "Ann");
        assert_eq!(answers["age"], 41.5);
        let whole = contact()
            .answers(
                &sent(&[
                    ("name", "A"),
                    ("email", "a@b.org"),
                    ("topic", "Help"),
                    ("agree", "on"),
                    ("age", "41"),
                ]),
                &BTreeMap::new(),
            )
            .unwrap();
        assert_eq!(whole["age"], 41);
        assert_eq!(answers["likes"], json!(["A", "C"]), "in the options' order");
        assert_eq!(answers["agree"], true);
    }

    #[test]
    fn each_wrong_field_is_named_with_what_to_do() {
        let wrong = contact()
            .answers(
                &sent(&[
                    ("email", "ann"),
                    ("age", "200"),
                    ("day", "31/05/2026"),
                    ("topic", "Other"),
                    ("likes", "D"),
                ]),
                &BTreeMap::new(),
            )
            .unwrap_err();
        assert_eq!(wrong["name"], "fill this in");
        assert!(wrong["email"].contains("e-mail address"));
        assert_eq!(wrong["age"], "at most 130");
        assert!(wrong["day"].contains("year-month-day"));
        assert_eq!(wrong["topic"], "choose one of the options");
        assert!(wrong["likes"].contains("\"D\""));
        assert_eq!(wrong["agree"], "tick this to go on");
    }

    #[test]
    fn a_broken_definition_is_refused_in_words() {
        for (fields, words) in [
            (
                json!([{"name": "", "label": "X", "type": "text"}]),
                "its name",
            ),
            (
                json!([{"name": "a", "label": "A", "type": "text"}, {"name": "a", "label": "B", "type": "text"}]),
                "used twice",
            ),
            (
                json!([{"name": "c", "label": "C", "type": "choice"}]),
                "needs options",
            ),
            (
                json!([{"name": "c", "label": "C", "type": "colour"}]),
                "cannot be read",
            ),
            (
                json!([{"name": "n", "label": "N", "type": "number", "min": 5, "max": 1}]),
                "minimum",
            ),
        ] {
            let why = check_definition(&fields).unwrap_err().to_string();
            assert!(why.contains(words), "{why}");
        }
    }
}
