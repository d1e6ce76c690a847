//! The category tree, kept as a nested set.
//!
//! Why a nested set: reads vastly outnumber tree changes, and "this category
//! and everything below it" becomes one range condition
//! (`nr_left BETWEEN a.nr_left AND a.nr_right`) that search can use directly.
//! The tree is small (tens to hundreds of nodes), so any change simply
//! renumbers all of it inside the same transaction.

use std::collections::HashMap;

use crate::db::{Conn, params};
use crate::dependency;
use crate::error::{Result, StoreError};
use crate::model::*;
use crate::resource::{category_id, insert_resource, prepare};
use crate::store::{Changes, Store};

/// Recompute `nr_left`, `nr_right` and `depth` of every category.
pub(crate) fn renumber(c: &mut dyn Conn, ch: &mut Changes) -> Result<()> {
    ch.category_memo.clear();
    let rows = c.query(
        "SELECT k.id, k.parent_id, k.nr_left, k.nr_right, k.depth, r.name FROM category k \
         JOIN rsc r ON r.id = k.id ORDER BY k.seq, k.id",
        &[],
    )?;
    let mut children: HashMap<Option<i64>, Vec<i64>> = HashMap::new();
    let mut old: HashMap<i64, (i64, i64, i64, String)> = HashMap::new();
    for r in &rows {
        children.entry(r.opt_int(1)).or_default().push(r.int(0));
        old.insert(
            r.int(0),
            (
                r.int(2),
                r.int(3),
                r.int(4),
                r.opt_text(5).unwrap_or_default(),
            ),
        );
    }
    let mut numbers: Vec<(i64, i64, i64, i64)> = Vec::with_capacity(rows.len());
    let mut counter = 0i64;
    // Iterative depth-first walk: (id, depth, entering?)
    let mut stack: Vec<(i64, i64, bool)> = children
        .get(&None)
        .map(|v| v.iter().rev().map(|&id| (id, 0, true)).collect())
        .unwrap_or_default();
    let mut left: HashMap<i64, i64> = HashMap::new();
    while let Some((id, depth, entering)) = stack.pop() {
        counter += 1;
        if entering {
            left.insert(id, counter);
            stack.push((id, depth, false));
            if let Some(kids) = children.get(&Some(id)) {
                for &k in kids.iter().rev() {
                    stack.push((k, depth + 1, true));
                }
            }
        } else {
            numbers.push((id, left[&id], counter, depth));
        }
    }
    if numbers.len() != rows.len() {
        return Err(StoreError::invalid(
            "parent",
            "the category tree would contain a cycle",
        ));
    }
    for (id, l, r, d) in numbers {
        let (ol, or, od, name) = &old[&id];
        if (*ol, *or, *od) != (l, r, d) {
            c.execute(
                "UPDATE category SET nr_left = $1, nr_right = $2, depth = $3 WHERE id = $4",
                &params![l, r, d, id],
            )?;
            ch.add(dependency::category(name));
            ch.add(dependency::category_tree());
        }
    }
    Ok(())
}

fn category_from_row(r: &crate::db::Row) -> Category {
    Category {
        id: ResourceId(r.int(0)),
        name: r.opt_text(1).unwrap_or_default(),
        parent: r.opt_int(2).map(ResourceId),
        depth: r.int(3),
        left: r.int(4),
        right: r.int(5),
    }
}

const CATEGORY_COLUMNS: &str = "k.id, r.name, k.parent_id, k.depth, k.nr_left, k.nr_right";

impl Store {
    /// Renumber the category tree (after migrations; normally automatic).
    pub(crate) fn renumber_categories(&self) -> Result<()> {
        self.write(|c, ch| renumber(c, ch))
    }

    /// All categories in tree order (parents before their children).
    pub fn categories(&self) -> Result<Vec<Category>> {
        self.read(|c| {
            Ok(c.query(
                &format!(
                    "SELECT {CATEGORY_COLUMNS} FROM category k JOIN rsc r ON r.id = k.id ORDER BY k.nr_left"
                ),
                &[],
            )?
            .iter()
            .map(category_from_row)
            .collect())
        })
    }

    pub fn category(&self, name: &str) -> Result<Category> {
        self.read(|c| {
            c.query_one(
                &format!(
                    "SELECT {CATEGORY_COLUMNS} FROM category k JOIN rsc r ON r.id = k.id WHERE r.name = $1"
                ),
                &params![name],
            )?
            .map(|r| category_from_row(&r))
            .ok_or_else(|| StoreError::UnknownCategory(name.to_owned()))
        })
    }

    /// `category` and every category below it, in tree order.
    pub fn category_and_below(&self, name: &str) -> Result<Vec<Category>> {
        self.read(|c| {
            let id = category_id(c, name)?;
            Ok(c.query(
                &format!(
                    "SELECT {CATEGORY_COLUMNS} FROM category k JOIN rsc r ON r.id = k.id \
                     JOIN category a ON a.id = $1 \
                     WHERE k.nr_left BETWEEN a.nr_left AND a.nr_right ORDER BY k.nr_left"
                ),
                &params![id.0],
            )?
            .iter()
            .map(category_from_row)
            .collect())
        })
    }

    /// Create a category under `parent` (or at the top).
    pub fn create_category(
        &self,
        name: &str,
        parent: Option<&str>,
        title: &str,
    ) -> Result<ResourceId> {
        let category = prepare(
            NewResource::new("category", Props::new().with("title", title))
                .named(name)
                .published(true),
        )?;
        self.write(|c, ch| {
            let parent_id = parent.map(|p| category_id(c, p)).transpose()?;
            let id = insert_resource(c, category, ch)?;
            c.execute(
                "UPDATE category SET parent_id = $1 WHERE id = $2",
                &params![parent_id.map(|p| p.0), id.0],
            )?;
            renumber(c, ch)?;
            Ok(id)
        })
    }

    /// Move a category (with everything below it) under another parent (the
    /// top without one), last among its new siblings.
    pub fn move_category(&self, name: &str, new_parent: Option<&str>) -> Result<()> {
        self.place_category(name, new_parent, None)
    }

    /// Move a category (with everything below it) under another parent, or
    /// reorder it among its siblings: `position` 0 puts it first, `None` (or
    /// past the end) last. A move that would make a cycle is refused and
    /// changes nothing.
    pub fn place_category(
        &self,
        name: &str,
        new_parent: Option<&str>,
        position: Option<usize>,
    ) -> Result<()> {
        self.write(|c, ch| {
            let id = category_id(c, name)?;
            let parent = new_parent.map(|p| category_id(c, p)).transpose()?;
            let siblings = c.query(
                "SELECT id FROM category WHERE parent_id IS NOT DISTINCT FROM $1 AND id <> $2 \
                 ORDER BY seq, id",
                &params![parent.map(|p| p.0), id.0],
            )?;
            let mut order: Vec<i64> = siblings.iter().map(|r| r.int(0)).collect();
            let at = position.unwrap_or(order.len()).min(order.len());
            order.insert(at, id.0);
            c.execute(
                "UPDATE category SET parent_id = $1 WHERE id = $2",
                &params![parent.map(|p| p.0), id.0],
            )?;
            for (seq, sibling) in order.iter().enumerate() {
                c.execute(
                    "UPDATE category SET seq = $1 WHERE id = $2",
                    &params![seq as i64, *sibling],
                )?;
            }
            renumber(c, ch)?;
            ch.add(dependency::category(name));
            ch.add(dependency::search());
            Ok(())
        })
    }
}
