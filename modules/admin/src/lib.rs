//! The admin module (`admin`): editors run a site from the browser, at
//! `/admin` (docs/admin.md): the dashboard (live figures over push, recent
//! edits), resources (search, filters, bulk actions), a new resource, the
//! editor (rich text, publication, connections, earlier versions), and the
//! site's screens: categories, predicates, users, access rules (with "view
//! the site as"), settings, modules, cache and backups. Pages are the
//! module's own templates (`admin_*.tpl`), which a site may override; what
//! they change goes through the JSON API (`/api/...`) under the same access
//! rules as everything else, with the session's CSRF token.
//!
//! Who may enter: a logged-on user in `editors` or a group above it; each
//! screen names the group it needs (`Page::group`). Anyone else logged on
//! gets 403; an anonymous visitor is sent to `/logon` and back. The menu is
//! the [`AdminMenu`] fold: the module starts it with the screens the person
//! may open and every module may add its own.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use http::header::{CACHE_CONTROL, LOCATION};
use http::{HeaderValue, Response, StatusCode};
use include_dir::{Dir, include_dir};
use minijinja::Value;
use serde::Deserialize;

use bulwark_acl::{ADMINISTRATORS, MANAGERS, Principal};
use bulwark_http::Body;
use bulwark_site::ModuleManifest;
use bulwark_web::events::{AdminMenu, MenuItem};
use bulwark_web::{
    Controller, Module, ModuleError, Outcome, RequestCtx, SiteSetup, error_response_for,
    read_settings, render_page,
};

mod drafts;
mod editing;
mod figures;
mod health;

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");
/// The admin's texts in other languages (`nl.po`; docs/languages.md).
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");

pub const PRIORITY: i32 = 300;

/// The user group whose people (and those of every group above it) may use
/// the admin.
pub const ADMIN_GROUP: &str = "editors";

pub struct Admin;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(Admin)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "admin",
            PRIORITY,
            &["auth"],
            Some(&TEMPLATES),
            Some(&LIB),
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(editing::api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Module for Admin {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn setup(&self, setup: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        setup.add_controller("admin", |options| {
            AdminController::from_rule(options).map(|c| Box::new(c) as Box<dyn Controller>)
        });
        figures::observe(setup);
        editing::observe(setup);
        Ok(())
    }

    fn api(&self) -> Option<&'static bulwark_web::Api> {
        Some(editing::api())
    }

    fn migrations(&self) -> &'static [bulwark_store::Migration] {
        drafts::MIGRATIONS
    }
}

/// The admin's screens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Page {
    Dashboard,
    Resources,
    Edit,
    /// A resource's texts in every language, side by side.
    Translate,
    New,
    Categories,
    Predicates,
    Users,
    Rules,
    Settings,
    Cache,
    Backups,
    Modules,
    /// A screen another module brings through the menu ([`MenuItem::screen`]).
    Screen,
}

impl Page {
    fn template(self) -> &'static str {
        match self {
            Page::Dashboard => "admin_dashboard.tpl",
            Page::Resources => "admin_resources.tpl",
            Page::Edit => "admin_edit.tpl",
            Page::Translate => "admin_translate.tpl",
            Page::New => "admin_new.tpl",
            Page::Categories => "admin_categories.tpl",
            Page::Predicates => "admin_predicates.tpl",
            Page::Users => "admin_users.tpl",
            Page::Rules => "admin_rules.tpl",
            Page::Settings => "admin_settings.tpl",
            Page::Cache => "admin_cache.tpl",
            Page::Backups => "admin_backups.tpl",
            Page::Modules => "admin_modules.tpl",
            Page::Screen => "admin_dashboard.tpl",
        }
    }

    /// The group whose people may open this screen (the API behind it asks
    /// the same of every change): editors write content, managers run the
    /// site, administrators hold its backups and choose its modules.
    fn group(self) -> &'static str {
        match self {
            Page::Dashboard
            | Page::Resources
            | Page::Edit
            | Page::Translate
            | Page::New
            | Page::Categories
            | Page::Predicates
            | Page::Cache
            | Page::Screen => ADMIN_GROUP,
            Page::Users | Page::Rules | Page::Settings => MANAGERS,
            Page::Backups | Page::Modules => ADMINISTRATORS,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    page: Page,
}

pub struct AdminController {
    page: Page,
}

impl AdminController {
    fn from_rule(options: &toml::Table) -> Result<AdminController, ModuleError> {
        let options: Options = read_settings(options)?;
        Ok(AdminController { page: options.page })
    }
}

/// The module's own menu items that `who` may open, before other modules
/// fold theirs in.
fn own_menu(who: &Principal) -> Vec<MenuItem> {
    [
        ("Dashboard", "/admin", Page::Dashboard),
        ("Resources", "/admin/resources", Page::Resources),
        ("New", "/admin/new", Page::New),
        ("Categories", "/admin/categories", Page::Categories),
        ("Predicates", "/admin/predicates", Page::Predicates),
        ("Users", "/admin/users", Page::Users),
        ("Access rules", "/admin/rules", Page::Rules),
        ("Settings", "/admin/settings", Page::Settings),
        ("Cache", "/admin/cache", Page::Cache),
        ("Modules", "/admin/modules", Page::Modules),
        ("Backups", "/admin/backups", Page::Backups),
    ]
    .into_iter()
    .filter(|(_, _, page)| who.in_group(page.group()))
    .map(|(label, url, _)| MenuItem {
        label: label.to_string(),
        url: url.to_string(),
        parent: None,
        screen: None,
    })
    .collect()
}

/// To the logon page, and back here afterwards.
fn to_logon(req: &RequestCtx<'_>) -> Outcome {
    let back = req
        .parts
        .uri
        .path_and_query()
        .map_or("/admin", |p| p.as_str());
    let query: String = back
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(location) = HeaderValue::from_str(&format!("/logon?next={query}")) {
        resp.headers_mut().insert(LOCATION, location);
    }
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Outcome::Response(resp)
}

impl Controller for AdminController {
    fn resolve<'a>(&'a self, req: &'a RequestCtx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let who = req.principal();
            if who.is_anonymous() {
                return to_logon(req);
            }
            if !who.in_group(self.page.group()) {
                return Outcome::Response(error_response_for(req, StatusCode::FORBIDDEN, None));
            }
            let menu = req.site.notifier().fold(&AdminMenu, own_menu(who));
            // A module's screen: the menu item at this path names its template.
            let template = match self.page {
                Page::Screen => {
                    let path = req.parts.uri.path();
                    match menu.iter().find(|item| item.url == path) {
                        Some(MenuItem {
                            screen: Some(template),
                            ..
                        }) => template.clone(),
                        _ => return Outcome::NotFound,
                    }
                }
                page => page.template().to_owned(),
            };
            let menu: Vec<Value> = menu
                .into_iter()
                .map(|item| {
                    minijinja::context! {
                        label => item.label,
                        url => item.url,
                        parent => item.parent,
                    }
                })
                .collect();
            let mut vars = BTreeMap::new();
            vars.insert("menu".to_string(), Value::from(menu));
            let groups: Vec<Value> = who
                .user()
                .map(|u| u.groups().iter().map(|g| Value::from(g.as_str())).collect())
                .unwrap_or_default();
            vars.insert("my_groups".to_string(), Value::from(groups));
            let site = &req.site.site();
            vars.insert(
                "site_name".to_string(),
                Value::from(site.config.name.as_str()),
            );
            let modules: Vec<Value> = site.modules.iter().map(|m| Value::from(m.name)).collect();
            vars.insert("site_modules".to_string(), Value::from(modules));
            if self.page == Page::Dashboard {
                vars.insert("health".to_string(), health::health(req).await);
            }
            render_page(req, &template, StatusCode::OK, vars).await
        })
    }
}
