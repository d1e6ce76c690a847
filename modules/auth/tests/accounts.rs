//! Accounts on a real database, SQLite and PostgreSQL: the user groups a site
//! gets, adding users, changing passwords, the first administrator, and no
//! password in plain text anywhere the database wrote.

use crate::databases as common;

use bulwark_module_auth::accounts::{self, DEFAULT_GROUPS, HAS_PARENT_GROUP, HAS_USER_GROUP};
use bulwark_module_auth::{
    AccountError, FirstAdmin, GroupName, HashCost, HashLimits, NewPassword, Password, Passwords,
    create_first_admin,
};
use bulwark_store::{Database, ResourceId, SearchQuery, Store};

fn passwords() -> Passwords {
    Passwords::new(HashCost::default(), HashLimits::default()).unwrap()
}

fn hash(text: &str) -> String {
    passwords()
        .hash_blocking(&NewPassword::new(text.to_owned()).unwrap())
        .unwrap()
}

fn verifies(s: &Store, username: &str, text: &str) -> bool {
    let (_, stored) = s.password_hash(username).unwrap().expect("a user");
    passwords().verify_blocking(&Password::new(text.to_owned()).unwrap(), &stored)
}

fn people(s: &Store) -> Vec<ResourceId> {
    let query = SearchQuery {
        categories: vec!["person".to_owned()],
        ..SearchQuery::default()
    };
    s.search(&query).unwrap().ids
}

fn group_names(names: &[&str]) -> Vec<GroupName> {
    names.iter().map(|n| GroupName::new(n)).collect()
}

fn the_default_user_groups_are_created_once_as_a_chain_with_authors_beside_editors(s: &Store) {
    bulwark_module_auth::migrate(s).unwrap();
    accounts::ensure_user_groups(s).unwrap();
    let ids: Vec<_> = DEFAULT_GROUPS
        .iter()
        .map(|(name, _)| {
            s.resource_id(&format!("acl_user_group_{name}"))
                .unwrap()
                .unwrap()
        })
        .collect();
    // Again, as at every start: nothing new.
    accounts::ensure_user_groups(s).unwrap();
    assert_eq!(
        accounts::user_groups(s).unwrap(),
        group_names(&[
            "anonymous",
            "members",
            "editors",
            "authors",
            "managers",
            "administrators"
        ])
    );
    let authors = s.resource_id("acl_user_group_authors").unwrap().unwrap();
    assert_eq!(
        s.objects(authors, HAS_PARENT_GROUP).unwrap(),
        [ids[1]],
        "authors extend members"
    );
    assert!(s.objects(ids[0], HAS_PARENT_GROUP).unwrap().is_empty());
    for pair in ids.windows(2) {
        assert_eq!(s.objects(pair[1], HAS_PARENT_GROUP).unwrap(), [pair[0]]);
    }
    assert!(s.is_a(ids[4], "meta").unwrap(), "user groups are meta data");
    let p = s.predicate(HAS_USER_GROUP).unwrap();
    assert_eq!(
        (p.subject_categories, p.object_categories),
        (vec!["person".to_owned()], vec!["acl_user_group".to_owned()])
    );
}

fn a_user_is_a_person_in_a_group_with_a_password_hash(s: &Store) {
    bulwark_module_auth::migrate(s).unwrap();
    accounts::ensure_user_groups(s).unwrap();
    assert!(!accounts::has_accounts(s).unwrap());
    let ann =
        accounts::add_user(s, "Ann", &GroupName::new("editors"), &hash("correct horse")).unwrap();
    assert!(accounts::has_accounts(s).unwrap());
    assert!(s.is_a(ann, "person").unwrap());
    let listed = accounts::accounts(s).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].username, "ann");
    assert_eq!(listed[0].person, ann);
    assert_eq!(listed[0].groups, group_names(&["editors"]));
    assert!(verifies(s, "ann", "correct horse"));
    assert!(!verifies(s, "ann", "correct horsE"));

    // The clock moves on: a change that touched the creation time would show.
    std::thread::sleep(std::time::Duration::from_millis(5));
    accounts::set_password_hash(s, "ANN", &hash("battery staple")).unwrap();
    assert!(verifies(s, "ann", "battery staple"));
    assert_eq!(
        accounts::accounts(s).unwrap(),
        listed,
        "a new password changes nothing else, not even the creation time"
    );
    assert!(!verifies(s, "ann", "correct horse"));
    assert!(matches!(
        accounts::set_password_hash(s, "nobody", &hash("battery staple")),
        Err(AccountError::UnknownUser(_))
    ));
}

fn an_unknown_group_or_a_taken_name_is_refused_and_leaves_nothing(s: &Store) {
    bulwark_module_auth::migrate(s).unwrap();
    accounts::ensure_user_groups(s).unwrap();
    let err = accounts::add_user(s, "bob", &GroupName::new("admins"), &hash("correct horse"))
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, AccountError::UnknownGroup { .. }), "{err:?}");
    assert!(
        text.contains("\"admins\"") && text.contains("administrators"),
        "{text}"
    );
    // The name of a resource that is not a user group is no group either.
    let err =
        accounts::add_user(s, "bob", &GroupName::new("about"), &hash("correct horse")).unwrap_err();
    assert!(matches!(err, AccountError::UnknownGroup { .. }), "{err:?}");
    assert!(!accounts::has_accounts(s).unwrap());

    accounts::add_user(s, "bob", &GroupName::new("members"), &hash("correct horse")).unwrap();
    let people_before = people(s);
    let err =
        accounts::add_user(s, "BOB", &GroupName::new("members"), &hash("other pass")).unwrap_err();
    assert!(matches!(err, AccountError::UsernameTaken(_)), "{err:?}");
    let err = accounts::add_user(
        s,
        "with space",
        &GroupName::new("members"),
        &hash("other pass"),
    )
    .unwrap_err();
    assert!(matches!(err, AccountError::Store(_)), "{err:?}");
    assert_eq!(accounts::accounts(s).unwrap().len(), 1);
    assert!(verifies(s, "bob", "correct horse"));
    assert_eq!(
        people(s),
        people_before,
        "no person is left without its account"
    );
}

fn the_first_administrator_is_made_once(s: &Store) {
    bulwark_module_auth::migrate(s).unwrap();
    accounts::ensure_user_groups(s).unwrap();
    let p = passwords();
    let FirstAdmin::Created {
        random_password: Some(password),
    } = create_first_admin(s, &p, None).unwrap()
    else {
        panic!("a site without accounts gets an administrator with a random password");
    };
    assert!(password.len() >= 20, "{password}");
    assert!(verifies(s, "admin", &password));
    let listed = accounts::accounts(s).unwrap();
    assert_eq!(listed[0].username, "admin");
    assert_eq!(listed[0].groups, group_names(&["administrators"]));
    // A second start finds the account and does nothing.
    assert_eq!(
        create_first_admin(s, &p, None).unwrap(),
        FirstAdmin::NotNeeded
    );
    assert_eq!(accounts::accounts(s).unwrap().len(), 1);
}

fn a_given_first_administrator_password_is_used_and_not_returned(s: &Store) {
    bulwark_module_auth::migrate(s).unwrap();
    accounts::ensure_user_groups(s).unwrap();
    let given = NewPassword::new("given password".to_owned()).unwrap();
    assert_eq!(
        create_first_admin(s, &passwords(), Some(given)).unwrap(),
        FirstAdmin::Created {
            random_password: None
        }
    );
    assert!(verifies(s, "admin", "given password"));
}

/// Who is mailed about the whole site's comments and form answers: editors
/// and above with an address, unless they turned it off; an account an
/// import made starts with it off, and its person turns it on.
fn editors_are_mailed_about_the_site_unless_they_said_no_and_imported_accounts_start_off(
    s: &Store,
) {
    bulwark_module_auth::migrate(s).unwrap();
    accounts::ensure_user_groups(s).unwrap();
    let editors = GroupName::new("editors");
    let ann = accounts::add_user(s, "ann", &editors, &hash("correct horse")).unwrap();
    accounts::set_email(s, "ann", "ann@example.org").unwrap();
    let bob =
        accounts::add_user(s, "bob", &GroupName::new("members"), &hash("correct horse")).unwrap();
    accounts::set_email(s, "bob", "bob@example.org").unwrap();
    let imported = s
        .create_resource(bulwark_store::NewResource::new(
            "person",
            bulwark_store::Props::new().with("title", "Carla"),
        ))
        .unwrap();
    let made = accounts::add_account_for(
        s,
        imported,
        "carla",
        &editors,
        &hash("correct horse"),
        Some("carla@example.org"),
    )
    .unwrap();
    assert!(made);
    let told = |s: &Store| accounts::site_activity_addresses(s, "editors").unwrap();
    assert_eq!(
        told(s),
        ["ann@example.org"],
        "bob is no editor, carla was imported"
    );
    assert!(!accounts::site_activity_mail(s, imported).unwrap());

    accounts::set_site_activity_mail(s, imported, true).unwrap();
    accounts::set_site_activity_mail(s, ann, false).unwrap();
    assert_eq!(told(s), ["carla@example.org"]);
    assert!(accounts::site_activity_mail(s, imported).unwrap());
    assert!(!accounts::site_activity_mail(s, ann).unwrap());
    assert!(
        accounts::site_activity_mail(s, bob).unwrap(),
        "on unless said"
    );
}

on_both_backends!(
    editors_are_mailed_about_the_site_unless_they_said_no_and_imported_accounts_start_off,
    the_default_user_groups_are_created_once_as_a_chain_with_authors_beside_editors,
    a_user_is_a_person_in_a_group_with_a_password_hash,
    an_unknown_group_or_a_taken_name_is_refused_and_leaves_nothing,
    the_first_administrator_is_made_once,
    a_given_first_administrator_password_is_used_and_not_returned,
);

const CANARY: &str = "Plaintext-Canary-7f3a9c";

fn add_canary_user(s: &Store) {
    bulwark_module_auth::migrate(s).unwrap();
    accounts::ensure_user_groups(s).unwrap();
    accounts::add_user(s, "canary", &GroupName::new("members"), &hash(CANARY)).unwrap();
    assert!(verifies(s, "canary", CANARY));
}

fn assert_absent(bytes: &[u8], what: &str) {
    assert!(
        !bytes.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()),
        "password found in {what}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_files_hold_no_plaintext_password() {
    let db = common::sqlite().await;
    common::blocking(&db, add_canary_user).await;
    let Database::Sqlite { path } = &db.config.database else {
        unreachable!()
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(path.parent().unwrap()).unwrap() {
        let p = entry.unwrap().path();
        assert_absent(&std::fs::read(&p).unwrap(), &p.display().to_string());
        checked += 1;
    }
    assert!(checked >= 2, "expected the database and its WAL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_dump_holds_no_plaintext_password() {
    let db = common::postgres("auth_no_plaintext").await;
    common::blocking(&db, add_canary_user).await;
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.sql");
    let d = dump.clone();
    db.store.run(move |s| s.backup(&d)).await.unwrap();
    let bytes = std::fs::read(&dump).unwrap();
    assert!(String::from_utf8_lossy(&bytes).contains("$argon2id$v=19$m=19456,t=2,p=1$"));
    assert_absent(&bytes, "the dump");
}
