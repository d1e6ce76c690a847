//! `m.acl`: what the one asking may do, for templates that show an "edit"
//! link or a "new article" button only to those who may use it. The same
//! decision as the JSON API and the admin make ([`AccessPolicy`]).
//!
//! - `m.acl.may("update", id)`: `view`, `insert`, `update`, `delete` or `link`
//!   on a resource (by id or unique name); false for one they may not see.
//! - `m.acl.may_insert("article")`, `m.acl.may_insert("article", "members")`:
//!   whether they may create a resource of that category (and visibility).
//!
//! [`AccessPolicy`]: bulwark_acl::AccessPolicy

use std::sync::Arc;

use bulwark_acl::Action;
use bulwark_store::{ResourceId, Visibility};
use minijinja::value::{Object, from_args};
use minijinja::{Error, ErrorKind, State, Value};

use super::scope::RenderScope;

#[derive(Debug)]
pub(super) struct AclView(pub(super) Arc<RenderScope>);

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

impl AclView {
    fn resource_id(&self, key: &Value) -> Result<Option<ResourceId>, Error> {
        if let Ok(id) = i64::try_from(key.clone()) {
            return Ok(Some(ResourceId(id)));
        }
        match key.as_str() {
            Some(text) => match text.parse::<i64>() {
                Ok(id) => Ok(Some(ResourceId(id))),
                Err(_) => self.0.resource_id_by_name(text),
            },
            None => Ok(None),
        }
    }
}

impl Object for AclView {
    fn call_method(
        self: &Arc<Self>,
        _state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "may" => {
                let (action, key): (String, Value) = from_args(args)?;
                let action: Action = action.parse().map_err(|_| {
                    invalid(format!(
                        "m.acl.may: unknown action {action:?} (view, insert, update, delete, link)"
                    ))
                })?;
                let Some(id) = self.resource_id(&key)? else {
                    return Ok(Value::from(false));
                };
                // `resource` answers only with what the principal may see.
                let may = self
                    .0
                    .resource(id)?
                    .is_some_and(|r| self.0.policy.may(&self.0.principal, action, &r));
                Ok(Value::from(may))
            }
            "may_insert" => {
                let (category, visibility): (String, Option<String>) = from_args(args)?;
                let visibility = match visibility.as_deref() {
                    None | Some("public") => Visibility::Public,
                    Some("members") => Visibility::Members,
                    Some(other) => {
                        return Err(invalid(format!(
                            "m.acl.may_insert: visibility {other:?} is public or members"
                        )));
                    }
                };
                Ok(Value::from(self.0.policy.may_insert(
                    &self.0.principal,
                    &category,
                    visibility,
                )))
            }
            _ => Err(Error::new(
                ErrorKind::UnknownMethod,
                format!("m.acl has no method {method:?} (may, may_insert)"),
            )),
        }
    }
}
