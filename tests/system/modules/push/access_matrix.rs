//! The access matrix: every default user group (anonymous, members, editors,
//! managers, administrators) x every action (view, insert, update, delete,
//! link) x every surface, on the starter site with its default rules, on
//! SQLite and on PostgreSQL. One decision (`AccessPolicy`) answers them all,
//! so one table of expectations must hold on every surface:
//!
//! - **templates**: a resource's page, `m.acl.may(action, id)` and
//!   `m.acl.may_insert(category)`, and `m.search` (the `/articles` search page);
//! - **the JSON API**: `GET`, `POST`, `PATCH`, `DELETE` and edges;
//! - **search**: `/api/search` and `m.search`, both filtered in the database;
//! - **push**: which `rsc/...` messages reach a client subscribed to `rsc/+`,
//!   for the resources every group looks at and for the drafts that allowed
//!   groups insert.
//!
//! Search and push only ever show; what they show follows `view`, including
//! the drafts an `insert` makes (seen by their creator and by those who may
//! change them).

use crate::push_support as support;

use std::collections::BTreeSet;
use std::time::Duration;

use bulwark_store::{NewResource, Props, ResourceId, Store, Visibility};
use bulwark_testkit::eventually;
use serde_json::{Value, json};
use support::*;

const GROUPS: [&str; 5] = [
    "anonymous",
    "members",
    "editors",
    "managers",
    "administrators",
];

/// A page that asks `m.acl` about one resource, never cached.
const CHECK_RULE: &str = "
[[dispatch]]
name = \"acl_check\"
path = \"/acl-check/{id}\"
controller = \"template\"
template = \"acl_check.tpl\"
cache = false
";
const CHECK_TEMPLATE: &str = "{% for a in ['view', 'update', 'delete', 'link'] %}\
    {{ a }}={{ 'yes' if m.acl.may(a, id) else 'no' }};{% endfor %}\
    insert={{ 'yes' if m.acl.may_insert('article') else 'no' }}";

/// The default rules, as this test expects them: who may see what, and who
/// may write articles (editors and up, in the default content group).
fn may_view(group: &str, what: Seen) -> bool {
    match what {
        Seen::Public => true,
        Seen::Members => group != "anonymous",
        Seen::Draft => matches!(group, "editors" | "managers" | "administrators"),
    }
}

fn may_write(group: &str) -> bool {
    matches!(group, "editors" | "managers" | "administrators")
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Public,
    Members,
    Draft,
}

/// The status a write gets: done, or refused (401 for nobody, 403 for a
/// group the rules do not let).
fn write_status(group: &str, done: u16) -> u16 {
    match group {
        _ if may_write(group) => done,
        "anonymous" => 401,
        _ => 403,
    }
}

async fn call(
    site: &Site,
    who: Option<&Visitor>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, String) {
    let mut req = reqwest::Client::new().request(method.parse().unwrap(), site.url(path));
    if let Some(who) = who {
        req = req
            .header("cookie", &who.cookie)
            .header("x-csrf-token", &who.csrf);
    }
    if let Some(body) = body {
        req = req
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

fn article(store: &Store, title: &str, published: bool, visibility: Visibility) -> ResourceId {
    let mut new =
        NewResource::new("article", Props::new().with("title", title)).published(published);
    new.visibility = visibility;
    store.create_resource(new).unwrap()
}

/// The ids `/api/search?text=...` gives `who`.
async fn api_search(site: &Site, who: Option<&Visitor>, text: &str) -> BTreeSet<i64> {
    let (status, body) = call(
        site,
        who,
        "GET",
        &format!("/api/search?text={text}&pagelen=100"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let found: Value = serde_json::from_str(&body).unwrap();
    found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

async fn matrix(backend: Backend) {
    let site = Site::start_with(backend, CHECK_RULE, &[("acl_check.tpl", CHECK_TEMPLATE)]).await;
    let store = site.store();
    let mut visitors = Vec::new();
    for group in GROUPS {
        visitors.push(match group {
            "anonymous" => None,
            _ => {
                add_user(&store, &format!("{}_user", &group[..4]), group).await;
                Some(logon(&site, &format!("{}_user", &group[..4])).await)
            }
        });
    }

    // What everyone looks at: a public article, a members-only one and a
    // draft, none of them made by any of the visitors; a keyword to link to;
    // one article per group to delete.
    let looked_at = [
        (
            article(&store, "Zebra public", true, Visibility::Public),
            Seen::Public,
        ),
        (
            article(&store, "Zebra members", true, Visibility::Members),
            Seen::Members,
        ),
        (
            article(&store, "Zebra draft", false, Visibility::Public),
            Seen::Draft,
        ),
    ];
    let public = looked_at[0].0;
    let keyword = store
        .create_resource(
            NewResource::new("keyword", Props::new().with("title", "Stripes")).published(true),
        )
        .unwrap();
    let throwaway: Vec<ResourceId> = GROUPS
        .iter()
        .map(|g| article(&store, &format!("Throwaway {g}"), true, Visibility::Public))
        .collect();
    // Text search reads the pivot, which indexes a moment after a write.
    let all: BTreeSet<i64> = looked_at.iter().map(|(id, _)| id.0).collect();
    eventually(
        "the pivot indexed the articles",
        Duration::from_secs(10),
        || async { (api_search(&site, visitors[4].as_ref(), "zebra").await == all).then_some(()) },
    )
    .await;

    // Push clients, one per group, listening to every resource change.
    let mut clients = Vec::new();
    for who in &visitors {
        let mut client = Client::connect(&site, who.as_ref()).await;
        client.subscribed("rsc/+").await;
        clients.push(client);
    }

    let mut inserted = Vec::new();
    for (g, group) in GROUPS.iter().enumerate() {
        let who = visitors[g].as_ref();
        let expect_view = |what: Seen| may_view(group, what);

        // view: the page, m.acl, the API, both searches.
        for (id, what) in looked_at {
            let (status, _) = call(&site, who, "GET", &format!("/page/{id}"), None).await;
            assert_eq!(
                status == 200,
                expect_view(what),
                "{group}: page of {what:?} ({status})"
            );
            let (status, _) = call(&site, who, "GET", &format!("/api/rsc/{id}"), None).await;
            assert_eq!(
                status == 200,
                expect_view(what),
                "{group}: API read of {what:?} ({status})"
            );
            let (_, acl) = call(&site, who, "GET", &format!("/acl-check/{id}"), None).await;
            assert!(
                acl.contains(&format!("view={};", yes(expect_view(what)))),
                "{group} {what:?}: {acl}"
            );
        }
        let visible: BTreeSet<i64> = looked_at
            .iter()
            .filter(|(_, what)| expect_view(*what))
            .map(|(id, _)| id.0)
            .collect();
        assert_eq!(
            api_search(&site, who, "zebra").await,
            visible,
            "{group}: API search"
        );
        let (status, page) = call(&site, who, "GET", "/articles?text=zebra", None).await;
        assert_eq!(status, 200);
        for (title, what) in [
            ("Zebra public", Seen::Public),
            ("Zebra members", Seen::Members),
            ("Zebra draft", Seen::Draft),
        ] {
            assert_eq!(
                page.contains(title),
                expect_view(what),
                "{group}: m.search and {title}"
            );
        }

        // update, delete, link, insert: m.acl on the public article (which
        // everyone sees, so the answer is the right itself), then the API.
        let (_, acl) = call(&site, who, "GET", &format!("/acl-check/{public}"), None).await;
        let right = may_write(group);
        for action in ["update", "delete", "link", "insert"] {
            assert!(
                acl.contains(&format!("{action}={}", yes(right))),
                "{group}: m.acl {action}: {acl}"
            );
        }
        let patch = json!({"props": {"note": group}});
        let (status, body) = call(
            &site,
            who,
            "PATCH",
            &format!("/api/rsc/{public}"),
            Some(patch),
        )
        .await;
        assert_eq!(status, write_status(group, 200), "{group}: update: {body}");
        let (status, body) = call(
            &site,
            who,
            "DELETE",
            &format!("/api/rsc/{}", throwaway[g]),
            None,
        )
        .await;
        assert_eq!(status, write_status(group, 204), "{group}: delete: {body}");
        let edge = json!({"predicate": "about", "object": keyword.0});
        let (status, body) = call(
            &site,
            who,
            "POST",
            &format!("/api/rsc/{public}/edges"),
            Some(edge),
        )
        .await;
        let linked = if g == 2 { 201 } else { 200 };
        assert_eq!(status, write_status(group, linked), "{group}: link: {body}");
        let new = json!({"category": "article", "props": {"title": format!("Okapi by {group}")}});
        let (status, body) = call(&site, who, "POST", "/api/rsc", Some(new)).await;
        assert_eq!(status, write_status(group, 201), "{group}: insert: {body}");
        if status == 201 {
            let id: Value = serde_json::from_str(&body).unwrap();
            inserted.push((g, id["id"].as_i64().unwrap()));
        }
    }

    // What was refused did not happen; what was allowed did.
    for (g, group) in GROUPS.iter().enumerate() {
        assert_eq!(
            store.resource(throwaway[g]).unwrap().is_none(),
            may_write(group),
            "{group}: deleted"
        );
    }
    let note = store
        .resource(public)
        .unwrap()
        .unwrap()
        .props
        .str("note")
        .map(str::to_string);
    assert_eq!(
        note.as_deref(),
        Some("administrators"),
        "the last allowed update"
    );

    // An inserted draft: found by its creator and by who may change it,
    // not by the others (after the pivot has it).
    eventually(
        "the pivot indexed the drafts",
        Duration::from_secs(10),
        || async {
            let found = api_search(&site, visitors[4].as_ref(), "okapi").await;
            (found.len() >= inserted.len()).then_some(())
        },
    )
    .await;
    let drafts: BTreeSet<i64> = inserted.iter().map(|(_, id)| *id).collect();
    for (g, group) in GROUPS.iter().enumerate() {
        let expected = if may_view(group, Seen::Draft) {
            drafts.clone()
        } else {
            BTreeSet::new()
        };
        assert_eq!(
            api_search(&site, visitors[g].as_ref(), "okapi").await,
            expected,
            "{group}: drafts found"
        );
    }

    // Push: every looked-at article changes once more, then a marker.
    for (id, _) in looked_at {
        touch(&store, id);
    }
    let marker = store
        .create_resource(NewResource::new("article", Props::new()).published(true))
        .unwrap();
    for (g, group) in GROUPS.iter().enumerate() {
        let got = clients[g].received_until(&format!("rsc/{marker}")).await;
        let heard: BTreeSet<String> = topics(&got, "rsc/")
            .into_iter()
            .map(str::to_string)
            .collect();
        for (id, what) in looked_at {
            assert_eq!(
                heard.contains(&format!("rsc/{id}")),
                may_view(group, what),
                "{group}: push of {what:?}"
            );
        }
        for (_, id) in &inserted {
            assert_eq!(
                heard.contains(&format!("rsc/{id}")),
                may_view(group, Seen::Draft),
                "{group}: push of a new draft"
            );
        }
    }
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_group_action_and_surface_on_sqlite() {
    matrix(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_group_action_and_surface_on_postgres() {
    matrix(Backend::Postgres).await;
}
