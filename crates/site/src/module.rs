//! What a module brings to a site that the site layer must know: its name, its
//! place in the lookup order, the modules it needs, its templates, static files
//! and dispatch rules. Module *code* (controllers, observers, template functions)
//! is the `web` crate's business; a module crate builds its manifest from its own
//! folder (`modules/<name>/templates`, `lib/`, `module.toml`) and hands it over.
//!
//! Lookups go site first, then enabled modules by priority (lower number first),
//! then `core`, which every site has.

use std::sync::Arc;

use include_dir::Dir;
use serde::Deserialize;

use crate::config::parse_dispatch_rules;
use crate::dispatch::{Controller, DispatchRule, RulePattern};

/// A module as the site layer sees it.
#[derive(Debug)]
pub struct ModuleManifest {
    pub name: &'static str,
    /// Lookup order among the enabled modules: lower first (`core` is 1000).
    pub priority: i32,
    /// Modules a site must enable too for this one to work.
    pub depends: &'static [&'static str],
    pub templates: Option<&'static Dir<'static>>,
    pub lib: Option<&'static Dir<'static>>,
    /// gettext catalogs of its templates' texts, `<language>.po`.
    pub translations: Option<&'static Dir<'static>>,
    pub rules: Vec<DispatchRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModuleToml {
    #[serde(default)]
    dispatch: Vec<toml::Table>,
}

/// Why a module's own files do not make a manifest: a bug in the module, found
/// when the binary starts.
#[derive(Debug, thiserror::Error)]
#[error("module {module}: module.toml: {key}: {problem}")]
pub struct ManifestError {
    pub module: &'static str,
    pub key: String,
    pub problem: String,
}

impl ModuleManifest {
    /// A manifest from a module's embedded folders and its `module.toml` text
    /// (`[[dispatch]]` rules, like a site's).
    pub fn new(
        name: &'static str,
        priority: i32,
        depends: &'static [&'static str],
        templates: Option<&'static Dir<'static>>,
        lib: Option<&'static Dir<'static>>,
        module_toml: &str,
    ) -> Result<ModuleManifest, ManifestError> {
        let error = |key: String, problem: String| ManifestError {
            module: name,
            key,
            problem,
        };
        let raw: ModuleToml =
            toml::from_str(module_toml).map_err(|e| error(String::new(), e.to_string()))?;
        let rules = parse_dispatch_rules(&raw.dispatch, "dispatch")
            .map_err(|e| error(e.key, e.problem.to_string()))?;
        Ok(ModuleManifest {
            name,
            priority,
            depends,
            templates,
            lib,
            translations: None,
            rules,
        })
    }

    /// The module's translations of its templates' texts (`<language>.po`).
    pub fn with_translations(mut self, dir: &'static Dir<'static>) -> ModuleManifest {
        self.translations = Some(dir);
        self
    }
}

impl ModuleManifest {
    /// Adds a rule for each endpoint the module declares in code, named like the
    /// endpoint (`(name, path)`), after the rules of its `module.toml`.
    pub fn with_endpoints<'e>(
        mut self,
        endpoints: impl IntoIterator<Item = (&'e str, &'e str)>,
    ) -> Result<ModuleManifest, ManifestError> {
        for (name, path) in endpoints {
            let error = |problem: String| ManifestError {
                module: self.name,
                key: format!("endpoint {name:?}"),
                problem,
            };
            if self.rules.iter().any(|r| r.name == name) {
                return Err(error("a rule of this name exists already".into()));
            }
            let pattern = RulePattern::parse(path).map_err(|e| error(e.to_string()))?;
            self.rules.push(DispatchRule {
                name: name.to_string(),
                pattern,
                controller: Controller::Endpoint {
                    name: name.to_string(),
                },
            });
        }
        Ok(self)
    }
}

/// The modules a site uses, in lookup order: enabled ones by priority, `core` last.
pub(crate) fn enabled_modules(
    available: &[Arc<ModuleManifest>],
    names: &[String],
) -> Vec<Arc<ModuleManifest>> {
    let mut enabled: Vec<Arc<ModuleManifest>> = available
        .iter()
        .filter(|m| m.name != "core" && names.iter().any(|n| n == m.name))
        .cloned()
        .collect();
    enabled.sort_by_key(|m| (m.priority, m.name));
    enabled.extend(available.iter().filter(|m| m.name == "core").cloned());
    enabled
}

/// Looks a file up inside an embedded folder.
pub fn embedded_file(
    dir: &'static Dir<'static>,
    rel: &str,
) -> Option<&'static include_dir::File<'static>> {
    dir.get_file(dir.path().join(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &'static str, priority: i32) -> Arc<ModuleManifest> {
        Arc::new(ModuleManifest::new(name, priority, &[], None, None, "").unwrap())
    }

    #[test]
    fn core_is_always_last_and_the_others_go_by_priority() {
        let available = [manifest("core", 1000), manifest("b", 10), manifest("a", 20)];
        let enabled = enabled_modules(&available, &["a".to_string(), "b".to_string()]);
        let names: Vec<_> = enabled.iter().map(|m| m.name).collect();
        assert_eq!(names, ["b", "a", "core"]);
    }

    #[test]
    fn a_broken_module_toml_names_the_module_and_the_key() {
        let e = ModuleManifest::new(
            "x",
            1,
            &[],
            None,
            None,
            "[[dispatch]]\nname = \"a\"\npath = \"/a\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("module x") && e.contains("dispatch[0].controller"),
            "{e}"
        );
    }
}
