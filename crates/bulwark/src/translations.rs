//! `bulwark translations extract`: the texts a site's (or a module's)
//! templates pass to `_()` and `_n()`, and its scripts (`lib/**/*.js`, not
//! `vendor/`) to `_()`, as a gettext template (`.pot`) for a translator to
//! start from, or merged into a language's catalog (`.po`): new texts added
//! untranslated, the translations there kept. A script's texts are marked by
//! their place (`#: js/admin.js`): those are the ones a page hands to its
//! scripts (`script_texts()`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use include_dir::Dir;
use polib::catalog::Catalog;
use polib::message::{Message, MessageView};
use polib::metadata::CatalogMetadata;

#[derive(clap::Args)]
pub struct ExtractArgs {
    /// The site whose templates and scripts are read (not needed with
    /// --module).
    #[arg(required_unless_present = "module")]
    site: Option<String>,
    /// A module's templates and scripts instead of a site's (for the
    /// catalogs a module ships): those built into this binary, or with --dir
    /// those of the module's source folder.
    #[arg(long)]
    module: Option<String>,
    /// The module's source folder (`modules/<name>`, holding `templates/`
    /// and `lib/`); its catalogs go to `<dir>/translations/`.
    #[arg(long, requires = "module")]
    dir: Option<PathBuf>,
    /// Merge into this language's catalog (`translations/<language>.po`)
    /// instead of writing the template (`.pot`).
    #[arg(long)]
    language: Option<String>,
    /// Where to write (default: the site's translations/ folder, or the
    /// module's with --dir; `<module>.pot` or `<language>.po` here with
    /// --module alone).
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long, env = "BULWARK_SITES", default_value = "sites")]
    sites: PathBuf,
}

/// A text to translate and where templates use it.
struct Found {
    msgid: String,
    plural: Option<String>,
    places: Vec<String>,
}

pub fn extract(args: ExtractArgs) -> anyhow::Result<()> {
    let mut sources = Vec::new();
    let (default_dir, stem) = match (&args.module, &args.dir, &args.site) {
        (Some(name), Some(dir), _) => {
            file_sources(&dir.join("templates"), "", &mut sources)?;
            file_sources(&dir.join("lib"), "", &mut sources)?;
            (dir.join("translations"), name)
        }
        (Some(name), None, _) => {
            let modules = crate::modules()?;
            let module = modules
                .iter()
                .find(|m| m.manifest().name == name)
                .with_context(|| format!("no module {name:?} in this binary"))?;
            let manifest = module.manifest();
            for dir in [manifest.templates, manifest.lib].into_iter().flatten() {
                embedded_sources(dir, &mut sources);
            }
            (PathBuf::from("."), name)
        }
        (None, _, Some(site)) => {
            let site_dir = args.sites.join(site);
            if !site_dir.join("site.toml").is_file() {
                bail!("no site {site:?} in {}", args.sites.display());
            }
            file_sources(&site_dir.join("templates"), "", &mut sources)?;
            file_sources(&site_dir.join("lib"), "", &mut sources)?;
            (site_dir.join("translations"), site)
        }
        (None, _, None) => bail!("name a site or a --module"),
    };
    sources.retain(|(name, _)| is_source(name));
    let found = texts(&sources);
    let name = match &args.language {
        Some(lang) => format!("{lang}.po"),
        None => format!("{stem}.pot"),
    };
    let out = args.out.clone().unwrap_or_else(|| default_dir.join(name));
    let catalog = match &args.language {
        Some(lang) => merged(&out, lang, &found)?,
        None => template(&found),
    };
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    polib::po_file::write_to_file(&catalog, &out)
        .with_context(|| format!("writing {}", out.display()))?;
    let untranslated = catalog.messages().filter(|m| !m.is_translated()).count();
    println!(
        "{}: {} texts, {untranslated} untranslated",
        out.display(),
        catalog.count()
    );
    Ok(())
}

/// Every text, once, in order of first use.
fn texts(sources: &[(String, String)]) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for (name, text) in sources {
        for (msgid, plural) in bulwark_template::extract_texts(text) {
            match found.iter_mut().find(|f| f.msgid == msgid) {
                Some(f) => {
                    if !f.places.contains(name) {
                        f.places.push(name.clone());
                    }
                }
                None => found.push(Found {
                    msgid,
                    plural,
                    places: vec![name.clone()],
                }),
            }
        }
    }
    found
}

fn message(f: &Found, translation: Option<&dyn MessageView>) -> Message {
    let source = f.places.join(" ");
    match &f.plural {
        Some(plural) => {
            let forms = translation
                .and_then(|t| t.msgstr_plural().ok().cloned())
                .unwrap_or_else(|| vec![String::new(), String::new()]);
            Message::build_plural()
                .with_source(source)
                .with_msgid(f.msgid.clone())
                .with_msgid_plural(plural.clone())
                .with_msgstr_plural(forms)
                .done()
        }
        None => Message::build_singular()
            .with_source(source)
            .with_msgid(f.msgid.clone())
            .with_msgstr(
                translation
                    .and_then(|t| t.msgstr().ok().map(str::to_owned))
                    .unwrap_or_default(),
            )
            .done(),
    }
}

fn template(found: &[Found]) -> Catalog {
    let mut metadata = CatalogMetadata::new();
    metadata.content_type = "text/plain; charset=UTF-8".into();
    let mut catalog = Catalog::new(metadata);
    for f in found {
        catalog.append_or_update(message(f, None));
    }
    catalog
}

/// The catalog at `path` (or a new one for `language`) with every text the
/// templates use; translations kept, texts no template uses any more kept
/// at the end (a template may come back to them).
fn merged(path: &Path, language: &str, found: &[Found]) -> anyhow::Result<Catalog> {
    let old = if path.exists() {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Some(
            bulwark_template::parse_po(&text)
                .with_context(|| format!("reading {}", path.display()))?,
        )
    } else {
        None
    };
    let metadata = match &old {
        Some(old) => old.metadata.clone(),
        None => CatalogMetadata::parse(&format!(
            "Language: {language}\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n\
             Content-Transfer-Encoding: 8bit\nPlural-Forms: {}\n",
            plural_forms(language)
        ))
        .map_err(|e| anyhow::anyhow!("a new catalog for {language}: {e}"))?,
    };
    let mut catalog = Catalog::new(metadata);
    for f in found {
        let before = old.as_ref().and_then(|o| {
            o.messages()
                .find(|m| m.msgid() == f.msgid && m.msgctxt().is_none())
        });
        catalog.append_or_update(message(f, before));
    }
    if let Some(old) = &old {
        for m in old.messages() {
            if !found.iter().any(|f| f.msgid == m.msgid()) {
                let kept = Found {
                    msgid: m.msgid().to_owned(),
                    plural: m.msgid_plural().ok().map(str::to_owned),
                    places: Vec::new(),
                };
                catalog.append_or_update(message(&kept, Some(m)));
            }
        }
    }
    Ok(catalog)
}

/// The usual `Plural-Forms` of a language (the GNU gettext manual's), for a
/// new catalog; a translator may change it.
fn plural_forms(language: &str) -> &'static str {
    match language.split('-').next().unwrap_or(language) {
        "ja" | "ko" | "zh" | "vi" | "th" | "id" => "nplurals=1; plural=0;",
        "fr" => "nplurals=2; plural=(n > 1);",
        "pt" if language == "pt-br" => "nplurals=2; plural=(n > 1);",
        "pl" => {
            "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"
        }
        "ru" | "uk" => {
            "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"
        }
        _ => "nplurals=2; plural=(n != 1);",
    }
}

/// Whether a file is read for texts: a template, or a script of our own
/// (a vendored or minified library's strings are not ours to translate).
fn is_source(name: &str) -> bool {
    if name.ends_with(".js") {
        return !name.ends_with(".min.js") && !name.split('/').any(|part| part == "vendor");
    }
    !name.ends_with(".css") && !name.ends_with(".po") && !name.ends_with(".pot")
}

fn file_sources(dir: &Path, prefix: &str, out: &mut Vec<(String, String)>) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if entry.path().is_dir() {
            file_sources(&entry.path(), &rel, out)?;
        } else if let Ok(text) = std::fs::read_to_string(entry.path()) {
            out.push((rel, text));
        }
    }
    Ok(())
}

fn embedded_sources(dir: &Dir<'static>, out: &mut Vec<(String, String)>) {
    for file in dir.files() {
        if let Some(text) = file.contents_utf8() {
            out.push((file.path().display().to_string(), text.to_owned()));
        }
    }
    for sub in dir.dirs() {
        embedded_sources(sub, out);
    }
}
