//! Predicates and edges. Edges are ordered per (subject, predicate) by `seq`;
//! a move renumbers that one list, which stays short in practice.

use chrono::Utc;

use crate::db::{Conn, params};
use crate::dependency;
use crate::error::{DatabaseError, Result, StoreError};
use crate::model::*;
use crate::resource::{category_id, insert_resource, load, prepare};
use crate::store::{Changes, Store};

fn predicate_id(c: &mut dyn Conn, name: &str) -> Result<ResourceId> {
    if crate::names::check_name("predicate", name).is_err() {
        return Err(StoreError::UnknownPredicate(name.to_owned()));
    }
    c.query_one(
        "SELECT r.id FROM rsc r JOIN rsc k ON k.id = r.category_id \
         WHERE r.name = $1 AND k.name = 'predicate'",
        &params![name],
    )?
    .map(|r| ResourceId(r.int(0)))
    .ok_or_else(|| StoreError::UnknownPredicate(name.to_owned()))
}

fn predicate_categories(c: &mut dyn Conn, pred: ResourceId, subject: bool) -> Result<Vec<String>> {
    Ok(c.query(
        "SELECT r.name FROM predicate_category pc JOIN rsc r ON r.id = pc.category_id \
         JOIN category k ON k.id = pc.category_id \
         WHERE pc.predicate_id = $1 AND pc.is_subject = $2 ORDER BY k.nr_left",
        &params![pred.0, subject],
    )?
    .iter()
    .filter_map(|r| r.opt_text(0))
    .collect())
}

/// A predicate with no categories for a role allows any category there.
fn check_allowed(
    c: &mut dyn Conn,
    pred: ResourceId,
    pred_name: &str,
    r: &Resource,
    subject: bool,
) -> Result<()> {
    let allowed = c.query_one(
        "SELECT count(*) FROM predicate_category pc WHERE pc.predicate_id = $1 AND pc.is_subject = $2",
        &params![pred.0, subject],
    )?;
    if allowed.map(|r| r.int(0)).unwrap_or(0) == 0 {
        return Ok(());
    }
    let ok = c.query_one(
        "SELECT 1 FROM predicate_category pc JOIN category a ON a.id = pc.category_id \
         JOIN category k ON k.id = $3 \
         WHERE pc.predicate_id = $1 AND pc.is_subject = $2 \
         AND k.nr_left BETWEEN a.nr_left AND a.nr_right",
        &params![pred.0, subject, r.category.0],
    )?;
    if ok.is_none() {
        return Err(StoreError::PredicateNotAllowed {
            predicate: pred_name.to_owned(),
            role: if subject { "subject" } else { "object" },
            category: r.category_name.clone(),
        });
    }
    Ok(())
}

/// An edge was inserted, deleted or moved: that updates its subject (see
/// [`ChangeKind::Updated`]).
fn edge_changed(ch: &mut Changes, subject: ResourceId, predicate: &str, object: ResourceId) {
    ch.resource(subject, ChangeKind::Updated);
    ch.add(dependency::edges(subject, predicate));
    ch.add(dependency::subjects(object, predicate));
    ch.add(dependency::search());
}

pub(crate) fn edge_from_row(r: &crate::db::Row) -> Edge {
    Edge {
        id: r.int(0),
        subject: ResourceId(r.int(1)),
        predicate: r.opt_text(2).unwrap_or_default(),
        object: ResourceId(r.int(3)),
        seq: r.int(4),
        creator: r.opt_int(5).map(ResourceId),
        created: from_millis(r.int(6)),
    }
}

const EDGE_SELECT: &str = "SELECT e.id, e.subject_id, p.name, e.object_id, e.seq, e.creator_id, e.created \
     FROM edge e JOIN rsc p ON p.id = e.predicate_id";

fn set_predicate_categories(
    c: &mut dyn Conn,
    pred: ResourceId,
    subjects: &[&str],
    objects: &[&str],
) -> Result<()> {
    c.execute(
        "DELETE FROM predicate_category WHERE predicate_id = $1",
        &params![pred.0],
    )?;
    for (list, is_subject) in [(subjects, true), (objects, false)] {
        for name in list {
            let cat = category_id(c, name)?;
            c.execute(
                "INSERT INTO predicate_category (predicate_id, category_id, is_subject) VALUES ($1, $2, $3) \
                 ON CONFLICT DO NOTHING",
                &params![pred.0, cat.0, is_subject],
            )?;
        }
    }
    Ok(())
}

/// [`Store::insert_edge`] inside a write: the store's and a batch's; the
/// edge, and whether it was made now (else it was there).
pub(crate) fn insert_edge_in(
    c: &mut dyn Conn,
    ch: &mut Changes,
    subject: ResourceId,
    predicate: &str,
    object: ResourceId,
    creator: Option<ResourceId>,
) -> Result<(Edge, bool)> {
    let pred = predicate_id(c, predicate)?;
    let s = load(c, subject)?
        .ok_or_else(|| StoreError::ResourceNotFound(format!("{subject} (subject)")))?;
    let o = load(c, object)?
        .ok_or_else(|| StoreError::ResourceNotFound(format!("{object} (object)")))?;
    if let Some(u) = creator {
        crate::db::require_resource(c, u, "creator")?;
    }
    check_allowed(c, pred, predicate, &s, true)?;
    check_allowed(c, pred, predicate, &o, false)?;
    let existing = c.query_one(
        &format!(
            "{EDGE_SELECT} WHERE e.subject_id = $1 AND e.predicate_id = $2 AND e.object_id = $3"
        ),
        &params![subject.0, pred.0, object.0],
    )?;
    if let Some(e) = existing {
        return Ok((edge_from_row(&e), false));
    }
    let next = c
            .query_one(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM edge WHERE subject_id = $1 AND predicate_id = $2",
                &params![subject.0, pred.0],
            )?
            .map(|r| r.int(0))
            .unwrap_or(1);
    let now = Utc::now().timestamp_millis();
    let row = c
        .query_one(
            "INSERT INTO edge (subject_id, predicate_id, object_id, seq, creator_id, created) \
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            &params![subject.0, pred.0, object.0, next, creator.map(|u| u.0), now],
        )
        .map_err(|e| crate::db::map_unique(e, || "edge".to_owned()))?
        .ok_or_else(|| StoreError::Database(DatabaseError::unexpected("insert returned no id")))?;
    edge_changed(ch, subject, predicate, object);
    let edge = Edge {
        id: row.int(0),
        subject,
        predicate: predicate.to_owned(),
        object,
        seq: next,
        creator,
        created: from_millis(now),
    };
    Ok((edge, true))
}

impl Store {
    /// Create a predicate; empty category lists allow any category.
    pub fn create_predicate(
        &self,
        name: &str,
        title: &str,
        subject_categories: &[&str],
        object_categories: &[&str],
    ) -> Result<ResourceId> {
        let predicate = prepare(
            NewResource::new("predicate", Props::new().with("title", title))
                .named(name)
                .published(true),
        )?;
        self.write(|c, ch| {
            let id = insert_resource(c, predicate, ch)?;
            set_predicate_categories(c, id, subject_categories, object_categories)?;
            Ok(id)
        })
    }

    /// Change which categories a predicate connects. Existing edges stay.
    pub fn set_predicate_categories(
        &self,
        name: &str,
        subject_categories: &[&str],
        object_categories: &[&str],
    ) -> Result<()> {
        self.write(|c, ch| {
            let id = predicate_id(c, name)?;
            set_predicate_categories(c, id, subject_categories, object_categories)?;
            ch.resource(id, ChangeKind::Updated);
            ch.add(dependency::predicates());
            ch.add(dependency::resource(id));
            Ok(())
        })
    }

    pub fn predicate(&self, name: &str) -> Result<Predicate> {
        self.read(|c| {
            let id = predicate_id(c, name)?;
            Ok(Predicate {
                id,
                name: name.to_owned(),
                subject_categories: predicate_categories(c, id, true)?,
                object_categories: predicate_categories(c, id, false)?,
            })
        })
    }

    /// All predicates, by name.
    pub fn predicates(&self) -> Result<Vec<Predicate>> {
        let names: Vec<String> = self.read(|c| {
            Ok(c.query(
                "SELECT r.name FROM rsc r JOIN rsc k ON k.id = r.category_id \
                 WHERE k.name = 'predicate'",
                &[],
            )?
            .iter()
            .filter_map(|r| r.opt_text(0))
            .collect())
        })?;
        let mut names = names;
        names.sort();
        names.iter().map(|n| self.predicate(n)).collect()
    }

    /// Connect `subject` to `object` with `predicate`, appended at the end of
    /// the subject's list. Inserting an edge that exists returns it unchanged.
    pub fn insert_edge(
        &self,
        subject: ResourceId,
        predicate: &str,
        object: ResourceId,
        creator: Option<ResourceId>,
    ) -> Result<Edge> {
        self.write(|c, ch| {
            insert_edge_in(c, ch, subject, predicate, object, creator).map(|(e, _)| e)
        })
    }

    /// Remove an edge. Missing is [`StoreError::EdgeNotFound`].
    pub fn delete_edge(
        &self,
        subject: ResourceId,
        predicate: &str,
        object: ResourceId,
    ) -> Result<()> {
        self.write(|c, ch| {
            let pred = predicate_id(c, predicate)?;
            let n = c.execute(
                "DELETE FROM edge WHERE subject_id = $1 AND predicate_id = $2 AND object_id = $3",
                &params![subject.0, pred.0, object.0],
            )?;
            if n == 0 {
                return Err(StoreError::EdgeNotFound);
            }
            edge_changed(ch, subject, predicate, object);
            Ok(())
        })
    }

    /// Move `object` to `position` (0-based, clamped) in the subject's list
    /// for `predicate`.
    pub fn move_edge(
        &self,
        subject: ResourceId,
        predicate: &str,
        object: ResourceId,
        position: usize,
    ) -> Result<()> {
        self.write(|c, ch| {
            let pred = predicate_id(c, predicate)?;
            let mut ids: Vec<(i64, i64)> = c
                .query(
                    "SELECT id, object_id FROM edge WHERE subject_id = $1 AND predicate_id = $2 ORDER BY seq, id",
                    &params![subject.0, pred.0],
                )?
                .iter()
                .map(|r| (r.int(0), r.int(1)))
                .collect();
            let from = ids
                .iter()
                .position(|&(_, o)| o == object.0)
                .ok_or(StoreError::EdgeNotFound)?;
            let moved = ids.remove(from);
            ids.insert(position.min(ids.len()), moved);
            for (i, (edge_id, _)) in ids.iter().enumerate() {
                c.execute(
                    "UPDATE edge SET seq = $1 WHERE id = $2",
                    &params![i as i64 + 1, *edge_id],
                )?;
            }
            edge_changed(ch, subject, predicate, object);
            Ok(())
        })
    }

    /// Objects of `subject` by `predicate`, in the subject's order.
    pub fn objects(&self, subject: ResourceId, predicate: &str) -> Result<Vec<ResourceId>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT e.object_id FROM edge e JOIN rsc p ON p.id = e.predicate_id \
                 WHERE e.subject_id = $1 AND p.name = $2 ORDER BY e.seq, e.id",
                &params![subject.0, predicate],
            )?
            .iter()
            .map(|r| ResourceId(r.int(0)))
            .collect())
        })
    }

    /// Subjects pointing at `object` by `predicate`, oldest edge first.
    pub fn subjects(&self, object: ResourceId, predicate: &str) -> Result<Vec<ResourceId>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT e.subject_id FROM edge e JOIN rsc p ON p.id = e.predicate_id \
                 WHERE e.object_id = $1 AND p.name = $2 ORDER BY e.id",
                &params![object.0, predicate],
            )?
            .iter()
            .map(|r| ResourceId(r.int(0)))
            .collect())
        })
    }

    /// Every outgoing edge of `subject`, by predicate name then order.
    pub fn edges(&self, subject: ResourceId) -> Result<Vec<Edge>> {
        self.read(|c| {
            Ok(c.query(
                &format!("{EDGE_SELECT} WHERE e.subject_id = $1"),
                &params![subject.0],
            )?
            .iter()
            .map(edge_from_row)
            .collect::<Vec<_>>())
        })
        .map(|mut edges| {
            // Sorted here, not in SQL: database collations differ, bytes do not.
            edges.sort_by(|a, b| (&a.predicate, a.seq, a.id).cmp(&(&b.predicate, b.seq, b.id)));
            edges
        })
    }
}
