//! The JSON API writes, over real HTTP on the starter site: a logged-on editor
//! creates, changes (with `If-Match`), links, finds, restores and deletes
//! resources with their session (and its CSRF token) or an API token of their
//! own; a member may not; `/api/openapi.json` names every endpoint the core
//! module routes.

use crate::accounts;
use crate::common;

use accounts::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_writes_through_the_api_and_a_member_may_not() {
    let s = starter_with("").await;
    let ed = add_user(&s, "ed", "editors").await;
    add_user(&s, "mia", "members").await;
    let eds = session(&s, "ed").await;
    let mia = session(&s, "mia").await;
    let editor = As::Session(&eds);
    let member = As::Session(&mia);

    // Without the CSRF token, a session's write is refused before anything.
    let resp = client()
        .post(url(&s, "/api/rsc"))
        .header("cookie", &eds.cookie)
        .header("content-type", "application/json")
        .body(json!({"category": "article"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);

    // Create: 201, Location, the editor as creator, HTML cleaned.
    let new = json!({"category": "article", "props": {
        "title": "Tom & Jerry", "body": "<p>hello</p><script>alert(1)</script>"}});
    let (status, article, headers) = call(&s, &editor, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 201, "{article}");
    let id = article["id"].as_i64().unwrap();
    assert_eq!(headers["location"], format!("/api/rsc/{id}").as_str());
    assert_eq!(article["creator"], ed.0);
    assert_eq!(article["published"], false);
    assert_eq!(article["props"]["body"], "<p>hello</p>");
    let version = article["version"].as_i64().unwrap();

    // Anonymous and a member may not create.
    let new = json!({"category": "article"});
    let (status, _, _) = call(
        &s,
        &As::Anonymous,
        "POST",
        "/api/rsc",
        Some(new.clone()),
        None,
    )
    .await;
    assert_eq!(status, 401);
    let (status, body, _) = call(&s, &member, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 403, "{body}");
    // Nor may an editor create a category the rules keep for managers.
    let new = json!({"category": "person"});
    let (status, _, _) = call(&s, &editor, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 403);

    // A typo in a field, or the old properties-at-the-top shape, is a 400.
    let path = format!("/api/rsc/{id}");
    let (status, body, _) = call(
        &s,
        &editor,
        "PATCH",
        &path,
        Some(json!({"title": "x"})),
        None,
    )
    .await;
    assert_eq!(status, 400);
    assert!(body["detail"].as_str().unwrap().contains("props"), "{body}");

    // Change with If-Match; a stale version is a 409 and changes nothing.
    let patch = json!({"published": true, "props": {"summary": "A cat and a mouse"}});
    let (status, changed, _) = call(&s, &editor, "PATCH", &path, Some(patch), Some(version)).await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["version"], version + 1);
    assert_eq!(changed["modifier"], ed.0);
    let patch = json!({"props": {"title": "Lost update"}});
    let (status, body, _) = call(&s, &editor, "PATCH", &path, Some(patch), Some(version)).await;
    assert_eq!(status, 409, "{body}");
    let (_, now, _) = call(&s, &As::Anonymous, "GET", &path, None, None).await;
    assert_eq!(now["props"]["title"], "Tom &amp; Jerry");

    // A member sees the published article but may not change or delete it.
    let (status, _, _) = call(
        &s,
        &member,
        "PATCH",
        &path,
        Some(json!({"props": {}})),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, _, _) = call(&s, &member, "DELETE", &path, None, None).await;
    assert_eq!(status, 403);

    // Edges: add (201, then 200 for the same), list, move, remove.
    let mut keywords = Vec::new();
    for word in ["cats", "mice"] {
        let new = json!({"category": "keyword", "published": true, "props": {"title": word}});
        let (status, k, _) = call(&s, &editor, "POST", "/api/rsc", Some(new), None).await;
        assert_eq!(status, 201, "{k}");
        keywords.push(k["id"].as_i64().unwrap());
    }
    let edges = format!("/api/rsc/{id}/edges");
    for k in &keywords {
        let edge = json!({"predicate": "about", "object": k});
        let (status, body, _) = call(&s, &editor, "POST", &edges, Some(edge), None).await;
        assert_eq!(status, 201, "{body}");
    }
    let again = json!({"predicate": "about", "object": keywords[0]});
    let (status, _, _) = call(&s, &editor, "POST", &edges, Some(again), None).await;
    assert_eq!(status, 200);
    let (status, _, _) = call(
        &s,
        &member,
        "POST",
        &edges,
        Some(json!({"predicate": "about", "object": keywords[0]})),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let wrong = json!({"predicate": "about", "object": id});
    let (status, body, _) = call(&s, &editor, "POST", &edges, Some(wrong), None).await;
    assert_eq!(status, 400, "an article is not a keyword: {body}");
    let moved = format!("/api/rsc/{id}/edges/about/{}", keywords[1]);
    let (status, _, _) = call(
        &s,
        &editor,
        "PATCH",
        &moved,
        Some(json!({"position": 0})),
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (_, list, _) = call(&s, &member, "GET", &edges, None, None).await;
    let objects: Vec<i64> = list["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["object"].as_i64().unwrap())
        .collect();
    assert_eq!(objects, vec![keywords[1], keywords[0]]);
    let (status, _, _) = call(&s, &editor, "DELETE", &moved, None, None).await;
    assert_eq!(status, 204);
    let (status, _, _) = call(&s, &editor, "DELETE", &moved, None, None).await;
    assert_eq!(status, 404);

    // Search finds what the caller may see, pages, and refuses nonsense.
    let (status, found, _) = call(
        &s,
        &member,
        "GET",
        "/api/search?cat=article&text=jerry",
        None,
        None,
    )
    .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["total"], 1);
    assert_eq!(found["items"][0]["id"], id);
    let (status, _, _) = call(&s, &member, "GET", "/api/search?sort=colour", None, None).await;
    assert_eq!(status, 400);
    let (status, _, _) = call(&s, &member, "GET", "/api/search?pagelen=0", None, None).await;
    assert_eq!(status, 400);

    // Revisions: only for those who may change the resource; restore one.
    let revisions = format!("/api/rsc/{id}/revisions");
    let (status, _, _) = call(&s, &member, "GET", &revisions, None, None).await;
    assert_eq!(status, 403);
    let (status, list, _) = call(&s, &editor, "GET", &revisions, None, None).await;
    assert_eq!(status, 200);
    let first = list["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["version"] == version)
        .expect("the first version is kept")
        .clone();
    assert_eq!(first["resource"]["published"], false);
    let restore = format!("/api/rsc/{id}/revisions/{}/restore", first["id"]);
    let (status, restored, _) = call(&s, &editor, "POST", &restore, None, None).await;
    assert_eq!(status, 200, "{restored}");
    // The content comes back; the publication stays as it is now.
    assert_eq!(restored["published"], true, "published since, and kept so");
    assert!(restored["props"].get("summary").is_none());
    // Asked for, the publication comes back as the revision had it too.
    let (status, both, _) = call(
        &s,
        &editor,
        "POST",
        &restore,
        Some(json!({"publication": true})),
        None,
    )
    .await;
    assert_eq!(status, 200, "{both}");
    assert_eq!(both["published"], false);
    let (status, refused, _) = call(
        &s,
        &editor,
        "POST",
        &restore,
        Some(json!({"publication": "yes"})),
        None,
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    let elsewhere = format!("/api/rsc/{}/revisions/{}/restore", keywords[0], first["id"]);
    let (status, _, _) = call(&s, &editor, "POST", &elsewhere, None, None).await;
    assert_eq!(status, 404, "a revision of another resource");

    // A draft again: the member no longer sees it at all.
    let (status, _, _) = call(&s, &member, "GET", &path, None, None).await;
    assert_eq!(status, 404);

    // Delete (If-Match checked), then it is gone.
    let (_, current, _) = call(&s, &editor, "GET", &path, None, None).await;
    let v = current["version"].as_i64().unwrap();
    let (status, _, _) = call(&s, &editor, "DELETE", &path, None, Some(v - 1)).await;
    assert_eq!(status, 409);
    let (status, _, _) = call(&s, &editor, "DELETE", &path, None, Some(v)).await;
    assert_eq!(status, 204);
    let (status, _, _) = call(&s, &editor, "GET", &path, None, None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_token_acts_as_its_user_until_revoked() {
    let s = starter_with("").await;
    add_user(&s, "ed", "editors").await;
    let eds = session(&s, "ed").await;
    let editor = As::Session(&eds);

    let (status, _, _) = call(
        &s,
        &As::Anonymous,
        "POST",
        "/api/auth/tokens",
        Some(json!({"label": "x"})),
        None,
    )
    .await;
    assert_eq!(status, 401);
    let (status, made, _) = call(
        &s,
        &editor,
        "POST",
        "/api/auth/tokens",
        Some(json!({"label": "deploy script"})),
        None,
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().unwrap().to_string();
    assert!(token.starts_with("bwt_") && token.len() == 68, "{token}");

    // The token writes without a cookie or CSRF token, as the editor.
    let by_token = As::Token(&token);
    let new = json!({"category": "article", "props": {"title": "From a script"}});
    let (status, article, _) = call(&s, &by_token, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 201, "{article}");
    let (_, who, _) = call(&s, &by_token, "GET", "/api/auth/me", None, None).await;
    assert_eq!(who["groups"], json!(["anonymous", "editors", "members"]));
    // A token cannot make tokens.
    let (status, _, _) = call(
        &s,
        &by_token,
        "POST",
        "/api/auth/tokens",
        Some(json!({"label": "more"})),
        None,
    )
    .await;
    assert_eq!(status, 401);

    // Listed without the secret; revoked, it is refused (not served anonymously).
    let (_, list, _) = call(&s, &editor, "GET", "/api/auth/tokens", None, None).await;
    let listed = &list["tokens"][0];
    assert_eq!(listed["label"], "deploy script");
    assert!(listed.get("token").is_none());
    let revoke = format!("/api/auth/tokens/{}", listed["id"]);
    let (status, _, _) = call(&s, &editor, "DELETE", &revoke, None, None).await;
    assert_eq!(status, 204);
    let (status, body, _) = call(&s, &by_token, "GET", "/api/search", None, None).await;
    assert_eq!(status, 401, "{body}");
    let (status, _, _) = call(&s, &As::Token("bwt_0000"), "GET", "/api/search", None, None).await;
    assert_eq!(status, 401);
    // Even where anyone may ask: a wrong token is not served as anonymous.
    for token in ["bwt_0000", "not-even-ours"] {
        let (status, body, _) =
            call(&s, &As::Token(token), "GET", "/api/auth/me", None, None).await;
        assert_eq!(status, 401, "{token}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_names_every_endpoint_of_every_enabled_module() {
    let s = starter_with("").await;
    let (status, doc, headers) =
        call(&s, &As::Anonymous, "GET", "/api/openapi.json", None, None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    documented.sort();
    // The starter site enables every module `common::modules()` has: each
    // rule of theirs that names an endpoint is in the document.
    let mut declared: Vec<String> = common::modules()
        .iter()
        .flat_map(|m| m.manifest().rules.clone())
        .filter(|r| matches!(r.controller, bulwark_site::Controller::Endpoint { .. }))
        .map(|r| r.pattern.as_str().to_string())
        .collect();
    declared.sort();
    assert_eq!(documented, declared);
    for path in [
        "/api/rsc/{id}",
        "/api/auth/logon",
        "/api/auth/tokens/{id}",
        "/media/upload",
    ] {
        assert!(documented.contains(&path), "{path} is not documented");
    }
    // Every operation says who may call it and answers errors as problems.
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            assert!(op["operationId"].is_string(), "{method} {path}");
            assert!(op["x-access"].is_string(), "{method} {path}");
            assert_eq!(
                op["responses"]["default"]["$ref"], "#/components/responses/Error",
                "{method} {path}"
            );
        }
    }
    let error = &doc["components"]["responses"]["Error"]["content"];
    assert!(error["application/problem+json"].is_object(), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anonymous_write_is_refused_whatever_its_body() {
    let s = starter_with("").await;
    for (method, path, body) in [
        ("POST", "/api/rsc", Some(json!({"no": "such field"}))),
        ("POST", "/api/rsc", None),
        ("PATCH", "/api/rsc/1", Some(json!([1, 2]))),
        ("PUT", "/api/access/rules", Some(json!("not rules"))),
        ("POST", "/api/cache", Some(json!({}))),
    ] {
        let (status, problem, _) = call(&s, &As::Anonymous, method, path, body, None).await;
        assert_eq!(status, 401, "{method} {path}: {problem}");
        assert_eq!(problem["type"], "urn:bulwark:problem:unauthenticated");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managers_store_access_rules_and_every_page_follows_at_once() {
    let s = starter_with("").await;
    add_user(&s, "ed", "editors").await;
    add_user(&s, "max", "managers").await;
    let eds = session(&s, "ed").await;
    let maxs = session(&s, "max").await;
    let (editor, manager) = (As::Session(&eds), As::Session(&maxs));
    let article = store(&s)
        .create_resource(
            bulwark_store::NewResource::new(
                "article",
                bulwark_store::Props::new().with("title", "Open to all"),
            )
            .published(true),
        )
        .unwrap();
    let page = format!("/page/{article}");
    assert_eq!(
        get(&s, &page, None).await.0,
        200,
        "cached for anonymous now"
    );

    let (status, now, _) = call(&s, &manager, "GET", "/api/access/rules", None, None).await;
    assert_eq!(status, 200);
    assert_eq!(now["stored"], false);
    assert!(now["rules"].as_array().unwrap().len() >= 4, "{now}");
    // Nobody logged on: 401; an editor: 403.
    for (who, expected) in [(&As::Anonymous, 401), (&editor, 403)] {
        let (status, _, _) = call(&s, who, "GET", "/api/access/rules", None, None).await;
        assert_eq!(status, expected);
    }

    // Members only from now on: the anonymous visitor loses the page at once.
    let members_only = json!({"rules": [
        {"group": "members", "actions": ["view"], "content_group": "default"},
        {"group": "managers", "actions": ["view", "insert", "update", "delete", "link"]},
    ]});
    let (status, body, _) = call(
        &s,
        &editor,
        "PUT",
        "/api/access/rules",
        Some(members_only.clone()),
        None,
    )
    .await;
    assert_eq!(status, 403, "an editor may not change rules: {body}");
    let (status, stored, _) = call(
        &s,
        &manager,
        "PUT",
        "/api/access/rules",
        Some(members_only),
        None,
    )
    .await;
    assert_eq!(status, 200, "{stored}");
    assert_eq!(stored["stored"], true);
    assert_eq!(get(&s, &page, None).await.0, 404);
    assert_eq!(get(&s, &page, Some(&eds.cookie)).await.0, 200);
    let kept = store(&s).config_value("access.rules").unwrap().unwrap();
    assert!(kept.contains("\"members\""), "{kept}");

    // Mistakes are named and change nothing.
    for (bad, says) in [
        (
            json!({"rules": [{"group": "members", "actions": ["read"]}]}),
            "rules[0].actions",
        ),
        (
            json!({"rules": [{"group": "", "actions": ["view"]}]}),
            "rules[0].group",
        ),
        (
            json!({"rules": [{"group": "members", "actions": ["view"], "categories": ["nope"]}]}),
            "nope",
        ),
        (
            json!({"rules": [{"group": "members", "actions": ["view"], "content_group": "staff"}]}),
            "staff",
        ),
    ] {
        let (status, body, _) =
            call(&s, &manager, "PUT", "/api/access/rules", Some(bad), None).await;
        assert_eq!(status, 400, "{body}");
        assert!(body["detail"].as_str().unwrap().contains(says), "{body}");
    }
    assert_eq!(get(&s, &page, None).await.0, 404);

    // Forgotten: the site's own rules again.
    let (status, back, _) = call(&s, &manager, "DELETE", "/api/access/rules", None, None).await;
    assert_eq!(status, 200);
    assert_eq!(back["stored"], false);
    assert_eq!(get(&s, &page, None).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_read_carries_its_version_as_etag_and_a_revisit_with_it_gets_304() {
    let s = starter_with("").await;
    add_user(&s, "ed", "editors").await;
    let eds = session(&s, "ed").await;
    let editor = As::Session(&eds);
    let new = json!({"category": "article", "props": {"title": "Tagged"}});
    let (status, article, _) = call(&s, &editor, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 201, "{article}");
    let id = article["id"].as_i64().unwrap();
    let path = format!("/api/rsc/{id}");
    let (status, read, headers) = call(&s, &editor, "GET", &path, None, None).await;
    assert_eq!(status, 200, "{read}");
    let etag = headers["etag"].to_str().unwrap().to_string();
    assert_eq!(etag, format!("\"{}\"", read["version"]));
    let revisit = |tag: String| {
        client()
            .get(url(&s, &path))
            .header("cookie", &eds.cookie)
            .header("if-none-match", tag)
            .send()
    };
    let resp = revisit(etag.clone()).await.unwrap();
    assert_eq!(resp.status(), 304, "the client's copy is current");
    assert_eq!(resp.headers()["etag"], etag.as_str());
    assert!(resp.bytes().await.unwrap().is_empty());
    // Changed: the old tag gets the new version whole.
    let patch = json!({"props": {"title": "Retagged"}});
    let (status, patched, _) = call(&s, &editor, "PATCH", &path, Some(patch), None).await;
    assert_eq!(status, 200, "{patched}");
    let resp = revisit(etag.clone()).await.unwrap();
    assert_eq!(resp.status(), 200, "a changed resource is sent whole");
    assert_eq!(
        resp.headers()["etag"],
        format!("\"{}\"", patched["version"]).as_str()
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_json_answer_is_compressed_when_the_client_takes_it() {
    use std::io::Read;
    let s = starter_with("").await;
    add_user(&s, "ed", "editors").await;
    let eds = session(&s, "ed").await;
    let editor = As::Session(&eds);
    let body = "Words that repeat compress well. ".repeat(100);
    let new = json!({"category": "article", "props": {"title": "Long", "body": body}});
    let (status, article, _) = call(&s, &editor, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 201, "{article}");
    let path = format!("/api/rsc/{}", article["id"]);
    // A client that decodes nothing itself, to see the bytes as sent.
    let raw = reqwest::Client::builder()
        .no_gzip()
        .no_brotli()
        .build()
        .unwrap();
    let read = |encoding: &'static str| {
        raw.get(url(&s, &path))
            .header("cookie", &eds.cookie)
            .header("accept-encoding", encoding)
            .send()
    };

    let plain = read("identity").await.unwrap();
    assert_eq!(plain.headers().get("content-encoding"), None);
    let plain: serde_json::Value = serde_json::from_slice(&plain.bytes().await.unwrap()).unwrap();
    assert_eq!(plain["props"]["body"], body.as_str());

    let gzipped = read("gzip").await.unwrap();
    assert_eq!(gzipped.status(), 200);
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    assert_eq!(gzipped.headers()["vary"], "Accept-Encoding");
    let sent = gzipped.bytes().await.unwrap();
    assert!(sent.len() < body.len() / 4, "{} bytes sent", sent.len());
    let mut text = String::new();
    flate2::read::GzDecoder::new(&sent[..])
        .read_to_string(&mut text)
        .unwrap();
    let decoded: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(decoded, plain, "the same answer, compressed");

    let brotli = read("br").await.unwrap();
    assert_eq!(brotli.headers()["content-encoding"], "br");
    let sent = brotli.bytes().await.unwrap();
    let mut text = String::new();
    brotli::Decompressor::new(&sent[..], 4096)
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        plain
    );
    s.shutdown().await;
}
