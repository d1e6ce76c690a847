//! Nobody changes anything above their own rights, over real HTTP on the
//! starter site: every role (member, editor, manager, administrator) tries to
//! rename, edit, change the e-mail of, delete, and add or remove memberships of
//! every default user group and persons with accounts of every role. What a
//! group *is* does not follow its name, and the last administrator stays.

mod accounts;
mod common;

use accounts::*;
use bulwark_store::ResourceId;
use serde_json::{Value, json};

/// The roles, lowest first; a role's index is its rank.
const ROLES: [&str; 4] = ["members", "editors", "managers", "administrators"];

fn rank(group: &str) -> usize {
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

async fn group_id(s: &common::TestServer, group: &str) -> ResourceId {
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

async fn actors(s: &common::TestServer) -> Actors {
    let mut sessions = Vec::new();
    for role in ROLES {
        let name = format!("actor_{role}");
        add_user(s, &name, role).await;
        sessions.push((role, session(s, &name).await));
    }
    Actors { sessions }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_role_changes_a_person_with_an_account_above_its_own() {
    let s = starter_with("").await;
    let actors = actors(&s).await;
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
                let p = add_user(&s, &name, target).await;
                let patch = match what {
                    "edit" => json!({"props": {"title": "Changed"}}),
                    "e-mail" => json!({"props": {"email": "eve@evil.example"}}),
                    _ => json!({"name": format!("renamed_{n}")}),
                };
                let (status, body, _) = call(
                    &s,
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
            let p = add_user(&s, &person(target).0, target).await;
            let (status, body, _) =
                call(&s, &who, "DELETE", &format!("/api/rsc/{p}"), None, None).await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may delete a person in {target}: {expected}"
            );
            // Out of their group, and into members.
            let p = add_user(&s, &person(target).0, target).await;
            let group = group_id(&s, target).await;
            let (status, body, _) = call(
                &s,
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
            let members = group_id(&s, "members").await;
            let (status, body, _) = call(
                &s,
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
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_role_changes_a_user_group_above_its_own_and_none_deletes_a_default_one() {
    let s = starter_with("").await;
    let actors = actors(&s).await;
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
            let id = group_id(&s, group).await;
            let path = format!("/api/rsc/{id}");
            let edit = json!({"props": {"title": format!("{group} by {actor}")}});
            let (status, body, _) = call(&s, &who, "PATCH", &path, Some(edit), None).await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may edit group {group}: {expected}"
            );
            let rename = json!({"name": format!("acl_user_group_{group}_by_{actor}")});
            let (status, body, _) = call(&s, &who, "PATCH", &path, Some(rename), None).await;
            assert_eq!(
                outcome(status, &body),
                expected,
                "{actor} may rename group {group}: {expected}"
            );
            if expected {
                let back = json!({"name": format!("acl_user_group_{group}")});
                let (status, body, _) = call(&s, &who, "PATCH", &path, Some(back), None).await;
                assert_eq!(status, 200, "{body}");
            }
            let (status, body, _) = call(&s, &who, "DELETE", &path, None, None).await;
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
            let newcomer = add_user(&s, &format!("new_{group}_{actor}"), "members").await;
            let (status, body, _) = call(
                &s,
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
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renaming_groups_gives_nobody_their_rights() {
    let s = starter_with("").await;
    add_user(&s, "boss", "administrators").await;
    add_user(&s, "mo", "managers").await;
    let boss = session(&s, "boss").await;
    let (admins, managers) = (
        group_id(&s, "administrators").await,
        group_id(&s, "managers").await,
    );
    // Even an administrator's renaming swaps no rights: the managers group
    // named like the administrators one is still the managers group.
    for (id, name) in [
        (admins, "acl_user_group_former_admins"),
        (managers, "acl_user_group_administrators"),
    ] {
        let (status, body, _) = call(
            &s,
            &As::Session(&boss),
            "PATCH",
            &format!("/api/rsc/{id}"),
            Some(json!({"name": name})),
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let mo = session(&s, "mo").await;
    let groups = me(&s, &mo.cookie).await["groups"].clone();
    assert!(
        !groups
            .as_array()
            .unwrap()
            .contains(&json!("administrators")),
        "{groups}"
    );
    assert!(
        groups.as_array().unwrap().contains(&json!("managers")),
        "{groups}"
    );
    let boss_groups = me(&s, &logon(&s, "boss").await).await["groups"].clone();
    assert!(
        boss_groups
            .as_array()
            .unwrap()
            .contains(&json!("administrators")),
        "{boss_groups}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_administrator_can_be_neither_deleted_nor_taken_out() {
    let s = starter_with("").await;
    let store = store(&s);
    // The starter made its first administrator; only ours stays one.
    let first = store
        .run(|s| {
            Ok(s.password_hash(bulwark_module_auth::FIRST_ADMIN)?
                .map(|(p, _)| p))
        })
        .await
        .unwrap();
    let boss = add_user(&s, "boss", "administrators").await;
    let session = session(&s, "boss").await;
    let who = As::Session(&session);
    if let Some(first) = first {
        let (status, body, _) =
            call(&s, &who, "DELETE", &format!("/api/rsc/{first}"), None, None).await;
        assert_eq!(status, 204, "another administrator may go: {body}");
    }
    let admins = group_id(&s, "administrators").await;
    let out = format!("/api/rsc/{boss}/edges/hasusergroup/{admins}");
    let (status, body, _) = call(&s, &who, "DELETE", &out, None, None).await;
    assert_eq!(status, 403, "not out of the group: {body}");
    let (status, body, _) = call(&s, &who, "DELETE", &format!("/api/rsc/{boss}"), None, None).await;
    assert_eq!(status, 403, "not deleted: {body}");
    // With a second administrator, the first may go.
    add_user(&s, "deputy", "administrators").await;
    let (status, body, _) = call(&s, &who, "DELETE", &out, None, None).await;
    assert_eq!(status, 204, "{body}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_groups_are_not_for_visitors_to_read() {
    let s = starter_with("").await;
    add_user(&s, "mo", "managers").await;
    add_user(&s, "mia", "members").await;
    let (mo, mia) = (session(&s, "mo").await, session(&s, "mia").await);
    for group in ["anonymous", "members", "administrators"] {
        let path = format!("/api/rsc/{}", group_id(&s, group).await);
        for (who, expected) in [
            (As::Anonymous, 404),
            (As::Session(&mia), 404),
            (As::Session(&mo), 200),
        ] {
            let (status, body, _) = call(&s, &who, "GET", &path, None, None).await;
            assert_eq!(status, expected, "{group}: {body}");
        }
    }
    s.shutdown().await;
}
