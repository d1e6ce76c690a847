//! `m.config`: the site's config settings.

use std::sync::Arc;

use minijinja::Value;
use minijinja::value::Object;

use bulwark_store::dependency;

use super::scope::RenderScope;
use super::{ModelKey, ModelValue};

#[derive(Debug)]
pub(super) struct ConfigCollection(pub(super) Arc<RenderScope>);

impl Object for ConfigCollection {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        if bulwark_store::is_secret_config_key(key) {
            return None;
        }
        let value = self
            .0
            .fetch(
                ModelKey::Config(key.to_string()),
                || vec![dependency::config(key)],
                |s| Ok(ModelValue::Text(s.config_value(key)?.map(Arc::from))),
            )
            .ok()?;
        match value {
            ModelValue::Text(Some(t)) => Some(Value::from(&*t)),
            _ => None,
        }
    }
}
