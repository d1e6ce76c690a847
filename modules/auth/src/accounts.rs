//! Accounts: people who log on, and the user groups they belong to.
//!
//! Everything is made of the store's own pieces, so it shows up in the data
//! model like any content and the admin can edit it later:
//!
//! - a **user** is a resource (category `person`, created unpublished, titled
//!   with the username) with a username identity that keeps its password hash
//!   (see `password.rs`);
//! - a **user group** is a resource of category `acl_user_group` (under `meta`)
//!   with the unique name `acl_user_group_<group>`;
//! - a user is in a group by an edge `person --hasusergroup--> group`;
//! - the groups form a tree by edges `group --hasparentgroup--> parent`: the
//!   people of a group count as people of its parent group too, so a group's
//!   rights include its parent's. The default chain is
//!   anonymous < members < editors < managers < administrators: an editor is
//!   also a member, an administrator is everything. `anonymous` is the root,
//!   the group of every visitor; nobody is put in it.
//!
//! - a user's **e-mail address** is their `email` identity, given by
//!   [`set_email`] (the account's creator, `bulwark user email`): it finds the
//!   one account (a password reset by address) and is where reset mail goes.
//!   [`set_email`] also copies it to the `email` property of their person
//!   (private by default: `[access] private_properties`) for people to see;
//!   editing that property changes nothing about the account, so whoever may
//!   edit a person cannot send their password resets elsewhere.
//!
//! - whether an editor is **mailed about the whole site's comments and form
//!   answers** is the `mail_site_activity` property of their person
//!   ([`SITE_ACTIVITY_MAIL`]): on unless it is `false`, which it is for an
//!   account an import made ([`add_account_for`]); they turn it on or off on
//!   their account page ([`set_site_activity_mail`]).
//!
//! The functions here run on a thread that may block (they call the store).

use bulwark_acl::{Principal, User};
use bulwark_store::{
    IdentityKind, NewResource, Props, PropsChange, ResourceId, ResourceUpdate, Store, StoreError,
};
use chrono::{DateTime, Utc};

/// The category of user groups.
pub const USER_GROUP_CATEGORY: &str = "acl_user_group";
/// person --hasusergroup--> user group
pub const HAS_USER_GROUP: &str = "hasusergroup";
/// user group --hasparentgroup--> the group it extends
pub const HAS_PARENT_GROUP: &str = "hasparentgroup";

/// The default hierarchy, root first: each group's parent is the one before it.
pub const DEFAULT_GROUPS: [(&str, &str); 5] = [
    ("anonymous", "Anonymous"),
    ("members", "Members"),
    ("editors", "Editors"),
    ("managers", "Managers"),
    ("administrators", "Administrators"),
];

/// Default groups beside the chain: name, title and the group each extends.
/// `authors` write their own articles (the default rules' `own`) and hear
/// of comments on them only: an imported blog's writers.
pub const DEFAULT_BRANCHES: [(&str, &str, &str); 1] = [("authors", "Authors", "members")];

/// The property of a person that says whether they are mailed about every
/// comment and form answer of the site, as the editors are: absent or `true`
/// is yes, `false` no.
pub const SITE_ACTIVITY_MAIL: &str = "mail_site_activity";

/// The group of a site's first account.
pub const ADMINISTRATORS: &str = "administrators";

/// What a resource name of a user group starts with; the rest is the group's name.
const GROUP_NAME_PREFIX: &str = "acl_user_group_";

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AccountError {
    #[error("there is no user group {group:?}; the groups are: {}", known.join(", "))]
    UnknownGroup { group: String, known: Vec<String> },
    #[error("the username {0:?} is taken")]
    UsernameTaken(String),
    #[error("there is no user {0:?}")]
    UnknownUser(String),
    #[error("the e-mail address {0:?} belongs to another user")]
    EmailTaken(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A user group's name as people write it (`editors`); its resource is named
/// `acl_user_group_editors`, so it cannot clash with a page's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupName(String);

impl GroupName {
    pub fn new(name: &str) -> GroupName {
        GroupName(name.trim().to_lowercase())
    }

    fn from_resource_name(name: &str) -> Option<GroupName> {
        name.strip_prefix(GROUP_NAME_PREFIX)
            .map(|short| GroupName(short.to_owned()))
    }

    fn resource_name(&self) -> String {
        format!("{GROUP_NAME_PREFIX}{}", self.0)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for GroupName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A user as `bulwark user list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    pub username: String,
    pub person: ResourceId,
    /// The groups the user was put in (not those it counts in by the tree).
    pub groups: Vec<GroupName>,
    pub created: DateTime<Utc>,
}

/// Creates what accounts need and a site lacks: the user group category, the
/// two predicates and the default groups with their tree. Safe to run at every
/// start and on several nodes at once (what another node created first is
/// taken as is).
pub fn ensure_user_groups(store: &Store) -> Result<(), StoreError> {
    if !store
        .categories()?
        .iter()
        .any(|c| c.name == USER_GROUP_CATEGORY)
    {
        created_elsewhere_is_fine(store.create_category(
            USER_GROUP_CATEGORY,
            Some("meta"),
            "User group",
        ))?;
    }
    let predicates = store.predicates()?;
    for (name, title, subjects, objects) in [
        (HAS_USER_GROUP, "User group", "person", USER_GROUP_CATEGORY),
        (
            HAS_PARENT_GROUP,
            "Parent group",
            USER_GROUP_CATEGORY,
            USER_GROUP_CATEGORY,
        ),
    ] {
        if !predicates.iter().any(|p| p.name == name) {
            created_elsewhere_is_fine(store.create_predicate(
                name,
                title,
                &[subjects],
                &[objects],
            ))?;
        }
    }
    let mut parent: Option<ResourceId> = None;
    let mut made = Vec::new();
    for (name, title) in DEFAULT_GROUPS {
        let id = ensure_group(store, name, title)?;
        if let Some(parent) = parent
            && store.objects(id, HAS_PARENT_GROUP)?.is_empty()
        {
            // Inserting an edge that exists returns it: a race is harmless.
            store.insert_edge(id, HAS_PARENT_GROUP, parent, None)?;
        }
        parent = Some(id);
        made.push((name, id));
    }
    for (name, title, under) in DEFAULT_BRANCHES {
        let id = ensure_group(store, name, title)?;
        if let Some(&(_, parent)) = made.iter().find(|(n, _)| *n == under)
            && store.objects(id, HAS_PARENT_GROUP)?.is_empty()
        {
            store.insert_edge(id, HAS_PARENT_GROUP, parent, None)?;
        }
    }
    Ok(())
}

/// The resource of default group `name`, made (and registered) when missing.
fn ensure_group(store: &Store, name: &str, title: &str) -> Result<ResourceId, StoreError> {
    let group = GroupName::new(name);
    {
        let id = match registered_group_id(store, &group)? {
            Some(id) => id,
            None => {
                let resource_name = group.resource_name();
                let found = match store.resource_id(&resource_name)? {
                    Some(id) => id,
                    None => {
                        // Unpublished: not for visitors to read; managers,
                        // who may change it, see it.
                        let new = NewResource::new(
                            USER_GROUP_CATEGORY,
                            Props::new().with("title", title),
                        )
                        .named(&resource_name);
                        match store.create_resource(new) {
                            Ok(id) => id,
                            Err(StoreError::Duplicate(_)) => {
                                store.resource_id(&resource_name)?.ok_or_else(|| {
                                    StoreError::ResourceNotFound(resource_name.clone())
                                })?
                            }
                            Err(e) => return Err(e),
                        }
                    }
                };
                register_group(store, found, &group)?
            }
        };
        Ok(id)
    }
}

fn created_elsewhere_is_fine(created: Result<ResourceId, StoreError>) -> Result<(), StoreError> {
    match created {
        Ok(_) | Err(StoreError::Duplicate(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The resource that is `group`, as recorded when the group was made.
fn registered_group_id(store: &Store, group: &GroupName) -> Result<Option<ResourceId>, StoreError> {
    store.module_read(|sql| {
        Ok(sql
            .query_one(
                "SELECT rsc_id FROM auth_user_group WHERE name = $1",
                &[group.as_str().into()],
            )?
            .map(|r| ResourceId(r.int(0))))
    })
}

/// Records that resource `id` is `group`, unless a resource is that group
/// already (another node was first): returns the one that is.
fn register_group(
    store: &Store,
    id: ResourceId,
    group: &GroupName,
) -> Result<ResourceId, StoreError> {
    store.module_write(|sql| {
        sql.execute(
            "INSERT INTO auth_user_group (rsc_id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[id.0.into(), group.as_str().into()],
        )?;
        sql.flush(bulwark_store::dependency::resource(id));
        Ok(())
    })?;
    Ok(registered_group_id(store, group)?.unwrap_or(id))
}

/// Every user group in the tree, root first, each before the groups that extend it.
pub fn user_groups(store: &Store) -> Result<Vec<GroupName>, StoreError> {
    let root = GroupName::new(DEFAULT_GROUPS[0].0);
    let Some(root_id) = registered_group_id(store, &root)? else {
        return Ok(Vec::new());
    };
    let mut groups = Vec::new();
    let mut queue = std::collections::VecDeque::from([root_id]);
    while let Some(id) = queue.pop_front() {
        if let Some(name) = group_name(store, id)? {
            if groups.contains(&name) {
                continue; // A loop someone made by hand.
            }
            groups.push(name);
            queue.extend(store.subjects(id, HAS_PARENT_GROUP)?);
        }
    }
    Ok(groups)
}

/// The user group resource `id` is, if it is one. Which resource is which
/// group is recorded when the group is first seen (made here, or made in the
/// admin as a resource of category `acl_user_group` named
/// `acl_user_group_<group>`) and never changes: renaming the resource later
/// renames nothing.
pub fn group_name(store: &Store, id: ResourceId) -> Result<Option<GroupName>, StoreError> {
    let recorded = store.module_read(|sql| {
        Ok(sql
            .query_one(
                "SELECT name FROM auth_user_group WHERE rsc_id = $1",
                &[id.0.into()],
            )?
            .map(|r| GroupName(r.text(0))))
    })?;
    if recorded.is_some() {
        return Ok(recorded);
    }
    let Some(group) = store
        .resource(id)?
        .filter(|r| r.category_name == USER_GROUP_CATEGORY)
        .and_then(|r| r.name.as_deref().and_then(GroupName::from_resource_name))
    else {
        return Ok(None);
    };
    // A group made in the admin, seen for the first time; a resource that
    // took the name of a group that is another resource is not that group.
    Ok((register_group(store, id, &group)? == id).then_some(group))
}

/// The id of a user group, or [`AccountError::UnknownGroup`] listing the groups.
pub(crate) fn group_id(store: &Store, group: &GroupName) -> Result<ResourceId, AccountError> {
    if let Some(id) = registered_group_id(store, group)? {
        return Ok(id);
    }
    let found = store
        .resource_by_name(&group.resource_name())?
        .filter(|r| r.category_name == USER_GROUP_CATEGORY)
        .map(|r| group_name(store, r.id).map(|name| name.map(|_| r.id)))
        .transpose()?
        .flatten();
    match found {
        Some(id) => Ok(id),
        None => Err(AccountError::UnknownGroup {
            group: group.to_string(),
            known: user_groups(store)?
                .iter()
                .map(ToString::to_string)
                .collect(),
        }),
    }
}

/// Every user group `person` counts in: the groups it was put in and, up the
/// tree, the groups they extend (a manager counts in managers, editors,
/// members and anonymous), nearest first.
pub fn groups_of(store: &Store, person: ResourceId) -> Result<Vec<GroupName>, StoreError> {
    let mut names = Vec::new();
    for id in counted_group_ids(store, person)? {
        names.extend(group_name(store, id)?);
    }
    Ok(names)
}

/// The ids of the groups `person` counts in (see [`groups_of`]).
pub(crate) fn counted_group_ids(
    store: &Store,
    person: ResourceId,
) -> Result<Vec<ResourceId>, StoreError> {
    let mut seen = Vec::new();
    let mut queue = std::collections::VecDeque::from(store.objects(person, HAS_USER_GROUP)?);
    while let Some(id) = queue.pop_front() {
        if seen.contains(&id) {
            continue; // In two ways, or a loop someone made by hand.
        }
        seen.push(id);
        queue.extend(store.objects(id, HAS_PARENT_GROUP)?);
    }
    Ok(seen)
}

/// The person resource of the user with this username (any case).
pub fn person_of(store: &Store, username: &str) -> Result<ResourceId, AccountError> {
    store
        .password_hash(username)?
        .map(|(person, _)| person)
        .ok_or_else(|| AccountError::UnknownUser(username.to_owned()))
}

/// Whether the site has any account at all.
pub fn has_accounts(store: &Store) -> Result<bool, StoreError> {
    Ok(!store.identities_of_kind(IdentityKind::Username)?.is_empty())
}

/// A new user: a person resource with `username`, `password_hash` and
/// membership of `group`.
pub fn add_user(
    store: &Store,
    username: &str,
    group: &GroupName,
    password_hash: &str,
) -> Result<ResourceId, AccountError> {
    let group_id = group_id(store, group)?;
    if store.password_hash(username)?.is_some() {
        return Err(AccountError::UsernameTaken(username.to_owned()));
    }
    let person = store.create_resource(NewResource::new(
        "person",
        Props::new().with("title", username),
    ))?;
    let stored = store
        .set_username_password_hash(person, username, password_hash)
        .and_then(|_| store.insert_edge(person, HAS_USER_GROUP, group_id, None));
    if let Err(e) = stored {
        // Leave no person without its account behind (another process may have
        // taken the name in between).
        store.delete_resource(person, None)?;
        return Err(match e {
            StoreError::Duplicate(_) => AccountError::UsernameTaken(username.to_owned()),
            e => e.into(),
        });
    }
    // Told in a write of its own: the account is made in several (the person,
    // its password, its group), and is complete only now.
    store.module_write(|sql| {
        sql.announce(
            "user.created",
            serde_json::json!({"id": person.0, "username": username, "group": group.as_str()}),
        );
        Ok(())
    })?;
    Ok(person)
}

/// Replaces the password hash of an existing user and ends what the old
/// password opened ([`end_logons`]).
/// An account for a person who exists already (an imported author):
/// `username` in `group`, reached at `email`, with `password_hash` (of a
/// password nobody was told: they set their own through a password reset),
/// not mailed about the whole site's comments and form answers until they
/// say so (hundreds of imported accounts would each get every mail).
/// `Ok(false)` when `username` is this person's already; taken by another
/// person, or the address by another account, is an error that says so.
pub fn add_account_for(
    store: &Store,
    person: ResourceId,
    username: &str,
    group: &GroupName,
    password_hash: &str,
    email: Option<&str>,
) -> Result<bool, AccountError> {
    let group_id = group_id(store, group)?;
    if let Some((owner, _)) = store.password_hash(username)? {
        return match owner == person {
            true => Ok(false),
            false => Err(AccountError::UsernameTaken(username.to_owned())),
        };
    }
    if let Some(email) = email
        && find_by_email(store, email)?.is_some()
    {
        return Err(AccountError::EmailTaken(email.to_owned()));
    }
    store
        .set_username_password_hash(person, username, password_hash)
        .map_err(|e| match e {
            StoreError::Duplicate(_) => AccountError::UsernameTaken(username.to_owned()),
            e => e.into(),
        })?;
    store.insert_edge(person, HAS_USER_GROUP, group_id, None)?;
    if let Some(email) = email {
        set_email(store, username, email)?;
    }
    set_site_activity_mail(store, person, false)?;
    Ok(true)
}

/// Whether `person` is mailed about the whole site's comments and form
/// answers when their group is ([`SITE_ACTIVITY_MAIL`]).
pub fn site_activity_mail(store: &Store, person: ResourceId) -> Result<bool, StoreError> {
    Ok(store
        .resource(person)?
        .is_none_or(|p| p.props.get(SITE_ACTIVITY_MAIL) != Some(&serde_json::Value::Bool(false))))
}

/// Turns the mail about the whole site's comments and form answers on or
/// off for `person`.
pub fn set_site_activity_mail(
    store: &Store,
    person: ResourceId,
    on: bool,
) -> Result<(), AccountError> {
    merge_into_person(store, person, Props::new().with(SITE_ACTIVITY_MAIL, on))
}

pub fn set_password_hash(
    store: &Store,
    username: &str,
    password_hash: &str,
) -> Result<(), AccountError> {
    let (person, _) = store
        .password_hash(username)?
        .ok_or_else(|| AccountError::UnknownUser(username.to_owned()))?;
    store.set_username_password_hash(person, username, password_hash)?;
    end_logons(store, person)?;
    Ok(())
}

/// Ends every session and revokes every API token of `person`, on every node
/// (their change events say so): whoever knew the old password, or holds a
/// token made with a session it opened, is logged off.
pub fn end_logons(store: &Store, person: ResourceId) -> Result<(), StoreError> {
    crate::session_table::delete_all_of(store, person, None)?;
    crate::api_tokens::revoke_all_blocking(store, person)?;
    Ok(())
}

/// Every user, by username.
pub fn accounts(store: &Store) -> Result<Vec<Account>, StoreError> {
    store
        .identities_of_kind(IdentityKind::Username)?
        .into_iter()
        .map(|identity| {
            let mut groups = Vec::new();
            for id in store.objects(identity.resource, HAS_USER_GROUP)? {
                groups.extend(group_name(store, id)?);
            }
            // The person's creation, not the identity's: a new password
            // replaces the identity row.
            let created = store
                .resource(identity.resource)?
                .map_or(identity.created, |person| person.created);
            Ok(Account {
                username: identity.key,
                person: identity.resource,
                groups,
                created,
            })
        })
        .collect()
}

/// The addresses of the accounts in `group` (or a group above it) that have
/// one and want mail about the whole site ([`SITE_ACTIVITY_MAIL`]): whom a
/// module tells when nobody else was named (a comment that waits, a form's
/// answers).
pub fn site_activity_addresses(store: &Store, group: &str) -> Result<Vec<String>, StoreError> {
    let mut found = Vec::new();
    for account in accounts(store)? {
        if principal_of(store, account.person)?.in_group(group)
            && site_activity_mail(store, account.person)?
            && let Some(address) = contact(store, account.person)?.and_then(|c| c.email)
        {
            found.push(address);
        }
    }
    Ok(found)
}

/// Who `person` is to the access rules.
pub fn principal_of(store: &Store, person: ResourceId) -> Result<Principal, StoreError> {
    let groups = groups_of(store, person)?;
    Ok(Principal::User(User::new(
        person,
        groups.into_iter().map(|g| g.0),
    )))
}

/// A user found by username or e-mail address, with what a password reset
/// needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserContact {
    pub person: ResourceId,
    pub username: String,
    /// The account's address (its `email` identity), if it has one.
    pub email: Option<String>,
}

/// The user with this username.
pub fn find_by_username(store: &Store, username: &str) -> Result<Option<UserContact>, StoreError> {
    match store.password_hash(username)? {
        Some((person, _)) => contact(store, person),
        None => Ok(None),
    }
}

/// The user whose e-mail address (`email` identity) this is.
pub fn find_by_email(store: &Store, email: &str) -> Result<Option<UserContact>, StoreError> {
    match store.find_identity(IdentityKind::Email, email)? {
        Some(identity) => contact(store, identity.resource),
        None => Ok(None),
    }
}

/// The username and e-mail address of a user's person (`None` when it has no
/// username). The address is the account's `email` identity, never the
/// person's `email` property, which anyone who may edit the person can change.
pub fn contact(store: &Store, person: ResourceId) -> Result<Option<UserContact>, StoreError> {
    let identities = store.identities(person)?;
    let key_of = |kind| {
        identities
            .iter()
            .find(|i| i.kind == kind)
            .map(|i| i.key.clone())
    };
    Ok(key_of(IdentityKind::Username).map(|username| UserContact {
        person,
        username,
        email: key_of(IdentityKind::Email),
    }))
}

/// Gives a user an e-mail address (replacing the one they had): the `email`
/// property of their person and the `email` identity that finds them by it.
/// An address another user has is refused.
pub fn set_email(store: &Store, username: &str, email: &str) -> Result<(), AccountError> {
    let (person, _) = store
        .password_hash(username)?
        .ok_or_else(|| AccountError::UnknownUser(username.to_owned()))?;
    let identity = match store.add_identity(person, IdentityKind::Email, email) {
        Ok(identity) => identity,
        Err(StoreError::Duplicate(_)) => return Err(AccountError::EmailTaken(email.to_owned())),
        Err(e) => return Err(e.into()),
    };
    for old in store.identities(person)? {
        if old.kind == IdentityKind::Email && old.id != identity.id {
            store.delete_identity(old.id)?;
        }
    }
    // The property is the address people see and mail goes to.
    merge_into_person(
        store,
        person,
        Props::new().with("email", identity.key.as_str()),
    )
}

/// Merges `props` into `person`'s: another writer may change the person
/// meanwhile, so a conflict is tried again.
fn merge_into_person(store: &Store, person: ResourceId, props: Props) -> Result<(), AccountError> {
    for _ in 0..5 {
        let current = store
            .resource(person)?
            .ok_or_else(|| AccountError::UnknownUser(format!("person {person}")))?;
        let mut update = ResourceUpdate::new(person, current.version);
        update.props = PropsChange::Merge(props.clone());
        match store.update_resource(update) {
            Ok(_) => return Ok(()),
            Err(StoreError::Conflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(StoreError::Busy.into())
}
