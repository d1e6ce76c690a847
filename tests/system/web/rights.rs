//! Nobody changes anything above their own rights, over real HTTP on the
//! starter site: every role (member, editor, manager, administrator) tries to
//! rename, edit, change the e-mail of, delete, and add or remove memberships of
//! every default user group and persons with accounts of every role. What a
//! group *is* does not follow its name, and the last administrator stays.

use crate::accounts;
use crate::rights_matrix;

use accounts::*;
use rights_matrix::group_id;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_role_changes_a_person_with_an_account_above_its_own() {
    let s = starter_with("").await;
    rights_matrix::persons(&s, &s).await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_role_changes_a_user_group_above_its_own_and_none_deletes_a_default_one() {
    let s = starter_with("").await;
    rights_matrix::groups(&s, &s).await;
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
