//! What an import did, for a person: counted by kind (imported, updated,
//! unchanged, skipped), each skip with its reason, and what needs a look.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// What happened to the items of one kind (posts, pages, comments...).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub imported: u64,
    pub updated: u64,
    pub unchanged: u64,
    pub skipped: u64,
}

/// Something an import did not bring, or brought with a caveat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remark {
    /// What it concerns: `post 15 "Members only"`.
    pub item: String,
    pub why: String,
}

#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Report {
    /// By kind: `post`, `page`, `attachment`, `comment`, `keyword`,
    /// `person`, `menu`, `redirect`.
    pub counts: BTreeMap<String, Counts>,
    /// Items left out, each with its reason.
    pub skipped: Vec<Remark>,
    /// Items brought, with something to look at (not published because of a
    /// password, say).
    pub notes: Vec<Remark>,
    /// Shortcodes kept as text, with how many posts use each.
    pub unknown_shortcodes: BTreeMap<String, u64>,
}

/// How an item was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Imported,
    Updated,
    Unchanged,
}

impl Report {
    pub fn count(&mut self, kind: &str, outcome: Outcome) {
        let counts = self.counts.entry(kind.to_owned()).or_default();
        match outcome {
            Outcome::Imported => counts.imported += 1,
            Outcome::Updated => counts.updated += 1,
            Outcome::Unchanged => counts.unchanged += 1,
        }
    }

    pub fn skip(&mut self, kind: &str, item: String, why: impl Into<String>) {
        self.counts.entry(kind.to_owned()).or_default().skipped += 1;
        self.skipped.push(Remark {
            item,
            why: why.into(),
        });
    }

    pub fn note(&mut self, item: String, why: impl Into<String>) {
        self.notes.push(Remark {
            item,
            why: why.into(),
        });
    }

    /// What one kind came to (all zero when there were none).
    pub fn of(&self, kind: &str) -> Counts {
        self.counts.get(kind).copied().unwrap_or_default()
    }

    /// Whether the import wrote anything.
    pub fn changed_anything(&self) -> bool {
        self.counts.values().any(|c| c.imported + c.updated > 0)
    }
}

/// The summary a terminal shows at the end.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<12} {:>9} {:>9} {:>9} {:>9}",
            "", "imported", "updated", "unchanged", "skipped"
        )?;
        for (kind, c) in &self.counts {
            writeln!(
                f,
                "{:<12} {:>9} {:>9} {:>9} {:>9}",
                kind, c.imported, c.updated, c.unchanged, c.skipped
            )?;
        }
        if !self.skipped.is_empty() {
            writeln!(f, "\nSkipped:")?;
            for r in &self.skipped {
                writeln!(f, "  {}: {}", r.item, r.why)?;
            }
        }
        if !self.notes.is_empty() {
            writeln!(f, "\nTo look at:")?;
            for r in &self.notes {
                writeln!(f, "  {}: {}", r.item, r.why)?;
            }
        }
        if !self.unknown_shortcodes.is_empty() {
            writeln!(f, "\nShortcodes kept as text (name: posts using it):")?;
            for (name, n) in &self.unknown_shortcodes {
                writeln!(f, "  [{name}]: {n}")?;
            }
        }
        Ok(())
    }
}
