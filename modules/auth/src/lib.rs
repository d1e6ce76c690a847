//! The accounts module (`auth`): who may log on.
//!
//! **What it does now.** A user is a person resource with a username and an
//! argon2id password hash; user groups are resources in a tree
//! (anonymous < members < editors < managers < administrators), created when a
//! site's store opens ([`accounts`] says how they are stored). Passwords are
//! hashed and checked in one place, [`password::Passwords`], off the async
//! workers and behind a bound on concurrent hashes. The command line
//! (`bulwark user add | passwd | list`) works through [`accounts`]. A site that
//! starts serving without any account gets `admin` in the administrators group,
//! with a random password printed once (or the one given in
//! `BULWARK_ADMIN_PASSWORD`, not printed).
//!
//! **What it does not do yet.** No sessions, logon pages, CSRF tokens, rate
//! limits or rules: every request is still anonymous. Those build on
//! [`Auth::passwords`] (the logon check is [`Passwords::verify_or_dummy`]) and
//! on the groups here.

pub mod accounts;
pub mod password;

use std::io::Write;
use std::sync::{Arc, OnceLock};

use bulwark_site::{ModuleManifest, Site};
use bulwark_store::{Store, StoreError};
use bulwark_web::{Module, StartError};

pub use accounts::{Account, AccountError, GroupName};
pub use password::{HashCost, HashLimits, NewPassword, Password, PasswordError, Passwords};

pub const PRIORITY: i32 = 400;

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
            None,
            None,
            include_str!("../module.toml"),
        );
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

    fn open_store(&self, _site: &Site, store: &Store) -> Result<(), StoreError> {
        accounts::ensure_user_groups(store)
    }

    fn start_serving(&self, site: &Site, store: &Store) -> Result<(), StartError> {
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
         \n    bulwark user passwd {FIRST_ADMIN} --site {site}\n\
         {rule}\n"
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
