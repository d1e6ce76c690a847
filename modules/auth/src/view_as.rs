//! "View the site as": a manager sees the site as the people of one of their
//! groups (or as an anonymous visitor) see it, to check the access rules. The
//! admin's rules screen sets the cookie `bulwark_view_as=<group>`; while it
//! is there, every page, search, API answer and push connection of that
//! browser is decided for a person in only that group, who made nothing
//! (so no "their own drafts"). The admin (`/admin`), logging on and off and
//! the accounts API (`/api/auth/...`) stay the manager's own, so the way back
//! is always open. It changes what the manager *sees*: a request that changes
//! something (anything but `GET`, `HEAD`, `OPTIONS`) is their own, so saving
//! in the editor while a tab views the site as a group works, rather than
//! failing as a 404 for a resource the group cannot see.
//!
//! The cookie needs no signature: it is obeyed only for someone in
//! `managers` and only for a group they are in, so it can take rights away
//! and never give any.

use bulwark_acl::{ANONYMOUS, MANAGERS, Principal, User};
use bulwark_store::{ResourceId, Store, StoreError};
use http::Method;
use http::request::Parts;

use crate::accounts::{self, GroupName, HAS_PARENT_GROUP};
use crate::sessions;

pub const VIEW_AS_COOKIE: &str = "bulwark_view_as";

/// Paths that always answer as the person themselves.
const OWN_PATHS: [&str; 4] = ["/admin", "/api/auth", "/logon", "/logoff"];

/// `path` is one of [`OWN_PATHS`] or below one.
fn own(path: &str) -> bool {
    OWN_PATHS.iter().any(|own| {
        path.strip_prefix(own)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// The group the request asks to view the site as, if it may.
pub fn requested(parts: &Parts, who: &Principal) -> Option<GroupName> {
    if !who.in_group(MANAGERS) {
        return None;
    }
    let path = parts.uri.path();
    if own(path) || !matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return None;
    }
    let group = sessions::cookie(parts, VIEW_AS_COOKIE)?;
    let valid = !group.is_empty()
        && group.len() <= 80
        && group
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    (valid && who.in_group(group)).then(|| GroupName::new(group))
}

/// Someone in `group` (and the groups it counts in), who made nothing.
pub fn principal_in(store: &Store, group: &GroupName) -> Result<Principal, StoreError> {
    if group.as_str() == ANONYMOUS {
        return Ok(Principal::anonymous());
    }
    let mut groups = vec![group.as_str().to_owned()];
    let Ok(group_id) = accounts::group_id(store, group) else {
        return Ok(Principal::anonymous());
    };
    let mut at = group_id;
    // Up the tree; a loop someone made by hand ends at a group seen before.
    while let Some(parent) = store.objects(at, HAS_PARENT_GROUP)?.first().copied() {
        let Some(name) = accounts::group_name(store, parent)? else {
            break;
        };
        if groups.iter().any(|g| g == name.as_str()) {
            break;
        }
        groups.push(name.as_str().to_owned());
        at = parent;
    }
    if !groups.iter().any(|g| g == ANONYMOUS) {
        groups.push(ANONYMOUS.to_owned());
    }
    // No resource has a negative id, so rules about what one made never
    // apply; one per group keeps cached fragments apart, as for real users.
    Ok(Principal::User(User::new(ResourceId(-group_id.0), groups)))
}

#[cfg(test)]
mod tests {
    use super::own;

    #[test]
    fn the_admin_and_logging_on_and_off_stay_ones_own() {
        for path in [
            "/admin",
            "/admin/rules",
            "/api/auth/me",
            "/logon",
            "/logoff",
        ] {
            assert!(own(path), "{path}");
        }
        for path in ["/", "/administration", "/api/rsc/1", "/logons", "/page/1"] {
            assert!(!own(path), "{path}");
        }
    }
}
