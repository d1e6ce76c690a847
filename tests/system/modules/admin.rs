//! The admin's frame over real HTTP on the starter site: an anonymous visitor
//! is sent to log on and back, a member is refused, an editor gets the
//! dashboard and the resource list (drafts they may change included), and
//! every module can add to the menu (the `AdminMenu` fold).

use crate::accounts;
use crate::common;
use crate::rights_matrix;

use std::sync::{Arc, OnceLock};

use accounts::*;
use bulwark_store::{NewResource, Props};
use bulwark_web::events::{AdminMenu, MenuItem};

/// A module that adds "Reports" to the admin's menu, as any module may.
struct Extra;

impl bulwark_web::Module for Extra {
    fn manifest(&self) -> &Arc<bulwark_site::ModuleManifest> {
        static MANIFEST: OnceLock<Arc<bulwark_site::ModuleManifest>> = OnceLock::new();
        MANIFEST.get_or_init(|| {
            Arc::new(bulwark_site::ModuleManifest::new("extra", 900, &[], None, None, "").unwrap())
        })
    }

    fn setup(&self, site: &mut bulwark_web::SiteSetup<'_>) -> Result<(), bulwark_web::ModuleError> {
        site.observers()
            .on_fold(500, |_: &AdminMenu, mut items: Vec<MenuItem>| {
                items.push(MenuItem {
                    label: "Reports".into(),
                    url: "/reports".into(),
                    parent: None,
                    screen: None,
                });
                items
            });
        Ok(())
    }
}

async fn admin_site() -> common::TestServer {
    let mut files = common::starter_site();
    for (path, text) in files.iter_mut() {
        if path == "default/site.toml" {
            *text = text.replacen(
                r#"modules = ["seo", "push", "auth", "mail", "admin", "media", "menu", "redirects", "comments", "forms", "webhooks", "import", "metrics", "backup"]"#,
                r#"modules = ["seo", "push", "auth", "mail", "admin", "media", "menu", "redirects", "comments", "forms", "webhooks", "extra"]"#,
                1,
            );
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let mut modules = common::modules();
    modules.push(Arc::new(Extra));
    common::start_with_modules(&files, |_| {}, modules).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_editors_and_above_enter_and_see_what_they_may_change() {
    let s = admin_site().await;
    add_user(&s, "mia", "members").await;
    add_user(&s, "ed", "editors").await;
    let draft = store(&s)
        .create_resource(NewResource::new(
            "article",
            Props::new().with("title", "Quokka draft"),
        ))
        .unwrap();

    // Anonymous: to the logon page, and back here afterwards.
    let resp = client()
        .get(url(&s, "/admin/resources?text=quokka"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    assert_eq!(
        resp.headers()["location"],
        "/logon?next=/admin/resources%3Ftext%3Dquokka"
    );
    // A member may not enter.
    let mia = logon(&s, "mia").await;
    assert_eq!(get(&s, "/admin", Some(&mia)).await.0, 403);

    // An editor gets the dashboard with the menu, this module's items and
    // the one another module folded in.
    let ed = logon(&s, "ed").await;
    let (status, page) = get(&s, "/admin", Some(&ed)).await;
    assert_eq!(status, 200, "{page}");
    // (Autoescaping writes `/` in attributes as `&#x2f;`.)
    for (label, path) in [
        ("Dashboard", "/admin"),
        ("Resources", "/admin/resources"),
        ("Media", "/admin/media"),
        ("Reports", "/reports"),
    ] {
        let link = format!(r#"href="{}""#, path.replace('/', "&#x2f;"));
        assert!(
            page.contains(&link) && page.contains(label),
            "{label} in {page}"
        );
    }
    assert!(page.contains("Quokka draft"), "recently changed: {page}");
    // The list finds the draft someone else made: editors may change it.
    let (status, list) = get(&s, "/admin/resources?text=quokka&cat=article", Some(&ed)).await;
    assert_eq!(status, 200);
    assert!(
        list.contains("Quokka draft") && list.contains("draft</span>"),
        "{list}"
    );
    assert!(list.contains(&format!("/page/{draft}")), "{list}");
    // A category that does not exist and a page out of range are no errors.
    let (status, _) = get(&s, "/admin/resources?cat=nope&page=abc&sort=x", Some(&ed)).await;
    assert_eq!(status, 200);

    // The editor: the form at the version it was opened, the session's CSRF
    // token for the script; read-only for what the rules keep from editors.
    let (status, edit) = get(&s, &format!("/admin/edit/{draft}"), Some(&ed)).await;
    assert_eq!(status, 200);
    assert!(edit.contains(r#"data-version="1""#), "{edit}");
    assert!(
        edit.contains(r#"id="title" name="title" value="Quokka draft""#),
        "{edit}"
    );
    let csrf = me(&s, &ed).await["csrf_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(edit.contains(&format!(r#"data-csrf="{csrf}""#)), "{edit}");
    let person = store(&s)
        .create_resource(
            NewResource::new("person", Props::new().with("title", "Ada")).published(true),
        )
        .unwrap();
    let (_, read_only) = get(&s, &format!("/admin/edit/{person}"), Some(&ed)).await;
    assert!(
        read_only.contains("but not change it") && !read_only.contains("<form id=\"editor\""),
        "{read_only}"
    );
    let (_, missing) = get(&s, "/admin/edit/999999", Some(&ed)).await;
    assert!(missing.contains("Not found"), "{missing}");

    // Never cached: the anonymous visitor still goes to logon.
    let resp = client().get(url(&s, "/admin")).send().await.unwrap();
    assert_eq!(resp.status(), 303);
    s.shutdown().await;
}

/// A long-poll push client of a logged-on user: its id, token and the
/// session's cookie and CSRF token.
struct PushClient {
    id: String,
    token: String,
    cookie: String,
    csrf: String,
}

impl PushClient {
    async fn connect(s: &common::TestServer, cookie: &str) -> PushClient {
        let hello: serde_json::Value = client()
            .get(url(s, "/push/poll"))
            .header("cookie", cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap();
        assert_eq!(hello["type"], "hello", "{hello}");
        let field = |k: &str| {
            hello[k]
                .as_str()
                .unwrap_or_else(|| panic!("{k} in {hello}"))
                .to_owned()
        };
        PushClient {
            id: field("client"),
            token: field("token"),
            csrf: field("csrf_token"),
            cookie: cookie.to_owned(),
        }
    }

    async fn command(&self, s: &common::TestServer, op: serde_json::Value) -> serde_json::Value {
        let replies: serde_json::Value = client()
            .post(url(s, &format!("/push/command?client={}", self.id)))
            .header("cookie", &self.cookie)
            .header("x-push-token", &self.token)
            .header("x-csrf-token", &self.csrf)
            .header("content-type", "application/json")
            .body(serde_json::json!([op]).to_string())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap();
        replies[0].clone()
    }

    /// The messages of one long-poll, or none if nothing came within `wait`.
    async fn poll(
        &self,
        s: &common::TestServer,
        wait: std::time::Duration,
    ) -> Vec<serde_json::Value> {
        let sent = client()
            .get(url(s, &format!("/push/poll?client={}", self.id)))
            .header("cookie", &self.cookie)
            .header("x-push-token", &self.token)
            .timeout(wait)
            .send()
            .await;
        match sent {
            Ok(resp) if resp.status() == 204 => Vec::new(),
            Ok(resp) => {
                let batch: serde_json::Value =
                    serde_json::from_str(&resp.text().await.unwrap()).unwrap();
                batch["messages"].as_array().cloned().unwrap_or_default()
            }
            Err(e) if e.is_timeout() => Vec::new(),
            Err(e) => panic!("{e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboards_live_figures_reach_editors_and_nobody_else() {
    let s = admin_site().await;
    add_user(&s, "ed", "editors").await;
    add_user(&s, "mia", "members").await;
    let ed = PushClient::connect(&s, &logon(&s, "ed").await).await;
    let mia = PushClient::connect(&s, &logon(&s, "mia").await).await;

    // The topic is the editors': a member may not subscribe to it, and a
    // wildcard that covers it brings a member nothing of it.
    let subscribe = |topic: &str| serde_json::json!({"op": "subscribe", "topic": topic});
    assert_eq!(
        ed.command(&s, subscribe("admin/figures")).await["type"],
        "subscribed"
    );
    let refused = mia.command(&s, subscribe("admin/figures")).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert_eq!(
        mia.command(&s, subscribe("admin/#")).await["type"],
        "subscribed"
    );
    // Nobody's browser publishes figures.
    let publish = serde_json::json!({"op": "publish", "topic": "admin/figures", "payload": {"requests_per_s": 1e9}});
    for who in [&ed, &mia] {
        let answer = who.command(&s, publish.clone()).await;
        assert_eq!(answer["type"], "error", "{answer}");
    }

    // Some traffic, then the next second's figures count it.
    for _ in 0..5 {
        assert_eq!(get(&s, "/about", None).await.0, 200);
    }
    let mut seen = None;
    for _ in 0..10 {
        let messages = ed.poll(&s, std::time::Duration::from_secs(3)).await;
        if let Some(m) = messages.iter().rev().find(|m| {
            m["topic"] == "admin/figures" && m["payload"]["requests_per_s"].as_f64() > Some(0.0)
        }) {
            seen = Some(m["payload"].clone());
            break;
        }
    }
    let figures = seen.expect("figures with the requests in them within 10 polls");
    assert_eq!(figures["site"], "default");
    assert!(figures["refused"]["renders"].is_u64(), "{figures}");
    assert!(figures["database"]["open"].as_u64() >= Some(1), "{figures}");
    assert!(
        figures["more"]["push_clients"].as_u64() >= Some(2),
        "{figures}"
    );
    assert!(figures["page_cache_hit_ratio"].is_null() || figures["page_cache_hit_ratio"].is_f64());

    // Two seconds of figures went out meanwhile; the member heard none of them.
    let heard = mia.poll(&s, std::time::Duration::from_millis(2500)).await;
    assert!(
        heard.iter().all(|m| m["topic"] != "admin/figures"),
        "{heard:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editors_of_a_resource_hear_of_each_other_and_nobody_else_does() {
    let s = admin_site().await;
    let ed_id = add_user(&s, "ed", "editors").await;
    add_user(&s, "mia", "members").await;
    let eds = session(&s, "ed").await;
    let mias = session(&s, "mia").await;
    let (ed_as, mia_as) = (As::Session(&eds), As::Session(&mias));
    let new = serde_json::json!({"category": "article", "published": true, "props": {"title": "Open twice"}});
    let (status, article, _) = call(&s, &ed_as, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 201, "{article}");
    let path = format!("/api/rsc/{}/editing", article["id"]);
    let topic = format!("admin/editing/{}", article["id"]);
    let ed = PushClient::connect(&s, &eds.cookie).await;
    let mia = PushClient::connect(&s, &mias.cookie).await;

    // The editors' topic: a member may not subscribe by name, and her
    // wildcard brings her nothing of it; no browser publishes there.
    let subscribe = |topic: &str| serde_json::json!({"op": "subscribe", "topic": topic});
    assert_eq!(
        ed.command(&s, subscribe(&topic)).await["type"],
        "subscribed"
    );
    assert_eq!(mia.command(&s, subscribe(&topic)).await["type"], "error");
    assert_eq!(
        mia.command(&s, subscribe("admin/#")).await["type"],
        "subscribed"
    );
    let forged =
        serde_json::json!({"op": "publish", "topic": topic, "payload": {"name": "the boss"}});
    assert_eq!(ed.command(&s, forged).await["type"], "error");

    // Only those who may change it say they are on it.
    let here = serde_json::json!({"tab": "tab-1", "state": "here"});
    let (status, _, _) = call(&s, &mia_as, "POST", &path, Some(here.clone()), None).await;
    assert_eq!(status, 403);
    let (status, _, _) = call(&s, &As::Anonymous, "POST", &path, Some(here.clone()), None).await;
    assert_eq!(status, 401);
    let odd = serde_json::json!({"tab": "tab-1", "state": "typing"});
    let (status, _, _) = call(&s, &ed_as, "POST", &path, Some(odd), None).await;
    assert_eq!(status, 400);
    let (status, answer, _) = call(&s, &ed_as, "POST", &path, Some(here), None).await;
    assert_eq!(
        (status, answer["told"].clone()),
        (200, serde_json::json!(true))
    );
    let saved = serde_json::json!({"tab": "tab-1", "state": "saved", "version": 2});
    assert_eq!(
        call(&s, &ed_as, "POST", &path, Some(saved), None).await.0,
        200
    );

    // The editor hears both, named by the server; the member nothing.
    let mut heard = Vec::new();
    for _ in 0..10 {
        heard.extend(
            ed.poll(&s, std::time::Duration::from_secs(3))
                .await
                .into_iter()
                .filter(|m| m["topic"] == topic.as_str()),
        );
        if heard.len() >= 2 {
            break;
        }
    }
    let states: Vec<_> = heard
        .iter()
        .map(|m| m["payload"]["state"].clone())
        .collect();
    assert_eq!(
        states,
        [serde_json::json!("here"), serde_json::json!("saved")]
    );
    assert_eq!(heard[0]["payload"]["user"], ed_id.0);
    assert_eq!(heard[0]["payload"]["tab"], "tab-1");
    assert!(heard[0]["payload"]["name"].is_string(), "{}", heard[0]);
    assert_eq!(heard[1]["payload"]["version"], 2);
    let overheard = mia.poll(&s, std::time::Duration::from_millis(1500)).await;
    assert!(
        overheard.iter().all(|m| m["topic"] != topic.as_str()),
        "{overheard:?}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editors_draft_is_kept_for_them_alone_until_dropped() {
    let s = admin_site().await;
    add_user(&s, "ed", "editors").await;
    add_user(&s, "eve", "editors").await;
    add_user(&s, "mia", "members").await;
    let (eds, eves, mias) = (
        session(&s, "ed").await,
        session(&s, "eve").await,
        session(&s, "mia").await,
    );
    let (ed, eve, mia) = (As::Session(&eds), As::Session(&eves), As::Session(&mias));
    let new = serde_json::json!({"category": "article", "published": true, "props": {"title": "Drafted"}});
    let (status, article, _) = call(&s, &ed, "POST", "/api/rsc", Some(new), None).await;
    assert_eq!(status, 201, "{article}");
    let path = format!("/api/rsc/{}/draft", article["id"]);

    assert_eq!(
        call(&s, &ed, "GET", &path, None, None).await.0,
        404,
        "none yet"
    );
    let kept = serde_json::json!({"version": 1, "fields": {"title": "Drafted", "summary": "Not saved yet"}});
    let (status, answer, _) = call(&s, &ed, "PUT", &path, Some(kept), None).await;
    assert_eq!(status, 200, "{answer}");
    let (status, draft, _) = call(&s, &ed, "GET", &path, None, None).await;
    assert_eq!(status, 200, "{draft}");
    assert_eq!(draft["fields"]["summary"], "Not saved yet");
    assert_eq!(draft["version"], 1);
    assert_eq!(draft["saved"], answer["saved"]);
    // Not a save: the resource is as it was.
    let (_, stored, _) = call(
        &s,
        &ed,
        "GET",
        &format!("/api/rsc/{}", article["id"]),
        None,
        None,
    )
    .await;
    assert!(stored["props"]["summary"].is_null(), "{stored}");

    // Another editor has their own, and sees nothing of ed's; a member may
    // not keep one; an anonymous visitor neither; a body not a draft: 400.
    assert_eq!(call(&s, &eve, "GET", &path, None, None).await.0, 404);
    let other = serde_json::json!({"version": 1, "fields": {"summary": "Eve's"}});
    assert_eq!(
        call(&s, &mia, "PUT", &path, Some(other.clone()), None)
            .await
            .0,
        403
    );
    assert_eq!(call(&s, &mia, "GET", &path, None, None).await.0, 403);
    assert_eq!(
        call(&s, &As::Anonymous, "GET", &path, None, None).await.0,
        401
    );
    let odd = serde_json::json!({"version": 1, "fields": "text"});
    assert_eq!(call(&s, &ed, "PUT", &path, Some(odd), None).await.0, 400);
    assert_eq!(call(&s, &eve, "PUT", &path, Some(other), None).await.0, 200);
    let (_, draft, _) = call(&s, &ed, "GET", &path, None, None).await;
    assert_eq!(
        draft["fields"]["summary"], "Not saved yet",
        "ed's is his still"
    );

    // Dropped: gone for ed, eve's stays.
    assert_eq!(call(&s, &ed, "DELETE", &path, None, None).await.0, 204);
    assert_eq!(call(&s, &ed, "GET", &path, None, None).await.0, 404);
    let (status, draft, _) = call(&s, &eve, "GET", &path, None, None).await;
    assert_eq!(
        (status, draft["fields"]["summary"].clone()),
        (200, serde_json::json!("Eve's"))
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_several_nodes_the_dashboard_hears_every_nodes_figures_and_only_editors_do() {
    let schema = fresh_schema("admin_nodes");
    let (name_a, name_b) = (format!("a-{schema}"), format!("b-{schema}"));
    let cluster = bulwark_module_cluster::module;
    let a = starter_node(&schema, &name_a, "", &[], cluster()).await;
    let b = starter_node(&schema, &name_b, "", &[], cluster()).await;
    add_user(&a, "ed", "editors").await;
    add_user(&a, "mia", "members").await;
    let ed = PushClient::connect(&a, &logon(&a, "ed").await).await;
    let mia = PushClient::connect(&a, &logon(&a, "mia").await).await;
    let subscribe = |topic: &str| serde_json::json!({"op": "subscribe", "topic": topic});
    assert_eq!(
        ed.command(&a, subscribe("admin/figures")).await["type"],
        "subscribed"
    );
    assert_eq!(mia.command(&a, subscribe("#")).await["type"], "subscribed");

    // Traffic on node B only; the editor on node A sees it, named B's.
    for _ in 0..5 {
        assert_eq!(get(&b, "/about", None).await.0, 200);
    }
    let (mut from_a, mut from_b) = (false, None);
    for _ in 0..10 {
        for m in ed.poll(&a, std::time::Duration::from_secs(3)).await {
            assert_eq!(m["topic"], "admin/figures", "{m}");
            let f = &m["payload"];
            if f["node"] == name_a.as_str() {
                from_a = true;
            } else if f["node"] == name_b.as_str() && f["requests_per_s"].as_f64() > Some(0.0) {
                from_b = Some(f.clone());
            }
        }
        if from_a && from_b.is_some() {
            break;
        }
    }
    assert!(from_a, "node A's own figures, with its name");
    let from_b = from_b.expect("node B's figures, with its requests, on node A");
    assert_eq!(from_b["site"], "default");
    assert!(from_b["database"]["open"].as_u64() >= Some(1), "{from_b}");

    // Relayed figures keep their audience: the member's wildcard hears none.
    let heard = mia.poll(&a, std::time::Duration::from_millis(2500)).await;
    assert!(
        heard.iter().all(|m| m["topic"] != "admin/figures"),
        "{heard:?}"
    );
    stop_nodes(vec![a, b], &schema).await;
}

/// The rights matrix across two nodes of a cluster: people, groups and
/// sessions made on node A, every attempt made on node B. Then a right taken
/// away on A is gone on B for a session already open there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_two_nodes_nobody_changes_anything_above_their_rights() {
    let schema = fresh_schema("rights_nodes");
    let (name_a, name_b) = (format!("a-{schema}"), format!("b-{schema}"));
    let cluster = bulwark_module_cluster::module;
    let a = starter_node(&schema, &name_a, "", &[], cluster()).await;
    let b = starter_node(&schema, &name_b, "", &[], cluster()).await;
    rights_matrix::persons(&a, &b).await;
    rights_matrix::groups(&a, &b).await;

    add_user(&a, "boss", "administrators").await;
    add_user(&a, "mo", "managers").await;
    let target = add_user(&a, "someone", "members").await;
    let boss = session(&a, "boss").await;
    let mo = session(&b, "mo").await;
    let edit = |title: &str| Some(serde_json::json!({"props": {"title": title}}));
    let path = format!("/api/rsc/{target}");
    let (status, body, _) = call(&b, &As::Session(&mo), "PATCH", &path, edit("By mo"), None).await;
    assert_eq!(status, 200, "a manager edits a member's person: {body}");
    let managers = rights_matrix::group_id(&a, "managers").await;
    let mo_id = store(&a)
        .run(|s| Ok(s.password_hash("mo")?.map(|(p, _)| p)))
        .await
        .unwrap()
        .unwrap();
    let out = format!("/api/rsc/{mo_id}/edges/hasusergroup/{managers}");
    let (status, body, _) = call(&a, &As::Session(&boss), "DELETE", &out, None, None).await;
    assert_eq!(status, 204, "{body}");
    bulwark_testkit::eventually(
        "node B refuses the former manager",
        std::time::Duration::from_secs(10),
        || async {
            let (status, _, _) =
                call(&b, &As::Session(&mo), "PATCH", &path, edit("Again"), None).await;
            (status == 403 || status == 404).then_some(())
        },
    )
    .await;
    stop_nodes(vec![a, b], &schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_speaks_the_editors_language_and_translates_side_by_side() {
    let s = admin_site().await;
    add_user(&s, "ed", "editors").await;
    let article = store(&s)
        .create_resource(NewResource::new(
            "article",
            Props::new().with("title", bulwark_store::translated([("en", "Cycling")])),
        ))
        .unwrap();
    let ed = logon(&s, "ed").await;
    let in_language = |path: &str, language: &str| {
        client()
            .get(url(&s, path))
            .header("cookie", &ed)
            .header("accept-language", language)
            .send()
    };
    // The frame and the menu, by the browser's language (the admin's own
    // catalog, translations/nl.po of the module).
    let dutch = in_language("/admin", "nl")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for text in ["Overzicht", "Afmelden", "Je account", "Naar de inhoud"] {
        assert!(dutch.contains(text), "{text} in {dutch}");
    }
    let english = in_language("/admin", "en")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(english.contains(">Dashboard<") && english.contains("Log off"));

    // Every screen, the admin's and those other modules bring, from their
    // own catalogs; and what their scripts say, handed to them in Dutch.
    add_user(&s, "boss", "administrators").await;
    let boss = logon(&s, "boss").await;
    for (path, dutch, english) in [
        ("/admin", "Wat jouw aandacht vraagt", "What needs you"),
        ("/admin/new", "Maken en bewerken", "Make it and edit"),
        ("/admin/users", "Gebruikers en groepen", "Users and groups"),
        (
            "/admin/cache",
            "Deze pagina uit de cache halen",
            "Purge this page",
        ),
        (
            "/admin/media",
            "Sleep bestanden hierheen, of",
            "Drop files here, or",
        ),
        (
            "/admin/comments",
            "Reacties per status",
            "Comments by status",
        ),
        ("/admin/forms", "Nieuw formulier", "New form"),
        (
            "/admin/webhooks",
            "Alleen beheerders beheren webhooks.",
            "Only administrators manage webhooks.",
        ),
        ("/admin/menus", "Nieuw menu", "New menu"),
    ] {
        let page = |language: &'static str| {
            client()
                .get(url(&s, path))
                .header("cookie", &boss)
                .header("accept-language", language)
                .send()
        };
        let nl = page("nl").await.unwrap();
        assert_eq!(nl.status(), 200, "{path}");
        let nl = nl.text().await.unwrap();
        assert!(nl.contains(dutch), "{path} in Dutch: {nl}");
        assert!(
            nl.contains(r#""Not saved: {reason}":"Niet opgeslagen: {reason}""#),
            "{path}: the scripts' texts in Dutch"
        );
        let en = page("en").await.unwrap().text().await.unwrap();
        assert!(
            en.contains(english) && !en.contains(dutch),
            "{path} in English: {en}"
        );
        assert!(
            en.contains(r#"<script type="application/json" class="bulwark-texts">{}</script>"#),
            "{path}: no translations for English scripts"
        );
    }

    // The translations screen: each language's title, the missing one said.
    let path = format!("/admin/translate/{}", article.0);
    let screen = in_language(&path, "nl").await.unwrap();
    assert_eq!(screen.status(), 200);
    let screen = screen.text().await.unwrap();
    assert!(screen.contains("Alle talen opslaan"), "{screen}");
    assert!(
        screen.contains(r#"id="title-en" data-field="title" data-language="en" value="Cycling""#),
        "{screen}"
    );
    assert!(
        screen.contains(r#"id="title-nl" data-field="title" data-language="nl" value="""#),
        "{screen}"
    );
    assert!(
        screen.contains(
            r#"<span class="badge draft missing" id="title-nl-missing">ontbreekt</span>"#
        ),
        "the Dutch title is missing: {screen}"
    );
    s.shutdown().await;
}
