//! The one way a comment comes in (the form's controller and the JSON
//! endpoint both call [`post`]), and what follows it: the mails, and the push
//! message on every node when a resource's approved comments changed.

use std::sync::Arc;
use std::time::Duration;

use bulwark_acl::{AccessPolicy, EDITORS, Principal};
use bulwark_module_auth::visitor_posts::{PostGuard, Verdict, VisitorPost, link_count};
use bulwark_module_mail::{looks_like_address, queue_to_each};
use bulwark_module_push::{PushHub, publish_about};
use bulwark_store::{DependencyKey, Resource, ResourceId, Store, StoreError};
use bulwark_web::{RequestCtx, SiteNotifier};

use crate::SiteComments;
use crate::settings::Moderation;
use crate::table::{self, Comment, CommentError, CommentId, NewComment, Status};

/// Characters a name may have.
const MAX_NAME: usize = 100;
/// Characters a URL may have.
const MAX_URL: usize = 500;

/// What a visitor typed (or a program sent).
#[derive(Debug, Clone, Default)]
pub struct Typed {
    pub rsc: String,
    pub parent: String,
    pub name: String,
    pub email: String,
    pub url: String,
    pub body: String,
    /// The honeypot field.
    pub extra: String,
    pub ticket: String,
}

/// What became of a post that was not refused.
#[derive(Debug)]
pub enum Posted {
    /// Stored: shown at once when approved, else waiting (pending or spam).
    Stored(Comment),
    /// A bot's: nothing stored (and logged), answered as a comment that waits.
    Dropped,
    /// No ticket (a browser without script): show it back with a fresh one.
    Confirm { ticket: String },
}

impl Posted {
    /// What the writer is told: `approved`, or `pending` for everything that
    /// waits (so a bot cannot tell it was caught, nor a spammer that they
    /// were held as spam).
    pub fn told_status(&self) -> &'static str {
        match self {
            Posted::Stored(c) if c.status == Status::Approved => "approved",
            _ => "pending",
        }
    }
}

/// Why a post was refused.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// A field is wrong: its name and what to do.
    #[error("{1}")]
    Invalid(&'static str, String),
    /// Nothing to comment on here: no such resource, not one the writer may
    /// see, or not of a category that takes comments.
    #[error("comments are not open on this page")]
    Closed,
    #[error("too many comments from your address; try again in {} seconds", .0.as_secs().max(1))]
    TooMany(Duration),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Checks, judges and stores a post by `req`'s caller.
pub async fn post(
    req: &RequestCtx<'_>,
    comments: &SiteComments,
    typed: &Typed,
) -> Result<Posted, Refused> {
    let settings = &comments.settings;
    let principal = req.principal().clone();
    let store = req.site.models().store.clone();
    let rsc = typed
        .rsc
        .trim()
        .parse::<i64>()
        .map(ResourceId)
        .map_err(|_| Refused::Closed)?;
    let parent = match typed.parent.trim() {
        "" => None,
        p => Some(CommentId(p.parse().map_err(|_| {
            Refused::Invalid("parent", "the comment to answer is not a number".into())
        })?)),
    };
    let body = typed.body.trim().replace("\r\n", "\n");
    if body.is_empty() {
        return Err(Refused::Invalid("body", "write a comment first".into()));
    }
    if body.chars().count() > settings.max_length {
        return Err(Refused::Invalid(
            "body",
            format!(
                "a comment has at most {} characters; this one has {}",
                settings.max_length,
                body.chars().count()
            ),
        ));
    }
    let writer = writer(&store, &principal, typed).await?;
    let categories = settings.categories.clone();
    let (resource, open) = store
        .run(move |s| {
            let Some(r) = s.resource(rsc)? else {
                return Ok((None, false));
            };
            let mut open = false;
            for category in &categories {
                open |= s.is_a(rsc, category)?;
            }
            Ok::<_, StoreError>((Some(r), open))
        })
        .await?;
    let resource = resource
        .filter(|r| open && req.site.policy().may_see(&principal, r))
        .ok_or(Refused::Closed)?;
    let editor = principal.in_group(EDITORS);
    if !editor {
        let guard = req.site.state::<Arc<PostGuard>>().ok_or_else(|| {
            StoreError::invalid("comments", "the auth module is not set up on this site")
        })?;
        let target = ticket_target(rsc);
        let asked = VisitorPost {
            address: req.peer().addr.ip(),
            honeypot: &typed.extra,
            ticket: &typed.ticket,
            target: &target,
        };
        match guard.check("comment", &asked, settings.limits).await? {
            Verdict::Welcome => {}
            Verdict::Bot(sign) => {
                tracing::info!(address = %asked.address, "comment dropped: {sign}");
                return Ok(Posted::Dropped);
            }
            Verdict::NoTicket => {
                return Ok(Posted::Confirm {
                    ticket: guard.confirm_ticket(&target, settings.limits).await?,
                });
            }
            Verdict::TooMany { retry_after } => return Err(Refused::TooMany(retry_after)),
        }
    }
    let status = if link_count(&body) > settings.max_links && !editor {
        Status::Spam
    } else if editor {
        Status::Approved
    } else {
        match settings.moderation {
            Moderation::None => Status::Approved,
            Moderation::All => Status::Pending,
            Moderation::FirstTime => {
                let (email, user) = (writer.email.clone(), principal.user_id());
                let known = store
                    .run(move |s| table::has_approved(s, &email, user))
                    .await?;
                if known {
                    Status::Approved
                } else {
                    Status::Pending
                }
            }
        }
    };
    let new = NewComment {
        rsc,
        parent,
        user: principal.user_id(),
        name: writer.name,
        email: writer.email,
        url: writer.url,
        body,
        status,
        address: Some(bulwark_http::visitor_network(req.peer().addr.ip()).to_string()),
        source: None,
        created: None,
    };
    let stored = store
        .run(move |s| Ok(table::insert(s, &new)))
        .await?
        .map_err(|e| match e {
            CommentError::ParentElsewhere => Refused::Invalid("parent", e.to_string()),
            CommentError::Store(e) => Refused::Store(e),
        })?;
    if stored.status != Status::Spam {
        tell_by_mail(comments, store, resource, stored.clone());
    }
    Ok(Posted::Stored(stored))
}

/// Who writes: a logged-on user's name and address, else what was typed.
struct Writer {
    name: String,
    email: String,
    url: Option<String>,
}

async fn writer(store: &Store, principal: &Principal, typed: &Typed) -> Result<Writer, Refused> {
    let url = match typed.url.trim() {
        "" => None,
        url if url.len() > MAX_URL => {
            return Err(Refused::Invalid(
                "url",
                format!("a web address has at most {MAX_URL} characters"),
            ));
        }
        url if url.starts_with("https://") || url.starts_with("http://") => Some(url.to_owned()),
        _ => {
            return Err(Refused::Invalid(
                "url",
                "a web address starts with https:// or http://".into(),
            ));
        }
    };
    if let Some(person) = principal.user_id() {
        let store = store.clone();
        let (name, email) = store
            .run(move |s| {
                let name = s
                    .resource(person)?
                    .and_then(|r| r.title().map(bulwark_store::html_to_plain))
                    .unwrap_or_default();
                let email = bulwark_module_auth::accounts::contact(s, person)?
                    .and_then(|c| c.email)
                    .unwrap_or_default();
                Ok::<_, StoreError>((name, email))
            })
            .await?;
        let name = if name.trim().is_empty() {
            typed.name.trim().to_owned()
        } else {
            name
        };
        return Ok(Writer { name, email, url });
    }
    let name = typed.name.trim();
    if name.is_empty() {
        return Err(Refused::Invalid("name", "say who you are".into()));
    }
    if name.chars().count() > MAX_NAME {
        return Err(Refused::Invalid(
            "name",
            format!("a name has at most {MAX_NAME} characters"),
        ));
    }
    let email = typed.email.trim();
    if !looks_like_address(email) {
        return Err(Refused::Invalid(
            "email",
            "give an e-mail address such as ann@example.org (it is not shown)".into(),
        ));
    }
    Ok(Writer {
        name: name.to_owned(),
        email: email.to_owned(),
        url,
    })
}

/// Mails the resource's authors and the moderators about `comment`, off the
/// request (the mails go through the mail module's queue; a site without it
/// logs that nobody was told).
fn tell_by_mail(comments: &SiteComments, store: Store, resource: Resource, comment: Comment) {
    let notifier = comments.notifier.current();
    let notify = comments.settings.notify.clone();
    let origin = comments.origin.clone();
    tokio::spawn(async move {
        let found = store
            .run(move |s| recipients(s, &resource, &notify).map(|to| (to, resource)))
            .await;
        let (to, resource) = match found {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(
                    "comments: finding whom to tell of comment {}: {e}",
                    comment.id.0
                );
                return;
            }
        };
        let title = resource
            .title()
            .map(bulwark_store::html_to_plain)
            .unwrap_or_else(|| format!("page {}", resource.id));
        let waits = comment.status != Status::Approved;
        let subject = if waits {
            format!("A comment on “{title}” waits for you")
        } else {
            format!("New comment on “{title}”")
        };
        let text = format!(
            "{name} wrote on “{title}”:\n\n{body}\n\n{what}: {origin}/admin/comments{query}\n",
            name = comment.name,
            body = comment.body,
            what = if waits {
                "Approve or remove it"
            } else {
                "All comments"
            },
            query = if waits { "?status=pending" } else { "" },
        );
        let to: Vec<String> = to
            .into_iter()
            .filter(|address| !address.eq_ignore_ascii_case(&comment.email))
            .collect();
        queue_to_each(&notifier, &to, &subject, &text, None, "comments").await;
    });
}

/// The addresses told of a comment on `resource`: its authors' (their
/// account's address, else their `email` property) and `notify`, or when
/// that is empty, every account in the editors group (or above) with an
/// address that has not turned this mail off (an imported account has it
/// off). Each once.
fn recipients(
    store: &Store,
    resource: &Resource,
    notify: &[String],
) -> Result<Vec<String>, StoreError> {
    use bulwark_module_auth::accounts;
    let mut to: Vec<String> = Vec::new();
    let mut add = |address: String| {
        if !address.is_empty() && !to.iter().any(|a| a.eq_ignore_ascii_case(&address)) {
            to.push(address);
        }
    };
    for author in store.objects(resource.id, "author")? {
        let account = accounts::contact(store, author)?.and_then(|c| c.email);
        let property = store
            .resource(author)?
            .and_then(|p| p.props.str("email").map(str::to_owned));
        if let Some(address) = account.or(property) {
            add(address);
        }
    }
    if notify.is_empty() {
        accounts::site_activity_addresses(store, EDITORS)?
            .into_iter()
            .for_each(&mut add);
    } else {
        notify.iter().cloned().for_each(add);
    }
    Ok(to)
}

/// Publishes `comments/{id}` when a resource's approved comments changed,
/// on this node and, since every node hears of the flush, on each of them.
pub(crate) struct LiveComments {
    notifier: SiteNotifier,
    store: Store,
    policy: Arc<dyn AccessPolicy>,
}

impl LiveComments {
    pub(crate) fn new(notifier: SiteNotifier, store: Store, policy: Arc<dyn AccessPolicy>) -> Self {
        LiveComments {
            notifier,
            store,
            policy,
        }
    }

    /// For a [`CacheFlushed`](bulwark_web::events::CacheFlushed): the
    /// resources whose comments key is among `keys` are announced.
    pub(crate) fn flushed(&self, keys: &[DependencyKey]) {
        let ids: Vec<ResourceId> = keys.iter().filter_map(table::resource_of_key).collect();
        if ids.is_empty() {
            return;
        }
        let Some(hub) = self.notifier.current().first(&PushHub) else {
            return; // No push module: pages show new comments when loaded.
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, policy) = (self.store.clone(), self.policy.clone());
        runtime.spawn(async move {
            let read = store
                .run(move |s| {
                    ids.into_iter()
                        .map(|id| Ok((id, s.resource(id)?)))
                        .collect::<Result<Vec<_>, StoreError>>()
                })
                .await;
            match read {
                Ok(resources) => {
                    for (id, resource) in resources {
                        // A full hub only costs an open page its live update.
                        let _ = publish_about(
                            &hub,
                            &crate::topic(id),
                            &format!("{{\"id\":{id},\"comments\":true}}"),
                            resource,
                            policy.clone(),
                        );
                    }
                }
                Err(e) => tracing::warn!("comments: not announced: {e}"),
            }
        });
    }
}

/// What a ticket for comments on page `rsc` names (`GET
/// /api/form-ticket?for=`; `_comments.tpl` writes the same in
/// `data-ticket-for`).
fn ticket_target(rsc: ResourceId) -> String {
    format!("comments:{}", rsc.0)
}
