//! Nobody changes anything above their own rights: the guard over persons with
//! accounts and user groups ([`AccountGuard`], a [`ResourceGuard`] every
//! surface's access decision asks), and the last administrator, who stays.
//!
//! - A **user group** is changed (renamed, edited, linked) only by people in it
//!   and by administrators; the default groups are never deleted. What a group
//!   *is* was recorded when it was made (`accounts::group_name`), so a new name
//!   gives nobody any rights.
//! - A **person with an account** is changed or deleted only by someone in every
//!   group the person counts in (a manager edits editors and managers, not an
//!   administrator) or an administrator.
//! - The **last administrator** is never deleted nor taken out of the group
//!   (`membership_change` in `users.rs` asks [`is_last_administrator_without`]).
//!
//! A store that fails while judging refuses: a guard fails closed.

use bulwark_acl::{ADMINISTRATORS, Action, Principal, ResourceGuard};
use bulwark_store::{IdentityKind, Resource, ResourceId, Store, StoreError};

use crate::accounts::{
    self, DEFAULT_BRANCHES, DEFAULT_GROUPS, GroupName, HAS_PARENT_GROUP, HAS_USER_GROUP,
    USER_GROUP_CATEGORY,
};

/// The site's guard over persons with accounts and user groups.
#[derive(Debug)]
pub struct AccountGuard {
    store: Store,
}

impl AccountGuard {
    pub fn new(store: Store) -> AccountGuard {
        AccountGuard { store }
    }

    fn judge(&self, who: &Principal, action: Action, r: &Resource) -> Result<bool, StoreError> {
        let store = &self.store;
        // Only a resource of the user group category can be a group: persons
        // are judged without asking the store which group they are.
        let group = if r.category_name == USER_GROUP_CATEGORY {
            accounts::group_name(store, r.id)?
        } else {
            None
        };
        if let Some(group) = group {
            if action == Action::Delete
                && (DEFAULT_GROUPS.iter().any(|(n, _)| *n == group.as_str())
                    || DEFAULT_BRANCHES
                        .iter()
                        .any(|(n, _, _)| *n == group.as_str()))
            {
                return Ok(false);
            }
            return Ok(who.is_administrator() || who.in_group(group.as_str()));
        }
        if !has_account(store, r.id)? {
            return Ok(true);
        }
        if action == Action::Delete && is_last_administrator_without(store, r.id, None)? {
            return Ok(false);
        }
        if who.is_administrator() {
            return Ok(true);
        }
        Ok(accounts::groups_of(store, r.id)?
            .iter()
            .all(|g| who.in_group(g.as_str())))
    }
}

impl ResourceGuard for AccountGuard {
    fn categories(&self) -> &[&'static str] {
        &["person", USER_GROUP_CATEGORY]
    }

    fn allows(&self, who: &Principal, action: Action, r: &Resource) -> bool {
        self.judge(who, action, r).unwrap_or_else(|e| {
            tracing::warn!("judging a change of {} failed, refused: {e}", r.id);
            false
        })
    }
}

fn has_account(store: &Store, person: ResourceId) -> Result<bool, StoreError> {
    Ok(store
        .identities(person)?
        .iter()
        .any(|i| i.kind == IdentityKind::Username))
}

/// The administrators group and every group that extends it.
fn administrator_groups(store: &Store) -> Result<Vec<ResourceId>, StoreError> {
    let Ok(root) = accounts::group_id(store, &GroupName::new(ADMINISTRATORS)) else {
        return Ok(Vec::new());
    };
    let mut groups = Vec::new();
    let mut queue = std::collections::VecDeque::from([root]);
    while let Some(id) = queue.pop_front() {
        if groups.contains(&id) {
            continue;
        }
        groups.push(id);
        queue.extend(store.subjects(id, HAS_PARENT_GROUP)?);
    }
    Ok(groups)
}

/// Whether `person` is an administrator and nobody else with an account would
/// be one without them, or (with `leaving = Some(group)`) without their
/// membership of `group`.
pub(crate) fn is_last_administrator_without(
    store: &Store,
    person: ResourceId,
    leaving: Option<ResourceId>,
) -> Result<bool, StoreError> {
    let groups = administrator_groups(store)?;
    let stays_administrator = |p: ResourceId| -> Result<bool, StoreError> {
        Ok(store
            .objects(p, HAS_USER_GROUP)?
            .into_iter()
            .filter(|g| p != person || Some(*g) != leaving)
            .any(|g| groups.contains(&g)))
    };
    if leaving.is_some() && stays_administrator(person)? {
        return Ok(false);
    }
    let mut is_one = false;
    for group in &groups {
        for member in store.subjects(*group, HAS_USER_GROUP)? {
            if member == person {
                is_one = true;
            } else if has_account(store, member)? {
                return Ok(false);
            }
        }
    }
    Ok(is_one)
}
