//! The JSON API the admin's site screens use, over real HTTP on the starter
//! site: the category tree and predicates, the site's settings, purging the
//! caches, backups, and the users list, each with who may and who may not. The
//! data model and the settings run on PostgreSQL too.

use crate::accounts;
use crate::common;

use std::sync::atomic::Ordering;

use accounts::*;
use common::TestServer;
use serde_json::{Value, json};

fn names_under<'a>(tree: &'a Value, parent: &str) -> Vec<&'a str> {
    tree["categories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["parent"] == parent)
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

async fn categories_and_predicates(s: &TestServer) {
    add_user(s, "ed", "editors").await;
    add_user(s, "max", "managers").await;
    let (eds, maxs) = (session(s, "ed").await, session(s, "max").await);
    let (editor, manager) = (As::Session(&eds), As::Session(&maxs));

    // Editors read the tree; it lists parents before children.
    let (status, tree, _) = call(s, &editor, "GET", "/api/categories", None, None).await;
    assert_eq!(status, 200, "{tree}");
    let cats = tree["categories"].as_array().unwrap();
    let at = |name: &str| cats.iter().position(|c| c["name"] == name).unwrap();
    assert!(at("text") < at("news"), "{tree}");
    assert_eq!(cats[at("news")]["parent"], "text");
    assert_eq!(
        cats[at("news")]["may_change"],
        false,
        "editors may not move"
    );
    let (status, _, _) = call(s, &As::Anonymous, "GET", "/api/categories", None, None).await;
    assert_eq!(status, 200, "anyone reads the categories they may see");

    // An editor may not move a category; a manager may, with a place among siblings.
    let to_event = json!({"parent": "event"});
    let (status, body, _) = call(
        s,
        &editor,
        "PATCH",
        "/api/categories/news",
        Some(to_event.clone()),
        None,
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let (status, tree, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/categories/news",
        Some(to_event),
        None,
    )
    .await;
    assert_eq!(status, 200, "{tree}");
    assert!(names_under(&tree, "event").contains(&"news"), "{tree}");
    assert!(!names_under(&tree, "text").contains(&"news"), "{tree}");
    let (status, tree, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/categories/news",
        Some(json!({"parent": "text", "position": 0})),
        None,
    )
    .await;
    assert_eq!(status, 200, "{tree}");
    assert_eq!(names_under(&tree, "text")[0], "news", "{tree}");
    let last = names_under(&tree, "text").len();
    let (status, tree, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/categories/news",
        Some(json!({"parent": "text", "position": last + 5})),
        None,
    )
    .await;
    assert_eq!(status, 200, "{tree}");
    assert_eq!(
        names_under(&tree, "text").last(),
        Some(&"news"),
        "past the end: last"
    );

    // A cycle is refused with a message and nothing moves; so is nonsense.
    let (status, body, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/categories/text",
        Some(json!({"parent": "news"})),
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("cycle"), "{body}");
    let (_, tree, _) = call(s, &manager, "GET", "/api/categories", None, None).await;
    assert_eq!(
        tree["categories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "news")
            .unwrap()["parent"],
        "text"
    );
    for (path, body, expected) in [
        ("/api/categories/nosuch", json!({"parent": null}), 404),
        ("/api/categories/text", json!({"parent": "nosuch"}), 400),
        (
            "/api/categories/text",
            json!({"parent": null, "colour": "red"}),
            400,
        ),
    ] {
        let (status, answer, _) = call(s, &manager, "PATCH", path, Some(body.clone()), None).await;
        assert_eq!(status, expected, "{path} {body}: {answer}");
        assert!(answer["detail"].is_string(), "{answer}");
    }

    // A new category, where it was asked for.
    let new = json!({"name": "recipe", "title": "Recipe", "parent": "text"});
    let (status, _, _) = call(
        s,
        &editor,
        "POST",
        "/api/categories",
        Some(new.clone()),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, made, _) = call(
        s,
        &manager,
        "POST",
        "/api/categories",
        Some(new.clone()),
        None,
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let (status, again, _) = call(s, &manager, "POST", "/api/categories", Some(new), None).await;
    assert_eq!(status, 400, "a second recipe: {again}");
    let (_, tree, _) = call(s, &manager, "GET", "/api/categories", None, None).await;
    assert!(names_under(&tree, "text").contains(&"recipe"));

    // Predicates: the categories they connect.
    let (status, list, _) = call(s, &editor, "GET", "/api/predicates", None, None).await;
    assert_eq!(status, 200, "{list}");
    assert!(
        list["predicates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "author"),
        "{list}"
    );
    let new =
        json!({"name": "ingredient", "title": "Ingredient", "subjects": ["recipe"], "objects": []});
    let (status, _, _) = call(
        s,
        &editor,
        "POST",
        "/api/predicates",
        Some(new.clone()),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, made, _) = call(s, &manager, "POST", "/api/predicates", Some(new), None).await;
    assert_eq!(status, 201, "{made}");
    let change = json!({"subjects": ["recipe", "article"], "objects": ["text"]});
    let (status, _, _) = call(
        s,
        &editor,
        "PATCH",
        "/api/predicates/ingredient",
        Some(change.clone()),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, list, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/predicates/ingredient",
        Some(change),
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    let ingredient = list["predicates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "ingredient")
        .unwrap()
        .clone();
    let mut subjects: Vec<&str> = ingredient["subjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    subjects.sort();
    assert_eq!(subjects, ["article", "recipe"]);
    assert_eq!(ingredient["objects"], json!(["text"]));
    let (status, body, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/predicates/ingredient",
        Some(json!({"subjects": ["nosuch"], "objects": []})),
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, _, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/predicates/text",
        Some(json!({"subjects": [], "objects": []})),
        None,
    )
    .await;
    assert_eq!(status, 404, "text is a category, not a predicate");
}

async fn settings(s: &TestServer) {
    add_user(s, "ed2", "editors").await;
    add_user(s, "max2", "managers").await;
    let (eds, maxs) = (session(s, "ed2").await, session(s, "max2").await);
    let (editor, manager) = (As::Session(&eds), As::Session(&maxs));

    // Nobody logged on: 401; an editor: 403.
    for (who, expected) in [(&As::Anonymous, 401), (&editor, 403)] {
        let (status, _, _) = call(s, who, "GET", "/api/config", None, None).await;
        assert_eq!(status, expected);
        let (status, _, _) = call(
            s,
            who,
            "PATCH",
            "/api/config",
            Some(json!({"settings": {"a": "b"}})),
            None,
        )
        .await;
        assert_eq!(status, expected);
    }
    let change = json!({"settings": {"site_title": "Tea Room", "motto": "steep"}});
    let (status, now, _) = call(s, &manager, "PATCH", "/api/config", Some(change), None).await;
    assert_eq!(status, 200, "{now}");
    let value = |now: &Value, key: &str| {
        now["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["key"] == key)
            .map(|s| s["value"].clone())
    };
    assert_eq!(value(&now, "site_title"), Some(json!("Tea Room")));
    // The pages that read a setting follow at once (the admin's title does).
    let (status, page) = get(s, "/admin", Some(&maxs.cookie)).await;
    assert_eq!(status, 200);
    assert!(page.contains("Tea Room</title>"), "{page}");
    let (_, now, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/config",
        Some(json!({"settings": {"motto": null}})),
        None,
    )
    .await;
    assert_eq!(value(&now, "motto"), None, "removed: {now}");
    assert_eq!(value(&now, "site_title"), Some(json!("Tea Room")));
    let (status, body, _) = call(
        s,
        &manager,
        "PATCH",
        "/api/config",
        Some(json!({"settings": {"access.rules": "[]", "x": "y"}})),
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (_, now, _) = call(s, &manager, "GET", "/api/config", None, None).await;
    assert_eq!(value(&now, "x"), None, "a refused change changes nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_model_is_changed_by_managers_only_sqlite() {
    let s = starter_with("").await;
    categories_and_predicates(&s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_model_is_changed_by_managers_only_postgres() {
    let s = starter_on_postgres("site_api_model").await;
    categories_and_predicates(&s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_are_for_managers_and_pages_follow_them_sqlite() {
    let s = starter_with("").await;
    settings(&s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_are_for_managers_and_pages_follow_them_postgres() {
    let s = starter_on_postgres("site_api_settings").await;
    settings(&s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editors_purge_a_page_or_a_resource_and_managers_the_whole_site() {
    let s = starter_with("").await;
    add_user(&s, "ed", "editors").await;
    add_user(&s, "mia", "members").await;
    add_user(&s, "max", "managers").await;
    let (eds, mia, maxs) = (
        session(&s, "ed").await,
        session(&s, "mia").await,
        session(&s, "max").await,
    );
    let (editor, member, manager) = (As::Session(&eds), As::Session(&mia), As::Session(&maxs));
    let renders = || s.models["default"].renders.load(Ordering::Relaxed);
    let visit = |path: &'static str| {
        let s = &s;
        async move { assert_eq!(get(s, path, None).await.0, 200, "{path}") }
    };

    visit("/about").await;
    let cached = renders();
    visit("/about").await;
    assert_eq!(
        renders(),
        cached,
        "the second visit came from the page cache"
    );

    let (status, _, _) = call(
        &s,
        &member,
        "POST",
        "/api/cache",
        Some(json!({"url": "/about"})),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, body, _) = call(
        &s,
        &editor,
        "POST",
        "/api/cache",
        Some(json!({"url": "/about"})),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    visit("/about").await;
    assert_eq!(renders(), cached + 1, "rendered again after the purge");
    visit("/about").await;
    assert_eq!(renders(), cached + 1, "and cached again");

    // Purging a resource removes every page that showed it.
    let article = store(&s)
        .create_resource(
            bulwark_store::NewResource::new(
                "article",
                bulwark_store::Props::new().with("title", "Purge me"),
            )
            .published(true),
        )
        .unwrap();
    let page = format!("/page/{article}");
    assert_eq!(get(&s, &page, None).await.0, 200);
    let before = renders();
    assert_eq!(get(&s, &page, None).await.0, 200);
    assert_eq!(renders(), before, "cached");
    let (status, body, _) = call(
        &s,
        &editor,
        "POST",
        "/api/cache",
        Some(json!({"resource": article.0})),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(get(&s, &page, None).await.0, 200);
    assert_eq!(renders(), before + 1, "rendered again after the purge");
    visit("/about").await;
    let cached = renders();

    // The whole site: managers only.
    let (status, _, _) = call(
        &s,
        &editor,
        "POST",
        "/api/cache",
        Some(json!({"all": true})),
        None,
    )
    .await;
    assert_eq!(status, 403);
    visit("/about").await;
    assert_eq!(renders(), cached, "a refused flush flushed nothing");
    let (status, _, _) = call(
        &s,
        &manager,
        "POST",
        "/api/cache",
        Some(json!({"all": true})),
        None,
    )
    .await;
    assert_eq!(status, 200);
    visit("/about").await;
    assert_eq!(renders(), cached + 1);

    for bad in [
        json!({}),
        json!({"url": "/about", "all": true}),
        json!({"url": "about"}),
        json!({"url": "http://[bad"}),
        json!({"resource": -1}),
        json!({"everything": true}),
    ] {
        let (status, body, _) =
            call(&s, &editor, "POST", "/api/cache", Some(bad.clone()), None).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn administrators_make_download_and_restore_backups() {
    let s = starter_with("").await;
    add_user(&s, "root", "administrators").await;
    add_user(&s, "max", "managers").await;
    let (roots, maxs) = (session(&s, "root").await, session(&s, "max").await);
    let (admin, manager) = (As::Session(&roots), As::Session(&maxs));

    for (method, path) in [("GET", "/api/backups"), ("POST", "/api/backups")] {
        let (status, _, _) = call(&s, &manager, method, path, None, None).await;
        assert_eq!(status, 403, "{method} {path}: backups hold password hashes");
    }
    let (status, list, _) = call(&s, &admin, "GET", "/api/backups", None, None).await;
    assert_eq!((status, list), (200, json!({"backups": []})));
    let (status, made, _) = call(&s, &admin, "POST", "/api/backups", None, None).await;
    assert_eq!(status, 201, "{made}");
    let name = made["name"].as_str().unwrap().to_owned();
    assert!(
        name.starts_with("default-") && name.ends_with(".tar.gz"),
        "{name}"
    );
    assert_eq!(
        (made["encrypted"].clone(), made["scheduled"].clone()),
        (json!(false), json!(false))
    );
    let (_, list, _) = call(&s, &admin, "GET", "/api/backups", None, None).await;
    assert_eq!(list["backups"][0]["name"], name.as_str());
    assert!(s.sites().join("default/data/backups").join(&name).is_file());

    // The download is the archive (gzip), as an attachment.
    let download = |who: &str| {
        client()
            .get(url(&s, &format!("/api/backups/{name}")))
            .header("cookie", who.to_owned())
    };
    let resp = download(&roots.cookie).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-disposition"],
        format!("attachment; filename=\"{name}\"").as_str()
    );
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let bytes = resp.bytes().await.unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
    assert_eq!(download(&maxs.cookie).send().await.unwrap().status(), 403);
    for bad in [
        "nosuch.tar.gz",
        "..%2Fsite.db",
        "%2E%2E",
        "backup.sqlite",
        "..%5Csite.db",
    ] {
        let resp = client()
            .get(url(&s, &format!("/api/backups/{bad}")))
            .header("cookie", &roots.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404, "{bad}");
    }

    // What was made after the backup is gone once it is restored; the
    // confirmation is the site's name.
    let new =
        json!({"category": "article", "published": true, "props": {"title": "After the backup"}});
    let (status, after, _) = call(&s, &admin, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 201);
    let page = format!("/page/{}", after["id"]);
    assert_eq!(get(&s, &page, None).await.0, 200, "and now cached");
    let restore = format!("/api/backups/{name}/restore");
    let (status, body, _) = call(
        &s,
        &admin,
        "POST",
        &restore,
        Some(json!({"confirm": "yes"})),
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("\"default\""),
        "{body}"
    );
    let (status, _, _) = call(
        &s,
        &manager,
        "POST",
        &restore,
        Some(json!({"confirm": "default"})),
        None,
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(get(&s, &page, None).await.0, 200, "nothing restored yet");
    let (status, body, _) = call(
        &s,
        &admin,
        "POST",
        &restore,
        Some(json!({"confirm": "default"})),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        get(&s, &page, None).await.0,
        404,
        "gone, not served from a cache"
    );
    // The site goes on: the administrator's session (older than the backup) still works.
    let (status, _, _) = call(&s, &admin, "GET", "/api/backups", None, None).await;
    assert_eq!(status, 200);

    // A file that is not a backup of this site is refused and changes nothing.
    std::fs::write(
        s.sites().join("default/data/backups/bogus.tar.gz"),
        b"not an archive",
    )
    .unwrap();
    let (status, body, _) = call(
        &s,
        &admin,
        "POST",
        "/api/backups/bogus.tar.gz/restore",
        Some(json!({"confirm": "default"})),
        None,
    )
    .await;
    assert!(status >= 400, "{status} {body}");
    assert_eq!(get(&s, "/about", None).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgresql_site_makes_backups_and_restores_them_while_serving() {
    let s = starter_on_postgres("site_api_backup").await;
    add_user(&s, "root", "administrators").await;
    let roots = session(&s, "root").await;
    let admin = As::Session(&roots);
    let (status, made, _) = call(&s, &admin, "POST", "/api/backups", None, None).await;
    assert_eq!(status, 201, "{made}");
    let name = made["name"].as_str().unwrap().to_owned();
    assert!(name.ends_with(".tar.gz"), "{name}");
    let new =
        json!({"category": "article", "published": true, "props": {"title": "After the backup"}});
    let (status, after, _) = call(&s, &admin, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 201);
    let page = format!("/page/{}", after["id"]);
    assert_eq!(get(&s, &page, None).await.0, 200, "and now cached");
    let (status, body, _) = call(
        &s,
        &admin,
        "POST",
        &format!("/api/backups/{name}/restore"),
        Some(json!({"confirm": "default"})),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        get(&s, &page, None).await.0,
        404,
        "gone, not served from a cache"
    );
    let (status, _, _) = call(&s, &admin, "GET", "/api/backups", None, None).await;
    assert_eq!(
        status, 200,
        "the session from before the backup still works"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managers_add_users_and_give_only_the_groups_they_are_in() {
    let s = starter_with("").await;
    add_user(&s, "ed", "editors").await;
    add_user(&s, "max", "managers").await;
    let (eds, maxs) = (session(&s, "ed").await, session(&s, "max").await);
    let (editor, manager) = (As::Session(&eds), As::Session(&maxs));

    let (status, _, _) = call(&s, &editor, "GET", "/api/auth/users", None, None).await;
    assert_eq!(status, 403);
    let (status, list, _) = call(&s, &manager, "GET", "/api/auth/users", None, None).await;
    assert_eq!(status, 200, "{list}");
    assert!(list.to_string().contains("\"ed\""), "{list}");

    let new =
        |name: &str, group: &str| json!({"username": name, "password": PASSWORD, "group": group});
    let (status, _, _) = call(
        &s,
        &editor,
        "POST",
        "/api/auth/users",
        Some(new("x", "members")),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, made, _) = call(
        &s,
        &manager,
        "POST",
        "/api/auth/users",
        Some(new("ann", "editors")),
        None,
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let ann = session(&s, "ann").await;
    let groups = me(&s, &ann.cookie).await["groups"].clone();
    assert!(
        groups.as_array().unwrap().contains(&json!("editors")),
        "{groups}"
    );
    let (status, body, _) = call(
        &s,
        &manager,
        "POST",
        "/api/auth/users",
        Some(new("bob", "administrators")),
        None,
    )
    .await;
    assert_eq!(status, 403, "a manager makes no administrators: {body}");
    let (status, body, _) = call(
        &s,
        &manager,
        "POST",
        "/api/auth/users",
        Some(new("ann", "members")),
        None,
    )
    .await;
    assert_eq!(status, 400, "a second ann: {body}");
    let (status, body, _) = call(
        &s,
        &manager,
        "POST",
        "/api/auth/users",
        Some(json!({"username": "cy", "password": "short", "group": "members"})),
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");

    let (status, body, _) = call(
        &s,
        &manager,
        "POST",
        "/api/auth/users",
        Some(json!(["cy", PASSWORD, "members", null])),
        None,
    )
    .await;
    assert_eq!(status, 400, "an array is not a user: {body}");
    for name in ["", "two words", &"x".repeat(81)] {
        let (status, body, _) = call(
            &s,
            &manager,
            "POST",
            "/api/auth/users",
            Some(new(name, "members")),
            None,
        )
        .await;
        assert_eq!(status, 400, "{name:?}: {body}");
    }
    // The same rule on the membership edges: a manager may put ann in the
    // managers, not in the administrators; an editor may not even see them.
    let group = |name: &str| {
        store(&s)
            .resource_by_name(&format!("acl_user_group_{name}"))
            .unwrap()
            .unwrap()
            .id
            .0
    };
    let ann_id = made["person"].as_i64().unwrap();
    let edges = format!("/api/rsc/{ann_id}/edges");
    let membership = |name: &str| Some(json!({"predicate": "hasusergroup", "object": group(name)}));
    let (status, body, _) = call(
        &s,
        &manager,
        "POST",
        &edges,
        membership("administrators"),
        None,
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("administrators"),
        "{body}"
    );
    let (status, body, _) = call(&s, &manager, "POST", &edges, membership("managers"), None).await;
    assert_eq!(status, 201, "{body}");
    let ed_id = me(&s, &eds.cookie).await["user"].as_i64().unwrap();
    let (status, body, _) = call(
        &s,
        &editor,
        "POST",
        &format!("/api/rsc/{ed_id}/edges"),
        membership("managers"),
        None,
    )
    .await;
    assert_eq!(status, 404, "{body}");
    // Only administrators change the group tree.
    let (status, body, _) = call(
        &s,
        &manager,
        "POST",
        &format!("/api/rsc/{}/edges", group("editors")),
        Some(json!({"predicate": "hasparentgroup", "object": group("administrators")})),
        None,
    )
    .await;
    assert_eq!(status, 403, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_views_the_site_as_one_of_their_groups_everywhere_but_the_admin() {
    let s = starter_with("").await;
    add_user(&s, "ed", "editors").await;
    add_user(&s, "max", "managers").await;
    let (eds, maxs) = (session(&s, "ed").await, session(&s, "max").await);
    let mut members_only = bulwark_store::NewResource::new(
        "article",
        bulwark_store::Props::new().with("title", "For members"),
    )
    .published(true);
    members_only.visibility = bulwark_store::Visibility::Members;
    let members_only = store(&s).create_resource(members_only).unwrap();
    let draft = store(&s)
        .create_resource(bulwark_store::NewResource::new(
            "article",
            bulwark_store::Props::new().with("title", "Draft"),
        ))
        .unwrap();
    let page = |id: bulwark_store::ResourceId| format!("/page/{id}");
    let api = |id: bulwark_store::ResourceId| format!("/api/rsc/{id}");
    let as_group =
        |session: &Session, group: &str| format!("{}; bulwark_view_as={group}", session.cookie);

    // As themselves, a manager sees both the members' article and the draft,
    // and no bar saying they view the site as anyone else.
    for id in [members_only, draft] {
        let (status, body) = get(&s, &page(id), Some(&maxs.cookie)).await;
        assert_eq!(status, 200);
        assert!(!body.contains("viewing-as"), "{body}");
    }
    // As an anonymous visitor: neither, on pages and in the API alike.
    let anonymous = as_group(&maxs, "anonymous");
    for id in [members_only, draft] {
        assert_eq!(get(&s, &page(id), Some(&anonymous)).await.0, 404, "{id}");
        let resp = client()
            .get(url(&s, &api(id)))
            .header("cookie", &anonymous)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404, "{id}");
    }
    // As a member: the members' article, not the draft; search agrees.
    let members = as_group(&maxs, "members");
    let (status, body) = get(&s, &page(members_only), Some(&members)).await;
    assert_eq!(status, 200);
    assert!(
        body.contains("Viewing the site as the group <strong>members</strong>"),
        "every page says so: {body}"
    );
    assert_eq!(get(&s, &page(draft), Some(&members)).await.0, 404);
    let found = client()
        .get(url(&s, "/api/search?text=Draft"))
        .header("cookie", &members)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!found.contains(&format!("\"id\":{draft}")), "{found}");
    // A change is the manager's own, not the group's: saving the draft the
    // group cannot see works.
    let resp = client()
        .patch(url(&s, &api(draft)))
        .header("cookie", &anonymous)
        .header("x-csrf-token", &maxs.csrf)
        .header("content-type", "application/json")
        .body(json!({"props": {"title": "Draft, saved"}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    // The admin and the accounts API stay the manager's own.
    assert_eq!(get(&s, "/admin", Some(&anonymous)).await.0, 200);
    let groups = me(&s, &anonymous).await["groups"].clone();
    assert!(
        groups.as_array().unwrap().contains(&json!("managers")),
        "{groups}"
    );
    // Only managers, and only for a group they are in: an editor's cookie
    // changes nothing, nor does a manager's for the administrators.
    let editor_as_anonymous = as_group(&eds, "anonymous");
    assert_eq!(
        get(&s, &page(members_only), Some(&editor_as_anonymous))
            .await
            .0,
        200
    );
    for ignored in ["administrators", "no such group", "../x", ""] {
        let cookie = as_group(&maxs, ignored);
        assert_eq!(
            get(&s, &page(draft), Some(&cookie)).await.0,
            200,
            "{ignored:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn administrators_turn_modules_on_and_off_and_the_site_follows() {
    let s = starter_with("").await;
    add_user(&s, "root", "administrators").await;
    add_user(&s, "max", "managers").await;
    let (roots, maxs) = (session(&s, "root").await, session(&s, "max").await);
    let (admin, manager) = (As::Session(&roots), As::Session(&maxs));
    let file = s.sites().join("default/site.toml");
    let enabled = |list: &Value| -> Vec<String> {
        list["modules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["enabled"] == true)
            .map(|m| m["name"].as_str().unwrap().to_owned())
            .collect()
    };

    let (status, _, _) = call(&s, &manager, "GET", "/api/modules", None, None).await;
    assert_eq!(status, 403);
    let (status, list, _) = call(&s, &admin, "GET", "/api/modules", None, None).await;
    assert_eq!(status, 200, "{list}");
    let now = enabled(&list);
    for name in ["core", "seo", "push", "auth", "mail", "admin"] {
        assert!(now.iter().any(|n| n == name), "{name} in {now:?}");
    }
    assert_eq!(get(&s, "/sitemap.xml", None).await.0, 200);

    // Off: the site is loaded again without it, and site.toml keeps the rest.
    let without_seo = json!({"enabled": ["push", "auth", "mail", "admin"]});
    let (status, _, _) = call(
        &s,
        &manager,
        "PUT",
        "/api/modules",
        Some(without_seo.clone()),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, list, _) = call(&s, &admin, "PUT", "/api/modules", Some(without_seo), None).await;
    assert_eq!(status, 200, "{list}");
    assert!(!enabled(&list).contains(&"seo".to_owned()), "{list}");
    assert_eq!(get(&s, "/sitemap.xml", None).await.0, 404);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(r#"modules = ["push", "auth", "mail", "admin"]"#),
        "{text}"
    );
    assert!(text.contains("demo_content = true"), "{text}");
    assert!(text.contains("# "), "comments kept: {text}");

    // Lists that would not work change nothing.
    for (bad, why) in [
        (
            json!({"enabled": ["push", "auth", "mail", "admin", "nosuch"]}),
            "nosuch",
        ),
        (json!({"enabled": ["push", "mail", "admin"]}), "auth"),
        (json!({"enabled": ["push", "auth", "mail"]}), "admin"),
        (json!({"enabled": "seo"}), ""),
    ] {
        let (status, body, _) =
            call(&s, &admin, "PUT", "/api/modules", Some(bad.clone()), None).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(
            body["detail"].as_str().unwrap().contains(why),
            "{bad}: {body}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "untouched");

    // And on again.
    let all = json!({"enabled": ["seo", "push", "auth", "mail", "admin"]});
    let (status, list, _) = call(&s, &admin, "PUT", "/api/modules", Some(all), None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(get(&s, "/sitemap.xml", None).await.0, 200);
}
