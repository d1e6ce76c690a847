//! The seo module as a site uses it: a controller kind (`sitemap`), template
//! functions (`canonical_url`, `canonical_link`) and an observer (the sitemap
//! follows the store), all brought by the module without any core change.

use crate::common;

use std::time::Duration;

use bulwark_store::{NewResource, Props, Store};
use common::*;

const SITE: &str = r#"
hostname = "news.test"
aliases = ["www.news.test"]
default = true
modules = ["seo"]

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
"#;

fn files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("news/site.toml", SITE),
        (
            "news/templates/home.tpl",
            "<head>{{ canonical_link() }}</head>{{ canonical_url(path='/x?y=1') }}",
        ),
    ]
}

fn create(store: &Store, title: &str, published: bool) -> bulwark_store::ResourceId {
    let mut r = NewResource::new("article", Props::new().with("title", title));
    r.published = published;
    store.create_resource(r).unwrap()
}

async fn sitemap(s: &TestServer) -> RawResponse {
    get(s.addr, "news.test", "/sitemap.xml").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sitemap_lists_what_visitors_may_see_and_follows_the_store() {
    let s = start(&files(), |_| {}).await;
    let store = s.models["news"].store.clone();
    let public = create(&store, "Public", true);
    let draft = create(&store, "Draft", false);
    let r = sitemap(&s).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    let xml = r.text();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(
        xml.contains(&format!("<loc>http://news.test/page/{public}/public</loc>")),
        "{xml}"
    );
    assert!(!xml.contains(&format!("/page/{draft}/")), "{xml}");

    // A new page appears once the change has gone round (the observer forgot
    // the built sitemap); until then the old one may be served.
    let later = create(&store, "Later", true);
    let wanted = format!("<loc>http://news.test/page/{later}/later</loc>");
    bulwark_testkit::eventually(
        "the sitemap lists the new page",
        Duration::from_secs(5),
        || async { sitemap(&s).await.text().contains(&wanted).then_some(()) },
    )
    .await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canonical_links_name_the_canonical_host_without_the_query() {
    let s = start(&files(), |_| {}).await;
    let r = get(s.addr, "news.test", "/?utm_source=feed").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.text(),
        r#"<head><link rel="canonical" href="http://news.test/"></head>http://news.test/x"#
    );
    s.shutdown().await;
}

#[tokio::test]
async fn robots_txt_points_at_the_sitemap() {
    let s = start(&files(), |_| {}).await;
    let r = get(s.addr, "news.test", "/robots.txt").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.text(),
        "User-agent: *\nDisallow:\nSitemap: http://news.test/sitemap.xml"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn robots_txt_follows_the_sites_settings() {
    let closed = format!("{SITE}\n[settings]\nrobots_disallow = [\"/search\", \"/private/\"]\n");
    let s = start(&[("news/site.toml", closed.as_str()), files()[1]], |_| {}).await;
    assert_eq!(
        get(s.addr, "news.test", "/robots.txt").await.text(),
        "User-agent: *\nDisallow: /search\nDisallow: /private/\nSitemap: http://news.test/sitemap.xml"
    );
    s.shutdown().await;
    let closed = format!("{SITE}\n[settings]\nrobots_disallow_all = true\n");
    let s = start(&[("news/site.toml", closed.as_str()), files()[1]], |_| {}).await;
    assert_eq!(
        get(s.addr, "news.test", "/robots.txt").await.text(),
        "User-agent: *\nDisallow: /\nSitemap: http://news.test/sitemap.xml"
    );
    s.shutdown().await;
}

/// The errors that stop a site with this `site.toml` from loading.
async fn load_errors(site_toml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("news/site.toml"), site_toml);
    let errors = load_sites(dir.path(), Default::default())
        .await
        .err()
        .expect("the site must not load");
    errors.iter().map(|e| e.to_string()).collect()
}

#[tokio::test]
async fn a_sitemap_rule_with_bad_options_stops_the_site_with_the_rule_named() {
    let text = load_errors(&format!(
        "{SITE}\n[[dispatch]]\nname = \"big\"\npath = \"/big.xml\"\ncontroller = \"sitemap\"\nlimit = 0\n"
    ))
    .await;
    assert!(
        text.contains("news/site.toml") && text.contains("\"big\"") && text.contains("limit"),
        "{text}"
    );
}

#[tokio::test]
async fn a_controller_kind_of_a_module_the_site_does_not_enable_is_unknown() {
    let text = load_errors(
        &(SITE.replace("modules = [\"seo\"]", "")
            + "\n[[dispatch]]\nname = \"map\"\npath = \"/map.xml\"\ncontroller = \"sitemap\"\n"),
    )
    .await;
    assert!(
        text.contains("unknown controller \"sitemap\"") && text.contains("template"),
        "{text}"
    );
}

const TWO_LANGUAGES: &str = r#"
hostname = "talen.test"
default = true
modules = ["seo"]
languages = ["en", "nl"]

[language]
urls = "prefix"

[[dispatch]]
name = "page"
path = "/page/{id}/{slug}"
controller = "page"

[[dispatch]]
name = "sitemap"
path = "/sitemap.xml"
controller = "sitemap"
per_file = 3

[[dispatch]]
name = "sitemap_part"
path = "/sitemap/{part}"
controller = "sitemap"
per_file = 3
"#;

/// sitemaps.org's schema of a URL set (installed by
/// scripts/ensure-ops-tools.sh from npm's `sitemap` package), with the
/// `xhtml:link` alternates its strict wildcard asks a declaration for.
fn urlset_schema(dir: &std::path::Path) -> std::path::PathBuf {
    let official = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/schemas/sitemap.xsd")
        .canonicalize()
        .expect("target/schemas/sitemap.xsd: run scripts/ensure-ops-tools.sh");
    std::fs::write(
        dir.join("xhtml-link.xsd"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema"
    targetNamespace="http://www.w3.org/1999/xhtml" elementFormDefault="qualified">
  <xsd:element name="link">
    <xsd:complexType>
      <xsd:attribute name="rel" type="xsd:string" use="required"/>
      <xsd:attribute name="hreflang" type="xsd:language" use="required"/>
      <xsd:attribute name="href" type="xsd:anyURI" use="required"/>
    </xsd:complexType>
  </xsd:element>
</xsd:schema>
"#,
    )
    .unwrap();
    let both = dir.join("urlset.xsd");
    std::fs::write(
        &both,
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <xsd:import namespace="http://www.sitemaps.org/schemas/sitemap/0.9" schemaLocation="{}"/>
  <xsd:import namespace="http://www.w3.org/1999/xhtml" schemaLocation="xhtml-link.xsd"/>
</xsd:schema>
"#,
            official.display()
        ),
    )
    .unwrap();
    both
}

/// The sitemap index as the protocol defines it (sitemaps.org publishes
/// siteindex.xsd, which no package registry here carries): `sitemapindex`
/// holding `sitemap` elements with a `loc` and an optional `lastmod`.
fn index_schema(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("siteindex.xsd");
    std::fs::write(
        &path,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema"
    targetNamespace="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" elementFormDefault="qualified">
  <xsd:element name="sitemapindex">
    <xsd:complexType>
      <xsd:sequence>
        <xsd:element name="sitemap" maxOccurs="50000">
          <xsd:complexType>
            <xsd:sequence>
              <xsd:element name="loc" type="xsd:anyURI"/>
              <xsd:element name="lastmod" type="xsd:dateTime" minOccurs="0"/>
            </xsd:sequence>
          </xsd:complexType>
        </xsd:element>
      </xsd:sequence>
    </xsd:complexType>
  </xsd:element>
</xsd:schema>
"#,
    )
    .unwrap();
    path
}

/// `xmllint --schema` on `xml`; its complaint if it has one.
fn xmllint(schema: &std::path::Path, xml: &str, dir: &std::path::Path) -> Result<(), String> {
    let file = dir.join("sitemap.xml");
    std::fs::write(&file, xml).unwrap();
    let out = std::process::Command::new("xmllint")
        .args(["--noout", "--nonet", "--schema"])
        .arg(schema)
        .arg(&file)
        .output()
        .expect("xmllint (libxml2-utils): run scripts/ensure-ops-tools.sh");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_in_two_languages_validates_splits_and_leaves_out_the_machinery() {
    let s = start(
        &[
            ("news/site.toml", TWO_LANGUAGES),
            ("news/templates/page.tpl", "{{ rsc.title }}"),
        ],
        |_| {},
    )
    .await;
    let store = s.models["news"].store.clone();
    let mut both = NewResource::new(
        "article",
        Props::new().with(
            "title",
            bulwark_store::translated([("en", "Cycling"), ("nl", "Fietsen")]),
        ),
    );
    both.published = true;
    let both = store.create_resource(both).unwrap();
    let mut english = NewResource::new(
        "article",
        Props::new()
            .with("title", "Tea & biscuits")
            .with("languages", serde_json::json!(["en"])),
    );
    english.published = true;
    let english = store.create_resource(english).unwrap();
    let work = tempfile::tempdir().unwrap();
    let (urlset, index) = (urlset_schema(work.path()), index_schema(work.path()));
    // The schemas do refuse what is not a sitemap.
    let empty_url = "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url/></urlset>";
    assert!(xmllint(&urlset, empty_url, work.path()).is_err());
    assert!(xmllint(&index, empty_url, work.path()).is_err());

    // Three URLs: the translated article in both languages (each naming the
    // other), the English-only one once; categories, predicates and groups
    // (all `meta`) not at all.
    let xml = sitemap(&s).await.text();
    xmllint(&urlset, &xml, work.path()).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    assert_eq!(xml.matches("<url>").count(), 3, "{xml}");
    for loc in [
        format!("<loc>http://talen.test/en/page/{both}/cycling</loc>"),
        format!("<loc>http://talen.test/nl/page/{both}/fietsen</loc>"),
        format!("<loc>http://talen.test/en/page/{english}/tea-biscuits</loc>"),
    ] {
        assert!(xml.contains(&loc), "{loc} in {xml}");
    }
    assert!(
        xml.contains(&format!(
            r#"<xhtml:link rel="alternate" hreflang="nl" href="http://talen.test/nl/page/{both}/fietsen"/>"#
        )),
        "{xml}"
    );
    assert!(!xml.contains("/page/1/"), "no category: {xml}");
    assert!(xml.contains("<lastmod>"), "{xml}");

    // A fourth URL is past `per_file`: the sitemap becomes an index of parts.
    let mut more = NewResource::new("article", Props::new().with("title", translated_pair()));
    more.published = true;
    store.create_resource(more).unwrap();
    let index_xml = bulwark_testkit::eventually(
        "the sitemap becomes an index",
        Duration::from_secs(5),
        || async {
            let xml = sitemap(&s).await.text();
            xml.contains("<sitemapindex").then_some(xml)
        },
    )
    .await;
    xmllint(&index, &index_xml, work.path()).unwrap_or_else(|e| panic!("{e}\n{index_xml}"));
    assert!(
        index_xml.contains("<loc>http://talen.test/sitemap/1.xml</loc>"),
        "{index_xml}"
    );
    assert!(
        index_xml.contains("<loc>http://talen.test/sitemap/2.xml</loc>"),
        "{index_xml}"
    );
    let mut urls = 0;
    for part in ["/sitemap/1.xml", "/sitemap/2.xml"] {
        let xml = get(s.addr, "talen.test", part).await.text();
        xmllint(&urlset, &xml, work.path()).unwrap_or_else(|e| panic!("{part}: {e}\n{xml}"));
        urls += xml.matches("<url>").count();
    }
    assert_eq!(urls, 5);
    assert_eq!(
        get(s.addr, "talen.test", "/sitemap/3.xml").await.status,
        404
    );
    s.shutdown().await;
}

fn translated_pair() -> serde_json::Value {
    bulwark_store::translated([("en", "Walking"), ("nl", "Wandelen")])
}
