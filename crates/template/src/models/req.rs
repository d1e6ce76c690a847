//! `m.req`: the request as the controller that renders describes it.

use std::sync::Arc;

use minijinja::Value;
use minijinja::value::Object;

/// `m.req`: the request's fields, plus `is_anonymous`.
#[derive(Debug)]
pub(super) struct RequestView {
    pub(super) request: Value,
    pub(super) anonymous: bool,
}

impl Object for RequestView {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "is_anonymous" => Some(Value::from(self.anonymous)),
            _ => self
                .request
                .get_item(key)
                .ok()
                .filter(|v| !v.is_undefined()),
        }
    }
}
