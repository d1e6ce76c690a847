//! Access control: who is asking ([`Principal`]) and what they may see
//! ([`AccessPolicy`]).
//!
//! **What it is for.** One answer to "who is asking" for every surface that shows
//! data: template renders, the JSON API, the sitemap, searches and the push hub.
//! A site has one policy; every surface asks it, so a resource a visitor may not
//! see is absent everywhere, and a property they may not read is never shown.
//!
//! **How it works.** A [`Principal`] is anonymous or a [`User`]: a person
//! resource's id and the user groups they count as members of (their own and
//! every group above them in the hierarchy, [`DEFAULT_USER_GROUPS`] by
//! default). An [`AccessPolicy`] decides per resource and [`Action`]
//! ([`may`](AccessPolicy::may), [`may_see`](AccessPolicy::may_see)), per new
//! resource ([`may_insert`](AccessPolicy::may_insert)) and per property
//! ([`may_read`](AccessPolicy::may_read)), and gives the store the
//! [`VisibilityFilter`] for a search ([`search_filter`](AccessPolicy::search_filter)),
//! so lists page correctly without showing what the reader may not see; the
//! filter is computed by the same policy that decides single resources, so the
//! two cannot drift apart. [`SitePolicy`] is a site's policy, made of
//! [`Rule`]s (user group x content group x category -> actions; a site that
//! sets none gets [`default_rules`]). A [`CacheProfile`] says which principals
//! see exactly the same resources, so cached fragments may be shared between
//! them.
//!
//! **Dependencies.** This crate uses `bulwark-store` for [`Resource`](bulwark_store::Resource),
//! [`ResourceId`](bulwark_store::ResourceId) and [`VisibilityFilter`]: the store
//! keeps the visibility the rules read and must not depend on access control.
//! The push hub (`bulwark-push`) uses this crate for [`Principal`], so a client
//! connection and a page render name the one asking with the same type and the
//! accounts module produces a single value for both.
//!
//! **What it deliberately does not do.** No sessions, no logon, no passwords, no
//! tokens: the accounts module (`auth`) establishes who is asking and produces
//! `Principal`s. No caching of decisions (a render memoises them per resource
//! version) and no push topic rules (the push module's `SitePushAcl` decides
//! those, given the `Principal`).

mod policy;
mod principal;
mod rules;
pub mod stored;

pub use bulwark_store::VisibilityFilter;
pub use policy::{AccessPolicy, ResourceGuard, SiteLookups, SitePolicy};
pub use principal::{
    ADMINISTRATORS, ANONYMOUS, CacheProfile, DEFAULT_USER_GROUPS, EDITORS, MANAGERS, MEMBERS,
    Principal, User,
};
pub use rules::{AUTHORS, Action, DEFAULT_CONTENT_GROUP, Rule, UnknownAction, default_rules};
