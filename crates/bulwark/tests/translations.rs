//! `bulwark translations extract` as a translator's helper runs it: the
//! texts of a site's templates into a `.pot`, and merged into a language's
//! `.po` with the translations already there kept.

use std::path::Path;
use std::process::Command;

fn bulwark(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .current_dir(dir)
        .env("BULWARK_LOG", "warn")
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bulwark {args:?}: {text}");
    text
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn texts_are_extracted_into_a_template_and_merged_into_a_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("sites/talen");
    write(
        &site.join("site.toml"),
        "hostname = \"talen.test\"\nlanguages = [\"en\", \"nl\"]\n",
    );
    write(
        &site.join("templates/home.tpl"),
        "<h1>{{ _(\"Welcome\") }}</h1>{{ _n(\"{n} article\", \"{n} articles\", count) }}",
    );
    write(
        &site.join("templates/parts/foot.tpl"),
        "{{ _('Welcome') }} {{ _(\"Read more\") }} {{ _(title) }}",
    );

    let said = bulwark(dir.path(), &["translations", "extract", "talen"]);
    assert!(said.contains("3 texts, 3 untranslated"), "{said}");
    let pot = std::fs::read_to_string(site.join("translations/talen.pot")).unwrap();
    assert!(
        pot.contains("#: home.tpl parts/foot.tpl\nmsgid \"Welcome\"\nmsgstr \"\""),
        "{pot}"
    );
    assert!(
        pot.contains(
            "msgid \"{n} article\"\nmsgid_plural \"{n} articles\"\nmsgstr[0] \"\"\nmsgstr[1] \"\""
        ),
        "{pot}"
    );
    assert!(pot.contains("msgid \"Read more\""), "{pot}");

    // A Dutch catalog: made with Dutch plural rules, then translated by hand,
    // then merged again after a template gained a text.
    bulwark(
        dir.path(),
        &["translations", "extract", "talen", "--language", "nl"],
    );
    let po_path = site.join("translations/nl.po");
    let po = std::fs::read_to_string(&po_path).unwrap();
    assert!(po.contains("Language: nl"), "{po}");
    assert!(
        po.contains("Plural-Forms: nplurals=2; plural=(n != 1);"),
        "{po}"
    );
    std::fs::write(
        &po_path,
        po.replacen(
            "msgid \"Welcome\"\nmsgstr \"\"",
            "msgid \"Welcome\"\nmsgstr \"Welkom\"",
            1,
        ),
    )
    .unwrap();
    write(
        &site.join("templates/about.tpl"),
        "{{ _(\"About us\") }} {{ _(\"Welcome\") }}",
    );
    let said = bulwark(
        dir.path(),
        &["translations", "extract", "talen", "--language", "nl"],
    );
    assert!(said.contains("4 texts, 3 untranslated"), "{said}");
    let po = std::fs::read_to_string(&po_path).unwrap();
    assert!(
        po.contains("msgid \"Welcome\"\nmsgstr \"Welkom\""),
        "kept: {po}"
    );
    assert!(
        po.contains("msgid \"About us\"\nmsgstr \"\""),
        "added: {po}"
    );
}

#[test]
fn an_unknown_site_or_module_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .current_dir(dir.path())
        .args(["translations", "extract", "nowhere"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no site \"nowhere\""));
}
