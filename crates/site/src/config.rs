//! `site.toml`: reading and validating a site's configuration.
//!
//! Validation happens once, when a site is loaded, and every problem names the file,
//! the key and what is wrong with it, so a typo in a config never surfaces later as a
//! puzzling 404 or 500. Dispatch rules are parsed in two steps (common keys, then the
//! options of the named controller) so an unknown option is reported against the
//! controller that does not know it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use std::collections::BTreeMap;

use crate::dispatch::{Controller, DispatchRule, PatternError, RulePattern};
use crate::error::SiteError;

/// The validated contents of a `site.toml`.
#[derive(Debug, Clone)]
pub struct SiteConfig {
    pub name: SiteName,
    /// Canonical host name, lower case, without port.
    pub hostname: String,
    /// Other host names that redirect (301) to `hostname`.
    pub aliases: Vec<String>,
    /// Unknown hosts are served by the site marked default.
    pub is_default: bool,
    /// Enabled modules, by name (the `core` module is always enabled).
    pub modules: Vec<String>,
    /// Languages the site is written in, lower case (`en`, `pt-br`); the first is
    /// the default. A visitor's `Accept-Language` picks one of them.
    pub languages: Vec<String>,
    pub language: LanguageSettings,
    /// Free-form settings, visible to templates as `site.settings`.
    pub settings: toml::Table,
    pub rules: Vec<DispatchRule>,
    pub tls: Option<TlsSettings>,
    /// Sections named after a module (`[push]`, `[seo]`), for that module to read
    /// and validate when the site loads: the site layer does not know them.
    pub module_settings: BTreeMap<String, toml::Table>,
    pub database: DatabaseSettings,
    pub api: ApiSettings,
    pub page_cache: PageCacheSettings,
    pub access: AccessSettings,
    pub headers: SecurityHeaderSettings,
}

impl SiteConfig {
    /// Whether a page rendered under `other` is what one rendered under this
    /// configuration would be: every part a render reads is the same (the
    /// host names, the modules and their sections, the languages, the
    /// settings, the rules, TLS, the database, the access rules). The headers
    /// added to each answer, the API token, the page cache's timing and
    /// being the default site are not read by a render. Spelled out field by
    /// field, so a new field must be placed on one side or the other.
    pub fn renders_like(&self, other: &SiteConfig) -> bool {
        let SiteConfig {
            name,
            hostname,
            aliases,
            is_default: _,
            modules,
            languages,
            language,
            settings,
            rules,
            tls,
            module_settings,
            database,
            api: _,
            page_cache: _,
            access,
            headers: _,
        } = self;
        *name == other.name
            && *hostname == other.hostname
            && *aliases == other.aliases
            && *modules == other.modules
            && *languages == other.languages
            && *language == other.language
            && *settings == other.settings
            && *rules == other.rules
            && *tls == other.tls
            && *module_settings == other.module_settings
            && *database == other.database
            && *access == other.access
    }

    /// Every host name the site answers to: its own, then its aliases.
    pub fn host_names(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.hostname).chain(&self.aliases)
    }

    /// The scheme and canonical host name links made outside a request start
    /// with (`https://example.org`): a mail's links, never the request's `Host`,
    /// which whoever asks could point elsewhere.
    pub fn origin(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.hostname)
    }
}

/// `[headers]`: the security headers sent with every response of the site. A key
/// replaces its default; `""` turns that header off. `strict_transport_security`
/// is sent only over TLS.
///
/// The default policy lets the site load scripts, styles, fonts and frames from
/// itself only (no inline script or style, no `eval`), images from itself and any
/// `https:` address, and connect (`fetch`, WebSocket, server-sent events) to itself;
/// only the site itself may frame it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SecurityHeaderSettings {
    pub content_security_policy: String,
    pub x_content_type_options: String,
    pub referrer_policy: String,
    /// For browsers older than CSP's `frame-ancestors`.
    pub x_frame_options: String,
    pub strict_transport_security: String,
}

impl Default for SecurityHeaderSettings {
    fn default() -> Self {
        SecurityHeaderSettings {
            content_security_policy: "default-src 'self'; script-src 'self'; style-src 'self'; \
                                      img-src 'self' https: data:; connect-src 'self'; \
                                      object-src 'none'; base-uri 'self'; form-action 'self'; \
                                      frame-ancestors 'self'; \
                                      frame-src 'self' https://www.youtube-nocookie.com https://player.vimeo.com"
                .to_string(),
            x_content_type_options: "nosniff".to_string(),
            referrer_policy: "strict-origin-when-cross-origin".to_string(),
            x_frame_options: "SAMEORIGIN".to_string(),
            strict_transport_security: "max-age=31536000".to_string(),
        }
    }
}

impl SecurityHeaderSettings {
    /// The headers that are on, by (lower-case) header name, and whether each is
    /// for TLS connections only.
    pub fn enabled(&self) -> impl Iterator<Item = SecurityHeader<'_>> {
        [
            (
                "content-security-policy",
                &self.content_security_policy,
                false,
            ),
            (
                "x-content-type-options",
                &self.x_content_type_options,
                false,
            ),
            ("referrer-policy", &self.referrer_policy, false),
            ("x-frame-options", &self.x_frame_options, false),
            (
                "strict-transport-security",
                &self.strict_transport_security,
                true,
            ),
        ]
        .into_iter()
        .filter(|(_, value, _)| !value.is_empty())
        .map(|(name, value, tls_only)| SecurityHeader {
            name,
            value,
            tls_only,
        })
    }
}

/// One header of [`SecurityHeaderSettings`] that is on. The value is a valid
/// header value (printable ASCII), checked when `site.toml` was read.
pub struct SecurityHeader<'a> {
    pub name: &'static str,
    pub value: &'a str,
    pub tls_only: bool,
}

/// `[access]`: who may do what (the rules) and who may read which properties.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessSettings {
    /// Properties only logged-on users (the group `members`) see, on any
    /// resource (templates get undefined, the API leaves them out). Default:
    /// `["email", "phone"]`.
    #[serde(default = "default_private_properties")]
    pub private_properties: Vec<String>,
    /// Properties only people of a given user group see: `salary = "managers"`.
    #[serde(default)]
    pub properties: std::collections::BTreeMap<String, String>,
    /// `[[access.rules]]`; none: the built-in default rules (docs/accounts.md).
    pub rules: Option<Vec<AccessRuleSettings>>,
}

/// One `[[access.rules]]`: people of `group` may do `actions` to resources of
/// `categories` (or below; empty: all) in `content_group` (absent: all).
/// Checked against the actions and groups when the site loads.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AccessRuleSettings {
    pub group: String,
    pub actions: Vec<String>,
    pub content_group: Option<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    /// Only to resources they made (and to new ones).
    #[serde(default)]
    pub own: bool,
}

fn default_private_properties() -> Vec<String> {
    vec!["email".to_string(), "phone".to_string()]
}

impl Default for AccessSettings {
    fn default() -> Self {
        AccessSettings {
            private_properties: default_private_properties(),
            properties: Default::default(),
            rules: None,
        }
    }
}

/// `[language]`: how a site with several languages shows them (see
/// docs/languages.md).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanguageSettings {
    /// Where a page's language comes from.
    #[serde(default)]
    pub urls: LanguageUrls,
    /// The languages a text missing in the visitor's language is shown in
    /// instead, in order (default: the site's first language).
    #[serde(default)]
    pub fallback: Vec<String>,
    /// What a resource not published in the visitor's language answers.
    #[serde(default)]
    pub missing: MissingTranslation,
}

/// `[language] urls`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LanguageUrls {
    /// The visitor's `Accept-Language` picks the language of every page.
    #[default]
    None,
    /// Every language has its prefix (`/en/...`, `/nl/...`); `/` redirects to
    /// the visitor's by `Accept-Language`; links keep the page's prefix.
    Prefix,
}

/// `[language] missing`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingTranslation {
    /// Shown in the fallback languages.
    #[default]
    Fallback,
    /// `404 Not Found`.
    NotFound,
}

/// `[page_cache]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageCacheSettings {
    /// While a changed page re-renders, visitors who arrive meanwhile get the
    /// previous version at once instead of waiting for the render (default: on).
    #[serde(default = "default_true")]
    pub grace: bool,
    /// How long a page is served from the cache when nothing it shows changes
    /// (seconds in `site.toml`; default an hour). Changes drop it at once anyway;
    /// this bounds what time alone changes (a publication window opening).
    #[serde(default = "default_page_ttl", deserialize_with = "seconds")]
    pub ttl: Duration,
    /// How long an expired page is kept to be served, marked stale, when rendering
    /// it again fails because the database is away or the site is overloaded
    /// (seconds in `site.toml`; default a day, `0` turns it off).
    #[serde(default = "default_stale_if_error", deserialize_with = "seconds")]
    pub stale_if_error: Duration,
}

impl Default for PageCacheSettings {
    fn default() -> Self {
        PageCacheSettings {
            grace: true,
            ttl: default_page_ttl(),
            stale_if_error: default_stale_if_error(),
        }
    }
}

fn default_page_ttl() -> Duration {
    Duration::from_secs(3600)
}

fn default_stale_if_error() -> Duration {
    Duration::from_secs(24 * 3600)
}

fn seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    Ok(Duration::from_secs(u64::deserialize(d)?))
}

/// `[api]`: the JSON API for resources (`/api/rsc/{id}`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiSettings {
    /// Bearer token that allows changing resources; without one the API is
    /// read-only (and shows only what anonymous visitors may see).
    pub token: Option<String>,
}

/// `[database]`: where the site's data lives. Without a `url`, an SQLite file in
/// the site folder (`data/site.db`); with a `postgres://` URL, a PostgreSQL
/// database (and optional schema) that several nodes can share.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    pub url: Option<String>,
    pub schema: Option<String>,
    /// Fill an empty database with demo content (the starter site does).
    #[serde(default)]
    pub demo_content: bool,
    /// PostgreSQL: the most connections the site's pool opens (default 8).
    pub max_connections: Option<u32>,
    /// SQLite: read connections beside the one writer (default 4).
    pub sqlite_readers: Option<usize>,
    /// How long a read or write may wait for a connection (default 5000 ms);
    /// past it the request is answered `503` with `Retry-After`.
    pub pool_timeout_ms: Option<u64>,
    /// PostgreSQL: how long one statement may run (default 10000 ms); past it
    /// it is cancelled and the request answered `503` with `Retry-After`.
    pub statement_timeout_ms: Option<u64>,
}

/// A site's name: its folder name unless `site.toml` says otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SiteName(String);

impl SiteName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SiteName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Certificate chain and private key (PEM), resolved against the site folder.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// `[tls]`: how the site is served over HTTPS.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsSettings {
    /// A certificate from files (read again when they change).
    pub files: Option<TlsFiles>,
    /// A certificate over ACME (the `acme` module).
    pub acme: bool,
    /// Plain HTTP answers with a redirect to HTTPS (ACME's HTTP-01
    /// challenges excepted).
    pub redirect_http: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SiteToml {
    name: Option<String>,
    hostname: String,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    default: bool,
    #[serde(default)]
    modules: Vec<String>,
    languages: Option<Vec<String>>,
    #[serde(default)]
    language: LanguageSettings,
    #[serde(default)]
    settings: toml::Table,
    #[serde(default)]
    dispatch: Vec<toml::Table>,
    tls: Option<TlsToml>,
    #[serde(default)]
    database: DatabaseSettings,
    #[serde(default)]
    api: ApiSettings,
    #[serde(default)]
    page_cache: PageCacheSettings,
    #[serde(default)]
    access: AccessSettings,
    #[serde(default)]
    headers: SecurityHeaderSettings,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsToml {
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    #[serde(default)]
    acme: bool,
    #[serde(default)]
    redirect_http: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TemplateOptions {
    template: String,
    content_type: Option<String>,
    #[serde(default = "default_true")]
    cache: bool,
    #[serde(default)]
    vars: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointOptions {
    /// The endpoint's name, when the rule has another.
    #[serde(default)]
    endpoint: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PageOptions {
    #[serde(default = "default_true")]
    cache: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOptions {
    #[serde(default = "default_files_root")]
    root: String,
}

fn default_files_root() -> String {
    "files".to_string()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RedirectOptions {
    to: String,
    #[serde(default = "default_true")]
    permanent: bool,
}

fn default_true() -> bool {
    true
}

/// The key a TOML error is about: toml names it between backticks in errors
/// about a field (`unknown field `x``); empty for any other error, whose backticks
/// hold something else (a syntax error's expected token: ``expected `]` ``).
pub fn toml_error_key(e: &toml::de::Error) -> &str {
    let message = e.message();
    let about_a_key = [
        "unknown field",
        "missing field",
        "duplicate field",
        "duplicate key",
    ]
    .iter()
    .any(|start| message.starts_with(start));
    if about_a_key {
        message.split('`').nth(1).unwrap_or("")
    } else {
        ""
    }
}

/// Reads and validates `dir/site.toml`. `known_modules` are the modules compiled into
/// this binary.
pub fn load_site_config(dir: &Path, known_modules: &[&str]) -> Result<SiteConfig, SiteError> {
    let file = dir.join("site.toml");
    let text = std::fs::read_to_string(&file).map_err(|e| SiteError::Io {
        path: file.clone(),
        source: e,
    })?;
    parse_site_config(&file, &text, dir, known_modules)
}

/// Validates the text of a `site.toml` as [`load_site_config`] does once it has
/// read the file: `file` is the path errors name and `dir` the site folder
/// (whose name is the site's name). No file is read.
pub fn parse_site_config(
    file: &Path,
    text: &str,
    dir: &Path,
    known_modules: &[&str],
) -> Result<SiteConfig, SiteError> {
    let invalid = |key: &str, problem: String| SiteError::invalid(file, key, problem);
    let toml_error =
        |e: toml::de::Error| invalid(toml_error_key(&e), e.to_string().trim().replace('\n', " "));
    let mut table: toml::Table = toml::from_str(text).map_err(toml_error)?;
    // A table named after a module belongs to that module (which validates it when
    // the site loads); everything else must be a key this crate knows.
    let mut module_settings = BTreeMap::new();
    for module in known_modules {
        if let Some(value) = table.remove(*module) {
            match value {
                toml::Value::Table(t) => {
                    module_settings.insert(module.to_string(), t);
                }
                other => {
                    return Err(invalid(
                        module,
                        format!("must be a table of the {module} module's settings, found {other}"),
                    ));
                }
            }
        }
    }
    let raw: SiteToml = toml::Value::Table(table).try_into().map_err(toml_error)?;

    let folder_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = raw.name.unwrap_or(folder_name);
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(invalid(
            "name",
            format!("{name:?} is not a valid site name (use letters, digits, '-' and '_')"),
        ));
    }

    let hostname =
        normalize_host(&raw.hostname).map_err(|e| SiteError::invalid(file, "hostname", e))?;
    let mut aliases = Vec::with_capacity(raw.aliases.len());
    for (i, alias) in raw.aliases.iter().enumerate() {
        let alias = normalize_host(alias)
            .map_err(|e| SiteError::invalid(file, &format!("aliases[{i}]"), e))?;
        if alias == hostname || aliases.contains(&alias) {
            return Err(invalid(
                &format!("aliases[{i}]"),
                format!("{alias:?} is listed twice (or equals the hostname)"),
            ));
        }
        aliases.push(alias);
    }

    for (i, module) in raw.modules.iter().enumerate() {
        if !known_modules.contains(&module.as_str()) {
            return Err(invalid(
                &format!("modules[{i}]"),
                format!(
                    "unknown module {module:?}; this binary has: {}",
                    known_modules.join(", ")
                ),
            ));
        }
    }

    let rules = parse_dispatch_rules(&raw.dispatch, "dispatch")
        .map_err(|e| SiteError::invalid(file, &e.key, e.problem))?;

    let tls = match raw.tls {
        None => None,
        Some(t) => {
            let files = match (t.cert, t.key, t.acme) {
                (Some(cert), Some(key), false) => {
                    let (cert, key) = (dir.join(cert), dir.join(key));
                    for (k, p) in [("tls.cert", &cert), ("tls.key", &key)] {
                        if !p.is_file() {
                            return Err(invalid(k, format!("file {} does not exist", p.display())));
                        }
                    }
                    Some(TlsFiles { cert, key })
                }
                (None, None, true) => {
                    if !raw.modules.iter().any(|m| m == "acme") {
                        return Err(invalid(
                            "tls.acme",
                            "needs the acme module: add \"acme\" to modules".into(),
                        ));
                    }
                    None
                }
                (_, _, true) => {
                    return Err(invalid(
                        "tls.acme",
                        "a certificate comes from files (cert, key) or over ACME, not both".into(),
                    ));
                }
                (None, _, false) => {
                    return Err(invalid("tls.cert", "missing (or acme = true)".into()));
                }
                (_, None, false) => {
                    return Err(invalid("tls.key", "missing (or acme = true)".into()));
                }
            };
            Some(TlsSettings {
                files,
                acme: t.acme,
                redirect_http: t.redirect_http,
            })
        }
    };

    if let Some(url) = &raw.database.url
        && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
    {
        return Err(invalid(
            "database.url",
            format!("{url:?}: only postgres:// URLs (SQLite needs no URL)"),
        ));
    }

    let languages = raw
        .languages
        .clone()
        .unwrap_or_else(|| vec!["en".to_string()]);
    if languages.is_empty() {
        return Err(invalid(
            "languages",
            "name at least one language".to_string(),
        ));
    }
    for (i, lang) in languages.iter().enumerate() {
        let valid = (2..=16).contains(&lang.len())
            && lang.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
        if !valid {
            return Err(invalid(
                &format!("languages[{i}]"),
                format!("{lang:?} is not a lower-case language tag like \"en\" or \"pt-br\""),
            ));
        }
    }

    let mut language = raw.language.clone();
    for (i, lang) in language.fallback.iter().enumerate() {
        if !languages.contains(lang) {
            return Err(invalid(
                &format!("language.fallback[{i}]"),
                format!("{lang:?} is not one of the site's languages {languages:?}"),
            ));
        }
    }
    if language.fallback.is_empty() {
        language.fallback.push(languages[0].clone());
    }

    let db = &raw.database;
    let size = |n: Option<usize>| n.map(|n| n as u64);
    for (key, value) in [
        (
            "database.max_connections",
            db.max_connections.map(u64::from),
        ),
        ("database.sqlite_readers", size(db.sqlite_readers)),
        ("database.pool_timeout_ms", db.pool_timeout_ms),
    ] {
        if value == Some(0) {
            return Err(invalid(key, "must be at least 1".to_string()));
        }
    }

    for header in raw.headers.enabled() {
        if !header
            .value
            .bytes()
            .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
        {
            return Err(invalid(
                &format!("headers.{}", header.name.replace('-', "_")),
                "must be printable ASCII on one line (it is a header value)".to_string(),
            ));
        }
    }

    Ok(SiteConfig {
        name: SiteName(name),
        hostname,
        aliases,
        is_default: raw.default,
        modules: raw.modules,
        languages,
        language,
        settings: raw.settings,
        rules,
        tls,
        module_settings,
        database: raw.database,
        access: raw.access,
        api: raw.api,
        page_cache: raw.page_cache,
        headers: raw.headers,
    })
}

/// A `[[dispatch]]` table that is not a rule: the key (like `dispatch[2].template`)
/// and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("{key}: {problem}")]
pub(crate) struct RuleError {
    pub key: String,
    pub problem: RuleProblem,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RuleProblem {
    #[error("is missing")]
    Missing,
    #[error("must be a string, found {found}")]
    NotAString { found: toml::Value },
    #[error("{name:?} is empty or not unique")]
    NameTaken { name: String },
    #[error(transparent)]
    Pattern(#[from] PatternError),
    #[error("controller {controller:?}: {}", .source.message())]
    Options {
        controller: String,
        #[source]
        source: Box<toml::de::Error>,
    },
    #[error("must be a relative folder inside the site")]
    RootOutsideSite,
    #[error("{template:?} is not a template name")]
    BadTemplateName { template: String },
}

/// Parses `[[dispatch]]` tables (`prefix` is the key they are under).
pub(crate) fn parse_dispatch_rules(
    tables: &[toml::Table],
    prefix: &str,
) -> Result<Vec<DispatchRule>, RuleError> {
    let mut rules: Vec<DispatchRule> = Vec::with_capacity(tables.len());
    for (i, table) in tables.iter().enumerate() {
        let error = |k: &str, problem: RuleProblem| RuleError {
            key: if k.is_empty() {
                format!("{prefix}[{i}]")
            } else {
                format!("{prefix}[{i}].{k}")
            },
            problem,
        };
        let mut options = table.clone();
        let mut take_str = |k: &str| -> Result<String, RuleError> {
            match options.remove(k) {
                Some(toml::Value::String(s)) => Ok(s),
                Some(found) => Err(error(k, RuleProblem::NotAString { found })),
                None => Err(error(k, RuleProblem::Missing)),
            }
        };
        let name = take_str("name")?;
        let path = take_str("path")?;
        let controller = take_str("controller")?;
        if name.is_empty() || rules.iter().any(|r| r.name == name) {
            return Err(error("name", RuleProblem::NameTaken { name }));
        }
        let pattern = RulePattern::parse(&path).map_err(|e| error("path", e.into()))?;
        let options = toml::Value::Table(options);
        let unknown = |source: toml::de::Error| {
            error(
                "",
                RuleProblem::Options {
                    controller: controller.clone(),
                    source: Box::new(source),
                },
            )
        };
        let controller = match controller.as_str() {
            "template" => {
                let o: TemplateOptions = options.try_into().map_err(unknown)?;
                Controller::Template {
                    template: o.template,
                    content_type: o.content_type,
                    cache: o.cache,
                    vars: o.vars,
                }
            }
            "lib" => {
                let _: toml::Table = options.try_into().map_err(unknown)?;
                Controller::Lib
            }
            "file" => {
                let o: FileOptions = options.try_into().map_err(unknown)?;
                if o.root
                    .split('/')
                    .any(|s| s.is_empty() || s == ".." || s == ".")
                {
                    return Err(error("root", RuleProblem::RootOutsideSite));
                }
                Controller::File { root: o.root }
            }
            "endpoint" => {
                let o: EndpointOptions = options.try_into().map_err(unknown)?;
                Controller::Endpoint {
                    name: o.endpoint.unwrap_or_else(|| name.clone()),
                }
            }
            "page" => {
                let o: PageOptions = options.try_into().map_err(unknown)?;
                Controller::Page { cache: o.cache }
            }
            "redirect" => {
                let o: RedirectOptions = options.try_into().map_err(unknown)?;
                Controller::Redirect {
                    to: o.to,
                    permanent: o.permanent,
                }
            }
            // A kind a module brings: its options are the module's to check, when
            // the site loads with its modules (the site layer does not know them).
            _ => match options {
                toml::Value::Table(options) => Controller::Module {
                    kind: controller,
                    options,
                },
                _ => unreachable!("built from a table"),
            },
        };
        if let Controller::Template { template, .. } = &controller
            && !template_name_is_safe(template)
        {
            return Err(error(
                "template",
                RuleProblem::BadTemplateName {
                    template: template.clone(),
                },
            ));
        }
        rules.push(DispatchRule {
            name,
            pattern,
            controller,
        });
    }
    Ok(rules)
}

pub(crate) fn template_name_is_safe(name: &str) -> bool {
    !name.is_empty()
        && !name.contains('\\')
        && !name.contains('\0')
        && name
            .split('/')
            .all(|s| !s.is_empty() && !s.starts_with('.'))
}

/// A value that is not a bare host name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{host:?} is not a host name (write it without scheme, port or path, e.g. \"example.com\")"
)]
pub struct HostError {
    pub host: String,
}

/// Lower-cases a host name and checks that it is one (no scheme, port or path).
pub fn normalize_host(host: &str) -> Result<String, HostError> {
    let h = host.trim().to_ascii_lowercase();
    let valid = !h.is_empty()
        && h.len() <= 253
        && h.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    if valid {
        Ok(h)
    } else {
        Err(HostError { host: host.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SiteConfig, SiteError> {
        parse_site_config(
            Path::new("/s/blog/site.toml"),
            text,
            Path::new("/s/blog"),
            &["core", "seo"],
        )
    }

    #[test]
    fn minimal_config_takes_the_folder_name() {
        let c = parse("hostname = \"Example.COM\"").unwrap();
        assert_eq!(c.name.as_str(), "blog");
        assert_eq!(c.hostname, "example.com");
        assert!(!c.is_default);
    }

    #[test]
    fn a_syntax_error_names_no_key_but_says_where() {
        let e = parse("hostname = [").unwrap_err().to_string();
        assert!(e.starts_with("/s/blog/site.toml: "), "{e}");
        assert!(!e.contains("site.toml: ]"), "a token is not a key: {e}");
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn unknown_key_names_file_and_key() {
        let e = parse("hostname = \"a.b\"\nhostnme = \"x\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/s/blog/site.toml"), "{e}");
        assert!(e.contains("hostnme"), "{e}");
    }

    #[test]
    fn security_headers_default_to_strict_and_can_be_replaced_or_turned_off() {
        let c = parse("hostname = \"a.b\"").unwrap();
        let names: Vec<&str> = c.headers.enabled().map(|h| h.name).collect();
        assert_eq!(
            names,
            [
                "content-security-policy",
                "x-content-type-options",
                "referrer-policy",
                "x-frame-options",
                "strict-transport-security"
            ]
        );
        assert!(!c.headers.content_security_policy.contains("unsafe-inline"));
        let c = parse(
            "hostname = \"a.b\"\n[headers]\ncontent_security_policy = \"default-src *\"\nx_frame_options = \"\"",
        )
        .unwrap();
        assert_eq!(c.headers.content_security_policy, "default-src *");
        assert!(c.headers.enabled().all(|h| h.name != "x-frame-options"));
        assert_eq!(c.headers.referrer_policy, "strict-origin-when-cross-origin");
    }

    #[test]
    fn a_security_header_that_is_unknown_or_not_a_header_value_is_refused() {
        let e = parse("hostname = \"a.b\"\n[headers]\ncsp = \"x\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("csp"), "{e}");
        let e = parse("hostname = \"a.b\"\n[headers]\nreferrer_policy = \"a\\nb\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("headers.referrer_policy"), "{e}");
    }

    #[test]
    fn database_pool_settings_are_read_and_zero_is_refused() {
        let c = parse("hostname = \"a.b\"\n[database]\nmax_connections = 2\npool_timeout_ms = 50")
            .unwrap();
        assert_eq!(c.database.max_connections, Some(2));
        assert_eq!(c.database.pool_timeout_ms, Some(50));
        let e = parse("hostname = \"a.b\"\n[database]\nsqlite_readers = 0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("database.sqlite_readers"), "{e}");
    }

    #[test]
    fn languages_default_to_english_and_must_be_tags() {
        assert_eq!(parse("hostname = \"a.b\"").unwrap().languages, ["en"]);
        let c = parse("hostname = \"a.b\"\nlanguages = [\"nl\", \"pt-br\"]").unwrap();
        assert_eq!(c.languages, ["nl", "pt-br"]);
        for bad in ["[]", "[\"EN\"]", "[\"en_US\"]", "[\"x\"]"] {
            let e = parse(&format!("hostname = \"a.b\"\nlanguages = {bad}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("languages"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_table_named_after_a_module_is_that_modules_to_read() {
        let c = parse("hostname = \"a.b\"\n[seo]\nanything = 1").unwrap();
        assert_eq!(c.module_settings["seo"]["anything"].as_integer(), Some(1));
        let e = parse("hostname = \"a.b\"\nseo = 1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("seo") && e.contains("table"), "{e}");
        let e = parse("hostname = \"a.b\"\n[nope]\nx = 1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope"), "{e}");
    }

    #[test]
    fn a_controller_kind_the_site_layer_does_not_know_is_left_to_the_modules() {
        let c = parse(
            "hostname = \"a.b\"\n[[dispatch]]\nname=\"m\"\npath=\"/m\"\ncontroller=\"sitemap\"\nlimit=5",
        )
        .unwrap();
        match &c.rules[0].controller {
            Controller::Module { kind, options } => {
                assert_eq!(kind, "sitemap");
                assert_eq!(options["limit"].as_integer(), Some(5));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_hostname_is_refused() {
        let e = parse("hostname = \"http://a.b:80/\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("hostname"), "{e}");
        assert!(
            e.ends_with(
                r#"hostname: "http://a.b:80/" is not a host name (write it without scheme, port or path, e.g. "example.com")"#
            ),
            "{e}"
        );
    }

    #[test]
    fn bad_rule_path_names_the_key_and_the_pattern_problem() {
        let e = parse(
            "hostname = \"a.b\"\n[[dispatch]]\nname=\"f\"\npath=\"/f/{*rest}/x\"\ncontroller=\"lib\"",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.ends_with(r#"dispatch[0].path: "/f/{*rest}/x": a catch-all {*rest} must be last"#),
            "{e}"
        );
    }

    #[test]
    fn unknown_module_is_refused_with_the_list_of_known_ones() {
        let e = parse("hostname = \"a.b\"\nmodules = [\"sео\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("modules[0]") && e.contains("core, seo"), "{e}");
    }

    #[test]
    fn unknown_controller_option_names_the_controller() {
        let e = parse(
            "hostname = \"a.b\"\n[[dispatch]]\nname=\"home\"\npath=\"/\"\ncontroller=\"template\"\ntemplate=\"home.tpl\"\ntemplte=\"x\"",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("dispatch[0]") && e.contains("templte"), "{e}");
    }

    #[test]
    fn missing_template_option_is_reported() {
        let e = parse(
            "hostname = \"a.b\"\n[[dispatch]]\nname=\"home\"\npath=\"/\"\ncontroller=\"template\"",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("template"), "{e}");
    }

    #[test]
    fn duplicate_rule_names_are_refused() {
        let rule = "[[dispatch]]\nname=\"a\"\npath=\"/x\"\ncontroller=\"lib\"\n";
        let e = parse(&format!("hostname = \"a.b\"\n{rule}{rule}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("dispatch[1].name"), "{e}");
    }

    #[test]
    fn template_names_cannot_escape() {
        assert!(!template_name_is_safe("../etc/passwd"));
        assert!(!template_name_is_safe("/etc/passwd"));
        assert!(!template_name_is_safe("a\\b"));
        assert!(template_name_is_safe("pages/home.tpl"));
    }
}
