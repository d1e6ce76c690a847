//! Templates: one minijinja environment per site.
//!
//! Templates are found through a chain: the site's own `templates/` folder first,
//! then each enabled module's templates by priority, then `core`, so a site replaces
//! any template by putting a file of the same name in its folder. Output of `.html`,
//! `.htm`, `.xml` and `.tpl` templates is HTML-escaped (minijinja leaves `.tpl` alone
//! by default), `.json` templates are JSON-escaped.
//!
//! Compiled templates are kept in the environment. In development mode every lookup
//! checks whether the file changed (or whether a site file now overrides a module
//! template) and recompiles it; in production nothing is re-read.
//!
//! A fuel limit stops runaway templates (`{% for i in range(10**9) %}`) with an
//! error instead of occupying a worker forever.
//!
//! Deliberately not here: where renders run (the `web` crate decides) and who may
//! see what (`bulwark-acl`'s policy decides; the models ask it for every resource
//! and property a template reaches).
//!
//! ```
//! use std::sync::Arc;
//! let dir = tempfile::tempdir().unwrap();
//! let site_dir = dir.path().join("s");
//! std::fs::create_dir_all(site_dir.join("templates")).unwrap();
//! std::fs::write(site_dir.join("site.toml"), "hostname = \"s.test\"").unwrap();
//! std::fs::write(site_dir.join("templates/hi.tpl"), "Hi {{ who }}!").unwrap();
//! let site = Arc::new(bulwark_site::Site::load(&site_dir, false, &[]).unwrap());
//! let templates = bulwark_template::SiteTemplates::new(site, Default::default());
//! let html = templates
//!     .render("hi.tpl", minijinja::context! { who => "<b>you</b>" })
//!     .unwrap();
//! assert_eq!(html, "Hi &lt;b&gt;you&lt;&#x2f;b&gt;!");
//! ```

mod blocking;
mod error;
mod filters;
mod i18n;
mod models;
mod snapshot;

pub use blocking::off_the_runtime;
pub use error::{Location, RenderError, RenderErrorKind};
pub use i18n::{CatalogError, Catalogs, extract_texts, parse_po};
pub use models::{
    CachedPage, ModelKey, ModelRoot, ModelValue, PageUrls, PreparedHead, RenderLanguage,
    RenderScope, RscObject, SearchKey, SiteModels, StoreFailure, slug_in, slug_of,
};
pub use snapshot::{TemplateSnapshot, template_key};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bulwark_depcache::DependencyKey;
use bulwark_site::{Site, embedded_file};

use crate::error::PageMissing;
use minijinja::value::{Kwargs, Rest};
use minijinja::{AutoEscape, Environment, ErrorKind, TemplateSource, Value};

/// Adds functions, filters or globals to a site's template environment (a module's
/// contribution; see [`SiteTemplates::with_extensions`]).
pub type TemplateExtension = Arc<dyn Fn(&mut Environment<'static>) + Send + Sync>;

/// Options for a site's template environment.
#[derive(Debug, Clone)]
pub struct TemplateOptions {
    /// Recompile changed templates and fail loudly on missing `lib` files.
    pub dev: bool,
    /// Instructions a single render may execute before it is stopped.
    pub fuel: u64,
}

impl Default for TemplateOptions {
    fn default() -> Self {
        TemplateOptions {
            dev: false,
            fuel: 20_000_000,
        }
    }
}

/// The compiled templates of one site and the functions they may call.
pub struct SiteTemplates {
    env: Environment<'static>,
    site: Arc<Site>,
    /// Template sources handed to the compiler so far.
    compiles: Arc<AtomicU64>,
    /// The sources as they were when first asked for (at load).
    snapshot: std::sync::OnceLock<TemplateSnapshot>,
    /// The texts of `_()` in the site's languages.
    catalogs: Arc<Catalogs>,
    /// Whether a name is a template, as found the first time it was asked
    /// (a page asks per request which of `page.<category>.tpl` there is);
    /// `None` in dev mode, where files come and go.
    found: Option<std::sync::RwLock<HashMap<String, bool>>>,
}

impl SiteTemplates {
    pub fn new(site: Arc<Site>, options: TemplateOptions) -> SiteTemplates {
        SiteTemplates::with_extensions(site, options, &[])
    }

    /// A site's templates with functions, filters and globals that modules add
    /// (each extension runs once on the environment, after the built-in ones, so
    /// a module may replace a built-in function).
    pub fn with_extensions(
        site: Arc<Site>,
        options: TemplateOptions,
        extensions: &[TemplateExtension],
    ) -> SiteTemplates {
        let mut env = Environment::new();
        env.set_auto_escape_callback(auto_escape_for);
        env.set_fuel(Some(options.fuel));
        // Absent and not-visible resources are `undefined`; `m.rsc[id].title`
        // must then be empty rather than an error, whatever the template reaches.
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Chainable);
        env.set_debug(options.dev);
        env.set_auto_reload(options.dev);
        let compiles = Arc::new(AtomicU64::new(0));
        env.set_loader(template_loader(&site, options.dev, compiles.clone()));
        env.add_global(
            "site",
            Value::from(minijinja::value::Serde(SiteGlobal {
                name: site.name().as_str(),
                hostname: &site.config.hostname,
                languages: &site.config.languages,
                settings: &site.config.settings,
            })),
        );
        let lib = LibTags::new(site.clone(), options.dev);
        let dev = options.dev;
        env.add_function("lib", move |files: Rest<String>| lib.tags(&files));
        let url_site = site.clone();
        env.add_function(
            "url",
            move |state: &minijinja::State, name: &str, args: Rest<Value>, kwargs: Kwargs| {
                build_url(state, &url_site, name, &args, kwargs)
            },
        );
        env.add_function("random", |n: u32| -> u32 {
            rand::random_range(1..=n.max(1))
        });
        env.add_function("live", live_block);
        env.add_filter("date", filters::date);
        env.add_filter("source", filters::source);
        env.add_filter("plain", filters::plain);
        env.add_test("digits", filters::is_digits);
        env.add_function("not_found", || -> Result<Value, minijinja::Error> {
            Err(
                minijinja::Error::new(ErrorKind::InvalidOperation, "not_found() was called")
                    .with_source(PageMissing),
            )
        });
        env.add_function("cache", cache_block);
        let catalogs = Arc::new(Catalogs::load(&site));
        i18n::register(&mut env, catalogs.clone());
        for extend in extensions {
            extend(&mut env);
        }
        SiteTemplates {
            env,
            site,
            compiles,
            snapshot: std::sync::OnceLock::new(),
            catalogs,
            found: (!dev).then(Default::default),
        }
    }

    /// The site's translations of template texts.
    pub fn catalogs(&self) -> &Catalogs {
        &self.catalogs
    }

    /// How many template sources were compiled so far (first use, or a change
    /// in dev mode).
    pub fn compiles(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }

    pub fn site(&self) -> &Arc<Site> {
        &self.site
    }

    /// Whether a template of this name can be found (without compiling it).
    pub fn exists(&self, name: &str) -> bool {
        let Some(found) = &self.found else {
            return locate_template(&self.site, name).is_some();
        };
        if let Some(known) = found.read().expect("found").get(name) {
            return *known;
        }
        let exists = locate_template(&self.site, name).is_some();
        found
            .write()
            .expect("found")
            .insert(name.to_owned(), exists);
        exists
    }

    pub fn render(&self, name: &str, ctx: Value) -> Result<String, RenderError> {
        let template = self.env.get_template(name)?;
        Ok(template.render(ctx)?)
    }

    /// Compiles every template the site can see; returns the broken ones,
    /// and the translation catalogs that could not be read.
    pub fn check_all(&self) -> Vec<RenderError> {
        self.broken()
            .into_iter()
            .map(|(_, error)| error)
            .chain(self.catalogs.errors().iter().map(RenderError::other))
            .collect()
    }

    /// The templates that do not compile, by name (a template compiled
    /// before is not read again: it is the one this load serves).
    pub fn broken(&self) -> Vec<(String, RenderError)> {
        self.names()
            .into_iter()
            .filter_map(|name| {
                let error = self.env.get_template(&name).err()?;
                Some((name, RenderError::from(error)))
            })
            .collect()
    }

    /// Every template the site can see, by name.
    fn names(&self) -> Vec<String> {
        let mut names = Vec::new();
        collect_files(&self.site.templates_dir(), "", &mut names);
        for module in &self.site.modules {
            if let Some(dir) = module.templates {
                collect_embedded(dir, dir.path(), &mut names);
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// The templates' sources as they were when this was first called (the
    /// site's load reads them): what a reload compares with.
    pub fn snapshot(&self) -> &TemplateSnapshot {
        self.snapshot.get_or_init(|| {
            let sources: Vec<(String, std::borrow::Cow<'static, str>)> = self
                .names()
                .into_iter()
                .filter_map(|name| {
                    let text = locate_template(&self.site, &name)?.text;
                    Some((name, text))
                })
                .collect();
            TemplateSnapshot::of(sources.iter().map(|(n, t)| (n.clone(), t.as_ref())))
        })
    }

    /// The dependency key of a template, recorded by everything rendered
    /// from it.
    pub fn dependency_key(&self, name: &str) -> DependencyKey {
        self.snapshot().key(name)
    }
}

#[derive(serde::Serialize)]
struct SiteGlobal<'a> {
    name: &'a str,
    hostname: &'a str,
    /// The site's languages, its default first.
    languages: &'a [String],
    settings: &'a toml::Table,
}

fn auto_escape_for(name: &str) -> AutoEscape {
    match name.rsplit('.').next() {
        Some("html" | "htm" | "xml" | "tpl" | "svg") => AutoEscape::Html,
        Some("json") => AutoEscape::Json,
        _ => AutoEscape::None,
    }
}

fn template_loader(
    site: &Arc<Site>,
    dev: bool,
    compiles: Arc<AtomicU64>,
) -> impl Fn(&str) -> Result<Option<TemplateSource>, minijinja::Error> + Send + Sync + 'static {
    let site = site.clone();
    move |name| {
        let source = find_template_source(&site, name, dev);
        if source.is_some() {
            compiles.fetch_add(1, Ordering::Relaxed);
        }
        Ok(source)
    }
}

/// Where a template was found along the chain, and its text.
struct Located {
    text: std::borrow::Cow<'static, str>,
    /// The site's own file, with its size and time of change.
    site_file: Option<(PathBuf, std::fs::Metadata)>,
}

/// Looks a template up along the chain: the site's folder, then the enabled
/// modules by priority.
fn locate_template(site: &Site, name: &str) -> Option<Located> {
    if !bulwark_site::relative_path_is_safe(name) {
        return None;
    }
    let site_file = site.templates_dir().join(name);
    if let Ok(meta) = site_file.metadata()
        && let Ok(text) = std::fs::read_to_string(&site_file)
    {
        return Some(Located {
            text: text.into(),
            site_file: Some((site_file, meta)),
        });
    }
    let text = site
        .modules
        .iter()
        .filter_map(|m| m.templates)
        .find_map(|dir| embedded_file(dir, name))
        .and_then(|f| f.contents_utf8())?;
    Some(Located {
        text: text.into(),
        site_file: None,
    })
}

/// A template's source for the compiler. In `dev` mode the source carries a
/// check that notices edits, and for module templates the later appearance of
/// a site file that overrides them.
fn find_template_source(site: &Site, name: &str, dev: bool) -> Option<TemplateSource> {
    let located = locate_template(site, name)?;
    let source = TemplateSource::new(located.text);
    if !dev {
        return Some(source);
    }
    Some(match located.site_file {
        Some((site_file, meta)) => {
            let stamp = (meta.modified().ok(), meta.len());
            source.with_uptodate_check(move || {
                site_file
                    .metadata()
                    .map(|m| (m.modified().ok(), m.len()) == stamp)
                    .unwrap_or(false)
            })
        }
        None => {
            let site_file = site.templates_dir().join(name);
            source.with_uptodate_check(move || !site_file.exists())
        }
    })
}

/// `lib(...)`'s tags, kept per list of files as long as the site trusts a
/// file lookup (a page asks for the same few lists on every render; in
/// development mode nothing is kept).
struct LibTags {
    site: Arc<Site>,
    dev: bool,
    kept: std::sync::RwLock<HashMap<Vec<String>, (std::time::Instant, Value)>>,
}

/// Past this many lists kept, `lib()`'s tags start over (names made at
/// render time cannot grow memory).
const LIB_TAGS_MAX: usize = 1_000;

impl LibTags {
    fn new(site: Arc<Site>, dev: bool) -> LibTags {
        LibTags {
            site,
            dev,
            kept: Default::default(),
        }
    }

    fn tags(&self, files: &[String]) -> Result<Value, minijinja::Error> {
        let trusted = self.site.lib.recheck();
        if trusted.is_zero() {
            return lib_tags(&self.site, self.dev, files);
        }
        if let Some((at, tags)) = self.kept.read().expect("lib tags").get(files)
            && at.elapsed() < trusted
        {
            return Ok(tags.clone());
        }
        let tags = lib_tags(&self.site, self.dev, files)?;
        let mut kept = self.kept.write().expect("lib tags");
        if kept.len() >= LIB_TAGS_MAX {
            kept.clear();
        }
        kept.insert(files.to_vec(), (std::time::Instant::now(), tags.clone()));
        Ok(tags)
    }
}

fn lib_tags(site: &Site, dev: bool, files: &[String]) -> Result<Value, minijinja::Error> {
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    match site.lib.combined_urls(&names) {
        Ok(urls) => {
            let mut html = String::new();
            for (ext, url) in urls {
                let url = escape_html(&url);
                match ext.as_str() {
                    "css" => html.push_str(&format!(
                        r#"<link href="{url}" type="text/css" media="all" rel="stylesheet">"#
                    )),
                    "js" => html.push_str(&format!(r#"<script src="{url}"></script>"#)),
                    _ => html.push_str(&url),
                }
            }
            Ok(Value::from_safe_string(html))
        }
        Err(problem) if dev => Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            problem.to_string(),
        )),
        Err(problem) => {
            tracing::warn!(site = %site.name(), "lib(): {problem}");
            Ok(Value::from_safe_string(format!(
                "<!-- lib: {} -->",
                escape_html(&problem.to_string()).replace("--", "- -")
            )))
        }
    }
}

/// `{% call cache(ttl=3600) %}...{% endcall %}`: the block's output, kept in the
/// site's depcache with the dependency keys its render read, so it is dropped when
/// the data it shows changes. Options: `key` (default: the template and the block's
/// position), `vary="user"` (one copy per user; by default one per access profile,
/// so two roles never share a fragment), `deps=[...]` extra dependency keys. A hit
/// still adds the fragment's keys to the page, so a page cached around it follows
/// them too.
fn cache_block(state: &mut minijinja::State, kwargs: Kwargs) -> Result<Value, minijinja::Error> {
    let caller: Value = kwargs.get("caller")?;
    let ttl: Option<u64> = kwargs.get("ttl")?;
    let explicit_key: Option<String> = kwargs.get("key")?;
    let vary: Option<String> = kwargs.get("vary")?;
    let extra: Option<Vec<String>> = kwargs.get("deps")?;
    kwargs.assert_all_used()?;
    let n = state
        .get_temp("cache_count")
        .and_then(|v| v.as_i64())
        .unwrap_or(0)
        + 1;
    state.set_temp("cache_count", Value::from(n));
    let Some(scope) = RenderScope::of(state) else {
        // No models in this render: nothing to key or invalidate by.
        return caller.call(state, &[]);
    };
    // By default a fragment is shared by everyone with the same access profile
    // (all anonymous visitors, all administrators); `vary="user"` keeps one per
    // logged-in user, for fragments that show who is looking.
    let principal = scope.principal();
    let user = match vary.as_deref() {
        Some("user") => principal.user_id(),
        Some("profile") | None => None,
        Some(other) => {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("cache(vary={other:?}): use \"profile\" (the default) or \"user\""),
            ));
        }
    };
    // Per language too, like pages: a fragment may show `m.req.language`.
    let key = ModelKey::Fragment {
        profile: principal.cache_profile(),
        user,
        language: scope.language().unwrap_or_default(),
        template: state.name().to_string(),
        block: explicit_key.unwrap_or_else(|| n.to_string()),
    };
    let cache = &scope.models().cache;
    if let Some(hit) = cache.get(&key)
        && let ModelValue::Fragment { html, deps } = &*hit
    {
        for d in deps.iter() {
            scope.depend(d);
        }
        scope.models().fragment_hits.fetch_add(1, Ordering::Relaxed);
        return Ok(Value::from_safe_string(html.to_string()));
    }
    scope
        .models()
        .fragment_misses
        .fetch_add(1, Ordering::Relaxed);
    scope.begin_fragment();
    // Markup of the template it sits in: a reload that changes it drops it.
    scope.depend(&snapshot::template_key(state.name()));
    // Keys a template names itself: the one place a key is spelt from a string.
    for d in extra.iter().flatten() {
        scope.depend(&DependencyKey::new(d));
    }
    let rendered = caller.call(state, &[]);
    let deps = scope.end_fragment();
    let html = rendered?.to_string();
    let value = ModelValue::Fragment {
        html: html.as_str().into(),
        deps: deps.iter().map(|(k, _)| k.clone()).collect(),
    };
    let ttl = std::time::Duration::from_secs(ttl.unwrap_or(3600));
    if scope.failure().is_none() {
        scope.models().store_if_unchanged(key, value, ttl, &deps);
    }
    Ok(Value::from_safe_string(html))
}

/// `{% call live("rsc/" ~ rsc.id) %}...{% endcall %}`: the block, wrapped in an
/// element that the browser re-fetches when the topic publishes (with the `push`
/// module's `js/bulwark-live.js`). Ids are numbered per render, so they are stable
/// between the page and its re-fetch.
fn live_block(
    state: &mut minijinja::State,
    topic: String,
    kwargs: Kwargs,
) -> Result<Value, minijinja::Error> {
    let caller: Value = kwargs.get("caller")?;
    let tag: Option<String> = kwargs.get("tag")?;
    kwargs.assert_all_used()?;
    let tag = tag.unwrap_or_else(|| "div".to_string());
    if !tag.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            "live(): tag must be a plain element name",
        ));
    }
    let n = state
        .get_temp("live_count")
        .and_then(|v| v.as_i64())
        .unwrap_or(0)
        + 1;
    state.set_temp("live_count", Value::from(n));
    let inner = caller.call(state, &[])?;
    Ok(Value::from_safe_string(format!(
        r#"<{tag} id="live-{n}" data-live="{}">{inner}</{tag}>"#,
        escape_html(&topic)
    )))
}

/// A URL for a template: as it is when HTML gives none of its characters a
/// meaning (`/` need not be escaped anywhere), else left to autoescape.
pub fn url_value(url: String) -> Value {
    if url.contains(['&', '"', '\'', '<', '>']) {
        Value::from(url)
    } else {
        Value::from_safe_string(url)
    }
}

/// `s` made safe inside HTML text and quoted attributes (and XML): `&`, `"`,
/// `<` and `>` escaped. The one escape for HTML the Rust code writes itself
/// (templates escape on their own).
pub fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `url("rule", arg, name=value)`: the path of a dispatch rule, with the
/// render's language prefix (`/nl`) when its URL had one; `language="en"`
/// for the path in another language on a site with language URLs.
fn build_url(
    state: &minijinja::State,
    site: &Site,
    name: &str,
    args: &[Value],
    kwargs: Kwargs,
) -> Result<Value, minijinja::Error> {
    let positional: Vec<String> = args.iter().map(|v| v.to_string()).collect();
    let mut named = Vec::new();
    let mut language = None;
    for key in kwargs.args() {
        let value: Value = kwargs.get(key)?;
        if key == "language" {
            language = Some(value.to_string());
            continue;
        }
        named.push((key.to_string(), value.to_string()));
    }
    let url = site
        .router
        .url_for(name, &positional, &named)
        .map_err(|e| minijinja::Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let prefixed = site.config.language.urls == bulwark_site::LanguageUrls::Prefix;
    let url = match language {
        Some(lang) if prefixed && site.config.languages.contains(&lang) => format!("/{lang}{url}"),
        Some(lang) if prefixed => {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("url(language={lang:?}): not one of the site's languages"),
            ));
        }
        Some(_) => url,
        // The render's language prefix (`/nl`): only a site with languages
        // in its URLs has one, and finding the render costs a lookup.
        None if prefixed => match RenderScope::of(state) {
            Some(scope) if !scope.url_prefix().is_empty() => format!("{}{url}", scope.url_prefix()),
            _ => url,
        },
        None => url,
    };
    Ok(if url.contains('&') {
        Value::from(url)
    } else {
        Value::from_safe_string(url)
    })
}

fn collect_files(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if entry.path().is_dir() {
            collect_files(&entry.path(), &rel, out);
        } else {
            out.push(rel);
        }
    }
}

fn collect_embedded(dir: &include_dir::Dir<'static>, root: &Path, out: &mut Vec<String>) {
    for file in dir.files() {
        if let Ok(rel) = file.path().strip_prefix(root) {
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    for sub in dir.dirs() {
        collect_embedded(sub, root, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates(files: &[(&str, &str)]) -> (tempfile::TempDir, SiteTemplates) {
        let dir = tempfile::tempdir().unwrap();
        let site_dir = dir.path().join("s");
        std::fs::create_dir_all(site_dir.join("templates")).unwrap();
        std::fs::write(site_dir.join("site.toml"), "hostname = \"s.test\"").unwrap();
        for (name, text) in files {
            std::fs::write(site_dir.join("templates").join(name), text).unwrap();
        }
        // The core module's real templates, as the binary ships them.
        static CORE_TEMPLATES: include_dir::Dir<'static> =
            include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../modules/core/templates");
        let core =
            bulwark_site::ModuleManifest::new("core", 1000, &[], Some(&CORE_TEMPLATES), None, "")
                .unwrap();
        let site = Arc::new(Site::load(&site_dir, false, &[Arc::new(core)]).unwrap());
        (dir, SiteTemplates::new(site, TemplateOptions::default()))
    }

    #[test]
    fn live_blocks_are_numbered_and_escape_their_topic() {
        let (_dir, t) = templates(&[(
            "p.tpl",
            r#"{% call live("rsc/1") %}<b>x</b>{% endcall %}{% call live('a"b', tag="section") %}y{% endcall %}"#,
        )]);
        assert_eq!(
            t.render("p.tpl", Value::UNDEFINED).unwrap(),
            r#"<div id="live-1" data-live="rsc/1"><b>x</b></div><section id="live-2" data-live="a&quot;b">y</section>"#
        );
    }

    #[test]
    fn a_site_template_overrides_a_core_template() {
        let (_dir, t) = templates(&[("error.tpl", "mine")]);
        assert_eq!(t.render("error.tpl", Value::UNDEFINED).unwrap(), "mine");
        assert!(
            t.render("404.tpl", Value::UNDEFINED)
                .unwrap()
                .contains("mine")
        );
    }

    fn kind_of(t: &SiteTemplates, name: &str) -> RenderError {
        t.render(name, Value::UNDEFINED).unwrap_err()
    }

    #[test]
    fn a_syntax_error_is_a_syntax_error_with_its_template_and_line() {
        let (_dir, t) = templates(&[("bad.tpl", "ok\n{% if %}")]);
        let err = kind_of(&t, "bad.tpl");
        assert_eq!(err.kind, RenderErrorKind::Syntax);
        assert_eq!(
            err.location,
            Some(Location {
                template: "bad.tpl".into(),
                line: Some(2)
            })
        );
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn a_missing_template_is_template_not_found() {
        let (_dir, t) = templates(&[]);
        assert_eq!(
            kind_of(&t, "nope.tpl").kind,
            RenderErrorKind::TemplateNotFound
        );
    }

    #[test]
    fn a_runaway_loop_runs_out_of_fuel() {
        let (_dir, t) = templates(&[(
            "loop.tpl",
            "{% for i in range(100000) %}{{ i }}{% endfor %}",
        )]);
        let t = SiteTemplates::new(
            t.site().clone(),
            TemplateOptions {
                fuel: 1000,
                ..TemplateOptions::default()
            },
        );
        assert_eq!(kind_of(&t, "loop.tpl").kind, RenderErrorKind::OutOfFuel);
    }

    #[test]
    fn calling_not_found_is_page_missing_even_inside_an_include() {
        let (_dir, t) = templates(&[
            ("gone.tpl", "before {{ not_found() }}"),
            ("outer.tpl", "{% include 'gone.tpl' %}"),
        ]);
        assert_eq!(kind_of(&t, "gone.tpl").kind, RenderErrorKind::PageMissing);
        assert_eq!(kind_of(&t, "outer.tpl").kind, RenderErrorKind::PageMissing);
    }

    #[test]
    fn tpl_files_are_escaped_and_txt_files_are_not() {
        let (_dir, t) = templates(&[("a.tpl", "{{ v }}"), ("a.txt", "{{ v }}")]);
        let ctx = || minijinja::context! { v => "<i>" };
        assert_eq!(t.render("a.tpl", ctx()).unwrap(), "&lt;i&gt;");
        assert_eq!(t.render("a.txt", ctx()).unwrap(), "<i>");
    }
}
