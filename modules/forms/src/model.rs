//! `m.forms("contact")` (or `m.forms(12)`) in templates: a form as
//! `_form.tpl` shows it, read through `m.rsc` so the access rules apply and
//! the page depends on the form (an editor's change shows at once).
//!
//! `{id, title, fields, submit, action, multipart}`, or `{id, title, error}`
//! when its fields cannot be read (the page then shows no form: an editor
//! sees why); undefined when there is no such form or the visitor may not
//! see it.

use std::collections::BTreeMap;

use minijinja::value::Value;
use minijinja::{Error, State};

use crate::definition::read_definition;
use crate::resource_name;

pub(crate) fn form(state: &State, which: Value) -> Result<Value, Error> {
    let Some(rsc) = state.lookup("m").and_then(|m| m.get_attr("rsc").ok()) else {
        return Ok(Value::UNDEFINED);
    };
    let key = match which.as_str() {
        Some(name) => Value::from(resource_name(name)),
        None => which,
    };
    let found = rsc.get_item(&key)?;
    if found.is_undefined() || found.is_none() {
        return Ok(Value::UNDEFINED);
    }
    if found.get_attr("category")?.as_str() != Some(crate::CATEGORY) {
        return Ok(Value::UNDEFINED);
    }
    let id = found.get_attr("id")?;
    let mut out = BTreeMap::new();
    out.insert("id", id.clone());
    out.insert("title", found.get_attr("title")?);
    let fields = serde_json::to_value(found.get_attr("fields")?).ok();
    match read_definition(fields.as_ref()) {
        Ok(definition) => {
            out.insert("multipart", Value::from(definition.takes_files()));
            out.insert(
                "fields",
                Value::from(minijinja::value::Serde(&definition.fields)),
            );
            let submit = found.get_attr("submit")?;
            out.insert(
                "submit",
                if submit.is_undefined() || submit.is_none() {
                    Value::from("Send")
                } else {
                    submit
                },
            );
            out.insert("action", Value::from(format!("/forms/{id}/submit")));
        }
        Err(why) => {
            out.insert("error", Value::from(why.to_string()));
        }
    }
    Ok(Value::from(out))
}
