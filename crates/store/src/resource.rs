//! Resources: create, read, update (optimistic), delete; revisions.
//!
//! Properties are sanitised before a write's transaction begins
//! ([`prepare`], [`ResourceUpdate::sanitize`]): sanitising HTML is by far the
//! slowest part of a write, and done inside it would hold the database's
//! writer (SQLite's only one) while every other write waits. Inside, an
//! update only merges values that are all sanitised already.

use chrono::Utc;
use serde_json::Value;

use crate::db::{Conn, Dialect, Row, map_unique, params, require_resource};
use crate::dependency;
use crate::error::{DatabaseError, Result, StoreError};
use crate::model::*;
use crate::names::check_name;
use crate::sanitize::sanitize_props;
use crate::store::{Changes, Store};

const MAX_PROPS_BYTES: usize = 1024 * 1024;

pub(crate) const RSC_COLUMNS: &str = "r.id, r.name, r.category_id, c.name, r.is_published, \
     r.publication_start, r.publication_end, r.visibility, r.content_group_id, r.creator_id, \
     r.modifier_id, r.created, r.modified, r.version, r.props";

pub(crate) fn resource_from_row(row: &Row) -> Result<Resource> {
    let props: Value = serde_json::from_str(&row.text(14))
        .map_err(|e| StoreError::Database(DatabaseError::new("stored props are not JSON", e)))?;
    Ok(Resource {
        id: ResourceId(row.int(0)),
        name: row.opt_text(1),
        category: ResourceId(row.int(2)),
        category_name: row.opt_text(3).unwrap_or_default(),
        published: row.bool(4),
        publication_start: row.opt_int(5).map(from_millis),
        publication_end: row.opt_int(6).map(from_millis),
        visibility: Visibility::from_columns(&row.text(7), row.opt_int(8)),
        creator: row.opt_int(9).map(ResourceId),
        modifier: row.opt_int(10).map(ResourceId),
        created: from_millis(row.int(11)),
        modified: from_millis(row.int(12)),
        version: Version(row.int(13)),
        props: Props::try_from(props)?,
    })
}

fn for_update(c: &dyn Conn) -> &'static str {
    match c.dialect() {
        // NO KEY UPDATE: we never change the id, and this lock does not
        // conflict with the KEY SHARE locks other transactions take when a
        // foreign key (edge, modifier, content group) points at this row. A
        // plain FOR UPDATE would let two updates that reference each other's
        // resources deadlock.
        Dialect::Postgres => " FOR NO KEY UPDATE OF r",
        // SQLite's writer holds the whole database already (BEGIN IMMEDIATE).
        Dialect::Sqlite => "",
    }
}

pub(crate) fn load(c: &mut dyn Conn, id: ResourceId) -> Result<Option<Resource>> {
    let sql = format!(
        "SELECT {RSC_COLUMNS} FROM rsc r LEFT JOIN rsc c ON c.id = r.category_id WHERE r.id = $1"
    );
    c.query_one(&sql, &params![id.0])?
        .map(|r| resource_from_row(&r))
        .transpose()
}

fn load_for_update(c: &mut dyn Conn, id: ResourceId) -> Result<Resource> {
    let sql = format!(
        "SELECT {RSC_COLUMNS} FROM rsc r LEFT JOIN rsc c ON c.id = r.category_id WHERE r.id = $1{}",
        for_update(c)
    );
    match c.query_one(&sql, &params![id.0])? {
        Some(r) => resource_from_row(&r),
        None => Err(StoreError::ResourceNotFound(id.to_string())),
    }
}

/// The id of the resource with unique name `name`, if any.
pub(crate) fn id_by_name(c: &mut dyn Conn, name: &str) -> Result<Option<ResourceId>> {
    if check_name("name", name).is_err() {
        return Ok(None);
    }
    Ok(
        c.query_one("SELECT id FROM rsc WHERE name = $1", &params![name])?
            .map(|r| ResourceId(r.int(0))),
    )
}

/// The id of a category by name.
pub(crate) fn category_id(c: &mut dyn Conn, name: &str) -> Result<ResourceId> {
    if check_name("category", name).is_err() {
        return Err(StoreError::UnknownCategory(name.to_owned()));
    }
    c.query_one(
        "SELECT k.id FROM category k JOIN rsc r ON r.id = k.id WHERE r.name = $1",
        &params![name],
    )?
    .map(|r| ResourceId(r.int(0)))
    .ok_or_else(|| StoreError::UnknownCategory(name.to_owned()))
}

/// Names of `category` and everything above it: the `cat:` keys a change of
/// one of its resources touches.
pub(crate) fn category_lineage(c: &mut dyn Conn, category: ResourceId) -> Result<Vec<String>> {
    Ok(c.query(
        "SELECT r.name FROM category k JOIN category a ON k.nr_left BETWEEN a.nr_left AND a.nr_right \
         JOIN rsc r ON r.id = a.id WHERE k.id = $1 ORDER BY a.nr_left",
        &params![category.0],
    )?
    .iter()
    .filter_map(|r| r.opt_text(0))
    .collect())
}

fn is_category_resource(c: &mut dyn Conn, id: ResourceId) -> Result<bool> {
    Ok(
        c.query_one("SELECT 1 FROM category WHERE id = $1", &params![id.0])?
            .is_some(),
    )
}

fn check_window(
    start: Option<chrono::DateTime<Utc>>,
    end: Option<chrono::DateTime<Utc>>,
) -> Result<()> {
    if let (Some(s), Some(e)) = (start, end)
        && e < s
    {
        return Err(StoreError::invalid(
            "publication_end",
            "is before publication_start",
        ));
    }
    Ok(())
}

/// A new resource whose properties are sanitised, ready for
/// [`insert_resource`]; made by [`prepare`] only.
pub(crate) struct PreparedResource(NewResource);

/// Sanitise a new resource's properties: before the write that inserts it.
pub(crate) fn prepare(mut new: NewResource) -> Result<PreparedResource> {
    sanitize_props(&mut new.props)?;
    Ok(PreparedResource(new))
}

/// Sanitised properties as stored; only the size is left to check.
fn props_json(props: &Props) -> Result<String> {
    let json =
        serde_json::to_string(&props.0).map_err(|e| StoreError::invalid("props", e.to_string()))?;
    if json.len() > MAX_PROPS_BYTES {
        return Err(StoreError::invalid(
            "props",
            format!("larger than {MAX_PROPS_BYTES} bytes"),
        ));
    }
    Ok(json)
}

pub(crate) fn queue_pivot(
    c: &mut dyn Conn,
    id: ResourceId,
    now: i64,
    ch: &mut Changes,
) -> Result<()> {
    c.execute(
        "INSERT INTO pivot_queue (rsc_id, queued) VALUES ($1, $2) \
         ON CONFLICT (rsc_id) DO UPDATE SET queued = excluded.queued",
        &params![id.0, now],
    )?;
    ch.pivot_queued = true;
    Ok(())
}

pub(crate) fn resource_keys(c: &mut dyn Conn, r: &Resource, ch: &mut Changes) -> Result<()> {
    ch.add(dependency::resource(r.id));
    ch.add(dependency::resource_texts(r.id));
    if let Some(n) = &r.name {
        ch.add(dependency::resource_name(n));
    }
    listing_keys(c, r, ch)
}

/// The keys of the lists a resource shows up in: its categories' and search.
fn listing_keys(c: &mut dyn Conn, r: &Resource, ch: &mut Changes) -> Result<()> {
    for cat in category_lineage(c, r.category)? {
        ch.add(dependency::category(&cat));
    }
    ch.add(dependency::search());
    Ok(())
}

pub(crate) fn insert_resource(
    c: &mut dyn Conn,
    new: PreparedResource,
    ch: &mut Changes,
) -> Result<ResourceId> {
    let PreparedResource(NewResource {
        name,
        category,
        published,
        publication_start,
        publication_end,
        visibility,
        creator,
        created,
        props,
    }) = new;
    if let Some(n) = &name {
        check_name("name", n)?;
    }
    check_window(publication_start, publication_end)?;
    let json = props_json(&props)?;
    let (cat, lineage) = match ch.category_memo.get(&category) {
        Some(known) => known.clone(),
        None => {
            let id = category_id(c, &category)?;
            let lineage = category_lineage(c, id)?;
            ch.category_memo
                .insert(category.clone(), (id, lineage.clone()));
            (id, lineage)
        }
    };
    if matches!(category.as_str(), "category" | "predicate") && name.is_none() {
        return Err(StoreError::invalid(
            "name",
            format!("a {category} needs a unique name"),
        ));
    }
    if let Some(u) = creator {
        require_resource(c, u, "creator")?;
    }
    let (vis, group) = visibility.columns();
    if let Some(g) = group {
        require_resource(c, ResourceId(g), "content group")?;
    }
    let now = Utc::now().timestamp_millis();
    let written = created.map_or(now, to_millis);
    let row = c
        .query_one(
            "INSERT INTO rsc (name, category_id, is_published, publication_start, publication_end, \
             visibility, content_group_id, creator_id, modifier_id, created, modified, version, props) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $9, 1, $10) RETURNING id",
            &params![
                name.clone(),
                cat.0,
                published,
                publication_start.map(to_millis),
                publication_end.map(to_millis),
                vis,
                group,
                creator.map(|u| u.0),
                written,
                json
            ],
        )
        .map_err(|e| {
            map_unique(e, || {
                format!("resource name {:?}", name.as_deref().unwrap_or(""))
            })
        })?
        .ok_or_else(|| StoreError::Database(DatabaseError::unexpected("insert returned no id")))?;
    let id = ResourceId(row.int(0));
    if category == "category" {
        c.execute(
            "INSERT INTO category (id, parent_id, seq) VALUES ($1, NULL, $1)",
            &params![id.0],
        )?;
        crate::category::renumber(c, ch)?;
    }
    if category == "predicate" {
        ch.add(dependency::predicates());
    }
    queue_pivot(c, id, now, ch)?;
    ch.resource(id, ChangeKind::Inserted);
    ch.add(dependency::resource(id));
    if let Some(n) = &name {
        ch.add(dependency::resource_name(n));
    }
    for l in &lineage {
        ch.add(dependency::category(l));
    }
    ch.add(dependency::search());
    Ok(id)
}

pub(crate) fn apply_update(
    c: &mut dyn Conn,
    u: SanitizedUpdate,
    ch: &mut Changes,
) -> Result<Resource> {
    let u = u.into_inner();
    let current = load_for_update(c, u.id)?;
    if current.version != u.version {
        return Err(StoreError::Conflict {
            id: u.id,
            expected: u.version,
            actual: current.version,
        });
    }
    let name = u.name.unwrap_or_else(|| current.name.clone());
    if let Some(n) = &name {
        check_name("name", n)?;
    }
    let publication_start = u.publication_start.unwrap_or(current.publication_start);
    let publication_end = u.publication_end.unwrap_or(current.publication_end);
    check_window(publication_start, publication_end)?;
    // Stored values and the change's values are all sanitised, and sanitising
    // is per value: the merge needs no second pass.
    let props = match u.props {
        PropsChange::Keep => current.props.clone(),
        PropsChange::Replace(p) => p,
        PropsChange::Merge(p) => {
            let mut merged = current.props.clone();
            for (k, v) in p.0 {
                if v.is_null() {
                    merged.0.remove(&k);
                } else if let Some(value) = merged_translation(merged.0.get(&k), &v) {
                    match value {
                        Some(value) => merged.0.insert(k, value),
                        None => merged.0.remove(&k),
                    };
                } else {
                    merged.0.insert(k, v);
                }
            }
            merged
        }
    };
    let json = props_json(&props)?;
    let category = match &u.category {
        Some(cat) => category_id(c, cat)?,
        None => current.category,
    };
    let is_category = is_category_resource(c, u.id)?;
    if is_category && (category != current.category || name.is_none()) {
        return Err(StoreError::invalid(
            "category",
            "a category stays a category and keeps a name",
        ));
    }
    if current.category_name == "predicate" && name.is_none() {
        return Err(StoreError::invalid(
            "name",
            "a predicate needs a unique name",
        ));
    }
    let visibility = u.visibility.unwrap_or(current.visibility);
    let (vis, group) = visibility.columns();
    if let Some(g) = group {
        require_resource(c, ResourceId(g), "content group")?;
    }
    if let Some(m) = u.modifier {
        require_resource(c, m, "modifier")?;
    }
    let published = u.published.unwrap_or(current.published);
    let unchanged = name == current.name
        && category == current.category
        && published == current.published
        && publication_start == current.publication_start
        && publication_end == current.publication_end
        && visibility == current.visibility
        && props == current.props;
    if unchanged {
        // Saving what is stored writes nothing: no revision, no new version,
        // no pages flushed (an editor opened and saved without a change).
        return Ok(current);
    }
    let now = Utc::now().timestamp_millis();
    let snapshot = serde_json::to_string(&current)
        .map_err(|e| StoreError::Database(DatabaseError::new("writing a revision snapshot", e)))?;
    c.execute(
        "INSERT INTO revision (rsc_id, version, snapshot, modifier_id, created) VALUES ($1, $2, $3, $4, $5)",
        &params![
            current.id.0,
            current.version.0,
            snapshot,
            current.modifier.map(|m| m.0),
            now
        ],
    )?;
    let n = c
        .execute(
            "UPDATE rsc SET name = $1, category_id = $2, is_published = $3, publication_start = $4, \
             publication_end = $5, visibility = $6, content_group_id = $7, modifier_id = $8, \
             modified = $9, version = version + 1, props = $10 WHERE id = $11 AND version = $12",
            &params![
                name.clone(),
                category.0,
                published,
                publication_start.map(to_millis),
                publication_end.map(to_millis),
                vis,
                group,
                u.modifier.or(current.modifier).map(|m| m.0),
                now,
                json,
                u.id.0,
                u.version.0
            ],
        )
        .map_err(|e| {
            map_unique(e, || {
                format!("resource name {:?}", name.as_deref().unwrap_or(""))
            })
        })?;
    if n != 1 {
        // Only reachable if the row lock above was not taken; kept as a guard.
        return Err(StoreError::Conflict {
            id: u.id,
            expected: u.version,
            actual: Version(u.version.0 + 1),
        });
    }
    queue_pivot(c, u.id, now, ch)?;
    ch.resource(u.id, ChangeKind::Updated);
    let updated = load(c, u.id)?.ok_or_else(|| StoreError::ResourceNotFound(u.id.to_string()))?;
    match changed_languages(&current, &updated) {
        // Only translations changed: pages in the other languages stay.
        Some(languages) => {
            ch.add(dependency::resource_texts(u.id));
            for language in &languages {
                ch.add(dependency::resource_text(u.id, language));
            }
            listing_keys(c, &updated, ch)?;
        }
        None => {
            resource_keys(c, &current, ch)?;
            resource_keys(c, &updated, ch)?;
        }
    }
    ch.add(dependency::revisions(u.id));
    if is_category {
        ch.add(dependency::category_tree());
    }
    if current.category_name == "predicate" {
        ch.add(dependency::predicates());
    }
    Ok(updated)
}

impl Store {
    /// Create a resource; returns its id. Properties are sanitised.
    pub fn create_resource(&self, new: NewResource) -> Result<ResourceId> {
        let new = prepare(new)?;
        self.write(|c, ch| insert_resource(c, new, ch))
    }

    /// Create many resources in one transaction (imports, benchmarks): all or
    /// nothing.
    pub fn create_resources(&self, new: Vec<NewResource>) -> Result<Vec<ResourceId>> {
        let new = new.into_iter().map(prepare).collect::<Result<Vec<_>>>()?;
        self.write(|c, ch| {
            new.into_iter()
                .map(|n| insert_resource(c, n, ch))
                .collect::<Result<Vec<_>>>()
        })
    }

    /// The resource with this id, if any.
    pub fn resource(&self, id: ResourceId) -> Result<Option<Resource>> {
        self.read(|c| load(c, id))
    }

    /// The resource with this unique name, if any.
    pub fn resource_by_name(&self, name: &str) -> Result<Option<Resource>> {
        if check_name("name", name).is_err() {
            return Ok(None);
        }
        self.read(|c| {
            let sql = format!(
                "SELECT {RSC_COLUMNS} FROM rsc r LEFT JOIN rsc c ON c.id = r.category_id WHERE r.name = $1"
            );
            c.query_one(&sql, &params![name])?
                .map(|r| resource_from_row(&r))
                .transpose()
        })
    }

    /// The tombstone of a deleted resource, by id or by the unique name it had
    /// (the most recent one, if several deleted resources had that name). `None`
    /// for resources that exist or never did.
    pub fn deletion(&self, key: &str) -> Result<Option<Deletion>> {
        let (sql, param) = match key.parse::<i64>() {
            Ok(id) => (
                "SELECT id, name, category, was_public, deleted FROM rsc_deleted WHERE id = $1",
                params![id],
            ),
            Err(_) => {
                if check_name("name", key).is_err() {
                    return Ok(None);
                }
                (
                    "SELECT id, name, category, was_public, deleted FROM rsc_deleted \
                     WHERE name = $1 ORDER BY deleted DESC, id DESC LIMIT 1",
                    params![key],
                )
            }
        };
        self.read(|c| {
            Ok(c.query_one(sql, &param)?.map(|r| Deletion {
                id: ResourceId(r.int(0)),
                name: r.opt_text(1),
                category: r.text(2),
                was_public: r.bool(3),
                deleted: from_millis(r.int(4)),
            }))
        })
    }

    /// The id for a unique name.
    pub fn resource_id(&self, name: &str) -> Result<Option<ResourceId>> {
        self.read(|c| id_by_name(c, name))
    }

    /// Update a resource based on the version the caller read. A stale version
    /// is refused with [`StoreError::Conflict`]; the previous state is kept as a
    /// revision. Returns the stored resource (with its new version).
    pub fn update_resource(&self, update: ResourceUpdate) -> Result<Resource> {
        self.update_sanitized(update.sanitize()?)
    }

    /// [`update_resource`](Store::update_resource) for an update sanitised
    /// beforehand ([`ResourceUpdate::sanitize`]), so that trying it again
    /// after a conflict does not sanitise again.
    pub fn update_sanitized(&self, update: SanitizedUpdate) -> Result<Resource> {
        self.write(|c, ch| apply_update(c, update, ch))
    }

    /// Delete a resource with its edges, identities and pivot. With `version`
    /// set, a stale version is a conflict. A category still in use (by
    /// resources or subcategories) is refused.
    pub fn delete_resource(&self, id: ResourceId, version: Option<Version>) -> Result<()> {
        self.write(|c, ch| {
            let current = load_for_update(c, id)?;
            if let Some(v) = version
                && v != current.version
            {
                return Err(StoreError::Conflict {
                    id,
                    expected: v,
                    actual: current.version,
                });
            }
            let is_category = is_category_resource(c, id)?;
            if is_category {
                let used = c.query_one(
                    "SELECT 1 FROM rsc WHERE category_id = $1 UNION ALL SELECT 1 FROM category WHERE parent_id = $1",
                    &params![id.0],
                )?;
                if used.is_some() {
                    return Err(StoreError::InUse(format!(
                        "category {:?}",
                        current.name.as_deref().unwrap_or("")
                    )));
                }
                ch.add(dependency::category_tree());
            }
            for e in c.query(
                "SELECT e.subject_id, e.object_id, p.name FROM edge e JOIN rsc p ON p.id = e.predicate_id \
                 WHERE e.subject_id = $1 OR e.object_id = $1 OR e.predicate_id = $1",
                &params![id.0],
            )? {
                let pred = e.opt_text(2).unwrap_or_default();
                // Its edges go with it: their subjects lose an edge.
                ch.resource(ResourceId(e.int(0)), ChangeKind::Updated);
                ch.add(dependency::edges(ResourceId(e.int(0)), &pred));
                ch.add(dependency::subjects(ResourceId(e.int(1)), &pred));
            }
            if c.query_one("SELECT 1 FROM identity WHERE rsc_id = $1", &params![id.0])?
                .is_some()
            {
                ch.add(dependency::identity(id));
            }
            ch.resource(id, ChangeKind::Deleted);
            resource_keys(c, &current, ch)?;
            if c.dialect() == Dialect::Sqlite {
                c.execute("DELETE FROM rsc_fts WHERE rowid = $1", &params![id.0])?;
                crate::pivot::forget_languages_sqlite(c, id)?;
            }
            c.execute("DELETE FROM rsc WHERE id = $1", &params![id.0])
                .map_err(|e| map_unique(e, || format!("resource {id} (referenced as content group)")))?;
            let was_public =
                current.is_visible_at(Utc::now()) && current.visibility == Visibility::Public;
            c.execute(
                "INSERT INTO rsc_deleted (id, name, category, was_public, deleted) VALUES ($1, $2, $3, $4, $5)",
                &params![
                    id.0,
                    current.name.clone(),
                    current.category_name.clone(),
                    was_public,
                    Utc::now().timestamp_millis()
                ],
            )?;
            if current.category_name == "predicate" {
                ch.add(dependency::predicates());
            }
            if is_category {
                crate::category::renumber(c, ch)?;
            }
            Ok(())
        })
    }

    /// True when the resource is in `category` or one of its subcategories.
    pub fn is_a(&self, id: ResourceId, category: &str) -> Result<bool> {
        self.read(|c| {
            let cat = category_id(c, category)?;
            Ok(c.query_one(
                "SELECT 1 FROM rsc r JOIN category k ON k.id = r.category_id \
                 JOIN category a ON a.id = $2 \
                 WHERE r.id = $1 AND k.nr_left BETWEEN a.nr_left AND a.nr_right",
                &params![id.0, cat.0],
            )?
            .is_some())
        })
    }

    /// Earlier versions of a resource, newest first.
    pub fn revisions(&self, id: ResourceId) -> Result<Vec<Revision>> {
        self.read(|c| {
            c.query(
                "SELECT id, rsc_id, version, created, modifier_id, snapshot FROM revision \
                 WHERE rsc_id = $1 ORDER BY version DESC, id DESC",
                &params![id.0],
            )?
            .iter()
            .map(revision_from_row)
            .collect()
        })
    }

    pub fn revision(&self, revision_id: i64) -> Result<Revision> {
        self.read(|c| {
            c.query_one(
                "SELECT id, rsc_id, version, created, modifier_id, snapshot FROM revision WHERE id = $1",
                &params![revision_id],
            )?
            .map(|r| revision_from_row(&r))
            .transpose()?
            .ok_or(StoreError::RevisionNotFound(revision_id))
        })
    }

    /// Put a revision's content back: an ordinary update (so the state being
    /// replaced becomes a revision too) based on `version`. The content is
    /// the properties, the unique name and the category; whether and when
    /// the resource is published, and who may see it, stay as they are now
    /// unless `publication` is [`RestorePublication::Too`] (restoring a
    /// version written as a draft must not take a live page offline).
    pub fn restore_revision(
        &self,
        revision_id: i64,
        version: Version,
        modifier: Option<ResourceId>,
        publication: RestorePublication,
    ) -> Result<Resource> {
        let rev = self.revision(revision_id)?;
        let s = rev.snapshot;
        let too = publication == RestorePublication::Too;
        self.update_resource(ResourceUpdate {
            id: s.id,
            version,
            name: Some(s.name),
            category: Some(s.category_name),
            published: too.then_some(s.published),
            publication_start: too.then_some(s.publication_start),
            publication_end: too.then_some(s.publication_end),
            visibility: too.then_some(s.visibility),
            modifier,
            props: PropsChange::Replace(s.props),
        })
    }
}

/// Whether restoring a revision also puts back its publication (published,
/// from, until, visibility), or only its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RestorePublication {
    /// The content only; publication stays as it is now.
    #[default]
    Keep,
    /// The publication as that revision had it, too.
    Too,
}

fn revision_from_row(r: &Row) -> Result<Revision> {
    let snapshot: Resource = serde_json::from_str(&r.text(5))
        .map_err(|e| StoreError::Database(DatabaseError::new("reading a revision snapshot", e)))?;
    Ok(Revision {
        id: r.int(0),
        resource: ResourceId(r.int(1)),
        version: Version(r.int(2)),
        created: from_millis(r.int(3)),
        modifier: r.opt_int(4).map(ResourceId),
        snapshot,
    })
}

/// The languages whose text differs between two states of a resource, when
/// that is all that differs (its translations, nothing else: no plain
/// property, no publication, no category, no name); `None` otherwise.
fn changed_languages(old: &Resource, new: &Resource) -> Option<Vec<String>> {
    let same_row = old.name == new.name
        && old.category == new.category
        && old.published == new.published
        && old.publication_start == new.publication_start
        && old.publication_end == new.publication_end
        && old.visibility == new.visibility;
    if !same_row {
        return None;
    }
    let mut changed: Vec<String> = Vec::new();
    let keys = old.props.0.keys().chain(new.props.0.keys());
    for key in keys {
        let (a, b) = (old.props.get(key), new.props.get(key));
        if a == b {
            continue;
        }
        let (Some(a), Some(b)) = (
            a.and_then(crate::translation::translations),
            b.and_then(crate::translation::translations),
        ) else {
            return None;
        };
        for lang in a.keys().chain(b.keys()) {
            if a.get(lang) != b.get(lang) && !changed.contains(lang) {
                changed.push(lang.clone());
            }
        }
    }
    Some(changed)
}

/// A translated value merged into the one a property has, per language (a
/// PATCH of `{"trans": {"nl": "Hallo"}}` sets the Dutch text and keeps the
/// others; `""` removes a language): `Some(None)` when no language is left,
/// `None` when either is not a translated value (the new one replaces).
fn merged_translation(
    old: Option<&serde_json::Value>,
    new: &serde_json::Value,
) -> Option<Option<serde_json::Value>> {
    let new = crate::translation::translations(new)?;
    let mut texts = crate::translation::translations(old?)?.clone();
    for (lang, text) in new {
        if text.as_str().is_some_and(str::is_empty) {
            texts.remove(lang);
        } else {
            texts.insert(lang.clone(), text.clone());
        }
    }
    if texts.is_empty() {
        return Some(None);
    }
    let mut value = serde_json::Map::new();
    value.insert(
        crate::translation::TRANS.to_owned(),
        serde_json::Value::Object(texts),
    );
    Some(Some(serde_json::Value::Object(value)))
}
