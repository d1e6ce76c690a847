//! The menu module (docs/menus.md): a site's named menus, each an ordered tree
//! of resources and plain links.
//!
//! A menu is a resource of the category `menu` (under `meta`, so it stays out
//! of the content lists) with the unique name `menu_<name>`, and its tree in
//! the property `menu`. Being a resource, it has everything resources have
//! with no code of its own: access rules, revisions, the JSON API
//! (`PATCH /api/rsc/{id}` changes it), backups, and the dependency capture: a
//! page that shows a menu is flushed when the menu or a title in it changes.
//!
//! - `m.menu("main")` in a template ([`tree`]; also `menu("main")`): the items
//!   the visitor may see;
//! - `GET /api/menu/{name}`: the same, as JSON, for a front end of its own;
//! - `[menu.<name>]` in `site.toml`: a menu made when the site has none of
//!   that name yet (the starter's navigation); after that the admin owns it;
//! - the admin edits it in the resource's editor (drag and drop, or the
//!   keyboard), and lists the menus under "Menus".

mod tree;

use std::sync::{Arc, LazyLock, OnceLock};

use include_dir::{Dir, include_dir};
use serde::Deserialize;
use serde_json::json;

use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{NewResource, Props, Store, StoreError, made_or_there};
use bulwark_web::events::MenuItem;
use bulwark_web::{
    Access, Api, Caller, Endpoint, Module, ModuleError, Outcome, Problem, RenderCost, RequestCtx,
    SiteSetup, read_settings, render_uncached,
};

pub use tree::{MAX_DEPTH, MAX_ITEMS, resource_name};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

pub const PRIORITY: i32 = 500;
/// The category of menus.
pub const CATEGORY: &str = "menu";

pub struct Menus;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(Menus)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "menu",
            PRIORITY,
            &[],
            Some(&TEMPLATES),
            Some(&LIB),
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

/// One `[menu.<name>]` of `site.toml`: the menu made when there is none yet.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Initial {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    items: Vec<toml::Value>,
}

fn settings(site: &Site) -> Result<Vec<(String, Initial)>, ModuleError> {
    let Some(table) = site.config.module_settings.get("menu") else {
        return Ok(Vec::new());
    };
    table
        .iter()
        .map(|(name, value)| {
            if bulwark_store::check_name("menu", name).is_err() {
                return Err(ModuleError::new(
                    "menu",
                    format!("[menu.{name}]: a menu's name is a-z, 0-9 and _"),
                ));
            }
            let table = value.as_table().cloned().ok_or_else(|| {
                ModuleError::new("menu", format!("[menu.{name}] must be a table"))
            })?;
            let initial: Initial = read_settings(&table)
                .map_err(|e| ModuleError::new("menu", format!("[menu.{name}]: {e}")))?;
            Ok((name.clone(), initial))
        })
        .collect()
}

impl Module for Menus {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api())
    }

    fn open_store(&self, site: &Site, store: &Store) -> Result<(), StoreError> {
        if store.category(CATEGORY).is_err() {
            made_or_there(store.create_category(CATEGORY, Some("meta"), "Menu"))?;
        }
        // A malformed `[menu]` is reported by `setup`, with its key.
        for (name, initial) in settings(site).unwrap_or_default() {
            let resource = resource_name(&name);
            if store.resource_by_name(&resource)?.is_some() {
                continue;
            }
            let items = serde_json::to_value(&initial.items)
                .map_err(|e| StoreError::invalid("menu", e.to_string()))?;
            let title = initial.title.unwrap_or_else(|| format!("Menu {name}"));
            let props = Props::try_from(json!({ "title": title, "menu": items }))?;
            let made = store.create_resource(
                NewResource::new(CATEGORY, props)
                    .named(&resource)
                    .published(true),
            );
            made_or_there(made.map(drop))?;
        }
        Ok(())
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        settings(site.site())?;
        site.add_template_extension(tree::register);
        site.models()
            .add_model("menu", minijinja::Value::from_function(tree::menu));
        site.add_admin_menu_item(
            PRIORITY,
            MenuItem::screen("Menus", "/admin/menus", "admin_menus.tpl"),
        );
        Ok(())
    }
}

pub fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        Api::new().endpoint(Endpoint::new("menu", "/api/menu/{name}").get(
            Access::Anyone,
            || {
                let item = json!({
                    "type": "object",
                    "required": ["title", "url", "id", "children"],
                    "properties": {
                        "title": {"type": "string"},
                        "url": {"type": "string"},
                        "id": {"type": ["integer", "null"]},
                        "children": {"type": "array", "items": {"type": "object"}},
                    },
                });
                json!({
                    "operationId": "getMenu",
                    "summary": "A menu as the caller may see it",
                    "description": "The items of menu `name` (the resource `menu_<name>`) the \
                        caller may see, in order, each with its title, URL, resource id (null for \
                        a plain link) and children. 404 when there is no such menu, or the \
                        caller may not see it.",
                    "tags": ["menu"],
                    "parameters": [{
                        "name": "name", "in": "path", "required": true,
                        "schema": {"type": "string", "pattern": "^[a-z0-9_]{1,80}$"},
                    }],
                    "responses": {
                        "200": {
                            "description": "The menu",
                            "content": {"application/json": {"schema": {
                                "type": "object",
                                "required": ["name", "items"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "items": {"type": "array", "items": item},
                                },
                            }}},
                        },
                    },
                })
            },
            |req, caller| Box::pin(get_menu(req, caller)),
        ))
    });
    &API
}

/// Rendered by `api_menu.json.tpl`, through the same `menu()` as pages: one
/// decision about what the caller may see.
async fn get_menu(req: &RequestCtx<'_>, _caller: Caller<'_>) -> Result<Outcome, Problem> {
    let name = req.arg("name").unwrap_or_default().to_owned();
    if bulwark_store::check_name("menu", &name).is_err() {
        return Err(Problem::not_found("no such menu"));
    }
    let mut vars = std::collections::BTreeMap::new();
    vars.insert("name".to_owned(), minijinja::Value::from(name));
    match render_uncached(req, &RenderCost::default(), "api_menu.json.tpl", vars).await {
        Outcome::NotFound => Err(Problem::not_found("no such menu, or not one you may see")),
        outcome => Ok(outcome),
    }
}
