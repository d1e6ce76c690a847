//! A module written outside the core plugs in through `Module` alone: a
//! controller kind, a template function, observers of the core events (a
//! request rewrite, rendered pages), and its own `site.toml` section.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode};

use bulwark_site::ModuleManifest;
use bulwark_web::events::{PageRendered, RequestDispatch, Rewrite};
use bulwark_web::{
    Content, Controller, Module, ModuleError, Outcome, Representation, RequestCtx, SiteSetup,
};
use common::*;

/// `controller = "greeting"` answers `<greeting> <name arg>`; `[greeter] shout`
/// makes it upper case; `/old/...` is routed as `/...`; renders are counted.
struct Greeter {
    renders: Arc<AtomicUsize>,
}

fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        Arc::new(
            ModuleManifest::new(
                "greeter",
                100,
                &[],
                None,
                None,
                "[[dispatch]]\nname = \"greet\"\npath = \"/greet/{name}\"\ncontroller = \"greeting\"\ngreeting = \"hello\"\n",
            )
            .unwrap(),
        )
    })
}

struct Greeting {
    greeting: String,
    shout: bool,
}

impl Controller for Greeting {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let mut text = format!("{} {}", self.greeting, req.arg("name").unwrap_or("?"));
            if self.shout {
                text = text.to_uppercase();
            }
            Outcome::Found(Representation {
                status: StatusCode::OK,
                content_type: HeaderValue::from_static("text/plain"),
                last_modified: None,
                cache_control: "no-cache",
                content: Content::Dynamic(Bytes::from(text)),
                per_language: false,
                stale: false,
                etag: None,
                attachment: false,
                surrogate_keys: None,
            })
        })
    }
}

const GREETER_MIGRATIONS: &[bulwark_store::Migration] = &[bulwark_store::Migration {
    version: 1,
    name: "greetings",
    sqlite: "CREATE TABLE greeting (id INTEGER PRIMARY KEY, word TEXT NOT NULL)",
    postgres: "CREATE TABLE greeting (id BIGSERIAL PRIMARY KEY, word TEXT NOT NULL)",
}];

impl Module for Greeter {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn migrations(&self) -> &'static [bulwark_store::Migration] {
        GREETER_MIGRATIONS
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let shout = match site.settings().and_then(|s| s.get("shout")) {
            None => false,
            Some(toml::Value::Boolean(b)) => *b,
            Some(_) => return Err(ModuleError::new("shout", "must be true or false")),
        };
        site.add_controller("greeting", move |options| {
            let greeting = options
                .get("greeting")
                .and_then(|g| g.as_str())
                .ok_or_else(|| ModuleError::new("greeting", "a string is required"))?;
            Ok(Box::new(Greeting {
                greeting: greeting.to_string(),
                shout,
            }) as Box<dyn Controller>)
        });
        site.add_template_extension(|env| {
            env.add_function("greet", |name: String| format!("hi {name}"));
        });
        site.observers().on_first(10, |r: &RequestDispatch| {
            r.path
                .strip_prefix("/old/")
                .map(|rest| Rewrite(format!("/{rest}")))
        });
        let renders = self.renders.clone();
        site.observers().on_notify(10, move |_: &PageRendered| {
            renders.fetch_add(1, Ordering::Relaxed);
        });
        Ok(())
    }
}

const SITE: &str = r#"
hostname = "g.test"
default = true
modules = ["greeter"]

[greeter]
shout = true

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
cache = false
"#;

#[tokio::test]
async fn a_module_adds_a_controller_kind_a_function_and_observers_without_core_changes() {
    let renders = Arc::new(AtomicUsize::new(0));
    let mut modules = modules();
    modules.push(Arc::new(Greeter {
        renders: renders.clone(),
    }));
    let files = [
        ("g/site.toml", SITE),
        ("g/templates/home.tpl", "{{ greet('you') }}"),
    ];
    let s = start_with_modules(&files, |_| {}, modules).await;
    let r = get(s.addr, "g.test", "/greet/ada").await;
    assert_eq!((r.status, r.text().as_str()), (200, "HELLO ADA"));
    let r = get(s.addr, "g.test", "/").await;
    assert_eq!((r.status, r.text().as_str()), (200, "hi you"));
    // Rewritten by the module's RequestDispatch observer.
    let r = get(s.addr, "g.test", "/old/greet/alan").await;
    assert_eq!((r.status, r.text().as_str()), (200, "HELLO ALAN"));
    assert_eq!(renders.load(Ordering::Relaxed), 1, "one template render");
    s.shutdown().await;
}

#[tokio::test]
async fn a_module_refuses_its_own_bad_settings_with_the_key_named() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("g/site.toml"),
        &SITE.replace("shout = true", "shout = \"loud\""),
    );
    let mut modules = modules();
    modules.push(Arc::new(Greeter {
        renders: Arc::default(),
    }));
    let errors = bulwark_web::Sites::load(dir.path(), Default::default(), modules)
        .await
        .err()
        .expect("the site must not load");
    let text: String = errors.iter().map(|e| e.to_string()).collect();
    assert!(
        text.contains("g/site.toml") && text.contains("greeter.shout"),
        "{text}"
    );
}

/// A module whose migration is broken: the site must not start half-migrated.
struct Broken;

impl Module for Broken {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
        MANIFEST.get_or_init(|| {
            Arc::new(ModuleManifest::new("broken", 100, &[], None, None, "").unwrap())
        })
    }

    fn migrations(&self) -> &'static [bulwark_store::Migration] {
        &[bulwark_store::Migration {
            version: 1,
            name: "nonsense",
            sqlite: "CREATE TABLE",
            postgres: "CREATE TABLE",
        }]
    }
}

#[tokio::test]
async fn a_modules_migrations_run_when_the_store_opens_and_a_broken_one_stops_the_site() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("g/site.toml"), SITE);
    write(&dir.path().join("g/templates/home.tpl"), "home");
    let mut with_greeter = modules();
    with_greeter.push(Arc::new(Greeter {
        renders: Arc::default(),
    }));
    // Twice: the second load finds the migration applied and changes nothing.
    for _ in 0..2 {
        let sites = bulwark_web::Sites::load(dir.path(), Default::default(), with_greeter.clone())
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        let store = sites.site_models("g").unwrap().store.clone();
        // Version 1 is applied already (so its text here, which would fail, is
        // skipped), and its table exists (so version 2 can insert into it).
        let check = [
            bulwark_store::Migration {
                version: 1,
                name: "greetings",
                sqlite: "NOT SQL",
                postgres: "NOT SQL",
            },
            bulwark_store::Migration {
                version: 2,
                name: "first greeting",
                sqlite: "INSERT INTO greeting (word) VALUES ('hi')",
                postgres: "INSERT INTO greeting (word) VALUES ('hi')",
            },
        ];
        store
            .run(move |s| s.migrate_module("greeter", &check))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    write(
        &dir.path().join("g/site.toml"),
        &SITE.replace(
            "modules = [\"greeter\"]",
            "modules = [\"greeter\", \"broken\"]",
        ),
    );
    let mut with_broken = with_greeter.clone();
    with_broken.push(Arc::new(Broken));
    let errors = bulwark_web::Sites::load(dir.path(), Default::default(), with_broken)
        .await
        .err()
        .expect("a broken migration stops the site");
    let text: String = errors.iter().map(|e| e.to_string()).collect();
    assert!(
        text.contains("module broken") && text.contains("nonsense"),
        "{text}"
    );
}
