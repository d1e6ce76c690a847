//! Resources from a CSV file (`bulwark import csv`): one resource per row, the
//! columns mapped onto properties, the resource's own fields and edges.
//!
//! A column maps by its header unless `--map HEADER=TARGET` says otherwise:
//! - `name`, `category`, `published`, `publication_start`,
//!   `publication_end`: the resource's own fields (`published`: true, false,
//!   yes, no, 1, 0; times in RFC 3339 or `YYYY-MM-DD`);
//! - `edge:<predicate>`: edges to the resources the cell names, by unique
//!   name or id, several separated by `|`;
//! - `-`: left out;
//! - anything else: a property of that name (`title`, `body`, `price`).
//!
//! The whole file is checked first (a dry run stops there and shows the first
//! rows as they would be stored); any wrong cell is reported by line and
//! column and nothing is written. With `--key COLUMN`, a row whose key was
//! imported before updates that resource, as does a row whose `name` a
//! resource has: the same file twice changes nothing.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use serde_json::Value;

use bulwark_store::{
    NewResource, Props, ResourceId, ResourceUpdate, Store, StoreError, check_name,
};

use crate::report::{Outcome, Report};
use crate::{ImportError, Progress};

/// How a CSV file becomes resources.
#[derive(Debug, Clone, Default)]
pub struct CsvOptions {
    /// The category of rows without a `category` column.
    pub category: Option<String>,
    /// Header to target, over the header's own name.
    pub map: BTreeMap<String, String>,
    /// The column whose value finds a row's resource again.
    pub key: Option<String>,
    /// Rows published unless a `published` column says (default false).
    pub published: bool,
    /// Check and show the first rows; write nothing.
    pub dry_run: bool,
    /// Rows written per transaction.
    pub batch: usize,
}

/// A column's place in a resource.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Name,
    Category,
    Published,
    Start,
    End,
    Edge(String),
    Prop(String),
    Skip,
}

impl Target {
    fn of(target: &str) -> Result<Target, String> {
        Ok(match target.trim() {
            "-" => Target::Skip,
            "name" => Target::Name,
            "category" => Target::Category,
            "published" => Target::Published,
            "publication_start" => Target::Start,
            "publication_end" => Target::End,
            t => match t.strip_prefix("edge:") {
                Some(p) if check_name("predicate", p).is_ok() => Target::Edge(p.to_owned()),
                Some(p) => return Err(format!("{p:?} is not a predicate's name")),
                None => {
                    let ok = !t.is_empty()
                        && t.len() <= 64
                        && t.chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
                    if !ok {
                        return Err(format!(
                            "{t:?} is not a property name (a-z, 0-9, '_', '-', '.'): map it \
                             with --map \"{t}=name_for_it\", or leave it out with --map \"{t}=-\""
                        ));
                    }
                    Target::Prop(t.to_ascii_lowercase())
                }
            },
        })
    }
}

/// One row as it will be stored: what a dry run shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub line: u64,
    pub key: Option<String>,
    pub name: Option<String>,
    pub category: String,
    pub published: bool,
    pub publication_start: Option<DateTime<Utc>>,
    pub publication_end: Option<DateTime<Utc>>,
    pub props: serde_json::Map<String, Value>,
    /// Predicate and target ids.
    pub edges: Vec<(String, i64)>,
}

/// A wrong cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellError {
    pub line: u64,
    pub column: String,
    pub why: String,
}

/// What a CSV import did, or would do.
#[derive(Debug, Default, Serialize)]
pub struct CsvOutcome {
    pub report: Report,
    /// The first rows as they would be stored (a dry run's).
    pub preview: Vec<Row>,
    /// Every wrong cell; when there is one, nothing was written.
    pub errors: Vec<CellError>,
    pub rows: u64,
}

/// Rows a dry run shows.
const PREVIEW: usize = 5;
/// Wrong cells reported at most.
const MAX_ERRORS: usize = 200;

pub async fn import(
    store: &Store,
    file: &Path,
    options: &CsvOptions,
    progress: &dyn Progress,
) -> Result<CsvOutcome, ImportError> {
    let (categories, predicates) = store
        .run(|s| {
            let categories: Vec<String> = s.categories()?.into_iter().map(|c| c.name).collect();
            let predicates: Vec<String> = s.predicates()?.into_iter().map(|p| p.name).collect();
            Ok((categories, predicates))
        })
        .await?;
    let mut outcome = CsvOutcome::default();
    let targets: Vec<(String, Target)> = {
        let mut reader = open(file)?;
        let headers = reader.headers().map_err(|e| csv_error(file, e))?.clone();
        let mut targets = Vec::new();
        for h in headers.iter() {
            let target = options.map.get(h).map(String::as_str).unwrap_or(h);
            match Target::of(target) {
                Ok(Target::Edge(p)) if !predicates.contains(&p) => outcome.errors.push(CellError {
                    line: 1,
                    column: h.to_owned(),
                    why: format!("there is no predicate {p:?}"),
                }),
                Ok(t) => targets.push((h.to_owned(), t)),
                Err(why) => outcome.errors.push(CellError {
                    line: 1,
                    column: h.to_owned(),
                    why,
                }),
            }
        }
        for unknown in options
            .map
            .keys()
            .filter(|k| !headers.iter().any(|h| h == *k))
        {
            outcome.errors.push(CellError {
                line: 1,
                column: unknown.clone(),
                why: "--map names a column the file does not have".to_owned(),
            });
        }
        if let Some(key) = &options.key
            && !headers.iter().any(|h| h == key)
        {
            outcome.errors.push(CellError {
                line: 1,
                column: key.clone(),
                why: "--key names a column the file does not have".to_owned(),
            });
        }
        targets
    };
    if !outcome.errors.is_empty() {
        return Ok(outcome);
    }
    // Checked whole first: nothing is written while a cell is wrong.
    progress.stage("checking the rows", 0);
    let names = {
        let (store, file, options) = (store.clone(), file.to_owned(), options.clone());
        let (targets, mut checked) = (targets.clone(), std::mem::take(&mut outcome));
        let (names, checked) = tokio::task::spawn_blocking(move || {
            let names = check(&store, &file, &targets, &options, &categories, &mut checked)?;
            Ok::<_, ImportError>((names, checked))
        })
        .await??;
        outcome = checked;
        progress.advance(outcome.rows);
        names
    };
    if options.dry_run || !outcome.errors.is_empty() {
        return Ok(outcome);
    }
    progress.stage("writing", outcome.rows);
    let mut pending = Vec::new();
    let batch = options.batch.max(1);
    for row in rows(file, &targets, options)? {
        let (mut row, edges, _) = row?;
        for (_, predicate, target) in edges {
            if let Some(Some(id)) = names.get(&target) {
                row.edges.push((predicate, id.0));
            }
        }
        pending.push(row);
        if pending.len() >= batch {
            let n = pending.len() as u64;
            write(store, std::mem::take(&mut pending), &mut outcome.report).await?;
            progress.advance(n);
        }
    }
    write(store, pending, &mut outcome.report).await?;
    Ok(outcome)
}

/// Reads every row, noting its wrong cells and the first rows as they would
/// be stored; the resources the edges name, found.
fn check(
    store: &Store,
    file: &Path,
    targets: &[(String, Target)],
    options: &CsvOptions,
    categories: &[String],
    outcome: &mut CsvOutcome,
) -> Result<HashMap<String, Option<ResourceId>>, ImportError> {
    let mut names: HashMap<String, Option<ResourceId>> = HashMap::new();
    for parsed in rows(file, targets, options)? {
        outcome.rows += 1;
        let (mut row, edges, mut wrong) = parsed?;
        for (column, predicate, target) in edges {
            let found = match names.get(&target) {
                Some(found) => *found,
                None => {
                    let found = find_target(store, &target)?;
                    names.insert(target.clone(), found);
                    found
                }
            };
            match found {
                Some(id) => row.edges.push((predicate, id.0)),
                None => wrong.push(CellError {
                    line: row.line,
                    column,
                    why: format!("there is no resource named {target:?} or with that id"),
                }),
            }
        }
        if !row.category.is_empty() && !categories.contains(&row.category) {
            wrong.push(CellError {
                line: row.line,
                column: "category".to_owned(),
                why: format!("there is no category {:?}", row.category),
            });
        }
        let room = MAX_ERRORS.saturating_sub(outcome.errors.len());
        outcome.errors.extend(wrong.into_iter().take(room));
        if outcome.preview.len() < PREVIEW {
            outcome.preview.push(row);
        }
    }
    Ok(names)
}

fn open(file: &Path) -> Result<csv::Reader<std::fs::File>, ImportError> {
    // Rows of another length than the header are read too, so that each is
    // reported with every other wrong cell (`parse`), not the first alone.
    csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(file)
        .map_err(|e| csv_error(file, e))
}

fn csv_error(file: &Path, e: csv::Error) -> ImportError {
    ImportError::Csv {
        file: file.display().to_string(),
        line: e.position().map(|p| p.line()),
        source: e,
    }
}

type Parsed = (Row, Vec<(String, String, String)>, Vec<CellError>);

/// Each row of `file`, parsed: the row, its edges' targets (column,
/// predicate, name or id) to find, and its wrong cells.
fn rows<'a>(
    file: &'a Path,
    targets: &'a [(String, Target)],
    options: &'a CsvOptions,
) -> Result<impl Iterator<Item = Result<Parsed, ImportError>> + 'a, ImportError> {
    Ok(open(file)?.into_records().map(move |record| match record {
        Ok(record) => Ok(parse(&record, targets, options)),
        Err(e) => Err(csv_error(file, e)),
    }))
}

fn parse(record: &csv::StringRecord, targets: &[(String, Target)], options: &CsvOptions) -> Parsed {
    let line = record.position().map_or(0, |p| p.line());
    let mut row = Row {
        line,
        key: None,
        name: None,
        category: options.category.clone().unwrap_or_default(),
        published: options.published,
        publication_start: None,
        publication_end: None,
        props: serde_json::Map::new(),
        edges: Vec::new(),
    };
    let mut edges = Vec::new();
    let mut errors = Vec::new();
    if record.len() != targets.len() {
        let (column, why) = match record.len() > targets.len() {
            true => (
                format!("#{}", targets.len() + 1),
                format!(
                    "the row has {} cells, the header {}: {} too many",
                    record.len(),
                    targets.len(),
                    record.len() - targets.len()
                ),
            ),
            false => (
                targets
                    .get(record.len())
                    .map_or_else(String::new, |(c, _)| c.clone()),
                format!(
                    "the row has {} cells, the header {}: {} missing",
                    record.len(),
                    targets.len(),
                    targets.len() - record.len()
                ),
            ),
        };
        errors.push(CellError { line, column, why });
    }
    for ((column, target), cell) in targets.iter().zip(record.iter()) {
        let cell = cell.trim();
        if options.key.as_deref() == Some(column.as_str()) && !cell.is_empty() {
            row.key = Some(format!("csv:{column}:{cell}"));
        }
        let mut wrong = |why: String| {
            errors.push(CellError {
                line,
                column: column.clone(),
                why,
            })
        };
        match target {
            Target::Skip => {}
            _ if cell.is_empty() => {}
            Target::Name => match check_name("name", cell) {
                Ok(()) => row.name = Some(cell.to_owned()),
                Err(e) => wrong(e.to_string()),
            },
            Target::Category => row.category = cell.to_owned(),
            Target::Published => match cell.to_ascii_lowercase().as_str() {
                "true" | "yes" | "1" | "y" => row.published = true,
                "false" | "no" | "0" | "n" => row.published = false,
                other => wrong(format!("{other:?}: say true or false")),
            },
            Target::Start | Target::End => match time(cell) {
                Some(t) if *target == Target::Start => row.publication_start = Some(t),
                Some(t) => row.publication_end = Some(t),
                None => wrong(format!(
                    "{cell:?}: a time is 2026-11-26 or 2026-11-26T10:00:00Z"
                )),
            },
            Target::Edge(predicate) => {
                for target in cell.split('|').map(str::trim).filter(|t| !t.is_empty()) {
                    edges.push((column.clone(), predicate.clone(), target.to_owned()));
                }
            }
            Target::Prop(name) => {
                row.props.insert(name.clone(), cell.into());
            }
        }
    }
    if row.category.is_empty() {
        errors.push(CellError {
            line,
            column: "category".to_owned(),
            why: "no category: give --category or a category column".to_owned(),
        });
    }
    (row, edges, errors)
}

fn time(cell: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(cell)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            NaiveDate::parse_from_str(cell, "%Y-%m-%d")
                .ok()?
                .and_hms_opt(0, 0, 0)
                .map(|t| t.and_utc())
        })
}

/// The resource a cell names: by id (digits) or unique name.
fn find_target(store: &Store, target: &str) -> Result<Option<ResourceId>, ImportError> {
    Ok(match target.parse::<i64>() {
        Ok(id) => store.resource(ResourceId(id))?.map(|r| r.id),
        Err(_) => store.resource_id(target)?,
    })
}

/// A batch of rows in one transaction: created, or (by key) updated.
async fn write(store: &Store, rows: Vec<Row>, report: &mut Report) -> Result<(), ImportError> {
    if rows.is_empty() {
        return Ok(());
    }
    let outcomes = store
        .run(move |s| {
            let mut ready = Vec::with_capacity(rows.len());
            for row in rows {
                let props = Props::try_from(Value::Object(row.props.clone()))?;
                let mut new = NewResource::new(&row.category, props.clone());
                new.name = row.name.clone();
                new.published = row.published;
                new.publication_start = row.publication_start;
                new.publication_end = row.publication_end;
                ready.push((s.prepare(new)?, props, row));
            }
            s.batch(|b| {
                let mut outcomes = Vec::new();
                for (prepared, props, row) in ready {
                    // By key, else by unique name: a row names what it updates.
                    let mut found = match &row.key {
                        Some(key) => b.keyed(key)?,
                        None => None,
                    };
                    if found.is_none()
                        && let Some(name) = &row.name
                    {
                        found = b.resource_by_name(name)?.map(|r| r.id);
                    }
                    let (id, outcome) = match found.map(|id| b.resource(id)).transpose()?.flatten()
                    {
                        None => (b.create(prepared)?, Outcome::Imported),
                        Some(there) => {
                            let mut merged = there.props.clone();
                            for (k, v) in &props.0 {
                                merged.0.insert(k.clone(), v.clone());
                            }
                            let same = merged == there.props
                                && there.published == row.published
                                && there.category_name == row.category
                                && (row.name.is_none() || there.name == row.name);
                            if same {
                                (there.id, Outcome::Unchanged)
                            } else {
                                let mut update = ResourceUpdate::new(there.id, there.version)
                                    .merge(props)
                                    .published(row.published);
                                update.category = Some(row.category.clone());
                                if row.name.is_some() {
                                    update.name = Some(row.name.clone());
                                }
                                b.update(update.sanitize()?)?;
                                (there.id, Outcome::Updated)
                            }
                        }
                    };
                    if let Some(key) = &row.key {
                        b.set_key(key, id)?;
                    }
                    for (predicate, object) in &row.edges {
                        b.connect(id, predicate, ResourceId(*object))?;
                    }
                    outcomes.push(outcome);
                }
                Ok::<_, StoreError>(outcomes)
            })
        })
        .await?;
    for outcome in outcomes {
        report.count("row", outcome);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_maps_by_its_header_or_by_what_map_says() {
        assert_eq!(Target::of("title"), Ok(Target::Prop("title".into())));
        assert_eq!(Target::of("edge:author"), Ok(Target::Edge("author".into())));
        assert_eq!(Target::of("-"), Ok(Target::Skip));
        assert!(Target::of("Unit Price").unwrap_err().contains("--map"));
    }

    #[test]
    fn times_are_rfc_3339_or_a_day() {
        assert_eq!(
            time("2026-11-26").map(|t| t.to_rfc3339()),
            Some("2026-11-26T00:00:00+00:00".into())
        );
        assert!(time("2026-11-26T10:00:00+01:00").is_some());
        assert_eq!(time("26/11/2026"), None);
    }
}
