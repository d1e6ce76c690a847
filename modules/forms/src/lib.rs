//! The forms module (docs/forms.md): forms an editor builds in the admin,
//! placed on pages, whose answers are stored, listed, exported as CSV and
//! mailed.
//!
//! - A form is a resource of the category `form` (under `meta`), with its
//!   fields in the property `fields` ([`definition`]), the addresses told of
//!   each answer in `recipients`, and what the visitor reads afterwards in
//!   `thanks`. Being a resource it has the access rules, revisions, the JSON
//!   API and backups with no code of its own. `[forms.<name>]` in `site.toml`
//!   makes the form `form_<name>` when the site has none yet (the starter's
//!   contact form); after that the admin owns it.
//! - Templates place one with `{% set form = m.forms("contact") %}{% include
//!   "_form.tpl" %}`; a form's own page (`/page/{id}`) shows it too
//!   (`page.form.tpl`). Read through the models, so the page depends on the
//!   form and stays in the page cache: the ticket against bots is asked for by
//!   `forms.js` when the visitor starts typing, as for comments.
//! - Answers come to `POST /forms/{id}/submit` ([`submit`]): a plain form or
//!   `multipart/form-data` with files, which go through the media module's
//!   checks and become media resources only editors see. The visitor meets
//!   the auth module's defences for visitors' posts; each field is checked
//!   and a wrong one named. The answers are stored in `form_submission`
//!   ([`table`]) and mailed to the recipients through the mail module.
//! - Editors read them on the admin's Forms screen, through
//!   `/api/forms/{id}/submissions` and as CSV ([`api`]).

mod api;
pub mod definition;
mod model;
mod submit;
pub mod table;

use std::sync::{Arc, OnceLock};

use include_dir::{Dir, include_dir};
use serde::Deserialize;
use serde_json::json;

use bulwark_module_auth::visitor_posts::PostLimits;
use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{Migration, NewResource, Props, Store, StoreError, made_or_there};
use bulwark_web::events::MenuItem;
use bulwark_web::{Api, Module, ModuleError, SiteNotifier, SiteSetup, read_settings};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");
static LIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

pub const PRIORITY: i32 = 480;
/// The category of forms.
pub const CATEGORY: &str = "form";

const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "forms",
    sqlite: include_str!("../migrations/sqlite/0001_forms.sql"),
    postgres: include_str!("../migrations/postgres/0001_forms.sql"),
}];

/// The unique name of the resource that holds form `name`.
pub fn resource_name(name: &str) -> String {
    format!("form_{name}")
}

pub struct Forms;

/// The module, for the binary's registry.
pub fn module() -> Arc<dyn Module> {
    Arc::new(Forms)
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "forms",
            PRIORITY,
            &["auth"],
            Some(&TEMPLATES),
            Some(&LIB),
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api::api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

/// `[forms]` in `site.toml`: the defences' settings, and `[forms.<name>]`
/// tables, each a form made when there is none of that name yet.
#[derive(Debug, Clone)]
pub(crate) struct FormSettings {
    pub limits: PostLimits,
    pub initial: Vec<(String, Initial)>,
}

/// One `[forms.<name>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Initial {
    title: Option<String>,
    #[serde(default)]
    fields: Vec<toml::Value>,
    #[serde(default)]
    recipients: Vec<String>,
    thanks: Option<String>,
    submit: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Limits {
    min_fill_seconds: Option<u64>,
    per_minute: Option<u32>,
}

fn settings(site: &Site) -> Result<FormSettings, ModuleError> {
    let mut limits = toml::Table::new();
    let mut initial = Vec::new();
    for (key, value) in site
        .config
        .module_settings
        .get("forms")
        .into_iter()
        .flatten()
    {
        match value.as_table() {
            Some(table) => {
                if bulwark_store::check_name("form", key).is_err() {
                    return Err(ModuleError::new(
                        "forms",
                        format!("[forms.{key}]: a form's name is a-z, 0-9 and _"),
                    ));
                }
                let form: Initial = read_settings(table)
                    .map_err(|e| ModuleError::new("forms", format!("[forms.{key}]: {e}")))?;
                let fields = serde_json::to_value(&form.fields)
                    .map_err(|e| ModuleError::new("forms", format!("[forms.{key}]: {e}")))?;
                definition::check_definition(&fields).map_err(|why| {
                    ModuleError::new("forms", format!("[forms.{key}] fields: {why}"))
                })?;
                initial.push((key.clone(), form));
            }
            None => {
                limits.insert(key.clone(), value.clone());
            }
        }
    }
    let limits: Limits = read_settings(&limits)?;
    let per_minute = limits.per_minute.unwrap_or(5);
    if per_minute == 0 {
        return Err(ModuleError::new("per_minute", "must be at least 1"));
    }
    Ok(FormSettings {
        limits: PostLimits {
            min_fill: std::time::Duration::from_secs(limits.min_fill_seconds.unwrap_or(3)),
            per_minute,
        },
        initial,
    })
}

/// What a site's form handlers share.
pub(crate) struct SiteForms {
    pub settings: FormSettings,
    pub notifier: SiteNotifier,
    /// Where links in mails start (`https://example.org`).
    pub origin: String,
}

impl Module for Forms {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api::api())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn open_store(&self, site: &Site, store: &Store) -> Result<(), StoreError> {
        if store.category(CATEGORY).is_err() {
            made_or_there(store.create_category(CATEGORY, Some("meta"), "Form"))?;
        }
        // A malformed `[forms]` is reported by `setup`, with its key.
        let initial = settings(site).map(|s| s.initial).unwrap_or_default();
        for (name, form) in initial {
            let resource = resource_name(&name);
            if store.resource_by_name(&resource)?.is_some() {
                continue;
            }
            let fields = serde_json::to_value(&form.fields)
                .map_err(|e| StoreError::invalid("fields", e.to_string()))?;
            let props = Props::try_from(json!({
                "title": form.title.unwrap_or_else(|| format!("Form {name}")),
                "fields": fields,
                "recipients": form.recipients,
                "thanks": form.thanks.unwrap_or_else(|| "Thank you: we received your answers.".to_owned()),
                "submit": form.submit.unwrap_or_else(|| "Send".to_owned()),
            }))?;
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
        let settings = settings(site.site())?;
        site.models()
            .add_model("forms", minijinja::Value::from_function(model::form));
        site.provide(Arc::new(SiteForms {
            settings,
            notifier: site.notifier(),
            origin: site.site().config.origin(),
        }));
        site.add_admin_menu_item(
            PRIORITY,
            MenuItem::screen("Forms", "/admin/forms", "admin_forms.tpl"),
        );
        Ok(())
    }
}

/// The form a request's `{id}` names, if `who` may see it (`None`: the
/// site's token, who sees everything).
pub(crate) async fn find_form(
    req: &bulwark_web::RequestCtx<'_>,
    who: Option<&bulwark_acl::Principal>,
) -> Result<bulwark_store::Resource, bulwark_web::Problem> {
    use bulwark_acl::AccessPolicy;
    let missing = || bulwark_web::Problem::not_found("no such form");
    let id = bulwark_store::ResourceId(bulwark_web::id_arg(req, "id").ok_or_else(missing)?);
    let (form, is_form) = req
        .site
        .models()
        .store
        .run(move |s| {
            let form = s.resource(id)?;
            let is_form = form.is_some() && s.is_a(id, CATEGORY)?;
            Ok::<_, StoreError>((form, is_form))
        })
        .await?;
    form.filter(|f| is_form && who.is_none_or(|p| req.site.policy().may_see(p, f)))
        .ok_or_else(missing)
}
