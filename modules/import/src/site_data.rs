//! A Bulwark site's own data out and in again (`bulwark export`, `bulwark
//! import SITE FILE`): JSON lines, one thing per line, written and read as a
//! stream.
//!
//! Every resource has a key: `<site uid>:<id>` of the site it was made on,
//! kept through imports (table `import_key`), so what a second import brings
//! again is found, not made twice, and an export of an imported site names
//! things as the first site did. References (an edge's ends, a comment's
//! page, a menu's items, a creator, a content group) are keys too; ids are
//! the importing site's own. The lines, in order:
//!
//! ```text
//! {"type":"export","version":1,"site":"<uid>",...}
//! {"type":"category","name":"article","parent":"text","props":{...}}
//! {"type":"predicate","name":"author","subjects":["text"],"objects":["person"],"props":{...}}
//! {"type":"resource","key":"<uid>:1001","name":null,"category":"article",...,"props":{...}}
//! {"type":"revision","rsc":"<uid>:1001","version":1,...}        (with --revisions)
//! {"type":"edge","subject":"<uid>:1001","predicate":"author","object":"<uid>:1002"}
//! {"type":"comment","key":"...","rsc":"<uid>:1001","parent":null,...}
//! {"type":"redirect","from":"/old","to":null,"to_rsc":"<uid>:1001","status":301}
//! {"type":"media_file","rsc":"<uid>:1003","sha256":"...","size":1234}
//! ```
//!
//! With `--media`, the export is a tar of `site.jsonl` and the files
//! (`media/<sha256>`); an import takes either.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use bulwark_module_comments::table::{CommentId, NewComment, Status};
use bulwark_module_media::MediaImport;
use bulwark_module_redirects::rules::NewRule;
use bulwark_store::{
    Batch, NewResource, Props, ResourceId, ResourceUpdate, Store, StoreError, Version, Visibility,
};

use crate::report::{Outcome, Report};
use crate::{Enabled, ImportError, Progress};

/// The format's version, in the first line.
pub const VERSION: u32 = 1;

/// Resources and edges read from the database at a time.
const PAGE: usize = 500;

/// One line of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    Export {
        version: u32,
        site: String,
        exported: DateTime<Utc>,
        since: Option<DateTime<Utc>>,
    },
    Category {
        name: String,
        parent: Option<String>,
        props: Value,
    },
    Predicate {
        name: String,
        subjects: Vec<String>,
        objects: Vec<String>,
        props: Value,
    },
    Resource(ResourceLine),
    Revision {
        rsc: String,
        version: i64,
        created: DateTime<Utc>,
        modifier: Option<String>,
        snapshot: Value,
    },
    Edge {
        subject: String,
        predicate: String,
        object: String,
    },
    Comment(CommentLine),
    Redirect {
        from: String,
        to: Option<String>,
        to_rsc: Option<String>,
        status: u16,
    },
    MediaFile {
        rsc: String,
        sha256: String,
        size: i64,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceLine {
    pub key: String,
    /// Its id on the site that exported it (for a person reading the file).
    pub id: i64,
    pub name: Option<String>,
    pub category: String,
    pub published: bool,
    pub publication_start: Option<DateTime<Utc>>,
    pub publication_end: Option<DateTime<Utc>>,
    /// `public`, `members` or `group` (then `group` names the content group).
    pub visibility: String,
    pub group: Option<String>,
    pub creator: Option<String>,
    pub created: DateTime<Utc>,
    pub modified: DateTime<Utc>,
    pub props: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommentLine {
    pub key: String,
    pub rsc: String,
    pub parent: Option<String>,
    pub user: Option<String>,
    pub name: String,
    pub email: String,
    pub url: Option<String>,
    pub body: String,
    pub status: String,
    pub created: DateTime<Utc>,
}

/// What an export wrote.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Exported {
    pub lines: u64,
    pub resources: u64,
    /// The files the export's media resources use, by content hash.
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Only resources changed since then (and the edges, comments and
    /// files of those).
    pub since: Option<DateTime<Utc>>,
    /// Each resource's revisions too.
    pub revisions: bool,
}

/// Writes site `store`'s data to `out` as JSON lines.
pub fn export(
    store: &Store,
    enabled: Enabled,
    options: &ExportOptions,
    out: &mut dyn Write,
    progress: &dyn Progress,
) -> Result<Exported, ImportError> {
    let uid = store.site_uid()?;
    let imported = store.import_keys()?;
    let key_of = |id: ResourceId| -> String {
        imported
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("{uid}:{}", id.0))
    };
    let mut done = Exported::default();
    let mut write = |line: &Line, done: &mut Exported| -> Result<(), ImportError> {
        serde_json::to_writer(&mut *out, line).map_err(ImportError::Json)?;
        out.write_all(b"\n").map_err(io)?;
        done.lines += 1;
        Ok(())
    };
    write(
        &Line::Export {
            version: VERSION,
            site: uid.clone(),
            exported: Utc::now(),
            since: options.since,
        },
        &mut done,
    )?;
    let categories = store.categories()?;
    let name_of: HashMap<ResourceId, String> =
        categories.iter().map(|c| (c.id, c.name.clone())).collect();
    let mut tree = categories.clone();
    tree.sort_by_key(|c| c.left);
    for c in &tree {
        let props = store
            .resource(c.id)?
            .map(|r| r.props.0.into())
            .unwrap_or_default();
        let parent = c.parent.and_then(|p| name_of.get(&p).cloned());
        write(
            &Line::Category {
                name: c.name.clone(),
                parent,
                props,
            },
            &mut done,
        )?;
    }
    for p in store.predicates()? {
        let props = store
            .resource(p.id)?
            .map(|r| r.props.0.into())
            .unwrap_or_default();
        write(
            &Line::Predicate {
                name: p.name,
                subjects: p.subject_categories,
                objects: p.object_categories,
                props,
            },
            &mut done,
        )?;
    }
    progress.stage("resources", 0);
    let mut exported_ids = std::collections::HashSet::new();
    let mut media = Vec::new();
    let mut after = ResourceId(0);
    loop {
        let page = store.resources_page(after, PAGE, options.since)?;
        let Some(last) = page.last() else {
            break;
        };
        after = last.id;
        for r in page {
            if matches!(r.category_name.as_str(), "category" | "predicate") {
                continue;
            }
            let (visibility, group) = match r.visibility {
                Visibility::Public => ("public", None),
                Visibility::Members => ("members", None),
                Visibility::Group(g) => ("group", Some(key_of(g))),
            };
            let mut props: Value = r.props.0.clone().into();
            map_menu_ids(&mut props, &mut |id| {
                id.as_i64().map(|id| key_of(ResourceId(id)).into())
            });
            if r.props.0.contains_key("sha256") {
                media.push(r.id);
            }
            exported_ids.insert(r.id);
            write(
                &Line::Resource(ResourceLine {
                    key: key_of(r.id),
                    id: r.id.0,
                    name: r.name.clone(),
                    category: r.category_name.clone(),
                    published: r.published,
                    publication_start: r.publication_start,
                    publication_end: r.publication_end,
                    visibility: visibility.to_owned(),
                    group,
                    creator: r.creator.map(key_of),
                    created: r.created,
                    modified: r.modified,
                    props,
                }),
                &mut done,
            )?;
            done.resources += 1;
            progress.advance(1);
            if options.revisions {
                for rev in store.revisions(r.id)? {
                    write(
                        &Line::Revision {
                            rsc: key_of(r.id),
                            version: rev.version.0,
                            created: rev.created,
                            modifier: rev.modifier.map(key_of),
                            snapshot: serde_json::to_value(&rev.snapshot)
                                .map_err(ImportError::Json)?,
                        },
                        &mut done,
                    )?;
                }
            }
        }
    }
    let mut after = 0;
    loop {
        let page = store.edges_page(after, PAGE)?;
        let Some(last) = page.last() else {
            break;
        };
        after = last.id;
        let mut page = page;
        // In each subject's order, so an import appends them as they were.
        page.sort_by_key(|e| (e.subject.0, e.predicate.clone(), e.seq, e.id));
        for e in page {
            if !exported_ids.contains(&e.subject) {
                continue;
            }
            write(
                &Line::Edge {
                    subject: key_of(e.subject),
                    predicate: e.predicate,
                    object: key_of(e.object),
                },
                &mut done,
            )?;
        }
    }
    if enabled.comments {
        let rows = store.module_read(|sql| {
            sql.query(
                "SELECT id, rsc_id, parent_id, user_id, name, email, url, body, status, source, \
                 created FROM comment WHERE status <> 'deleted' ORDER BY id",
                &[],
            )
        })?;
        let comment_key = |id: i64, source: Option<String>| {
            source.unwrap_or_else(|| format!("{uid}:comment:{id}"))
        };
        let keys: HashMap<i64, String> = rows
            .iter()
            .map(|r| (r.int(0), comment_key(r.int(0), r.opt_text(9))))
            .collect();
        for r in &rows {
            let rsc = ResourceId(r.int(1));
            if !exported_ids.contains(&rsc) {
                continue;
            }
            write(
                &Line::Comment(CommentLine {
                    key: keys[&r.int(0)].clone(),
                    rsc: key_of(rsc),
                    parent: r.opt_int(2).and_then(|p| keys.get(&p).cloned()),
                    user: r.opt_int(3).map(|u| key_of(ResourceId(u))),
                    name: r.text(4),
                    email: r.text(5),
                    url: r.opt_text(6),
                    body: r.text(7),
                    status: r.text(8),
                    created: r.time(10),
                }),
                &mut done,
            )?;
        }
    }
    if enabled.redirects {
        let rows = store.module_read(|sql| {
            sql.query(
                "SELECT from_path, to_path, to_rsc, status FROM redirect ORDER BY id",
                &[],
            )
        })?;
        for r in rows {
            write(
                &Line::Redirect {
                    from: r.text(0),
                    to: r.opt_text(1),
                    to_rsc: r.opt_int(2).map(|id| key_of(ResourceId(id))),
                    status: u16::try_from(r.int(3)).unwrap_or(301),
                },
                &mut done,
            )?;
        }
    }
    if !media.is_empty() {
        let rows = store.module_read(|sql| {
            sql.query(
                "SELECT rsc_id, sha256, size FROM media_file WHERE rsc_id > 0 ORDER BY rsc_id",
                &[],
            )
        })?;
        let mut files = std::collections::BTreeSet::new();
        for r in rows {
            let rsc = ResourceId(r.int(0));
            if !exported_ids.contains(&rsc) {
                continue;
            }
            files.insert(r.text(1));
            write(
                &Line::MediaFile {
                    rsc: key_of(rsc),
                    sha256: r.text(1),
                    size: r.opt_int(2).unwrap_or(0),
                },
                &mut done,
            )?;
        }
        done.files = files.into_iter().collect();
    }
    out.flush().map_err(io)?;
    Ok(done)
}

fn io(e: std::io::Error) -> ImportError {
    ImportError::Io {
        what: "writing the export".to_owned(),
        source: e,
    }
}

/// The ids in a menu's items (the menu module's `menu` property), changed by
/// `f` (to keys on the way out, to this site's ids on the way in); an item
/// whose id `f` does not know keeps it.
fn map_menu_ids(props: &mut Value, f: &mut dyn FnMut(&Value) -> Option<Value>) {
    fn walk(items: &mut Value, f: &mut dyn FnMut(&Value) -> Option<Value>) {
        let Some(items) = items.as_array_mut() else {
            return;
        };
        for item in items {
            if let Some(id) = item.get("id")
                && let Some(mapped) = f(id)
            {
                item["id"] = mapped;
            }
            if let Some(children) = item.get_mut("children") {
                walk(children, f);
            }
        }
    }
    if let Some(menu) = props.get_mut("menu") {
        walk(menu, f);
    }
}

/// Reads an export (from [`export`]) into the site whose database `store`
/// is. Files named by `media_file` lines are taken from `files` (the folder a
/// tar's `media/` was unpacked into), or must be in the site already.
pub async fn import(
    store: &Store,
    media: Option<&MediaImport>,
    enabled: Enabled,
    file: &Path,
    files: Option<&Path>,
    progress: &dyn Progress,
) -> Result<Report, ImportError> {
    let mut run = Import {
        store: store.clone(),
        uid: store.site_uid()?,
        keys: HashMap::new(),
        report: Report::default(),
        comments: HashMap::new(),
    };
    // The whole file read first: a broken line stops the import before
    // anything is written, naming its line.
    progress.stage("checking the file", 0);
    for line in read_lines(file)? {
        line?;
    }
    // Then everything but references to what may come later; then those.
    let lines = read_lines(file)?;
    progress.stage("categories, predicates and resources", 0);
    let mut pending = Vec::new();
    let mut menus = Vec::new();
    for line in lines {
        let line = line?;
        match line {
            Line::Export { version, .. } if version > VERSION => {
                return Err(ImportError::Version(version));
            }
            Line::Category { .. } | Line::Predicate { .. } => run.schema(line).await?,
            // A menu names other resources by key: it is written once they
            // are all in, pointing at their ids here.
            Line::Resource(r) if r.props.get("menu").is_some() => menus.push(r),
            Line::Resource(r) => {
                pending.push(r);
                if pending.len() >= PAGE {
                    run.resources(std::mem::take(&mut pending)).await?;
                    progress.advance(PAGE as u64);
                }
            }
            _ => {}
        }
    }
    run.resources(pending).await?;
    for menu in &mut menus {
        let (keys, uid) = (&run.keys, &run.uid);
        map_menu_ids(&mut menu.props, &mut |v| {
            v.as_str()
                .and_then(|k| resolve(keys, uid, k))
                .map(|id| id.0.into())
        });
    }
    run.resources(menus).await?;
    progress.stage("edges, comments, redirects and files", 0);
    let mut batch = Vec::new();
    for line in read_lines(file)? {
        let line = line?;
        match line {
            Line::MediaFile { rsc, sha256, .. } => {
                run.media_file(media, &rsc, &sha256, files).await?;
            }
            Line::Revision { .. }
            | Line::Edge { .. }
            | Line::Comment(_)
            | Line::Redirect { .. } => {
                batch.push(line);
                if batch.len() >= PAGE {
                    run.references(std::mem::take(&mut batch), enabled).await?;
                    progress.advance(PAGE as u64);
                }
            }
            _ => {}
        }
    }
    run.references(batch, enabled).await?;
    Ok(run.report)
}

/// The lines of `file`, parsed one at a time; a bad one names its line.
fn read_lines(file: &Path) -> Result<impl Iterator<Item = Result<Line, ImportError>>, ImportError> {
    let name = file.display().to_string();
    let reader = std::io::BufReader::with_capacity(
        256 * 1024,
        std::fs::File::open(file).map_err(|source| ImportError::Io {
            what: name.clone(),
            source,
        })?,
    );
    Ok(reader
        .lines()
        .enumerate()
        .filter(|(_, l)| l.as_ref().map_or(true, |l| !l.trim().is_empty()))
        .map(move |(n, l)| {
            let l = l.map_err(|source| ImportError::Io {
                what: name.clone(),
                source,
            })?;
            serde_json::from_str(&l).map_err(|source| ImportError::Line {
                file: name.clone(),
                line: n as u64 + 1,
                source,
            })
        }))
}

struct Import {
    store: Store,
    uid: String,
    /// Key to this site's resource, for everything met so far.
    keys: HashMap<String, ResourceId>,
    report: Report,
    /// Comment key to this site's comment.
    comments: HashMap<String, CommentId>,
}

impl Import {
    async fn on_store<T, F>(&self, f: F) -> Result<T, ImportError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        Ok(self.store.run(f).await?)
    }

    async fn schema(&mut self, line: Line) -> Result<(), ImportError> {
        let outcome = self
            .on_store(move |s| {
                let (name, props) = match &line {
                    Line::Category {
                        name,
                        parent,
                        props,
                    } => {
                        let title = props["title"].as_str().unwrap_or(name).to_owned();
                        match s.category(name) {
                            Ok(there) => {
                                let parent_now = match there.parent {
                                    Some(p) => s.resource(p)?.and_then(|r| r.name),
                                    None => None,
                                };
                                if &parent_now != parent && parent.is_some() {
                                    s.move_category(name, parent.as_deref())?;
                                }
                            }
                            Err(_) => {
                                s.create_category(name, parent.as_deref(), &title)?;
                            }
                        }
                        (name.clone(), props.clone())
                    }
                    Line::Predicate {
                        name,
                        subjects,
                        objects,
                        props,
                    } => {
                        let subjects: Vec<&str> = subjects.iter().map(String::as_str).collect();
                        let objects: Vec<&str> = objects.iter().map(String::as_str).collect();
                        match s.predicate(name) {
                            Ok(there) => {
                                if there.subject_categories != subjects
                                    || there.object_categories != objects
                                {
                                    s.set_predicate_categories(name, &subjects, &objects)?;
                                }
                            }
                            Err(_) => {
                                let title = props["title"].as_str().unwrap_or(name).to_owned();
                                s.create_predicate(name, &title, &subjects, &objects)?;
                            }
                        }
                        (name.clone(), props.clone())
                    }
                    _ => return Ok(None),
                };
                let there = s
                    .resource_by_name(&name)?
                    .ok_or_else(|| StoreError::ResourceNotFound(name.clone()))?;
                let props = Props::try_from(props)?;
                if there.props == props {
                    return Ok(Some((name, there.id, Outcome::Unchanged)));
                }
                s.update_resource(ResourceUpdate::new(there.id, there.version).replace(props))?;
                Ok(Some((name, there.id, Outcome::Updated)))
            })
            .await?;
        if let Some((_, _, outcome)) = outcome {
            self.report.count("schema", outcome);
        }
        Ok(())
    }

    /// Resources, in as few transactions as their creators allow: one whose
    /// creator comes earlier in the same lines (an author before their
    /// posts) is written after it, so the creator has its id here.
    async fn resources(&mut self, mut lines: Vec<ResourceLine>) -> Result<(), ImportError> {
        while !lines.is_empty() {
            let cut = lines.iter().enumerate().skip(1).find_map(|(i, line)| {
                let creator = line.creator.as_deref()?;
                let waits = resolve(&self.keys, &self.uid, creator).is_none()
                    && lines[..i].iter().any(|earlier| earlier.key == creator);
                waits.then_some(i)
            });
            let rest = lines.split_off(cut.unwrap_or(lines.len()));
            self.resources_at_once(lines).await?;
            lines = rest;
        }
        Ok(())
    }

    /// Resources, created or updated in one transaction.
    async fn resources_at_once(&mut self, lines: Vec<ResourceLine>) -> Result<(), ImportError> {
        if lines.is_empty() {
            return Ok(());
        }
        let uid = self.uid.clone();
        // What each names (its content group, its creator) was met before it
        // (an export is in id order) or is this site's own.
        let named: Vec<(Visibility, Option<ResourceId>)> = lines
            .iter()
            .map(|line| {
                let visibility = match (line.visibility.as_str(), &line.group) {
                    ("members", _) => Visibility::Members,
                    ("group", Some(g)) => match resolve(&self.keys, &uid, g) {
                        Some(group) => Visibility::Group(group),
                        // Its group is not in the export: members only,
                        // rather than all the world.
                        None => Visibility::Members,
                    },
                    _ => Visibility::Public,
                };
                let creator = line
                    .creator
                    .as_deref()
                    .and_then(|k| resolve(&self.keys, &uid, k));
                (visibility, creator)
            })
            .collect();
        let written = self
            .on_store(move |s| {
                // Sanitised before the transaction, as every write is.
                let mut ready = Vec::with_capacity(lines.len());
                for (line, (visibility, creator)) in lines.into_iter().zip(named) {
                    let props = Props::try_from(line.props.clone())?;
                    let mut new = NewResource::new(&line.category, props.clone());
                    new.name = line.name.clone();
                    new.published = line.published;
                    new.publication_start = line.publication_start;
                    new.publication_end = line.publication_end;
                    new.visibility = visibility;
                    new.creator = creator;
                    new.created = Some(line.created);
                    let prepared = s.prepare(new)?;
                    ready.push((line, props, visibility, prepared));
                }
                s.batch(|b| {
                    let mut written = Vec::new();
                    for (line, props, visibility, prepared) in ready {
                        let (id, outcome) =
                            write_resource(b, &uid, &line, props, visibility, prepared)?;
                        written.push((line.key, id, outcome));
                    }
                    Ok(written)
                })
            })
            .await?;
        for (key, id, outcome) in written {
            self.keys.insert(key, id);
            self.report.count("resource", outcome);
        }
        Ok(())
    }

    async fn media_file(
        &mut self,
        media: Option<&MediaImport>,
        rsc: &str,
        sha256: &str,
        files: Option<&Path>,
    ) -> Result<(), ImportError> {
        let Some(&id) = self.keys.get(rsc) else {
            self.report.skip(
                "media_file",
                format!("file of {rsc}"),
                "its resource is not in the export",
            );
            return Ok(());
        };
        let Some(media) = media else {
            self.report.skip(
                "media_file",
                format!("file of {rsc}"),
                "the site does not enable the media module",
            );
            return Ok(());
        };
        let source = files.map(|dir| dir.join(sha256)).filter(|p| p.is_file());
        match media.adopt(id, sha256, source.as_deref()).await {
            Ok(true) => self.report.count("media_file", Outcome::Imported),
            Ok(false) => self.report.count("media_file", Outcome::Unchanged),
            Err(problem) => self.report.skip(
                "media_file",
                format!("file of {rsc}"),
                problem.detail().to_owned(),
            ),
        }
        Ok(())
    }

    /// Revisions, edges, comments and redirects, in one transaction.
    async fn references(&mut self, lines: Vec<Line>, enabled: Enabled) -> Result<(), ImportError> {
        if lines.is_empty() {
            return Ok(());
        }
        // Only what this batch names goes along (the rest is found in the
        // database: what earlier runs imported, or this site's own keys).
        let mut keys = HashMap::new();
        let mut comments = HashMap::new();
        for line in &lines {
            let (named, comment): (Vec<&str>, Option<&str>) = match line {
                Line::Edge {
                    subject, object, ..
                } => (vec![subject, object], None),
                Line::Revision { rsc, modifier, .. } => (
                    std::iter::once(rsc.as_str())
                        .chain(modifier.as_deref())
                        .collect(),
                    None,
                ),
                Line::Comment(c) => (vec![c.rsc.as_str()], c.parent.as_deref()),
                Line::Redirect { to_rsc, .. } => (to_rsc.as_deref().into_iter().collect(), None),
                _ => (Vec::new(), None),
            };
            for key in named {
                if let Some(&id) = self.keys.get(key) {
                    keys.insert(key.to_owned(), id);
                }
            }
            if let Some(parent) = comment
                && let Some(&id) = self.comments.get(parent)
            {
                comments.insert(parent.to_owned(), id);
            }
        }
        let (outcomes, comments) = self
            .on_store(move |s| {
                s.batch(|b| {
                    let mut outcomes = Vec::new();
                    for line in lines {
                        outcomes.push(reference(b, &keys, &mut comments, line, enabled)?);
                    }
                    Ok((outcomes, comments))
                })
            })
            .await?;
        self.comments.extend(comments);
        for (kind, outcome) in outcomes {
            match outcome {
                Ok(outcome) => self.report.count(kind, outcome),
                Err((item, why)) => self.report.skip(kind, item, why),
            }
        }
        Ok(())
    }
}

/// This site's resource for `key`, among those met in this import or as
/// this site's own key.
fn resolve(known: &HashMap<String, ResourceId>, uid: &str, key: &str) -> Option<ResourceId> {
    known.get(key).copied().or_else(|| own_id(uid, key))
}

/// The id in a key of this site's own (`<uid>:<id>`).
fn own_id(uid: &str, key: &str) -> Option<ResourceId> {
    key.strip_prefix(uid)?
        .strip_prefix(':')?
        .parse()
        .ok()
        .map(ResourceId)
}

/// Creates or updates one resource; its id here and what happened.
fn write_resource(
    b: &mut Batch<'_>,
    uid: &str,
    line: &ResourceLine,
    props: Props,
    visibility: Visibility,
    prepared: bulwark_store::Prepared,
) -> Result<(ResourceId, Outcome), StoreError> {
    let own = own_id(uid, &line.key);
    let mut found = b.keyed(&line.key)?;
    if found.is_none()
        && let Some(id) = own
    {
        found = b.resource(id)?.map(|r| r.id);
    }
    if found.is_none()
        && let Some(name) = &line.name
    {
        found = b.resource_by_name(name)?.map(|r| r.id);
    }
    let (id, outcome) = match found {
        None => (b.create(prepared)?, Outcome::Imported),
        Some(id) => {
            let there = b
                .resource(id)?
                .ok_or_else(|| StoreError::ResourceNotFound(id.to_string()))?;
            let same = there.name == line.name
                && there.category_name == line.category
                && there.published == line.published
                && there.publication_start == line.publication_start
                && there.publication_end == line.publication_end
                && there.visibility == visibility
                && there.props == props;
            if same {
                (id, Outcome::Unchanged)
            } else {
                let mut update = ResourceUpdate::new(id, there.version).replace(props);
                update.name = Some(line.name.clone());
                update.category = Some(line.category.clone());
                update.published = Some(line.published);
                update.publication_start = Some(line.publication_start);
                update.publication_end = Some(line.publication_end);
                update.visibility = Some(visibility);
                b.update(update.sanitize()?)?;
                (id, Outcome::Updated)
            }
        }
    };
    if own != Some(id) {
        b.set_key(&line.key, id)?;
    }
    Ok((id, outcome))
}

type Done = (&'static str, Result<Outcome, (String, String)>);

fn reference(
    b: &mut Batch<'_>,
    keys: &HashMap<String, ResourceId>,
    comments: &mut HashMap<String, CommentId>,
    line: Line,
    enabled: Enabled,
) -> Result<Done, StoreError> {
    let find = |k: &str, b: &mut Batch<'_>| -> Result<Option<ResourceId>, StoreError> {
        match keys.get(k) {
            Some(&id) => Ok(Some(id)),
            None => b.keyed(k),
        }
    };
    Ok(match line {
        Line::Edge {
            subject,
            predicate,
            object,
        } => {
            let (Some(s), Some(o)) = (find(&subject, b)?, find(&object, b)?) else {
                return Ok((
                    "edge",
                    Err((
                        format!("{subject} {predicate} {object}"),
                        "an end is not in the export".into(),
                    )),
                ));
            };
            let made = b.connect(s, &predicate, o)?;
            (
                "edge",
                Ok(if made {
                    Outcome::Imported
                } else {
                    Outcome::Unchanged
                }),
            )
        }
        Line::Revision {
            rsc,
            version,
            created,
            modifier,
            snapshot,
        } => {
            let Some(id) = find(&rsc, b)? else {
                return Ok((
                    "revision",
                    Err((rsc, "its resource is not in the export".into())),
                ));
            };
            let modifier = match modifier {
                Some(m) => find(&m, b)?,
                None => None,
            };
            let added = b.keep_revision(id, Version(version), &snapshot, modifier, created)?;
            (
                "revision",
                Ok(if added {
                    Outcome::Imported
                } else {
                    Outcome::Unchanged
                }),
            )
        }
        Line::Comment(c) if enabled.comments => {
            let Some(rsc) = find(&c.rsc, b)? else {
                return Ok((
                    "comment",
                    Err((c.key, "its page is not in the export".into())),
                ));
            };
            let mut sql = b.sql();
            let there = sql
                .query_one(
                    "SELECT id FROM comment WHERE source = $1",
                    &[c.key.as_str().into()],
                )?
                .map(|r| CommentId(r.int(0)));
            if let Some(id) = there {
                comments.insert(c.key, id);
                return Ok(("comment", Ok(Outcome::Unchanged)));
            }
            let new = NewComment {
                rsc,
                parent: c.parent.as_ref().and_then(|p| comments.get(p).copied()),
                user: None,
                name: c.name,
                email: c.email,
                url: c.url,
                body: c.body,
                status: Status::parse(&c.status).unwrap_or(Status::Pending),
                address: None,
                source: Some(c.key.clone()),
                created: Some(c.created),
            };
            match bulwark_module_comments::table::insert_in(&mut sql, &new) {
                Ok(made) => {
                    comments.insert(c.key, made.id);
                    ("comment", Ok(Outcome::Imported))
                }
                Err(bulwark_module_comments::table::CommentError::Store(e)) => return Err(e),
                Err(other) => ("comment", Err((c.key, other.to_string()))),
            }
        }
        Line::Redirect {
            from,
            to,
            to_rsc,
            status,
        } if enabled.redirects => {
            let to_rsc = match &to_rsc {
                Some(k) => match find(k, b)? {
                    Some(id) => Some(id.0),
                    None => {
                        return Ok(("redirect", Err((from, format!("{k} is not in the export")))));
                    }
                },
                None => None,
            };
            match NewRule::new(&from, to.as_deref(), to_rsc, Some(status)) {
                Ok(rule) => {
                    let made = bulwark_module_redirects::rules::insert_in(&mut b.sql(), &rule)?;
                    (
                        "redirect",
                        Ok(if made {
                            Outcome::Imported
                        } else {
                            Outcome::Unchanged
                        }),
                    )
                }
                Err(why) => ("redirect", Err((from, why.to_string()))),
            }
        }
        Line::Comment(c) => (
            "comment",
            Err((c.key, "the site does not enable the comments module".into())),
        ),
        Line::Redirect { from, .. } => (
            "redirect",
            Err((from, "the site does not enable the redirects module".into())),
        ),
        other => (
            "other",
            Err((format!("{other:?}"), "not expected here".into())),
        ),
    })
}
