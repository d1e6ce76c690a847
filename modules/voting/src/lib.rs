//! The voting module: the pages of a national vote (the 2013 Dutch voting site
//! of seed 000, `sites/voting`): a voter picks three projects, fills in their
//! name, e-mail address and postcode on a form protected against cross-site
//! posts, gets a confirmation page, and votes only once per address; the
//! administrators watch the totals change live over push.
//!
//! The projects are resources of category `project` (one subcategory per
//! theme, which the site's Ajax filter searches); their pages, the start page
//! and the filter are plain templates and are served from the page cache. This
//! module brings what needs code: the categories (and, with
//! `[voting] demo_projects = true`, twelve projects), the `vote` controller
//! kind (`step = "ballot" | "thanks" | "totals"`, see `module.toml`), the votes
//! table, and the `voting/votes` push topic, which the site must keep for
//! administrators (`[push] administrators_only = ["voting/#"]`: a site that
//! does not is refused at load) and only the server publishes on.
//!
//! Every node of a cluster can take any step: the ballot's signing key and the
//! votes are in the database; the unique e-mail column decides a race between
//! two nodes.

mod ballot;
mod pages;
mod projects;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Deserialize;

use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{Migration, Store, StoreError};
use bulwark_web::events::MenuItem;
use bulwark_web::{Module, ModuleError, SiteSetup, read_settings};

pub use ballot::{BALLOT_LIFETIME, PICKS, Typed, Voter, VotingKey, parse_picks};
pub use projects::{PROJECT_CATEGORY, THEMES};

pub const PRIORITY: i32 = 450;

/// The topic a vote is told on: `{"projects": [a, b, c]}`.
pub const VOTES_TOPIC: &str = "voting/votes";

const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "votes",
    sqlite: include_str!("../migrations/sqlite/0001_votes.sql"),
    postgres: include_str!("../migrations/postgres/0001_votes.sql"),
}];

/// `[voting]` in `site.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct VotingSection {
    /// Twelve example projects when the site has none.
    demo_projects: Option<bool>,
}

pub struct VotingModule {
    /// Each site's signing key, read when its store opened.
    keys: Mutex<HashMap<String, VotingKey>>,
}

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(VotingModule {
        keys: Mutex::default(),
    })
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "voting",
            PRIORITY,
            &["push"],
            None,
            None,
            include_str!("../module.toml"),
        );
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

fn settings(site: &Site) -> Result<VotingSection, ModuleError> {
    match site.config.module_settings.get("voting") {
        Some(table) => read_settings(table),
        None => Ok(VotingSection::default()),
    }
}

/// The site's signing key: made by the first node that opens the database,
/// read by every other.
fn signing_key(store: &Store) -> Result<VotingKey, StoreError> {
    let secret = VotingKey::random_secret();
    store.module_write(|tx| {
        tx.execute(
            "INSERT INTO voting_secret (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
            &[secret.as_str().into()],
        )
    })?;
    let secret = store.module_read(|tx| {
        tx.query_one("SELECT secret FROM voting_secret WHERE id = 1", &[])
            .map(|row| row.map(|r| r.text(0)))
    })?;
    Ok(VotingKey::new(
        &secret.expect("the secret was just written"),
    ))
}

/// The votes topic tells how people vote as they do: only administrators may
/// hear it, which `[push] administrators_only` must say (a wildcard subscriber
/// would otherwise get it too).
fn require_private_totals(site: &Site) -> Result<(), ModuleError> {
    let kept = site
        .config
        .module_settings
        .get("push")
        .and_then(|push| push.get("administrators_only"))
        .and_then(|filters| filters.as_array())
        .is_some_and(|filters| {
            filters.iter().filter_map(|f| f.as_str()).any(|f| {
                bulwark_push::TopicFilter::parse(f).is_ok_and(|f| {
                    bulwark_push::Topic::parse(VOTES_TOPIC).is_ok_and(|t| f.matches(&t))
                })
            })
        });
    if kept {
        Ok(())
    } else {
        Err(ModuleError::new(
            "voting",
            format!(
                "the totals must reach administrators only: add {VOTES_TOPIC:?} (or \"voting/#\") to [push] administrators_only"
            ),
        ))
    }
}

impl Module for VotingModule {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn open_store(&self, site: &Site, store: &Store) -> Result<(), StoreError> {
        // A malformed `[voting]` is reported by `setup`, with its key.
        let demo = settings(site).is_ok_and(|s| s.demo_projects.unwrap_or(false));
        projects::create_categories(store)?;
        if demo {
            projects::create_demo_projects(store)?;
        }
        let key = signing_key(store)?;
        self.keys
            .lock()
            .expect("voting keys")
            .insert(site.name().to_string(), key);
        Ok(())
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        settings(site.site())?;
        require_private_totals(site.site())?;
        let key = self
            .keys
            .lock()
            .expect("voting keys")
            .get(site.site().name().as_str())
            .cloned()
            .ok_or_else(|| ModuleError::new("voting", "the site's store was not opened"))?;
        let pages = Arc::new(pages::VotingPages {
            key,
            notifier: site.notifier(),
        });
        site.add_controller("vote", move |options| {
            pages::VoteController::new(pages.clone(), options)
                .map(|c| Box::new(c) as Box<dyn bulwark_web::Controller>)
        });
        site.add_admin_menu_item(500, MenuItem::link("Votes", "/admin/votes"));
        Ok(())
    }
}
