//! `m.category`: the category tree, and a category's lineage.

use std::sync::Arc;

use bulwark_store::{Category, dependency};
use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{Error, ErrorKind, State, Value};

use super::scope::RenderScope;
use super::{ModelKey, ModelValue};

/// `m.category`: the category tree. `m.category.article` (or `["article"]`) is
/// one category; iterating gives every category in tree order.
#[derive(Debug)]
pub(super) struct CategoryCollection(pub(super) Arc<RenderScope>);

impl Object for CategoryCollection {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let all = self.0.categories().ok()?;
        let index = all
            .iter()
            .position(|c| Some(c.name.as_str()) == key.as_str())?;
        Some(CategoryObject::value(&all, index, &self.0))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let all = self.0.categories().unwrap_or_else(|_| Arc::from([]));
        Enumerator::Values(
            (0..all.len())
                .map(|i| CategoryObject::value(&all, i, &self.0))
                .collect(),
        )
    }
}

/// One category: `name`, `id`, `depth`, `parent`, `children`, `path` (from the
/// root down), `title` and `rsc` (the category is a resource too), `is_a(name)`.
#[derive(Debug)]
struct CategoryObject {
    all: Arc<[Category]>,
    index: usize,
    scope: Arc<RenderScope>,
}

impl CategoryObject {
    fn value(all: &Arc<[Category]>, index: usize, scope: &Arc<RenderScope>) -> Value {
        Value::from_object(CategoryObject {
            all: all.clone(),
            index,
            scope: scope.clone(),
        })
    }

    fn at(&self, index: usize) -> Value {
        CategoryObject::value(&self.all, index, &self.scope)
    }
}

/// `all[index]` and its ancestors (as indexes into `all`), most specific first.
fn lineage(all: &[Category], index: usize) -> Vec<usize> {
    let mut chain = vec![index];
    while let Some(parent) = all[*chain.last().expect("not empty")]
        .parent
        .and_then(|p| all.iter().position(|c| c.id == p))
    {
        chain.push(parent);
    }
    chain
}

impl Object for CategoryObject {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let c = &self.all[self.index];
        Some(match key.as_str()? {
            "name" => Value::from(c.name.as_str()),
            "id" => Value::from(c.id.0),
            "depth" => Value::from(c.depth),
            "parent" => c
                .parent
                .and_then(|p| self.all.iter().position(|x| x.id == p))
                .map(|i| self.at(i))
                .unwrap_or(Value::UNDEFINED),
            "children" => Value::from(
                (0..self.all.len())
                    .filter(|i| self.all[*i].parent == Some(c.id))
                    .map(|i| self.at(i))
                    .collect::<Vec<_>>(),
            ),
            "path" => {
                let mut path: Vec<Value> = lineage(&self.all, self.index)
                    .into_iter()
                    .map(|i| self.at(i))
                    .collect();
                path.reverse();
                Value::from(path)
            }
            "rsc" => self.scope.rsc_value(c.id).ok()?,
            "title" => self
                .scope
                .rsc_value(c.id)
                .ok()?
                .get_attr("title")
                .ok()
                .filter(|t| !t.is_undefined() && !t.is_none())
                .unwrap_or_else(|| Value::from(c.name.as_str())),
            _ => return None,
        })
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&[
            "name", "id", "depth", "parent", "children", "path", "title", "rsc",
        ])
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "is_a" => {
                let (other,): (&str,) = minijinja::value::from_args(args)?;
                let me = &self.all[self.index];
                Ok(Value::from(
                    self.all.iter().any(|o| o.name == other && me.is_a(o)),
                ))
            }
            _ => Err(Error::new(
                ErrorKind::UnknownMethod,
                format!("categories have no method {method}"),
            )),
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
    where
        Self: Sized + 'static,
    {
        f.write_str(&self.all[self.index].name)
    }
}

impl RenderScope {
    /// The whole category tree, in tree order (cached until the tree changes).
    pub fn categories(&self) -> Result<Arc<[Category]>, Error> {
        let value = self.fetch(
            ModelKey::Categories,
            || vec![dependency::category_tree()],
            |s| Ok(ModelValue::Categories(s.categories()?.into())),
        )?;
        Ok(match value {
            ModelValue::Categories(all) => all,
            _ => Arc::from([]),
        })
    }

    /// A category and its ancestors, most specific first.
    pub fn category_chain(self: &Arc<Self>, category: &str) -> Result<Vec<String>, Error> {
        let all = self.categories()?;
        Ok(match all.iter().position(|c| c.name == category) {
            Some(index) => lineage(&all, index)
                .into_iter()
                .map(|i| all[i].name.clone())
                .collect(),
            None => Vec::new(),
        })
    }
}
