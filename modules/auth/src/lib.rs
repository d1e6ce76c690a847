//! The accounts module (`auth`): who may log on, and who is asking.
//!
//! A user is a person resource with a username and an argon2id password hash;
//! user groups are resources in a tree (anonymous < members < editors <
//! managers < administrators), created when a site's store opens
//! ([`accounts`] says how they are stored). Passwords are hashed and checked
//! in one place, [`password::Passwords`], off the async workers and behind a
//! bound on concurrent hashes. The command line (`bulwark user add | passwd |
//! list`) works through [`accounts`]. A site that starts serving without any
//! account gets `admin` in the administrators group, with a random password
//! printed once (or the one given in `BULWARK_ADMIN_PASSWORD`, not printed).
//!
//! Logon makes a session ([`sessions`]): a random token in a cookie, the
//! session in the site's database. The module is the site's
//! [`Authenticator`](bulwark_web::Authenticator): every request with a session
//! cookie gets the user's [`Principal`](bulwark_acl::Principal) (their groups
//! included), which every surface's access decision takes, and a CSRF token
//! that state-changing requests must carry (`{{ csrf_field() }}` in forms).
//! Logon attempts are counted per address and per account, in the database,
//! before anything is checked ([`throttle`]).
//! The pages and JSON endpoints are in [`logon`].
//!
//! A second factor is optional per account and can be required for user
//! groups (`[auth] require_second_factor`, [`AuthSettings`]): a TOTP secret
//! for an authenticator app ([`totp`]) with single-use recovery codes,
//! enrolled, checked and removed in [`second_factor`] (`bulwark user totp`,
//! `bulwark user recovery-codes`).
//!
//! **Password reset by e-mail.** `/logon/reset` asks for a username or
//! address and mails a single-use, expiring link ([`reset`] keeps the tokens,
//! `reset_pages.rs` the pages and `/api/auth/reset` endpoints); the mail goes
//! out through the `mail` module's `SendMail` notification. A user's address is
//! their `email` identity ([`accounts::set_email`]). A new password ends every
//! session and API token of the account ([`accounts::end_logons`]).

mod account;
pub mod accounts;
mod api;
pub mod api_tokens;
mod asking;
mod hashing_cores;
pub mod invitation;
pub mod logon;
mod logon_ticket;
pub mod password;
pub mod reset;
mod reset_pages;
pub mod rights;
pub mod second_factor;
pub mod second_factor_table;
mod secret;
pub mod session_table;
pub mod sessions;
pub mod settings;
pub mod throttle;
pub mod totp;
pub mod users;
pub mod view_as;
pub mod visitor_posts;

use std::io::Write;
use std::sync::{Arc, OnceLock};

use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{Migration, Store, StoreError};
use bulwark_web::events::CacheFlushed;
use bulwark_web::{Controller, Module, ModuleError, SiteSetup, StartError};
use include_dir::{Dir, include_dir};

pub use accounts::{Account, AccountError, GroupName, UserContact};
pub use password::{HashCost, HashLimits, NewPassword, Password, PasswordError, Passwords};
pub use second_factor::{SecondFactorCheck, SecondFactorError};
pub use session_table::Session;
pub use sessions::Sessions;
pub use settings::AuthSettings;

use crate::logon::{AuthController, AuthSite};
use crate::throttle::Throttle;
pub use reset::{RESET_EXPIRY, ResetToken, TokenProblem};
pub use reset_pages::{CONFIRM_RULE, MAIL_TEMPLATE, REQUEST_ANSWER};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
static TRANSLATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/translations");

pub const PRIORITY: i32 = 400;

/// The module's own tables: reset tokens, API tokens, sessions, second
/// factors, which resource is which user group. Migrations 3 and 4 take over what the core store kept before
/// (its migration 7 made `auth_session`; second factors were identity rows),
/// keeping the rows a database already has.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "password_reset",
        sqlite: include_str!("../migrations/sqlite/0001_password_reset.sql"),
        postgres: include_str!("../migrations/postgres/0001_password_reset.sql"),
    },
    Migration {
        version: 2,
        name: "api_tokens",
        sqlite: include_str!("../migrations/sqlite/0002_api_tokens.sql"),
        postgres: include_str!("../migrations/postgres/0002_api_tokens.sql"),
    },
    Migration {
        version: 3,
        name: "sessions",
        sqlite: include_str!("../migrations/common/0003_sessions.sql"),
        postgres: include_str!("../migrations/common/0003_sessions.sql"),
    },
    Migration {
        version: 4,
        name: "second_factor",
        sqlite: include_str!("../migrations/sqlite/0004_second_factor.sql"),
        postgres: include_str!("../migrations/postgres/0004_second_factor.sql"),
    },
    Migration {
        version: 5,
        name: "user_groups",
        sqlite: include_str!("../migrations/common/0005_user_groups.sql"),
        postgres: include_str!("../migrations/common/0005_user_groups.sql"),
    },
    Migration {
        version: 6,
        name: "throttle",
        sqlite: include_str!("../migrations/common/0006_throttle.sql"),
        postgres: include_str!("../migrations/common/0006_throttle.sql"),
    },
    Migration {
        version: 7,
        name: "unpublished_groups",
        sqlite: include_str!("../migrations/sqlite/0007_unpublished_groups.sql"),
        postgres: include_str!("../migrations/postgres/0007_unpublished_groups.sql"),
    },
];

/// Makes or brings up to date the module's tables in `store`, as opening a
/// site that enables the module does: for tools and tests that open a store
/// without a site.
pub fn migrate(store: &Store) -> Result<(), StoreError> {
    store.migrate_module("auth", MIGRATIONS)
}

/// The first account's username.
pub const FIRST_ADMIN: &str = "admin";

pub struct Auth {
    passwords: Arc<Passwords>,
    /// `BULWARK_ADMIN_PASSWORD`: the first administrator's password instead of a
    /// random one.
    first_admin_password: Option<String>,
}

/// The module, for the binary's registry. `first_admin_password` (from
/// `BULWARK_ADMIN_PASSWORD`) is checked here, so a bad one stops the start
/// before any site loads.
pub fn module(first_admin_password: Option<String>) -> Result<Arc<Auth>, PasswordError> {
    if let Some(password) = &first_admin_password {
        NewPassword::new(password.clone())?;
    }
    Ok(Arc::new(Auth {
        passwords: Arc::new(Passwords::new(HashCost::default(), HashLimits::default())?),
        first_admin_password,
    }))
}

pub fn manifest() -> &'static Arc<ModuleManifest> {
    static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let manifest = ModuleManifest::new(
            "auth",
            PRIORITY,
            &[],
            Some(&TEMPLATES),
            None,
            include_str!("../module.toml"),
        )
        .and_then(|m| m.with_endpoints(api::api().routes()))
        .map(|m| m.with_translations(&TRANSLATIONS));
        Arc::new(manifest.unwrap_or_else(|e| panic!("{e}")))
    })
}

impl Auth {
    /// The process's one password hasher and its concurrency gate.
    pub fn passwords(&self) -> &Arc<Passwords> {
        &self.passwords
    }
}

impl Module for Auth {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        manifest()
    }

    fn api(&self) -> Option<&'static bulwark_web::Api> {
        Some(api::api())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn open_store(&self, site: &Site, store: &Store) -> Result<(), StoreError> {
        accounts::ensure_user_groups(store)?;
        // The store opens before the site's setup, and a command such as
        // `bulwark user` opens it without one: check the section here too.
        let settings = AuthSettings::of_site(site).map_err(|e| StoreError::InvalidInput {
            field: match e.key.as_str() {
                "" => "auth".to_owned(),
                key => format!("auth.{key}"),
            },
            reason: e.problem,
        })?;
        settings.check_groups(store)
    }

    fn setup(&self, setup: &mut SiteSetup<'_>) -> Result<(), ModuleError> {
        let settings = AuthSettings::of_site(setup.site())?;
        let sessions = Arc::new(Sessions::new(
            setup.models().store.clone(),
            settings.clone(),
        ));
        let store = setup.models().store.clone();
        let logon_throttle = Arc::new(Throttle::new(
            store.clone(),
            "logon",
            settings.logon_attempts,
            settings.logon_window,
        ));
        let reset_throttle = Arc::new(Throttle::new(
            store.clone(),
            "reset",
            settings.reset_requests,
            reset_pages::RESET_REQUEST_WINDOW,
        ));
        let guard = Arc::new(visitor_posts::PostGuard::new(store.clone()));
        spawn_sweeper(
            &sessions,
            [
                logon_throttle.clone(),
                reset_throttle.clone(),
                Arc::new(guard.throttle()),
                Arc::new(guard.ticket_uses()),
            ],
        );
        setup.provide(guard);
        let tokens = Arc::new(api_tokens::ApiTokens::new(setup.models().store.clone()));
        let (ended, revoked) = (sessions.clone(), tokens.clone());
        setup.observers().on_notify(500, move |f: &CacheFlushed| {
            ended.forget(&f.keys, f.all);
            revoked.forget(&f.keys, f.all);
        });
        let site = Arc::new(AuthSite {
            sessions: sessions.clone(),
            tokens: tokens.clone(),
            passwords: self.passwords.clone(),
            throttle: logon_throttle,
        });
        let reset = Arc::new(reset_pages::SiteReset {
            site: setup.site().name().to_string(),
            store: setup.models().store.clone(),
            notifier: setup.notifier(),
            passwords: self.passwords.clone(),
            throttle: reset_throttle,
            settings,
        });
        setup.set_authenticator(Arc::new(asking::Asking { sessions, tokens }));
        setup.guard_resources(Arc::new(rights::AccountGuard::new(store.clone())));
        setup
            .observers()
            .on_first(500, move |change| users::membership_change(&store, change));
        setup.provide(site.clone());
        setup.provide(reset.clone());
        setup.add_controller("auth", move |options| {
            AuthController::from_rule(site.clone(), options)
                .map(|c| Box::new(c) as Box<dyn Controller>)
        });
        setup.add_controller("password_reset", move |options| {
            reset_pages::ResetController::new(options, reset.clone())
                .map(|c| Box::new(c) as Box<dyn Controller>)
        });
        setup.add_template_extension(|env| {
            env.add_function("csrf_field", csrf_field);
        });
        Ok(())
    }

    fn start_serving(&self, site: &Site, store: &Store) -> Result<(), StartError> {
        self.passwords.prepare_blocking()?;
        let preset = self
            .first_admin_password
            .clone()
            .map(NewPassword::new)
            .transpose()?;
        match create_first_admin(store, &self.passwords, preset)? {
            FirstAdmin::NotNeeded => {}
            FirstAdmin::Created {
                random_password: None,
            } => tracing::info!(
                site = %site.name(),
                "created the account {FIRST_ADMIN:?} (administrators) with the password from BULWARK_ADMIN_PASSWORD"
            ),
            FirstAdmin::Created {
                random_password: Some(password),
            } => print_first_admin(site.name().as_str(), &password),
        }
        Ok(())
    }
}

/// What [`create_first_admin`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum FirstAdmin {
    /// The site has an account already.
    NotNeeded,
    /// `admin` was made; with the random password when none was given.
    Created { random_password: Option<String> },
}

/// Gives a site without any account its administrator: `admin` in the
/// administrators group, with `password` or a random one.
pub fn create_first_admin(
    store: &Store,
    passwords: &Passwords,
    password: Option<NewPassword>,
) -> Result<FirstAdmin, StartError> {
    if accounts::has_accounts(store)? {
        return Ok(FirstAdmin::NotNeeded);
    }
    let (password, random_password) = match password {
        Some(given) => (given, None),
        None => {
            let (password, text) = NewPassword::random();
            (password, Some(text))
        }
    };
    let hash = passwords.hash_blocking(&password)?;
    let administrators = GroupName::new(accounts::ADMINISTRATORS);
    match accounts::add_user(store, FIRST_ADMIN, &administrators, &hash) {
        Ok(_) => Ok(FirstAdmin::Created { random_password }),
        // Another node starting on the same database was first.
        Err(AccountError::UsernameTaken(_)) => Ok(FirstAdmin::NotNeeded),
        Err(e) => Err(e.into()),
    }
}

/// The one time the random password is shown: on standard output, framed so it
/// stands out from the log.
fn print_first_admin(site: &str, password: &str) {
    let rule = "=".repeat(72);
    let text = format!(
        "\n{rule}\n\
         Site {site:?} had no account: created the administrator account.\n\
         \n    username: {FIRST_ADMIN}\n    password: {password}\n\n\
         This password is shown only this once. Change it with:\n\
         \n    bulwark user passwd {FIRST_ADMIN} --site {site}\n\n\
         The account has no e-mail address, so a forgotten password cannot be\n\
         reset by mail until you add one (the admin's Your account page).\n\
         {rule}\n"
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// `{{ csrf_field() }}`: the hidden form field with the session's CSRF token
/// (nothing for a visitor without a session, who needs none). Not for inside a
/// `cache` block: a cached fragment would carry one session's token.
fn csrf_field(state: &minijinja::State) -> minijinja::Value {
    let token = state
        .lookup("request")
        .and_then(|r| r.get_attr("csrf_token").ok())
        .filter(|t| !t.is_none() && !t.is_undefined())
        .map(|t| t.to_string())
        .filter(|t| t.bytes().all(|b| b.is_ascii_hexdigit()));
    match token {
        Some(token) => minijinja::Value::from_safe_string(format!(
            r#"<input type="hidden" name="{}" value="{token}">"#,
            bulwark_web::CSRF_FIELD
        )),
        None => minijinja::Value::from_safe_string(String::new()),
    }
}

/// Removes ended sessions and throttle windows from the database every ten
/// minutes, while the site's sessions live (a reload replaces them, and this
/// task ends).
fn spawn_sweeper(sessions: &Arc<Sessions>, throttles: [Arc<Throttle>; 4]) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return; // A command, not a server: nothing to sweep.
    };
    let weak = Arc::downgrade(sessions);
    runtime.spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(600));
        loop {
            tick.tick().await;
            let Some(sessions) = weak.upgrade() else {
                return;
            };
            let throttles = throttles.clone();
            let swept = tokio::task::spawn_blocking(move || {
                sessions.sweep_blocking()?;
                for throttle in &throttles {
                    throttle.sweep_blocking()?;
                }
                Ok::<_, StoreError>(())
            })
            .await;
            if let Ok(Err(e)) = swept {
                tracing::warn!("removing ended sessions and throttle windows: {e}");
            }
        }
    });
}
