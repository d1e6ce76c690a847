//! Built-in modules: templates, static files and dispatch rules compiled into the
//! binary from the repository's `modules/` folder.
//!
//! Each module is a folder holding a `module.toml` (priority and dispatch rules),
//! `templates/` and `lib/`, the layout Zotonic uses, so a module's parts stay
//! together. Lookups go site first, then enabled modules by priority (lower number
//! first), then `core`, which every site has.

use std::sync::OnceLock;

use include_dir::{Dir, include_dir};
use serde::Deserialize;

use crate::config::parse_dispatch_rules;
use crate::dispatch::DispatchRule;

static MODULES_DIR: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../modules");

/// A module compiled into this binary.
#[derive(Debug)]
pub struct Module {
    pub name: &'static str,
    pub priority: i32,
    pub templates: Option<&'static Dir<'static>>,
    pub lib: Option<&'static Dir<'static>>,
    pub rules: Vec<DispatchRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModuleToml {
    priority: i32,
    #[serde(default)]
    dispatch: Vec<toml::Table>,
}

/// Every built-in module, sorted by priority.
pub fn builtin_modules() -> &'static [Module] {
    static MODULES: OnceLock<Vec<Module>> = OnceLock::new();
    MODULES.get_or_init(|| {
        let mut modules: Vec<Module> = MODULES_DIR
            .dirs()
            .map(|dir| {
                let name = dir.path().to_str().expect("module names are UTF-8");
                let text = dir
                    .get_file(dir.path().join("module.toml"))
                    .and_then(|f| f.contents_utf8())
                    .unwrap_or_else(|| panic!("modules/{name}/module.toml is missing"));
                let raw: ModuleToml = toml::from_str(text)
                    .unwrap_or_else(|e| panic!("modules/{name}/module.toml: {e}"));
                let rules = parse_dispatch_rules(&raw.dispatch, "dispatch")
                    .unwrap_or_else(|(k, p)| panic!("modules/{name}/module.toml: {k}: {p}"));
                Module {
                    name,
                    priority: raw.priority,
                    templates: dir.get_dir(dir.path().join("templates")),
                    lib: dir.get_dir(dir.path().join("lib")),
                    rules,
                }
            })
            .collect();
        modules.sort_by_key(|m| (m.priority, m.name));
        modules
    })
}

pub fn builtin_module_names() -> Vec<&'static str> {
    builtin_modules().iter().map(|m| m.name).collect()
}

/// The modules a site uses, in lookup order: enabled ones by priority, `core` last.
pub(crate) fn enabled_modules(names: &[String]) -> Vec<&'static Module> {
    let mut enabled: Vec<&'static Module> = builtin_modules()
        .iter()
        .filter(|m| m.name != "core" && names.iter().any(|n| n == m.name))
        .collect();
    enabled.extend(builtin_modules().iter().filter(|m| m.name == "core"));
    enabled
}

/// Looks a file up inside an embedded folder (`dir` is e.g. `core/templates`).
pub fn embedded_file(
    dir: &'static Dir<'static>,
    rel: &str,
) -> Option<&'static include_dir::File<'static>> {
    dir.get_file(dir.path().join(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_is_built_in_and_always_last() {
        let names = builtin_module_names();
        assert!(names.contains(&"core"));
        let enabled = enabled_modules(&["seo".to_string()]);
        assert_eq!(enabled.last().unwrap().name, "core");
        assert_eq!(enabled[0].name, "seo");
    }

    #[test]
    fn core_contributes_lib_and_file_rules() {
        let core = builtin_modules().iter().find(|m| m.name == "core").unwrap();
        assert!(core.rules.iter().any(|r| r.name == "lib"));
        assert!(embedded_file(core.templates.unwrap(), "error.tpl").is_some());
    }
}
