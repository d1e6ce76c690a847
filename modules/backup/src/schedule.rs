//! Backups on a schedule (`[backup] every_seconds`, a day by default), and
//! the rule that prunes them: the newest scheduled backup of each of the last
//! `keep_daily` days that have one, and of each of the last `keep_weekly`
//! ISO weeks, as Zotonic's `mod_backup` keeps 7 daily and 4 weekly. Backups
//! made by hand are never pruned.
//!
//! On several nodes, each period's backup is made by the node that claims its
//! slot first (a row in `backup_claim`); the others skip it.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{Datelike, Utc};

use bulwark_store::Store;

use crate::archive::{self, Backup, Quiet};
use crate::{BackupError, Settings, SiteBackups};

/// The scheduled backups the rule does not keep.
pub fn pruned(backups: &[Backup], keep_daily: usize, keep_weekly: usize) -> Vec<Backup> {
    let mut scheduled: Vec<&Backup> = backups.iter().filter(|b| b.scheduled).collect();
    scheduled.sort_by_key(|b| std::cmp::Reverse(b.created));
    let mut keep: BTreeSet<&str> = BTreeSet::new();
    let mut days = Vec::new();
    let mut weeks = Vec::new();
    for b in &scheduled {
        let day = b.created.date_naive();
        if !days.contains(&day) && days.len() < keep_daily {
            days.push(day);
            keep.insert(&b.name);
        }
        let week = b.created.iso_week();
        let week = (week.year(), week.week());
        if !weeks.contains(&week) && weeks.len() < keep_weekly {
            weeks.push(week);
            keep.insert(&b.name);
        }
    }
    scheduled
        .into_iter()
        .filter(|b| !keep.contains(b.name.as_str()))
        .cloned()
        .collect()
}

/// Claims the backup of slot `slot` for this node; `false` if another node
/// has it.
fn claim(store: &Store, slot: i64, node: &str) -> Result<bool, BackupError> {
    let claimed = store.module_write(|sql| {
        let rows = sql.query(
            "INSERT INTO backup_claim (slot, node, claimed) VALUES ($1, $2, $3) \
             ON CONFLICT (slot) DO NOTHING RETURNING slot",
            &[
                slot.into(),
                node.into(),
                Utc::now().timestamp_millis().into(),
            ],
        )?;
        sql.execute(
            "DELETE FROM backup_claim WHERE slot < $1",
            &[(slot - 100).into()],
        )?;
        Ok(!rows.is_empty())
    })?;
    Ok(claimed)
}

/// One scheduled round: the backup, then the pruning.
pub fn run_once(
    backups: &SiteBackups,
    store: &Store,
    settings: &Settings,
    slot: i64,
) -> Result<Option<archive::Backup>, BackupError> {
    if !claim(store, slot, &backups.node)? {
        return Ok(None);
    }
    let made = backups.make(store, true, &Quiet)?;
    let dir = archive::folder(&backups.site_dir);
    for old in pruned(
        &archive::list(&dir)?,
        settings.keep_daily,
        settings.keep_weekly,
    ) {
        tracing::info!(site = %backups.site, "backup {} pruned by the schedule's rule", old.name);
        if let Err(e) = std::fs::remove_file(&old.path) {
            tracing::warn!(site = %backups.site, "pruning {}: {e}", old.name);
        }
    }
    Ok(Some(made))
}

/// Makes a backup at the start of every period while the site runs (the
/// task ends with the site's load: a reload starts a new one).
pub fn spawn(
    backups: Weak<SiteBackups>,
    store: Store,
    settings: Settings,
    failures: Arc<AtomicU64>,
) {
    if tokio::runtime::Handle::try_current().is_err() {
        return; // A command, not a server.
    }
    let every = settings.every_seconds;
    if every == 0 {
        return;
    }
    store.clone().spawn_while_open(async move {
        loop {
            let now = Utc::now().timestamp_millis();
            let period = i64::try_from(every).unwrap_or(i64::MAX / 1000) * 1000;
            let slot = now / period + 1;
            let wait = (slot * period - now).max(0) as u64;
            tokio::time::sleep(Duration::from_millis(wait)).await;
            let Some(site) = backups.upgrade() else {
                return;
            };
            let (store, settings) = (store.clone(), settings.clone());
            let name = site.site.clone();
            let ran =
                tokio::task::spawn_blocking(move || run_once(&site, &store, &settings, slot)).await;
            match ran {
                Ok(Ok(Some(made))) => {
                    tracing::info!(site = %name, "scheduled backup {} made", made.name)
                }
                Ok(Ok(None)) => {}
                Ok(Err(e)) => {
                    failures.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(site = %name, "scheduled backup: {e}")
                }
                Err(e) => {
                    failures.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(site = %name, "scheduled backup: {e}")
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, TimeZone};

    fn backup(at: DateTime<Utc>, scheduled: bool) -> Backup {
        Backup {
            name: format!(
                "s-{}{}.tar.gz",
                at.format("%Y%m%d-%H%M%S"),
                if scheduled { "-auto" } else { "" }
            ),
            size: 1,
            created: at,
            encrypted: false,
            scheduled,
            path: Default::default(),
        }
    }

    #[test]
    fn the_newest_of_seven_days_and_four_weeks_are_kept() {
        // Two backups a day for sixty days, and one made by hand long ago.
        let start = Utc.with_ymd_and_hms(2026, 9, 1, 3, 0, 0).unwrap();
        let mut all: Vec<Backup> = (0..120)
            .map(|i| backup(start + chrono::Duration::hours(12 * i), true))
            .collect();
        all.push(backup(start - chrono::Duration::days(400), false));
        let pruned = pruned(&all, 7, 4);
        let kept: Vec<&Backup> = all
            .iter()
            .filter(|b| !pruned.iter().any(|p| p.name == b.name))
            .collect();
        let newest = &all[119];
        assert!(kept.iter().any(|b| b.name == newest.name), "the newest");
        assert!(kept.iter().any(|b| !b.scheduled), "by hand: never pruned");
        // Expected: the newest of each of the 7 newest days, and of each of
        // the 4 newest ISO weeks (grouped here, not walked as the rule does).
        let scheduled: Vec<&Backup> = all.iter().filter(|b| b.scheduled).collect();
        let newest_of = |same: &dyn Fn(&Backup) -> bool| {
            scheduled
                .iter()
                .filter(|b| same(b))
                .max_by_key(|b| b.created)
                .map(|b| b.name.clone())
                .unwrap()
        };
        let mut dates: Vec<_> = scheduled.iter().map(|b| b.created.date_naive()).collect();
        dates.sort();
        dates.dedup();
        let mut weeks: Vec<_> = scheduled
            .iter()
            .map(|b| (b.created.iso_week().year(), b.created.iso_week().week()))
            .collect();
        weeks.sort();
        weeks.dedup();
        let mut expected: BTreeSet<String> = BTreeSet::new();
        for date in dates.iter().rev().take(7) {
            expected.insert(newest_of(&|b: &Backup| b.created.date_naive() == *date));
        }
        for week in weeks.iter().rev().take(4) {
            expected.insert(newest_of(&|b: &Backup| {
                (b.created.iso_week().year(), b.created.iso_week().week()) == *week
            }));
        }
        let kept_scheduled: BTreeSet<String> = kept
            .iter()
            .filter(|b| b.scheduled)
            .map(|b| b.name.clone())
            .collect();
        assert_eq!(kept_scheduled, expected);
        assert_eq!(pruned.len(), 120 - expected.len());
    }
}
