//! A WordPress site brought in from its export (Tools > Export, a WXR file).
//!
//! The file is read four times, as a stream, never whole:
//! 1. **checked** to its end before anything is written (a broken or cut
//!    file fails with its line and column, and the site stays as it was),
//!    while the small things are gathered: authors, categories and tags,
//!    attachments, menus;
//! 2. authors become persons, categories and tags keywords (a category's
//!    parent by a `broader` edge);
//! 3. attachments become media resources with their files (from a copy of
//!    `wp-content/uploads`, or fetched from the old site), each through the
//!    media module's own checks;
//! 4. posts and pages, a batch at a time, each batch one transaction with its
//!    comments, edges (author, keywords, featured image) and the redirects of
//!    its old permalinks; then, once every page is in, the pages' hierarchy
//!    and the menus.
//!
//! Everything imported keeps WordPress's id (the `wordpress` property, and the
//! unique name `wp_<id>`), so running the same import again updates what
//! changed, adds what is new and duplicates nothing; an import that stopped
//! half way continues where it stopped when it is run again. What an import
//! wrote is compared by a fingerprint of what it would write: an unchanged
//! post is not written again (no new revision, no flushed page).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use bulwark_module_comments::table::{self as comments, CommentId, NewComment, Status};
use bulwark_module_media::{Imported, MediaImport};
use bulwark_module_redirects::rules::{self as redirects, NewRule};
use bulwark_store::{
    Batch, NewResource, Prepared, Props, ResourceId, ResourceUpdate, SanitizedUpdate, Store,
    StoreError,
};

use crate::content::{self, Picture, Pictures};
use crate::php;
use crate::report::{Outcome, Report};
use crate::wxr::{Node, WxrError, WxrReader};
use crate::{Enabled, ImportError, Progress, SiteUrls};

/// How a WordPress import runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// A copy of the old site's `wp-content/uploads` folder.
    pub uploads: Option<PathBuf>,
    /// Fetch each attachment from its URL (when there is no copy).
    pub fetch_media: bool,
    /// Posts and pages written per transaction.
    pub batch: usize,
    /// Give each author an account in this user group (`authors`), with no
    /// password they know: they set theirs with a password reset.
    pub users: Option<String>,
    /// Mail each account made a link to choose its password (an
    /// invitation, through the site's mail module).
    pub invite: bool,
    /// The new site's addresses for the old site's feeds, archives and
    /// paging (none: those old addresses are not redirected).
    pub site_urls: SiteUrls,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            uploads: None,
            fetch_media: false,
            batch: 100,
            users: None,
            invite: false,
            site_urls: SiteUrls::default(),
        }
    }
}

/// Whether an import with `options` mails invitations, and for which site:
/// asked without accounts (`users`), on a site without the mail module, or
/// without the site's addresses, it is refused before anything is written.
pub fn invitations(
    options: &Options,
    enabled: &Enabled,
) -> Result<Option<Arc<bulwark_site::Site>>, ImportError> {
    let refused = |why: &str| Err(ImportError::Asked(why.to_owned()));
    if !options.invite {
        return Ok(None);
    }
    if options.users.is_none() {
        return refused(
            "an invitation goes to an account the import makes: ask for accounts too (--users)",
        );
    }
    if !enabled.mail {
        return refused(
            "invitations are mailed, and this site does not enable the mail module: add \"mail\" \
             to its modules (docs/mail.md), or import without --invite",
        );
    }
    match options.site_urls.site() {
        Some(site) => Ok(Some(site.clone())),
        None => refused(
            "invitations need the site's addresses (its rules), which this import was not given",
        ),
    }
}

/// Categories and predicates an import needs, made when missing.
const PAGE_CATEGORY: &str = "page";
const SUBPAGE: &str = "subpage";
const BROADER: &str = "broader";

/// The properties an import owns; a custom field with one of these names is
/// kept as `wp_<name>`.
const OWN_PROPS: [&str; 7] = [
    "title",
    "summary",
    "body",
    "slug",
    "featured",
    "wordpress",
    "menu",
];

/// Brings the WordPress export at `file` into the site whose database is
/// `store` (and whose media `media` is).
pub async fn import(
    store: &Store,
    media: &MediaImport,
    enabled: Enabled,
    file: &Path,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Report, ImportError> {
    let invite = invitations(options, &enabled)?;
    let mut scan = {
        let file = file.to_owned();
        let total = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        progress.stage("checking the file", total);
        scan(&file, progress)?
    };
    if !scan.refused.is_empty() {
        return Err(ImportError::Refused {
            file: file.display().to_string(),
            items: scan.refused,
        });
    }
    let mut run = Run {
        store: store.clone(),
        site: scan.site.clone(),
        enabled,
        report: Report::default(),
        posts: HashMap::new(),
        terms: HashMap::new(),
        term_ids: HashMap::new(),
        authors: HashMap::new(),
        pictures: Arc::new(Gallery::default()),
        pages: Vec::new(),
        nav: Vec::new(),
        old: OldAddresses::default(),
        slug_language: options.site_urls.language_of(&scan.language),
        blocks: Arc::new(std::mem::take(&mut scan.blocks)),
        blocks_used: BTreeSet::new(),
    };
    run.prepare_schema().await?;
    progress.stage(
        "authors, categories and tags",
        (scan.authors.len() + scan.terms.len()) as u64,
    );
    run.authors(&scan.authors).await?;
    if let Some(group) = &options.users {
        run.accounts(&scan.authors, group, invite).await?;
    }
    run.terms(&scan.terms).await?;
    progress.advance((scan.authors.len() + scan.terms.len()) as u64);
    progress.stage("media", scan.attachments.len() as u64);
    run.attachments(media, &scan.attachments, options, progress)
        .await?;
    progress.stage("posts and pages", scan.items);
    run.items(file, options.batch.max(1), progress).await?;
    let mut unused: Vec<i64> = run
        .blocks
        .keys()
        .filter(|id| !run.blocks_used.contains(id))
        .copied()
        .collect();
    unused.sort_unstable();
    for id in unused {
        run.report.note(
            format!("reusable block {id}"),
            "used by no post: not imported (a reusable block lives in the posts that use it)",
        );
    }
    progress.stage("pages' order and menus", 1);
    run.hierarchy_and_menus(&scan.menus).await?;
    progress.advance(1);
    progress.stage("old addresses", 1);
    run.old_addresses(&options.site_urls).await?;
    progress.advance(1);
    Ok(run.report)
}

/// What the first reading gathers: small, whatever the size of the file.
#[derive(Debug, Default)]
struct Scan {
    site: String,
    /// The language the old site wrote in (`en-US`).
    language: String,
    authors: Vec<Node>,
    terms: Vec<Node>,
    attachments: Vec<Node>,
    /// Menu slug to its name.
    menus: BTreeMap<String, String>,
    /// Posts, pages and other items (not attachments).
    items: u64,
    /// Reusable blocks (`wp_block` items): their content, by id, put in
    /// place where a post uses one.
    blocks: HashMap<i64, String>,
    /// Items the store would refuse, each with why (the check pass): the
    /// import then writes nothing.
    refused: Vec<String>,
}

fn scan(file: &Path, progress: &dyn Progress) -> Result<Scan, WxrError> {
    let mut reader = WxrReader::open(file)?;
    let mut scan = Scan::default();
    let mut version = None;
    let mut read = 0;
    while let Some(entry) = reader.next_entry()? {
        match entry.name.as_str() {
            "wp:wxr_version" => version = Some(entry.text.trim().to_owned()),
            "wp:base_site_url" => scan.site = entry.text.trim().trim_end_matches('/').to_owned(),
            "language" if scan.language.is_empty() => {
                scan.language = entry.text.trim().to_owned();
            }
            "link" if scan.site.is_empty() => {
                scan.site = entry.text.trim().trim_end_matches('/').to_owned();
            }
            "wp:author" => scan.authors.push(entry),
            "wp:category" | "wp:tag" => scan.terms.push(entry),
            "wp:term" if entry.text_of("wp:term_taxonomy") == "nav_menu" => {
                scan.menus.insert(
                    entry.text_of("wp:term_slug").to_owned(),
                    entry.text_of("wp:term_name").to_owned(),
                );
            }
            "item" if entry.text_of("wp:post_type") == "attachment" => {
                scan.attachments.push(entry);
            }
            "item" => {
                scan.items += 1;
                if entry.text_of("wp:post_type") == "wp_block"
                    && let Some(id) = entry.number("wp:post_id")
                {
                    scan.blocks
                        .insert(id, entry.text_of("content:encoded").to_owned());
                }
                if let Err(why) = check_item(&entry) {
                    scan.refused.push(format!("{}: {why}", item_label(&entry)));
                }
            }
            _ => {}
        }
        let now = reader.position();
        progress.advance(now - read);
        read = now;
    }
    if version.is_none() {
        return Err(WxrError {
            file: file.display().to_string(),
            line: 0,
            column: 0,
            message: "this RSS file is not a WordPress export: it has no <wp:wxr_version>".into(),
        });
    }
    Ok(scan)
}

/// Pictures the import brought, by WordPress id and by file.
#[derive(Debug, Default)]
struct Gallery {
    by_id: HashMap<i64, (ResourceId, Picture)>,
    /// `2024/05/red-square.png` (under `uploads/`) to WordPress's id.
    by_file: HashMap<String, i64>,
}

impl Pictures for Gallery {
    fn by_id(&self, wp_id: i64) -> Option<Picture> {
        self.by_id.get(&wp_id).map(|(_, p)| p.clone())
    }

    fn by_url(&self, url: &str) -> Option<Picture> {
        let file = uploads_path(url)?;
        let id = self
            .by_file
            .get(file)
            .or_else(|| self.by_file.get(&without_size(file)))?;
        self.by_id(*id)
    }
}

/// `2024/05/red-square.png` from `https://old/wp-content/uploads/2024/05/red-square.png`.
fn uploads_path(url: &str) -> Option<&str> {
    let at = url.find("/uploads/")?;
    Some(
        url[at + "/uploads/".len()..]
            .split(['?', '#'])
            .next()
            .unwrap_or(""),
    )
}

/// `red-square.png` from `red-square-300x225.png` (a size WordPress made).
fn without_size(file: &str) -> String {
    let (stem, ext) = file.rsplit_once('.').unwrap_or((file, ""));
    if let Some((base, size)) = stem.rsplit_once('-')
        && let Some((w, h)) = size.split_once('x')
        && !w.is_empty()
        && !h.is_empty()
        && w.bytes().chain(h.bytes()).all(|b| b.is_ascii_digit())
    {
        return format!("{base}.{ext}");
    }
    file.to_owned()
}

/// A page's place under its parent, set once every page is in.
struct PagePlace {
    page: i64,
    parent: i64,
    order: i64,
}

/// A menu item, placed once everything it may point at is in.
struct NavItem {
    wp_id: i64,
    menu: String,
    order: i64,
    parent: i64,
    kind: String,
    object_id: i64,
    title: String,
    url: String,
}

struct Run {
    store: Store,
    site: String,
    enabled: Enabled,
    report: Report,
    /// WordPress post id (posts, pages, attachments) to resource.
    posts: HashMap<i64, ResourceId>,
    /// `category/news` or `post_tag/rust` to keyword.
    terms: HashMap<String, ResourceId>,
    /// WordPress term id to keyword.
    term_ids: HashMap<i64, ResourceId>,
    /// Author login to person.
    authors: HashMap<String, ResourceId>,
    pictures: Arc<Gallery>,
    pages: Vec<PagePlace>,
    nav: Vec<NavItem>,
    /// The old site's other addresses and where each goes now.
    old: OldAddresses,
    /// The site's language the old site wrote in, when the site has it
    /// among several: slugs are that language's.
    slug_language: Option<String>,
    /// The export's reusable blocks, and which posts used.
    blocks: Arc<HashMap<i64, String>>,
    blocks_used: BTreeSet<i64>,
}

/// One thing to write: a resource made from an item, or the same again.
struct Planned {
    kind: &'static str,
    name: String,
    write: Write,
}

enum Write {
    Create(Prepared),
    Update(SanitizedUpdate),
    Keep(ResourceId),
}

impl Run {
    async fn on_store<T, F>(&self, f: F) -> Result<T, ImportError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        Ok(self.store.run(f).await?)
    }

    async fn prepare_schema(&self) -> Result<(), ImportError> {
        self.on_store(|s| {
            if s.category(PAGE_CATEGORY).is_err() {
                bulwark_store::made_or_there(s.create_category(
                    PAGE_CATEGORY,
                    Some("text"),
                    "Page",
                ))?;
            }
            if s.predicate(SUBPAGE).is_err() {
                bulwark_store::made_or_there(
                    s.create_predicate(SUBPAGE, "Subpage", &["text"], &["text"])
                        .map(drop),
                )?;
            }
            if s.predicate(BROADER).is_err() {
                bulwark_store::made_or_there(
                    s.create_predicate(BROADER, "Broader", &["keyword"], &["keyword"])
                        .map(drop),
                )?;
            }
            Ok(())
        })
        .await
    }

    fn wordpress(&self, fields: Value) -> Value {
        let mut wp = json!({ "site": self.site });
        if let (Some(wp), Value::Object(fields)) = (wp.as_object_mut(), fields) {
            wp.extend(fields);
        }
        wp
    }

    /// Looks up what exists of `planned` resources and turns each into a
    /// create, an update or nothing, by its fingerprint.
    async fn plan(
        &self,
        items: Vec<(&'static str, String, NewResource)>,
    ) -> Result<Vec<Planned>, ImportError> {
        let site = self.site.clone();
        self.on_store(move |s| {
            let mut planned = Vec::with_capacity(items.len());
            for (kind, name, mut new) in items {
                let fingerprint = fingerprint(&new);
                if let Some(wp) = new
                    .props
                    .0
                    .get_mut("wordpress")
                    .and_then(Value::as_object_mut)
                {
                    wp.insert("fingerprint".into(), fingerprint.clone().into());
                }
                let write = match s.resource_by_name(&name)? {
                    None => Write::Create(s.prepare(new)?),
                    Some(there) => {
                        let wp = there.props.0.get("wordpress");
                        let from = wp.and_then(|w| w.get("site")).and_then(Value::as_str);
                        if from.is_some_and(|f| f != site) {
                            return Err(StoreError::invalid(
                                "name",
                                format!("{name} was imported from another WordPress site"),
                            ));
                        }
                        let same = wp
                            .and_then(|w| w.get("fingerprint"))
                            .and_then(Value::as_str)
                            == Some(fingerprint.as_str());
                        match same {
                            true => Write::Keep(there.id),
                            false => {
                                let mut update = ResourceUpdate::new(there.id, there.version)
                                    .merge(new.props)
                                    .published(new.published);
                                // A media resource keeps the category its
                                // file gave it (image, document...).
                                if new.category != "media" {
                                    update.category = Some(new.category);
                                }
                                update.publication_start = Some(new.publication_start);
                                Write::Update(update.sanitize()?)
                            }
                        }
                    }
                };
                planned.push(Planned { kind, name, write });
            }
            Ok(planned)
        })
        .await
    }

    fn counted(&mut self, kind: &str, write: &Write) {
        self.report.count(
            kind,
            match write {
                Write::Create(_) => Outcome::Imported,
                Write::Update(_) => Outcome::Updated,
                Write::Keep(_) => Outcome::Unchanged,
            },
        );
    }

    /// Writes planned resources in one transaction; their ids by name.
    async fn write_planned(
        &mut self,
        planned: Vec<Planned>,
    ) -> Result<HashMap<String, ResourceId>, ImportError> {
        for p in &planned {
            self.counted(p.kind, &p.write);
        }
        self.on_store(move |s| {
            s.batch(|b| {
                let mut ids = HashMap::new();
                for p in planned {
                    ids.insert(p.name, write_one(b, p.write)?);
                }
                Ok(ids)
            })
        })
        .await
    }

    async fn authors(&mut self, authors: &[Node]) -> Result<(), ImportError> {
        let mut items = Vec::new();
        let mut logins = HashMap::new();
        for a in authors {
            let Some(id) = a.number("wp:author_id") else {
                continue;
            };
            let login = a.text_of("wp:author_login").to_owned();
            let nicename = author_nicename(&login);
            let display = a.text_of("wp:author_display_name");
            let props = Props::try_from(json!({
                "title": if display.is_empty() { login.as_str() } else { display },
                "name_first": a.text_of("wp:author_first_name"),
                "name_surname": a.text_of("wp:author_last_name"),
                "wordpress": self.wordpress(json!({ "author_id": id, "login": login })),
            }))?;
            let name = format!("wp_author_{id}");
            logins.insert(name.clone(), (login, nicename, id));
            items.push((
                "person",
                name.clone(),
                NewResource::new("person", props)
                    .named(&name)
                    .published(true),
            ));
        }
        let planned = self.plan(items).await?;
        for (name, id) in self.write_planned(planned).await? {
            if let Some((login, nicename, wp_id)) = logins.remove(&name) {
                self.authors.insert(login, id);
                self.old.about(&format!("/author/{nicename}"), id);
                self.old
                    .to(format!("/?author={wp_id}"), OldHome::Resource(id));
            }
        }
        Ok(())
    }

    /// An account for each author (`--users GROUP`): their login as the
    /// username, their address for the password reset that sets their
    /// password (the one stored is random, and told to nobody). With
    /// `invite` (`--invite`), each account made is mailed a link to choose
    /// it; an account there was already is not mailed again.
    async fn accounts(
        &mut self,
        authors: &[Node],
        group: &str,
        invite: Option<Arc<bulwark_site::Site>>,
    ) -> Result<(), ImportError> {
        use bulwark_module_auth::accounts::{self, AccountError};
        use bulwark_module_auth::{GroupName, HashCost, HashLimits, NewPassword, Passwords};
        let passwords = Arc::new(Passwords::new(HashCost::default(), HashLimits::default())?);
        let group = GroupName::new(group);
        for a in authors {
            let login = a.text_of("wp:author_login").to_owned();
            let Some(&person) = self.authors.get(&login) else {
                continue;
            };
            let email = Some(a.text_of("wp:author_email").to_owned()).filter(|e| !e.is_empty());
            let (password, _) = NewPassword::random();
            let hash = passwords.hash(password).await?;
            let (group, name) = (group.clone(), login.clone());
            let made = self
                .store
                .run(move |s| {
                    Ok(accounts::add_account_for(
                        s,
                        person,
                        &name,
                        &group,
                        &hash,
                        email.as_deref(),
                    ))
                })
                .await?;
            match made {
                Ok(true) => {
                    self.report.count("user", Outcome::Imported);
                    if let Some(site) = &invite {
                        self.invite(site.clone(), person, &login).await?;
                    }
                }
                Ok(false) => self.report.count("user", Outcome::Unchanged),
                Err(AccountError::Store(e)) => return Err(e.into()),
                Err(why) => self
                    .report
                    .skip("user", format!("author {login:?}"), why.to_string()),
            }
        }
        Ok(())
    }

    /// Mails the account of `person` (author `login`) a link to choose its
    /// password; an author without an address is reported, not mailed.
    async fn invite(
        &mut self,
        site: Arc<bulwark_site::Site>,
        person: ResourceId,
        login: &str,
    ) -> Result<(), ImportError> {
        use bulwark_module_auth::invitation::{self, InviteError};
        let sent = self
            .store
            .run(move |s| Ok(invitation::invite(s, &site, person)))
            .await?;
        match sent {
            Ok(_) => self.report.count("invitation", Outcome::Imported),
            Err(InviteError::Store(e)) => return Err(e.into()),
            Err(why) => {
                self.report
                    .skip("invitation", format!("author {login:?}"), why.to_string())
            }
        }
        Ok(())
    }

    /// Categories and tags as keywords; a category under another gets a
    /// `broader` edge to it.
    async fn terms(&mut self, terms: &[Node]) -> Result<(), ImportError> {
        let mut items = Vec::new();
        let mut keys = HashMap::new();
        let mut parents = Vec::new();
        let mut category_parents = HashMap::new();
        for t in terms {
            let Some(id) = t.number("wp:term_id") else {
                continue;
            };
            let (taxonomy, slug, title, parent) = match t.name.as_str() {
                "wp:category" => (
                    "category",
                    t.text_of("wp:category_nicename"),
                    t.text_of("wp:cat_name"),
                    t.text_of("wp:category_parent"),
                ),
                _ => (
                    "post_tag",
                    t.text_of("wp:tag_slug"),
                    t.text_of("wp:tag_name"),
                    "",
                ),
            };
            let description = t
                .child("wp:category_description")
                .or_else(|| t.child("wp:tag_description"))
                .map_or("", |d| d.text.trim());
            let props = Props::try_from(json!({
                "title": title,
                "summary": description,
                "slug": self.slug(slug),
                "wordpress": self.wordpress(json!({ "term_id": id, "taxonomy": taxonomy, "slug": slug })),
            }))?;
            let name = format!("wp_term_{id}");
            keys.insert(name.clone(), (id, format!("{taxonomy}/{slug}")));
            if !parent.is_empty() {
                parents.push((format!("{taxonomy}/{slug}"), format!("{taxonomy}/{parent}")));
            }
            if taxonomy == "category" {
                category_parents.insert(slug.to_owned(), parent.to_owned());
            }
            items.push((
                "keyword",
                name.clone(),
                NewResource::new("keyword", props)
                    .named(&name)
                    .published(true),
            ));
        }
        let planned = self.plan(items).await?;
        for (name, id) in self.write_planned(planned).await? {
            if let Some((term_id, key)) = keys.remove(&name) {
                // A category's archive is at its path under its parents
                // (`/category/news/local`), and at its own slug as well; a
                // tag's at `/tag/rust`. Both by id or slug in a query too.
                match key.split_once('/') {
                    Some(("category", slug)) => {
                        let path = category_path(slug, &category_parents);
                        self.old.about(&format!("/category/{path}"), id);
                        if path != slug {
                            self.old.about(&format!("/category/{slug}"), id);
                        }
                        self.old
                            .to(format!("/?cat={term_id}"), OldHome::Resource(id));
                    }
                    Some((_, slug)) => {
                        self.old.about(&format!("/tag/{slug}"), id);
                        self.old.to(format!("/?tag={slug}"), OldHome::Resource(id));
                    }
                    None => {}
                }
                self.terms.insert(key, id);
                self.term_ids.insert(term_id, id);
            }
        }
        let edges: Vec<(ResourceId, ResourceId)> = parents
            .iter()
            .filter_map(|(child, parent)| Some((*self.terms.get(child)?, *self.terms.get(parent)?)))
            .collect();
        self.on_store(move |s| {
            s.batch(|b| {
                for (child, parent) in edges {
                    b.connect(child, BROADER, parent)?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn attachments(
        &mut self,
        media: &MediaImport,
        attachments: &[Node],
        options: &Options,
        progress: &dyn Progress,
    ) -> Result<(), ImportError> {
        let client = options.fetch_media.then(|| {
            reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(60))
                .build()
                .unwrap_or_default()
        });
        let mut gallery = Gallery::default();
        for a in attachments {
            progress.advance(1);
            let Some(wp_id) = a.number("wp:post_id") else {
                continue;
            };
            let title = a.text_of("title").to_owned();
            let label = format!("attachment {wp_id} {title:?}");
            let url = a.text_of("wp:attachment_url").to_owned();
            let meta = post_meta(a);
            let alt = meta
                .get("_wp_attachment_image_alt")
                .cloned()
                .unwrap_or_default();
            let props = Props::try_from(json!({
                "title": title,
                "alt": alt,
                "summary": a.text_of("excerpt:encoded"),
                "wordpress": self.wordpress(json!({
                    "id": wp_id, "type": "attachment", "url": url, "link": a.text_of("link"),
                })),
            }))?;
            let name = format!("wp_{wp_id}");
            let created = post_time(a);
            let mut new = NewResource::new("media", props)
                .named(&name)
                .published(true);
            new.created = created;
            let there = {
                let name = name.clone();
                self.on_store(move |s| s.resource_by_name(&name)).await?
            };
            let (id, sha256) = match there {
                Some(there) => {
                    let sha = there
                        .props
                        .0
                        .get("sha256")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    let planned = self.plan(vec![("attachment", name, new)]).await?;
                    self.write_planned(planned).await?;
                    (there.id, sha)
                }
                None => {
                    let fingerprint = fingerprint(&new);
                    let mut props = new.props;
                    if let Some(wp) = props.0.get_mut("wordpress").and_then(Value::as_object_mut) {
                        wp.insert("fingerprint".into(), fingerprint.into());
                    }
                    let imported = Imported {
                        name: Some(name),
                        props,
                        created,
                    };
                    let kept = match (&options.uploads, &client, uploads_path(&url)) {
                        (Some(dir), _, Some(file)) => media.file(&dir.join(file), &imported).await,
                        (None, Some(client), _) => fetch(media, client, &url, &imported).await,
                        _ => {
                            self.report.skip(
                                "attachment",
                                label,
                                "its file was not brought: give --uploads (a copy of \
                                 wp-content/uploads) or --fetch-media",
                            );
                            continue;
                        }
                    };
                    match kept {
                        Ok((id, made)) => {
                            self.report.count("attachment", Outcome::Imported);
                            let sha = made["sha256"].as_str().unwrap_or_default().to_owned();
                            (id, sha)
                        }
                        Err(problem) => {
                            self.report
                                .skip("attachment", label, problem.detail().to_owned());
                            continue;
                        }
                    }
                }
            };
            self.posts.insert(wp_id, id);
            self.old
                .to(format!("/?attachment_id={wp_id}"), OldHome::Resource(id));
            if let Some(path) = old_path(&url, &self.site) {
                self.old.files(media, &path, id, &sha256, &meta);
            }
            let src = match sha256.is_empty() {
                true => format!("/media/file/{}", id.0),
                false => media.preview_url(id, "medium", &sha256),
            };
            let file = format!("/media/file/{}", id.0);
            gallery
                .by_id
                .insert(wp_id, (id, Picture { src, alt, file }));
            if let Some(file) = uploads_path(&url) {
                gallery.by_file.insert(file.to_owned(), wp_id);
            }
            // The attachment's own page on the old site, with the other old
            // addresses (written last, `old_addresses`).
            if let Some(path) = old_path(a.text_of("link"), &self.site) {
                self.old.to(path, OldHome::Resource(id));
            }
        }
        self.pictures = Arc::new(gallery);
        Ok(())
    }

    async fn items(
        &mut self,
        file: &Path,
        batch: usize,
        progress: &dyn Progress,
    ) -> Result<(), ImportError> {
        let mut reader = WxrReader::open(file)?;
        let mut pending = Vec::with_capacity(batch);
        while let Some(entry) = reader.next_entry()? {
            if entry.name != "item" {
                continue;
            }
            match entry.text_of("wp:post_type") {
                // Placed in the posts that use them (`content::convert_in`).
                "attachment" | "wp_block" => {
                    if entry.text_of("wp:post_type") == "wp_block" {
                        progress.advance(1);
                    }
                    continue;
                }
                "post" | "page" => pending.push(entry),
                "nav_menu_item" => {
                    self.nav_item(&entry);
                    progress.advance(1);
                }
                other => {
                    let label = item_label(&entry);
                    self.report.skip(
                        other,
                        label,
                        format!("items of type {other:?} have no place here yet"),
                    );
                    progress.advance(1);
                }
            }
            if pending.len() >= batch {
                let n = pending.len() as u64;
                self.write_items(std::mem::take(&mut pending)).await?;
                progress.advance(n);
            }
        }
        let n = pending.len() as u64;
        self.write_items(pending).await?;
        progress.advance(n);
        Ok(())
    }

    fn nav_item(&mut self, item: &Node) {
        let meta = post_meta(item);
        let Some(menu) = item
            .all("category")
            .find(|c| c.attr("domain") == Some("nav_menu"))
            .and_then(|c| c.attr("nicename"))
        else {
            return;
        };
        let number = |k: &str| meta.get(k).and_then(|v| v.parse().ok()).unwrap_or(0);
        self.nav.push(NavItem {
            wp_id: item.number("wp:post_id").unwrap_or(0),
            menu: menu.to_owned(),
            order: item.number("wp:menu_order").unwrap_or(0),
            parent: number("_menu_item_menu_item_parent"),
            kind: meta.get("_menu_item_type").cloned().unwrap_or_default(),
            object_id: number("_menu_item_object_id"),
            title: item.text_of("title").to_owned(),
            url: meta.get("_menu_item_url").cloned().unwrap_or_default(),
        });
    }

    /// A batch of posts and pages, with their comments, edges and redirects,
    /// in one transaction.
    async fn write_items(&mut self, items: Vec<Node>) -> Result<(), ImportError> {
        if items.is_empty() {
            return Ok(());
        }
        let mut planned = Vec::new();
        let mut extras = Vec::new();
        for item in items {
            let Some(mapped) = self.map_item(&item)? else {
                continue;
            };
            planned.push((mapped.kind, mapped.name.clone(), mapped.new));
            extras.push(mapped.extra);
        }
        let planned = self.plan(planned).await?;
        for p in &planned {
            self.counted(p.kind, &p.write);
        }
        let enabled = self.enabled;
        let (written, comment_outcomes) = self
            .on_store(move |s| {
                s.batch(|b| {
                    let mut written = Vec::new();
                    let mut outcomes = Vec::new();
                    for (p, extra) in planned.into_iter().zip(extras) {
                        let id = write_one(b, p.write)?;
                        for (predicate, object) in &extra.edges {
                            b.connect(id, predicate, *object)?;
                        }
                        if enabled.comments {
                            outcomes.extend(write_comments(b, id, &extra.comments)?);
                        }
                        let mut redirected = None;
                        if enabled.redirects
                            && let Some(rule) = &extra.redirect
                        {
                            let rule = NewRule {
                                to_rsc: Some(id),
                                ..rule.clone()
                            };
                            redirected = Some(redirects::insert_in(&mut b.sql(), &rule)?);
                        }
                        written.push((
                            extra.wp_id,
                            id,
                            redirected,
                            extra.by_id,
                            extra.dated,
                            extra.comment_feed,
                        ));
                    }
                    Ok((written, outcomes))
                })
            })
            .await?;
        for (wp_id, id, redirected, by_id, dated, comment_feed) in written {
            self.posts.insert(wp_id, id);
            for path in by_id {
                self.old.to(path, OldHome::Resource(id));
            }
            if let Some(path) = comment_feed {
                let id_arg = [("id", id.0.to_string())];
                self.old
                    .to(path, OldHome::rule("comments_feed_about_rss", &id_arg));
            }
            if let Some(when) = dated {
                self.old.dated(when);
            }
            if let Some(made) = redirected {
                self.report.count(
                    "redirect",
                    if made {
                        Outcome::Imported
                    } else {
                        Outcome::Unchanged
                    },
                );
            }
        }
        for outcome in comment_outcomes {
            match outcome {
                Ok(outcome) => self.report.count("comment", outcome),
                Err((label, why)) => self.report.skip("comment", label, why),
            }
        }
        Ok(())
    }

    /// What a post or page becomes, or `None` (counted as skipped) when it
    /// stays out.
    fn map_item(&mut self, item: &Node) -> Result<Option<Mapped>, ImportError> {
        let kind: &'static str = match item.text_of("wp:post_type") {
            "page" => "page",
            _ => "post",
        };
        let label = item_label(item);
        let Some(wp_id) = item.number("wp:post_id") else {
            self.report.skip(kind, label, "it has no wp:post_id");
            return Ok(None);
        };
        let status = item.text_of("wp:status");
        let password = !item.text_of("wp:post_password").is_empty();
        let created = post_time(item);
        let (published, start) = match status {
            "trash" => {
                self.report.skip(kind, label, "it is in the trash");
                return Ok(None);
            }
            "auto-draft" | "inherit" => {
                self.report
                    .skip(kind, label, format!("WordPress's own {status} copy"));
                return Ok(None);
            }
            "publish" if password => {
                self.report.note(
                    label.clone(),
                    "protected by a password on WordPress: imported unpublished, for an \
                     editor to decide",
                );
                (false, None)
            }
            "publish" => (true, None),
            "future" => (true, created),
            "draft" | "pending" | "private" => (false, None),
            other => {
                self.report.note(
                    label.clone(),
                    format!("status {other:?}: imported unpublished"),
                );
                (false, None)
            }
        };
        if status == "pending" {
            self.report.note(
                label.clone(),
                "was waiting for review: imported unpublished",
            );
        }
        let around = content::Around {
            blocks: Some(&self.blocks),
            old_site: &self.site,
        };
        let converted =
            content::convert_in(item.text_of("content:encoded"), &*self.pictures, &around);
        self.blocks_used
            .extend(converted.blocks_used.iter().copied());
        for missing in &converted.missing_blocks {
            self.report.note(
                label.clone(),
                format!("it uses reusable block {missing}, which is not in the export: left out"),
            );
        }
        if !converted.left_out.is_empty() {
            let names: Vec<String> = converted
                .left_out
                .iter()
                .map(|n| format!("<{n}>"))
                .collect();
            self.report.note(
                label.clone(),
                format!(
                    "its {} left out: the site keeps no scripts, styles, forms or frames \
                     in a text (a form can be made in Forms)",
                    names.join(", ")
                ),
            );
        }
        for name in &converted.unknown_shortcodes {
            *self
                .report
                .unknown_shortcodes
                .entry(name.clone())
                .or_default() += 1;
        }
        for missing in &converted.missing_pictures {
            self.report.note(
                label.clone(),
                format!("its gallery names attachment {missing}, which was not imported"),
            );
        }
        let meta = post_meta(item);
        let mut props = serde_json::Map::new();
        props.insert("title".into(), title_text(item.text_of("title")).into());
        props.insert("body".into(), converted.html.into());
        let excerpt = item.text_of("excerpt:encoded");
        if !excerpt.is_empty() {
            props.insert("summary".into(), excerpt.into());
        }
        let slug = item.text_of("wp:post_name");
        if !slug.is_empty() {
            props.insert("slug".into(), self.slug(slug));
        }
        if item.text_of("wp:is_sticky") == "1" {
            props.insert("featured".into(), true.into());
        }
        props.extend(meta_props(item));
        if let Some(enclosure) = props.get("enclosure").and_then(Value::as_str) {
            let enclosure = self.enclosure(enclosure);
            props.insert("enclosure".into(), enclosure);
        }
        props.insert(
            "wordpress".into(),
            self.wordpress(json!({
                "id": wp_id,
                "type": kind,
                "status": status,
                "link": item.text_of("link"),
                "author": item.text_of("dc:creator"),
                "comment_status": item.text_of("wp:comment_status"),
                "menu_order": item.number("wp:menu_order").unwrap_or(0),
            })),
        );
        let category = match kind {
            "page" => PAGE_CATEGORY,
            _ => "article",
        };
        let name = format!("wp_{wp_id}");
        let mut new = NewResource::new(category, Props::try_from(Value::Object(props))?)
            .named(&name)
            .published(published);
        new.publication_start = start;
        new.created = created;

        let mut edges = Vec::new();
        if let Some(&person) = self.authors.get(item.text_of("dc:creator")) {
            edges.push(("author", person));
            // Theirs: with an account, an author changes what they wrote
            // (the default rules' `own`).
            new.creator = Some(person);
        }
        for c in item.all("category") {
            let key = format!(
                "{}/{}",
                c.attr("domain").unwrap_or_default(),
                c.attr("nicename").unwrap_or_default()
            );
            if let Some(&keyword) = self.terms.get(&key) {
                edges.push(("subject", keyword));
            }
        }
        if let Some(thumb) = meta
            .get("_thumbnail_id")
            .and_then(|t| t.parse::<i64>().ok())
        {
            match self.pictures.by_id.get(&thumb) {
                Some(&(picture, _)) => edges.push(("depiction", picture)),
                None => self.report.note(
                    label.clone(),
                    format!("its featured image (attachment {thumb}) was not imported"),
                ),
            }
        }
        if kind == "page" {
            let parent = item.number("wp:post_parent").unwrap_or(0);
            if parent != 0 {
                self.pages.push(PagePlace {
                    page: wp_id,
                    parent,
                    order: item.number("wp:menu_order").unwrap_or(0),
                });
            }
        }
        let redirect = (published || status == "future")
            .then(|| old_path(item.text_of("link"), &self.site))
            .flatten()
            .and_then(|path| NewRule::new(&path, None, Some(0), Some(301)).ok());
        let comments = item
            .all("wp:comment")
            .map(|c| OldComment::of(c, &self.site))
            .collect();
        let live = published && status != "future";
        let by_id = match (live, kind) {
            (false, _) => Vec::new(),
            (true, "page") => vec![format!("/?page_id={wp_id}"), format!("/?p={wp_id}")],
            (true, _) => vec![format!("/?p={wp_id}")],
        };
        let dated = (live && kind == "post").then_some(created).flatten();
        let comment_feed = redirect
            .as_ref()
            .filter(|_| live && kind == "post")
            .map(|permalink| old_comment_feed(&permalink.from, wp_id));
        Ok(Some(Mapped {
            kind,
            name,
            new,
            extra: Extra {
                wp_id,
                edges,
                comments,
                redirect,
                by_id,
                dated,
                comment_feed,
            },
        }))
    }

    /// Every old address gathered on the way, and the site's feeds, date
    /// archives and pages, as redirects (`301`) to where each is now, in
    /// transactions of a thousand. An address the new site has no place for
    /// (no archive rule, no feeds) is left out, and said so once per kind.
    async fn old_addresses(&mut self, urls: &SiteUrls) -> Result<(), ImportError> {
        if !self.enabled.redirects {
            return Ok(());
        }
        self.old.site_wide();
        // Made and written a thousand at a time: a large blog's old
        // addresses are never all held as rules at once.
        let mut missing = BTreeSet::new();
        let mut moved = std::mem::take(&mut self.old.moved).into_iter();
        loop {
            let chunk: Vec<(String, OldHome)> = moved.by_ref().take(1000).collect();
            if chunk.is_empty() {
                break;
            }
            self.write_old(urls, chunk, &mut missing).await?;
        }
        for name in missing {
            self.report.note(
                format!("the old site's {}", old_kind(name)),
                format!("not redirected: this site has no rule named {name:?}"),
            );
        }
        Ok(())
    }

    /// Old addresses as `301` rules to where each is now, in one
    /// transaction; a rule the site has no place for goes into `missing`.
    async fn write_old(
        &mut self,
        urls: &SiteUrls,
        addresses: Vec<(String, OldHome)>,
        missing: &mut BTreeSet<&'static str>,
    ) -> Result<(), ImportError> {
        let mut rules = Vec::with_capacity(addresses.len());
        for (from, home) in addresses {
            let (to, to_rsc) = match home {
                OldHome::Resource(id) => (None, Some(id.0)),
                OldHome::Path(path) => (Some(path), None),
                OldHome::Rule { name, args, query } => match urls.rule(name, &args) {
                    Some(url) => (
                        Some(match query {
                            Some(q) => format!("{url}?{q}"),
                            None => url,
                        }),
                        None,
                    ),
                    None => {
                        missing.insert(name);
                        continue;
                    }
                },
            };
            match NewRule::new(&from, to.as_deref(), to_rsc, Some(301)) {
                Ok(rule) => rules.push(rule),
                Err(why) => self.report.skip("redirect", from, why.to_string()),
            }
        }
        let made = self
            .on_store(move |s| {
                s.batch(|b| {
                    rules
                        .iter()
                        .map(|rule| redirects::insert_in(&mut b.sql(), rule))
                        .collect::<Result<Vec<bool>, _>>()
                })
            })
            .await?;
        for made in made {
            let outcome = if made {
                Outcome::Imported
            } else {
                Outcome::Unchanged
            };
            self.report.count("redirect", outcome);
        }
        Ok(())
    }

    /// Pages under their parents, in WordPress's order; the menus.
    async fn hierarchy_and_menus(
        &mut self,
        menus: &BTreeMap<String, String>,
    ) -> Result<(), ImportError> {
        let mut places: Vec<(ResourceId, i64, ResourceId)> = self
            .pages
            .iter()
            .filter_map(|p| {
                Some((
                    *self.posts.get(&p.parent)?,
                    p.order,
                    *self.posts.get(&p.page)?,
                ))
            })
            .collect();
        places.sort_by_key(|&(parent, order, page)| (parent.0, order, page.0));
        self.on_store(move |s| {
            s.batch(|b| {
                for (parent, _, page) in places {
                    b.connect(parent, SUBPAGE, page)?;
                }
                Ok(())
            })
        })
        .await?;
        if !self.enabled.menus {
            if !self.nav.is_empty() {
                self.report.skip(
                    "menu",
                    format!("{} menus", menus.len()),
                    "the site does not enable the menu module",
                );
            }
            return Ok(());
        }
        // One imported menu becomes the site's main menu (the one its
        // templates show); the menu the site had is kept under another name.
        let main = main_menu(menus, &self.nav);
        if let Some(slug) = main {
            let kept = self.keep_site_main_menu().await?;
            self.report.note(
                "the main menu".to_owned(),
                format!(
                    "the imported menu {:?} is now the site's main menu{}",
                    menus[slug],
                    match kept {
                        Some(name) => format!("; the one it had is kept as {name:?} (Menus)"),
                        None => String::new(),
                    }
                ),
            );
        }
        let mut items = Vec::new();
        for (slug, title) in menus {
            let tree = self.menu_tree(slug, 0, 0);
            let name = match Some(slug.as_str()) == main {
                true => bulwark_module_menu::resource_name(MAIN_MENU),
                false => bulwark_module_menu::resource_name(&menu_name(slug)),
            };
            let props = Props::try_from(json!({
                "title": title,
                "menu": tree,
                "wordpress": self.wordpress(json!({ "menu": slug })),
            }))?;
            items.push((
                "menu",
                name.clone(),
                NewResource::new(bulwark_module_menu::CATEGORY, props)
                    .named(&name)
                    .published(true),
            ));
        }
        let planned = self.plan(items).await?;
        self.write_planned(planned).await?;
        Ok(())
    }

    /// A podcast's episode as WordPress keeps it (the `enclosure` field: its
    /// address, length and type on three lines) as `{url, length, type}`,
    /// which the site's feeds give as the item's enclosure; the address is
    /// the imported file's when the import brought it.
    fn enclosure(&self, text: &str) -> Value {
        let mut lines = text.lines().map(str::trim);
        let url = lines.next().unwrap_or("");
        let length = lines
            .next()
            .and_then(|l| l.parse::<u64>().ok())
            .unwrap_or(0);
        let kind = lines.next().unwrap_or("");
        let url = self.pictures.by_url(url).map_or(url.to_owned(), |p| p.file);
        json!({ "url": url, "length": length, "type": kind })
    }

    /// A slug as WordPress wrote it (`caf%c3%a9`), decoded, and in the
    /// language the old site wrote in when the site has several.
    fn slug(&self, slug: &str) -> Value {
        let slug = percent_decoded(slug);
        match &self.slug_language {
            Some(language) => bulwark_store::translated([(language.as_str(), slug.as_str())]),
            None => slug.into(),
        }
    }

    /// The site's own main menu (one no import made) renamed to
    /// `main_before_import` (with a number if that is taken), so the
    /// imported one can take its place and nothing an editor made is lost;
    /// its new name, or `None` when there was none of the site's own.
    async fn keep_site_main_menu(&mut self) -> Result<Option<String>, ImportError> {
        let main = bulwark_module_menu::resource_name(MAIN_MENU);
        self.on_store(move |s| {
            let Some(there) = s.resource_by_name(&main)? else {
                return Ok(None);
            };
            if there.props.0.contains_key("wordpress") {
                return Ok(None); // An import's: replaced again.
            }
            let mut kept = "main_before_import".to_owned();
            for n in 2.. {
                if s.resource_by_name(&bulwark_module_menu::resource_name(&kept))?
                    .is_none()
                {
                    break;
                }
                kept = format!("main_before_import_{n}");
            }
            let mut rename = ResourceUpdate::new(there.id, there.version);
            rename.name = Some(Some(bulwark_module_menu::resource_name(&kept)));
            s.update_resource(rename)?;
            Ok(Some(kept))
        })
        .await
    }

    /// The items of `menu` under item `parent`, as the menu module keeps them.
    fn menu_tree(&self, menu: &str, parent: i64, depth: usize) -> Vec<Value> {
        let mut items: Vec<&NavItem> = self
            .nav
            .iter()
            .filter(|n| n.menu == menu && n.parent == parent)
            .collect();
        items.sort_by_key(|n| (n.order, n.wp_id));
        items
            .into_iter()
            .filter_map(|n| {
                let target = match n.kind.as_str() {
                    "post_type" => self.posts.get(&n.object_id).copied(),
                    "taxonomy" => self.term_ids.get(&n.object_id).copied(),
                    _ => None,
                };
                let mut item = match (target, n.kind.as_str()) {
                    (Some(id), _) => json!({ "id": id.0 }),
                    (None, "custom") if !n.url.is_empty() => {
                        // A link to the old site (its front page, often)
                        // is a link to this one now.
                        let url = content::local_path(&n.url, &self.site).unwrap_or(n.url.clone());
                        json!({ "title": n.title, "url": url })
                    }
                    _ => return None,
                };
                if target.is_some() && !n.title.is_empty() {
                    item["title"] = n.title.clone().into();
                }
                let children = match depth + 1 < bulwark_module_menu::MAX_DEPTH {
                    true => self.menu_tree(menu, n.wp_id, depth + 1),
                    false => Vec::new(),
                };
                if !children.is_empty() {
                    item["children"] = children.into();
                }
                Some(item)
            })
            .collect()
    }
}

/// A post or page as it will be written.
struct Mapped {
    kind: &'static str,
    name: String,
    new: NewResource,
    extra: Extra,
}

/// What is written with a post in its transaction.
struct Extra {
    wp_id: i64,
    edges: Vec<(&'static str, ResourceId)>,
    comments: Vec<OldComment>,
    /// The old permalink's path (the target filled in once the id is known).
    redirect: Option<NewRule>,
    /// Its addresses by id (`/?p=12`), and when it was published (a post's,
    /// for the date archives); none for what is not published.
    by_id: Vec<String>,
    dated: Option<DateTime<Utc>>,
    /// The old address of its comment feed (a published post's).
    comment_feed: Option<String>,
}

/// A comment as the export has it.
struct OldComment {
    wp_id: i64,
    parent: i64,
    approved: String,
    author: String,
    email: String,
    url: String,
    ip: String,
    body: String,
    created: Option<DateTime<Utc>>,
    source: String,
}

impl OldComment {
    fn of(c: &Node, site: &str) -> OldComment {
        let wp_id = c.number("wp:comment_id").unwrap_or(0);
        OldComment {
            wp_id,
            parent: c.number("wp:comment_parent").unwrap_or(0),
            approved: c.text_of("wp:comment_approved").to_owned(),
            author: plain_text(c.text_of("wp:comment_author")),
            email: c.text_of("wp:comment_author_email").to_owned(),
            url: c.text_of("wp:comment_author_url").to_owned(),
            ip: c.text_of("wp:comment_author_IP").to_owned(),
            body: plain_text(c.text_of("wp:comment_content")),
            created: wordpress_time(c.text_of("wp:comment_date_gmt")),
            source: format!("wordpress:{site}#comment-{wp_id}"),
        }
    }
}

type CommentOutcome = Result<Outcome, (String, String)>;

/// A post's comments, threaded as they were; spam and the trash stay out.
fn write_comments(
    b: &mut Batch<'_>,
    rsc: ResourceId,
    old: &[OldComment],
) -> Result<Vec<CommentOutcome>, StoreError> {
    let mut outcomes = Vec::new();
    let mut ids: HashMap<i64, CommentId> = HashMap::new();
    let mut order: Vec<&OldComment> = old.iter().collect();
    order.sort_by_key(|c| c.wp_id);
    for c in order {
        let label = format!("comment {} by {:?}", c.wp_id, c.author);
        let status = match c.approved.as_str() {
            "1" | "approve" => Status::Approved,
            "0" | "hold" => Status::Pending,
            "spam" => {
                outcomes.push(Err((label, "spam".to_owned())));
                continue;
            }
            "trash" | "post-trashed" => {
                outcomes.push(Err((label, "in the trash".to_owned())));
                continue;
            }
            other => {
                outcomes.push(Err((label, format!("status {other:?}"))));
                continue;
            }
        };
        let mut sql = b.sql();
        let there = sql
            .query_one(
                "SELECT id FROM comment WHERE source = $1",
                &[c.source.as_str().into()],
            )?
            .map(|r| CommentId(r.int(0)));
        if let Some(id) = there {
            ids.insert(c.wp_id, id);
            outcomes.push(Ok(Outcome::Unchanged));
            continue;
        }
        let new = NewComment {
            rsc,
            parent: ids.get(&c.parent).copied(),
            user: None,
            name: c.author.clone(),
            email: c.email.clone(),
            url: Some(c.url.clone()).filter(|u| !u.is_empty()),
            body: c.body.clone(),
            status,
            address: Some(c.ip.clone()).filter(|a| !a.is_empty()),
            source: Some(c.source.clone()),
            created: c.created,
        };
        match comments::insert_in(&mut sql, &new) {
            Ok(made) => {
                ids.insert(c.wp_id, made.id);
                outcomes.push(Ok(Outcome::Imported));
            }
            Err(comments::CommentError::Store(e)) => return Err(e),
            Err(other) => outcomes.push(Err((label, other.to_string()))),
        }
    }
    Ok(outcomes)
}

fn write_one(b: &mut Batch<'_>, write: Write) -> Result<ResourceId, StoreError> {
    match write {
        Write::Create(new) => b.create(new),
        Write::Update(update) => b.update(update).map(|r| r.id),
        Write::Keep(id) => Ok(id),
    }
}

async fn fetch(
    media: &MediaImport,
    client: &reqwest::Client,
    url: &str,
    imported: &Imported,
) -> Result<(ResourceId, Value), bulwark_web::Problem> {
    use futures_util::StreamExt;
    let failed = |why: String| {
        bulwark_web::Problem::with_status_of(
            http::StatusCode::BAD_GATEWAY,
            format!("fetching {url}: {why}"),
        )
    };
    let answer = client
        .get(url)
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    if !answer.status().is_success() {
        return Err(failed(format!("the old site answered {}", answer.status())));
    }
    let chunks = answer
        .bytes_stream()
        .map(move |c| c.map_err(|e| failed(e.to_string())));
    media.stream(url, Box::pin(chunks), imported).await
}

/// A fingerprint of what an item would write: equal when nothing changed.
fn fingerprint(new: &NewResource) -> String {
    let mut hasher = Sha256::new();
    hasher.update(new.category.as_bytes());
    hasher.update([u8::from(new.published)]);
    hasher.update(format!("{:?}", new.publication_start).as_bytes());
    hasher.update(serde_json::to_vec(&new.props.0).unwrap_or_default());
    hex::encode(&hasher.finalize()[..12])
}

/// `post 4 "Hello"` for the report.
fn item_label(item: &Node) -> String {
    format!(
        "{} {} {:?}",
        item.text_of("wp:post_type"),
        item.text_of("wp:post_id"),
        item.text_of("title")
    )
}

/// The properties an item's custom fields make: each field whose name does
/// not start with `_` (WordPress's own), named as a property may be, its
/// value unserialized when PHP serialized it (an array keeps its keys, in
/// any language).
fn meta_props(item: &Node) -> impl Iterator<Item = (String, Value)> + '_ {
    let mut fields: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for m in item.all("wp:postmeta") {
        let key = m.text_of("wp:meta_key");
        if key.starts_with('_') {
            continue;
        }
        let value = m.child("wp:meta_value").map_or("", |v| v.text.as_str());
        let value = php::unserialize(value).unwrap_or_else(|| value.into());
        fields.entry(key).or_default().push(value);
    }
    // A field given twice (WordPress keeps every value of a key) keeps
    // every value, in order, as a list.
    fields.into_iter().map(|(key, mut values)| {
        let value = match values.len() {
            1 => values.remove(0),
            _ => Value::Array(values),
        };
        (property_name(key), value)
    })
}

/// What the store would say of an item's own texts and custom fields, asked
/// in the check pass, before anything is written; of its body, the limits
/// (its cleaning refuses nothing else, and costs a parse).
fn check_item(item: &Node) -> Result<(), StoreError> {
    bulwark_store::check_html_limits("body", item.text_of("content:encoded"))?;
    let mut props = serde_json::Map::new();
    props.insert("title".into(), title_text(item.text_of("title")).into());
    props.insert("summary".into(), item.text_of("excerpt:encoded").into());
    props.extend(meta_props(item));
    bulwark_store::sanitized_props(Props::try_from(Value::Object(props))?).map(drop)
}

/// The fields of an item (`<wp:postmeta>`), the last value of each: for
/// WordPress's own (`_thumbnail_id`), which have one.
fn post_meta(item: &Node) -> BTreeMap<String, String> {
    item.all("wp:postmeta")
        .map(|m| {
            (
                m.text_of("wp:meta_key").to_owned(),
                m.child("wp:meta_value")
                    .map_or("", |v| v.text.as_str())
                    .to_owned(),
            )
        })
        .collect()
}

/// An item's date: its GMT date, else (a draft has none) its local date as if
/// it were GMT.
fn post_time(item: &Node) -> Option<DateTime<Utc>> {
    wordpress_time(item.text_of("wp:post_date_gmt"))
        .or_else(|| wordpress_time(item.text_of("wp:post_date")))
}

fn wordpress_time(text: &str) -> Option<DateTime<Utc>> {
    if text.starts_with("0000") {
        return None;
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S")
        .ok()
        .map(|t| t.and_utc())
}

/// The path (with its query, if any) of a permalink on the old site, as a
/// redirect's old path: only pretty permalinks (a `?p=4` is no page's own).
fn old_path(link: &str, site: &str) -> Option<String> {
    let rest = link.strip_prefix(site).or_else(|| {
        let after_scheme = link.split_once("://")?.1;
        Some(&after_scheme[after_scheme.find('/')?..])
    })?;
    let path = rest.split('#').next().unwrap_or(rest);
    if path.is_empty() || path == "/" || path.contains('?') {
        return None;
    }
    redirects::normalise(path).ok()
}

/// `caf%c3%a9` as `café`: WordPress keeps non-ASCII slugs percent-encoded.
fn percent_decoded(slug: &str) -> String {
    percent_encoding::percent_decode_str(slug)
        .decode_utf8_lossy()
        .into_owned()
}

/// A custom field's key as a property name (a-z, 0-9, `_`, `-`, `.`); one of
/// the import's own names is kept as `wp_<name>`.
fn property_name(key: &str) -> String {
    let mut name: String = key
        .chars()
        .map(|c| match c {
            'A'..='Z' => c.to_ascii_lowercase(),
            'a'..='z' | '0'..='9' | '_' | '-' | '.' => c,
            _ => '_',
        })
        .collect();
    name.truncate(60);
    if OWN_PROPS.contains(&name.as_str()) || name.is_empty() {
        name = format!("wp_{name}");
    }
    name
}

/// A menu's slug as the menu module's name (`main-menu` -> `main_menu`).
/// The menu a site's templates show (`m.menu("main")`).
const MAIN_MENU: &str = "main";

/// Which of the imported menus becomes the site's main menu: the only one;
/// else the one whose slug says so (`main`, `primary`, `header`, `top`,
/// `navigation`, in that order); else the one with the most items.
fn main_menu<'a>(menus: &'a BTreeMap<String, String>, nav: &[NavItem]) -> Option<&'a str> {
    if menus.len() <= 1 {
        return menus.keys().next().map(String::as_str);
    }
    for word in ["main", "primary", "header", "top", "navigation"] {
        if let Some(slug) = menus.keys().find(|slug| slug.contains(word)) {
            return Some(slug);
        }
    }
    menus
        .keys()
        .max_by_key(|slug| nav.iter().filter(|n| &n.menu == *slug).count())
        .map(String::as_str)
}

fn menu_name(slug: &str) -> String {
    let name: String = slug
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '_',
        })
        .collect();
    match name.starts_with(|c: char| c.is_ascii_lowercase()) {
        true => name,
        false => format!("wp_{name}"),
    }
}

/// A comment's HTML as the text the comments module keeps (it shows text
/// only): tags out, the common entities back to their characters.
fn plain_text(html: &str) -> String {
    bulwark_store::html_to_plain(&with_line_breaks(html, "\n"))
        .trim()
        .to_owned()
}

/// `html` with each `<br>` (any way WordPress writes it) as `with`: a
/// comment's line break stays one, a title's becomes a space (the text
/// sanitiser would drop the tag and run the words together).
fn with_line_breaks(html: &str, with: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tag = &rest[at..];
        let end = tag.find('>').map_or(tag.len(), |i| i + 1);
        let name = tag[1..end.min(tag.len())]
            .trim_end_matches('>')
            .trim_end_matches('/')
            .trim();
        if name.eq_ignore_ascii_case("br") {
            out.push_str(with);
        } else {
            out.push_str(&tag[..end]);
        }
        rest = &tag[end..];
    }
    out.push_str(rest);
    out
}

/// A post's title as text: its `<br>`s as spaces, every entity decoded once
/// (the store escapes it again, once).
fn title_text(title: &str) -> String {
    bulwark_store::html_to_plain(&with_line_breaks(title, " "))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where an old address goes now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OldHome {
    /// A resource's page.
    Resource(ResourceId),
    /// A path of the new site (a media file, a preview).
    Path(String),
    /// The new site's rule of that name with those arguments (a feed, an
    /// archive, a list), and a query string: redirected only when the site
    /// has the rule.
    Rule {
        name: &'static str,
        args: Vec<(&'static str, String)>,
        query: Option<String>,
    },
}

impl OldHome {
    fn rule(name: &'static str, args: &[(&'static str, String)]) -> OldHome {
        OldHome::Rule {
            name,
            args: args.to_vec(),
            query: None,
        }
    }
}

/// The old site's addresses besides its permalinks, gathered on the way
/// and written last ([`Run::old_addresses`]): WordPress answers the same
/// post at `/?p=12`, a category at `/category/news/` and `/?cat=3`, its
/// feeds at `/feed/`, a month at `/2024/03/`, the blog's second page at
/// `/page/2/`, and every size of a picture it made at its own file.
#[derive(Default)]
struct OldAddresses {
    moved: Vec<(String, OldHome)>,
    /// The day of each published post, for the date archives.
    days: BTreeSet<(i32, u32, u32)>,
    /// Published posts: the blog's pages at ten a page.
    posts: u64,
}

impl OldAddresses {
    fn to(&mut self, from: String, home: OldHome) {
        self.moved.push((from, home));
    }

    /// A keyword's or a person's archive (`/tag/rust`, `/author/ada`): its
    /// page; its feed (`/tag/rust/feed`, `/tag/rust/feed/atom`) the thing's.
    fn about(&mut self, path: &str, id: ResourceId) {
        let id_arg = [("id", id.0.to_string())];
        self.to(path.to_owned(), OldHome::Resource(id));
        for (feed, rule) in [
            ("feed", "feed_about_rss"),
            ("feed/rss2", "feed_about_rss"),
            ("feed/atom", "feed_about"),
        ] {
            self.to(format!("{path}/{feed}"), OldHome::rule(rule, &id_arg));
        }
    }

    fn dated(&mut self, when: DateTime<Utc>) {
        use chrono::Datelike;
        self.days.insert((when.year(), when.month(), when.day()));
        self.posts += 1;
    }

    /// An attachment's file (`/wp-content/uploads/2024/03/cod.jpg`) goes to
    /// the media file; each size WordPress made of it (`cod-300x200.jpg`,
    /// named in `_wp_attachment_metadata`) to the preview of the nearest
    /// width at least as wide, else the widest.
    fn files(
        &mut self,
        media: &MediaImport,
        path: &str,
        id: ResourceId,
        sha256: &str,
        meta: &BTreeMap<String, String>,
    ) {
        self.to(
            path.to_owned(),
            OldHome::Path(format!("/media/file/{}", id.0)),
        );
        if sha256.is_empty() {
            return;
        }
        let Some(sizes) = meta
            .get("_wp_attachment_metadata")
            .and_then(|m| php::unserialize(m))
            .and_then(|m| m.get("sizes").cloned())
        else {
            return;
        };
        let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
        let mut presets = media.presets();
        presets.sort_by_key(|(_, width, _)| *width);
        let mut seen = BTreeSet::new();
        for size in sizes.as_object().into_iter().flat_map(|m| m.values()) {
            let (Some(file), Some(width)) = (
                size.get("file").and_then(Value::as_str),
                size.get("width").and_then(|w| {
                    w.as_u64()
                        .or_else(|| w.as_str().and_then(|t| t.parse().ok()))
                }),
            ) else {
                continue;
            };
            if file.contains('/') || !seen.insert(file.to_owned()) {
                continue;
            }
            let nearest = presets
                .iter()
                .find(|(_, w, _)| u64::from(*w) >= width)
                .or(presets.last());
            if let Some((preset, _, _)) = nearest {
                self.to(
                    format!("{folder}/{file}"),
                    OldHome::Path(media.preview_url(id, preset, sha256)),
                );
            }
        }
    }

    /// The site's feeds, the date archives and the blog's pages.
    fn site_wide(&mut self) {
        for (from, rule) in [
            ("/feed", "feed_rss"),
            ("/feed/rss2", "feed_rss"),
            ("/feed/rss", "feed_rss"),
            ("/feed/rdf", "feed_rss"),
            ("/feed/atom", "feed"),
            ("/?feed=rss2", "feed_rss"),
            ("/?feed=rss", "feed_rss"),
            ("/?feed=atom", "feed"),
            ("/comments/feed", "comments_feed_rss"),
            ("/comments/feed/rss2", "comments_feed_rss"),
            ("/comments/feed/atom", "comments_feed"),
            ("/?feed=comments-rss2", "comments_feed_rss"),
            ("/?feed=comments-atom", "comments_feed"),
        ] {
            self.to(from.to_owned(), OldHome::rule(rule, &[]));
        }
        let mut months = BTreeSet::new();
        let days = std::mem::take(&mut self.days);
        for &(year, month, day) in &days {
            let args = [("year", year.to_string()), ("month", format!("{month:02}"))];
            let archive = OldHome::rule("archive_month", &args);
            self.to(format!("/{year}/{month:02}/{day:02}"), archive.clone());
            self.to(format!("/?m={year}{month:02}{day:02}"), archive.clone());
            if months.insert((year, month)) {
                self.to(format!("/{year}/{month:02}"), archive.clone());
                self.to(format!("/?m={year}{month:02}"), archive);
            }
        }
        let years: BTreeSet<i32> = months.iter().map(|(y, _)| *y).collect();
        for year in years {
            let archive = OldHome::rule("archive_year", &[("year", year.to_string())]);
            self.to(format!("/{year}"), archive.clone());
            self.to(format!("/?m={year}"), archive);
        }
        for page in 2..=self.posts.div_ceil(10) {
            let list = OldHome::Rule {
                name: "articles",
                args: Vec::new(),
                query: Some(format!("page={page}")),
            };
            self.to(format!("/page/{page}"), list.clone());
            self.to(format!("/?paged={page}"), list);
        }
    }
}

/// What the old addresses that go to rule `name` are, in words.
fn old_kind(name: &str) -> &'static str {
    match name {
        "feed" | "feed_rss" | "feed_about" | "feed_about_rss" => "feeds",
        "comments_feed"
        | "comments_feed_rss"
        | "comments_feed_about"
        | "comments_feed_about_rss" => "comment feeds",
        "archive_year" | "archive_month" => "date archives",
        _ => "blog pages (/page/2/)",
    }
}

/// Where WordPress advertises the feed of a post's comments (its page's
/// `<link rel="alternate">`): under its permalink (`/2024/03/hello/feed/`),
/// or by id on a blog with plain permalinks (`/?p=12&feed=rss2`). One rule a
/// post: a large blog's other spellings (`feed/rss2/`, `feed/atom/`) would
/// triple its rules for addresses nobody was given.
fn old_comment_feed(permalink: &str, wp_id: i64) -> String {
    match permalink.contains('?') {
        true => format!("/?p={wp_id}&feed=rss2"),
        false => format!("{}/feed", permalink.trim_end_matches('/')),
    }
}

/// WordPress's `user_nicename` for a login, as its author archives use it
/// (`/author/ada-lovelace/`): lower case, each run of other characters a
/// hyphen.
fn author_nicename(login: &str) -> String {
    let mut out = String::with_capacity(login.len());
    for c in login.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// A category's slug under its parents' (`news/local`), as its archive's
/// path has it; a loop in the parents stops where it began.
fn category_path(slug: &str, parents: &HashMap<String, String>) -> String {
    let mut path = vec![slug];
    let mut at = slug;
    while let Some(parent) = parents.get(at).filter(|p| !p.is_empty()) {
        if path.contains(&parent.as_str()) || path.len() > 16 {
            break;
        }
        path.push(parent);
        at = parent;
    }
    path.reverse();
    path.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_wordpress_made_lead_back_to_the_file() {
        assert_eq!(
            without_size("2024/05/red-square-300x225.png"),
            "2024/05/red-square.png"
        );
        assert_eq!(without_size("2024/05/x-ray.png"), "2024/05/x-ray.png");
        assert_eq!(
            uploads_path("https://old.example.org/wp-content/uploads/2024/05/a.png?v=2"),
            Some("2024/05/a.png")
        );
    }

    #[test]
    fn only_pretty_permalinks_become_redirects() {
        let site = "https://old.example.org";
        assert_eq!(
            old_path("https://old.example.org/2024/05/hello/", site).as_deref(),
            Some("/2024/05/hello")
        );
        assert_eq!(old_path("https://old.example.org/?p=11", site), None);
        assert_eq!(old_path("https://old.example.org/", site), None);
    }

    #[test]
    fn custom_field_names_become_property_names() {
        assert_eq!(property_name("Phone Number"), "phone_number");
        assert_eq!(property_name("title"), "wp_title");
        assert_eq!(menu_name("main-menu"), "main_menu");
        assert_eq!(menu_name("2nd"), "wp_2nd");
    }

    #[test]
    fn a_comment_keeps_its_words_not_its_tags() {
        assert_eq!(
            plain_text("<p>Fish &amp; chips</p> <b>now</b>"),
            "Fish & chips now"
        );
    }

    #[test]
    fn every_entity_is_decoded_and_line_breaks_kept_where_they_mean_something() {
        assert_eq!(
            plain_text("Tom &amp; Jerry &#8212; ok &raquo; x&nbsp;y<br />next<BR>line"),
            "Tom & Jerry \u{2014} ok \u{bb} x y\nnext\nline"
        );
        assert_eq!(
            title_text("Harbour<br>day &#8211; part&nbsp;2"),
            "Harbour day \u{2013} part 2"
        );
        assert_eq!(title_text("A <brick> wall"), "A wall");
    }
}
