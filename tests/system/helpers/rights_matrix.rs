//! The rights matrix: every role (member, editor, manager, administrator)
//! tries to rename, edit, change the e-mail of, delete, and add or remove
//! memberships of every default user group and persons with accounts of every
//! role. Run on one server (`tests/system/web/rights.rs`) and across two nodes
//! of a cluster (`tests/system/modules/admin.rs`).

use bulwark_store::ResourceId;
use serde_json::{Value, json};

use crate::accounts::*;
use crate::common::TestServer;

/// The roles, lowest first; a role's index is its rank.
const ROLES: [&str; 4] = ["members", "editors", "managers", "administrators"];

pub fn rank(group: &str) -> usize {
    match group {
        "anonymous" => 0,
        g => ROLES.iter().position(|r| *r == g).unwrap(),
    }
}

/// Whether someone of `actor`'s role may change what carries `target`'s
/// rights: the rules give persons and user groups to managers only, and then
/// only up to their own rank (administrators: everything).
fn may(actor: &str, target: &str) -> bool {
    rank(actor) >= rank("managers") && rank(actor) >= rank(target)
}

pub async fn group_id(s: &TestServer, group: &str) -> ResourceId {
    let name = format!("acl_user_group_{group}");
    store(s)
        .run(move |s| s.resource_id(&name))
        .await
        .unwrap()
        .unwrap()
}

/// Done (2xx), or refused: 403, or 404 where the rules do not even let the
/// caller see the person (an unpublished person, to a member).
fn outcome(status: u16, body: &Value) -> bool {
    match status {
        200..=299 => true,
        403 | 404 => false,
        other => panic!("neither done nor refused: {other} {body}"),
    }
}

struct Actors {
    sessions: Vec<(&'static str, Session)>,
}

/// One logged-on user per role, named after `matrix` (each matrix has its own).
async fn actors(s: &TestServer, matrix: &str) -> Actors {
    let mut sessions = Vec::new();
    for role in ROLES {
        let name = format!("{matrix}_{role}");
        add_user(s, &name, role).await;
        sessions.push((role, session(s, &name).await));
    }
    Actors { sessions }
}

/// Every role on persons with accounts of every role: made (people, groups,
/// sessions) on `made`, tried on `acted` (the same server, or another node of
/// its cluster).
pub async fn persons(made: &TestServer, acted: &TestServer) {
    let s = made;
    let actors = actors(s, "on_persons").await;
    let mut n = 0;
    let mut person = |target: &str| {
        n += 1;
        (format!("t{n}_{target}"), n)
    };
    for (actor, session) in &actors.sessions {
        let who = As::Session(session);
        for target in ROLES {
            let expected = may(actor, target);
            // Edit, e-mail, rename: each on a person of its own.
            for what in ["edit", "e-mail", "rename"] {
                let (name, n) = person(target);
                let p = add_user(s, &name, target).await;
                let patch = match what {
                    "edit" => json!({"props": {"title": "Changed"}}),
                    "e-mail" => json!({"props": {"email": "eve@evil.example"}}),
                    _ => json!({"name": format!("renamed_{n}")}),
                };
                let (status, body, _) = call(
                    acted,
                    &who,
                    "PATCH",
                    &format!("/api/rsc/{p}"),
                    Some(patch),
                    None,
                )
                .await;
                assert_eq!(
                    outcome(status, &body),
                    expected,
                    "{actor} may {what} a person in {target}: {expected}"
                );
            }
            let p = add_user(s, &person(target).0, target).await;
            let (status, body, _) =
                call(acted, &who, "DELETE", &format!("/api/rsc/{p}"), None, None).await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may delete a person in {target}: {expected}"
            );
            // Out of their group, and into members.
            let p = add_user(s, &person(target).0, target).await;
            let group = group_id(s, target).await;
            let (status, body, _) = call(
                acted,
                &who,
                "DELETE",
                &format!("/api/rsc/{p}/edges/hasusergroup/{group}"),
                None,
                None,
            )
            .await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may take a person out of {target}: {expected}"
            );
            let members = group_id(s, "members").await;
            let (status, body, _) = call(
                acted,
                &who,
                "POST",
                &format!("/api/rsc/{p}/edges"),
                Some(json!({"predicate": "hasusergroup", "object": members.0})),
                None,
            )
            .await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may put a person of {target} in members: {expected}"
            );
        }
    }
}

/// Every role on every default user group, made on `made` and tried on
/// `acted` as [`persons`].
pub async fn groups(made: &TestServer, acted: &TestServer) {
    let s = made;
    let actors = actors(s, "on_groups").await;
    for (actor, session) in &actors.sessions {
        let who = As::Session(session);
        for group in [
            "anonymous",
            "members",
            "editors",
            "managers",
            "administrators",
        ] {
            let expected = may(actor, group);
            let id = group_id(s, group).await;
            let path = format!("/api/rsc/{id}");
            let edit = json!({"props": {"title": format!("{group} by {actor}")}});
            let (status, body, _) = call(acted, &who, "PATCH", &path, Some(edit), None).await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may edit group {group}: {expected}"
            );
            let rename = json!({"name": format!("acl_user_group_{group}_by_{actor}")});
            let (status, body, _) = call(acted, &who, "PATCH", &path, Some(rename), None).await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may rename group {group}: {expected}"
            );
            if expected {
                let back = json!({"name": format!("acl_user_group_{group}")});
                let (status, body, _) = call(acted, &who, "PATCH", &path, Some(back), None).await;
                assert_eq!(status, 200, "{body}");
            }
            let (status, body, _) = call(acted, &who, "DELETE", &path, None, None).await;
            // Refused: 403 for whoever sees user groups (managers and up),
            // 404 for the others, to whom they do not exist.
            let refusal = if rank(actor) >= rank("managers") {
                403
            } else {
                404
            };
            assert_eq!(
                (status, outcome(status, &body)),
                (refusal, false),
                "{actor} may not delete the default group {group}"
            );
            // Someone new put in the group.
            let newcomer = add_user(s, &format!("new_{group}_{actor}"), "members").await;
            let (status, body, _) = call(
                acted,
                &who,
                "POST",
                &format!("/api/rsc/{newcomer}/edges"),
                Some(json!({"predicate": "hasusergroup", "object": id.0})),
                None,
            )
            .await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may put someone in {group}: {expected}"
            );
        }
    }
}
