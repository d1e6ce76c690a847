//! Access rules kept in the site's database, so that the admin (or a script,
//! through `PUT /api/access/rules`) can change them without editing
//! `site.toml`. Stored rules replace the configured ones (`[[access.rules]]`
//! or the defaults) while they exist; deleting them brings those back.
//!
//! They are one JSON document under the config key [`RULES_KEY`], in the
//! same shape as `[[access.rules]]`: `[{"group", "actions", "content_group",
//! "categories", "own"}]`.

use bulwark_store::{Store, StoreError};
use serde::{Deserialize, Serialize};

use crate::policy::SitePolicy;
use crate::rules::{Action, DEFAULT_CONTENT_GROUP, Rule};

/// The store's config key of the stored rules.
pub const RULES_KEY: &str = "access.rules";

/// One rule as JSON (and as `[[access.rules]]` in `site.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDoc {
    pub group: String,
    pub actions: Vec<String>,
    #[serde(default)]
    pub content_group: Option<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    /// Only to what they made (`true`), and to new resources.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own: bool,
}

/// What is wrong with a rule: where (`rules[2].actions`) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {problem}")]
pub struct RuleProblem {
    pub key: String,
    pub problem: String,
}

impl RuleDoc {
    pub fn from_rule(rule: &Rule) -> RuleDoc {
        RuleDoc {
            group: rule.group.clone(),
            actions: rule
                .actions
                .iter()
                .map(|a| a.as_str().to_string())
                .collect(),
            content_group: rule.content_group.clone(),
            categories: rule.categories.clone(),
            own: rule.own,
        }
    }

    /// The rule, checked for what needs no database: known actions, a group.
    pub fn to_rule(&self, index: usize) -> Result<Rule, RuleProblem> {
        let problem = |key: &str, problem: String| RuleProblem {
            key: format!("rules[{index}].{key}"),
            problem,
        };
        if self.group.trim().is_empty() {
            return Err(problem("group", "a user group is needed".into()));
        }
        let actions = self
            .actions
            .iter()
            .map(|a| a.parse::<Action>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| problem("actions", e.to_string()))?;
        if actions.is_empty() {
            return Err(problem("actions", "at least one action".into()));
        }
        Ok(Rule {
            group: self.group.trim().to_lowercase(),
            actions,
            content_group: self.content_group.clone(),
            categories: self.categories.clone(),
            own: self.own,
        })
    }
}

/// Rules as JSON documents.
pub fn rule_docs(rules: &[Rule]) -> Vec<RuleDoc> {
    rules.iter().map(RuleDoc::from_rule).collect()
}

/// Why rules could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreRulesError {
    #[error(transparent)]
    Invalid(#[from] RuleProblem),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The stored rules, if any (blocks).
pub fn load_rules(store: &Store) -> Result<Option<Vec<Rule>>, StoreError> {
    let Some(text) = store.config_value(RULES_KEY)? else {
        return Ok(None);
    };
    let bad = |reason: String| StoreError::InvalidInput {
        field: RULES_KEY.into(),
        reason,
    };
    let docs: Vec<RuleDoc> = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    docs.iter()
        .enumerate()
        .map(|(i, d)| d.to_rule(i))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
        .map_err(|e| bad(e.to_string()))
}

impl SitePolicy {
    /// Checks `docs` against the site's data (categories and content groups
    /// that exist), stores them and puts them in force (blocks).
    pub fn store_rules(
        &self,
        store: &Store,
        docs: &[RuleDoc],
    ) -> Result<Vec<Rule>, StoreRulesError> {
        let rules = docs
            .iter()
            .enumerate()
            .map(|(i, d)| d.to_rule(i))
            .collect::<Result<Vec<_>, _>>()?;
        let content_groups = crate::SiteLookups::load(store)?.content_groups;
        for (i, rule) in rules.iter().enumerate() {
            for category in &rule.categories {
                match store.category(category) {
                    Ok(_) => {}
                    Err(StoreError::UnknownCategory(_)) => {
                        return Err(RuleProblem {
                            key: format!("rules[{i}].categories"),
                            problem: format!("there is no category {category:?}"),
                        }
                        .into());
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if let Some(cg) = &rule.content_group
                && cg != DEFAULT_CONTENT_GROUP
                && !content_groups.values().any(|name| name == cg)
            {
                return Err(RuleProblem {
                    key: format!("rules[{i}].content_group"),
                    problem: format!(
                        "there is no content group {cg:?} (\"{DEFAULT_CONTENT_GROUP}\" or the unique name of a content_group resource)"
                    ),
                }
                .into());
            }
        }
        let text = serde_json::to_string(&rule_docs(&rules)).expect("rules serialise");
        store.set_config_value(RULES_KEY, &text)?;
        self.set_rules(Some(rules.clone()));
        Ok(rules)
    }

    /// Deletes the stored rules: the configured ones are in force again (blocks).
    pub fn forget_stored_rules(&self, store: &Store) -> Result<(), StoreError> {
        store.delete_config_value(RULES_KEY)?;
        self.set_rules(None);
        Ok(())
    }
}
