//! Access control: who is asking ([`Principal`]) and what they may see
//! ([`AccessPolicy`]).
//!
//! **What it is for.** One answer to "who is asking" for every surface that shows
//! data: template renders, the JSON API, the sitemap, searches and the push hub.
//! A site has one policy; every surface asks it, so a resource a visitor may not
//! see is absent everywhere, and a property they may not read is never shown.
//!
//! **How it works.** A [`Principal`] is anonymous or a [`User`] (a person
//! resource's id and a [`Role`]); its fields are private, so adding what the
//! rules will need later (a user's content groups) changes the constructors, not
//! the call sites. An [`AccessPolicy`] decides per resource
//! ([`may_see`](AccessPolicy::may_see)) and per property
//! ([`may_read`](AccessPolicy::may_read)), and gives the store the
//! [`VisibilityFilter`] for a search ([`search_filter`](AccessPolicy::search_filter)),
//! so lists page correctly without showing what the reader may not see; the
//! filter is computed by the same policy that decides single resources, so the
//! two cannot drift apart. [`DefaultPolicy`] is the policy of a site that sets
//! nothing but `[access] private_properties`. A [`CacheProfile`] says which
//! principals see exactly the same resources, so cached fragments may be shared
//! between them.
//!
//! **Dependencies.** This crate uses `bulwark-store` for [`Resource`](bulwark_store::Resource),
//! [`ResourceId`](bulwark_store::ResourceId) and [`VisibilityFilter`]: the store
//! keeps the visibility the rules read and must not depend on access control.
//! The push hub (`bulwark-push`) uses this crate for [`Principal`], so a client
//! connection and a page render name the one asking with the same type and the
//! accounts module produces a single value for both.
//!
//! **What it deliberately does not do.** No sessions, no logon, no passwords, no
//! tokens: the accounts module will establish who is asking and produce
//! `Principal`s; until then every request is anonymous. No caching of decisions
//! (a render memoises them per resource version) and no push topic rules (the
//! push module's `SitePushAcl` decides those, given the `Principal`).

mod policy;
mod principal;

pub use bulwark_store::VisibilityFilter;
pub use policy::{AccessPolicy, DefaultPolicy};
pub use principal::{CacheProfile, Principal, Role, User};
