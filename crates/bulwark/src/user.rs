//! `bulwark user add | passwd | email | list | totp | recovery-codes`: a site's
//! accounts, worked on in its database directly (opened the way serving opens
//! it), without starting the server. The accounts module does the work; this
//! file picks the site, reads the password or code and prints.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};

use bulwark_module_auth::accounts::{self, Account};
use bulwark_module_auth::second_factor::{self, RecoveryCodes};
use bulwark_module_auth::{
    GroupName, HashCost, HashLimits, NewPassword, Passwords, SecondFactorError,
};
use bulwark_site::Site;
use bulwark_store::{IdentityKind, ResourceId, Store};
use bulwark_web::{enabled_modules, open_site_store};

use crate::control::Hearing;
use crate::{SiteChoice, UserCommand, lines, modules};

pub fn run(command: UserCommand) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        match command {
            UserCommand::Add {
                name,
                group,
                email,
                site,
            } => add(&site, &name, &group, email.as_deref()).await,
            UserCommand::Passwd { name, site } => passwd(&site, &name).await,
            UserCommand::Email {
                name,
                address,
                site,
            } => email(&site, &name, &address).await,
            UserCommand::List { site } => list(&site).await,
            UserCommand::Totp {
                name,
                disable: false,
                site,
            } => totp_enrol(&site, &name).await,
            UserCommand::Totp {
                name,
                disable: true,
                site,
            } => totp_disable(&site, &name).await,
            UserCommand::RecoveryCodes { name, site } => recovery_codes(&site, &name).await,
        }
    })
}

async fn add(
    choice: &SiteChoice,
    name: &str,
    group: &str,
    email: Option<&str>,
) -> anyhow::Result<()> {
    let (site, store, _told) = open(choice).await?;
    let group = GroupName::new(group);
    // Say what is wrong before asking for a password.
    let known = on_store(&store, accounts::user_groups).await?;
    if !known.contains(&group) {
        let known: Vec<_> = known.iter().map(ToString::to_string).collect();
        bail!(
            "site {}: there is no user group {:?}; the groups are: {}",
            site.name(),
            group.as_str(),
            known.join(", ")
        );
    }
    if user_exists(&store, name).await? {
        bail!("site {}: the username {name:?} is taken", site.name());
    }
    if let Some(email) = email {
        check_email(&site, &store, email, None).await?;
    }
    let hash = hash(read_new_password(name)?).await?;
    let (username, for_store) = (name.to_owned(), group.clone());
    store
        .run(move |s| Ok(accounts::add_user(s, &username, &for_store, &hash)))
        .await??;
    match email {
        None => println!("site {}: added user {name} ({group})", site.name()),
        Some(email) => {
            let (username, address) = (name.to_owned(), email.to_owned());
            store
                .run(move |s| Ok(accounts::set_email(s, &username, &address)))
                .await?
                .with_context(|| {
                    format!(
                        "site {}: added user {name} ({group}), but not the e-mail address",
                        site.name()
                    )
                })?;
            println!("site {}: added user {name} ({group}, {email})", site.name());
        }
    }
    Ok(())
}

/// An address mail can go to and no other user than `person` has, before any
/// password is asked for.
async fn check_email(
    site: &Site,
    store: &Store,
    email: &str,
    person: Option<ResourceId>,
) -> anyhow::Result<()> {
    bulwark_module_mail::Mail::new(email, "", "")
        .with_context(|| format!("site {}: the e-mail address", site.name()))?;
    let address = email.to_owned();
    let owner = store
        .run(move |s| s.find_identity(bulwark_store::IdentityKind::Email, &address))
        .await?;
    if owner.is_some_and(|o| Some(o.resource) != person) {
        bail!(
            "site {}: the e-mail address {email:?} belongs to another user",
            site.name()
        );
    }
    Ok(())
}

async fn passwd(choice: &SiteChoice, name: &str) -> anyhow::Result<()> {
    let (site, store, _told) = open(choice).await?;
    if !user_exists(&store, name).await? {
        bail!("site {}: there is no user {name:?}", site.name());
    }
    let hash = hash(read_new_password(name)?).await?;
    let username = name.to_owned();
    store
        .run(move |s| Ok(accounts::set_password_hash(s, &username, &hash)))
        .await??;
    println!("site {}: changed the password of {name}", site.name());
    Ok(())
}

async fn email(choice: &SiteChoice, name: &str, address: &str) -> anyhow::Result<()> {
    let (site, store, _told) = open(choice).await?;
    let username = name.to_owned();
    let Some((person, _)) = store.run(move |s| s.password_hash(&username)).await? else {
        bail!("site {}: there is no user {name:?}", site.name());
    };
    check_email(&site, &store, address, Some(person)).await?;
    let (username, for_store) = (name.to_owned(), address.to_owned());
    store
        .run(move |s| Ok(accounts::set_email(s, &username, &for_store)))
        .await??;
    println!(
        "site {}: the e-mail address of {name} is {address}",
        site.name()
    );
    Ok(())
}

async fn list(choice: &SiteChoice) -> anyhow::Result<()> {
    let (_, store, _told) = open(choice).await?;
    let users = on_store(&store, accounts::accounts).await?;
    print!("{}", user_table(&users));
    Ok(())
}

/// Wrong codes a person may type before `bulwark user totp` gives up (the
/// pending secret stays; running it again starts over with a new one).
const CODE_ATTEMPTS: usize = 3;

async fn totp_enrol(choice: &SiteChoice, name: &str) -> anyhow::Result<()> {
    let (site, store, _told) = open(choice).await?;
    let (person, username) = find_user(&site, &store, name).await?;
    let had_one = on_store(&store, move |s| second_factor::has_second_factor(s, person)).await?;
    let issuer = site.name().to_string();
    let label = username.clone();
    let pending = store
        .run(move |s| Ok(second_factor::start_enrolment(s, person, &issuer, &label)))
        .await??;
    println!(
        "site {}: a new second factor for {username}. Add it to an authenticator app \
         (type the secret, or paste the URI):\n\n    secret: {}\n    URI:    {}\n",
        site.name(),
        pending.secret,
        pending.uri
    );
    if std::io::stdout().is_terminal() {
        println!("Or scan this with the app:\n\n{}\n", pending.qr_text());
    }
    if had_one {
        println!(
            "{username}'s current second factor stays in force until this one is confirmed.\n"
        );
    }
    let mut attempts = 0;
    let codes = loop {
        attempts += 1;
        let Some(code) = read_code(&format!("Code from the app for {username}: "))? else {
            if attempts > 1 {
                bail!(
                    "site {}: {username}: the code did not match; nothing was changed",
                    site.name()
                );
            }
            bail!(
                "no code given: type the app's code when asked, or pipe it in as one line on \
                 standard input; nothing was changed"
            );
        };
        let confirmed = store
            .run(move |s| Ok(second_factor::confirm_enrolment(s, person, &code)))
            .await?;
        match confirmed {
            Ok(codes) => break codes,
            Err(SecondFactorError::WrongCode) if attempts < CODE_ATTEMPTS => {
                eprintln!("{}", SecondFactorError::WrongCode);
            }
            Err(e) => bail!("site {}: {username}: {e}; nothing was changed", site.name()),
        }
    };
    println!(
        "site {}: {username} now logs on with a code from the app.\n",
        site.name()
    );
    print_recovery_codes(&codes);
    Ok(())
}

async fn totp_disable(choice: &SiteChoice, name: &str) -> anyhow::Result<()> {
    let (site, store, _told) = open(choice).await?;
    let (person, username) = find_user(&site, &store, name).await?;
    if on_store(&store, move |s| second_factor::disable(s, person)).await? {
        println!(
            "site {}: removed the second factor of {username}",
            site.name()
        );
    } else {
        println!("site {}: {username} has no second factor", site.name());
    }
    Ok(())
}

async fn recovery_codes(choice: &SiteChoice, name: &str) -> anyhow::Result<()> {
    let (site, store, _told) = open(choice).await?;
    let (person, username) = find_user(&site, &store, name).await?;
    let made = store
        .run(move |s| Ok(second_factor::regenerate_recovery_codes(s, person)))
        .await?;
    match made {
        Ok(codes) => {
            println!(
                "site {}: new recovery codes for {username}; the old ones no longer work.\n",
                site.name()
            );
            print_recovery_codes(&codes);
            Ok(())
        }
        Err(SecondFactorError::NotEnrolled) => bail!(
            "site {}: {username} has no second factor; set one up with: bulwark user totp {username}",
            site.name()
        ),
        Err(e) => Err(e.into()),
    }
}

fn print_recovery_codes(codes: &RecoveryCodes) {
    println!(
        "Recovery codes: each works once instead of a code from the app. They are shown \
         only now: keep them somewhere safe.\n"
    );
    for code in codes.codes() {
        println!("    {code}");
    }
}

/// The person and the username as stored (lower case), or an error naming
/// the site.
async fn find_user(site: &Site, store: &Store, name: &str) -> anyhow::Result<(ResourceId, String)> {
    let username = name.to_owned();
    match on_store(store, move |s| {
        s.find_identity(IdentityKind::Username, &username)
    })
    .await?
    {
        Some(identity) => Ok((identity.resource, identity.key)),
        None => bail!("site {}: there is no user {name:?}", site.name()),
    }
}

/// One code: asked for on a terminal (the code is no secret once used, so it
/// is echoed), otherwise one line of standard input. `None` when there is
/// none (the end of the input, or an empty line).
fn read_code(prompt: &str) -> anyhow::Result<Option<String>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let mut err = std::io::stderr();
        write!(err, "{prompt}")?;
        err.flush()?;
    }
    let mut line = String::new();
    let read = stdin
        .lock()
        .read_line(&mut line)
        .context("reading the code from standard input")?;
    let code = without_line_end(line);
    Ok((read > 0 && !code.trim().is_empty()).then_some(code))
}

/// Name, groups and creation time in aligned columns.
fn user_table(users: &[Account]) -> String {
    let rows: Vec<[String; 3]> = users
        .iter()
        .map(|u| {
            let groups: Vec<_> = u.groups.iter().map(ToString::to_string).collect();
            [
                u.username.clone(),
                groups.join(","),
                u.created.format("%Y-%m-%d %H:%M UTC").to_string(),
            ]
        })
        .collect();
    let header = ["NAME".to_owned(), "GROUPS".to_owned(), "CREATED".to_owned()];
    let width = |i: usize| {
        rows.iter()
            .chain([&header])
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1) = (width(0), width(1));
    let mut out = String::new();
    for [name, groups, created] in [&header].into_iter().chain(&rows) {
        out.push_str(&format!("{name:<w0$}  {groups:<w1$}  {created}\n"));
    }
    out
}

/// The chosen site and its store, opened as serving opens it (migrations and
/// the modules' store hooks) but nothing started.
/// The site's store, and a [`Hearing`] that tells a running server what
/// the command changed when it is dropped (at the command's end).
async fn open(choice: &SiteChoice) -> anyhow::Result<(Arc<Site>, Store, Hearing)> {
    let modules = modules()?;
    let site = Arc::new(choose_site(choice, &modules)?);
    if !site.modules.iter().any(|m| m.name == "auth") {
        bail!(
            "site {} does not enable the accounts module: add \"auth\" to `modules` in {}",
            site.name(),
            site.dir.join("site.toml").display()
        );
    }
    let store = open_site_store(&site, &enabled_modules(&site, &modules))
        .await
        .with_context(|| format!("site {}", site.name()))?;
    let told = Hearing::start(&store, &choice.sites, site.name().as_str());
    Ok((site, store, told))
}

pub(crate) fn choose_site(
    choice: &SiteChoice,
    modules: &[Arc<dyn bulwark_web::Module>],
) -> anyhow::Result<Site> {
    let manifests: Vec<_> = modules.iter().map(|m| m.manifest().clone()).collect();
    let dir: &Path = &choice.sites;
    let mut sites = bulwark_site::load_sites(dir, false, &manifests)
        .map_err(|errors| anyhow::anyhow!("{}", lines(&errors)))?;
    let names = |sites: &[Site]| {
        sites
            .iter()
            .map(|s| s.name().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &choice.site {
        Some(name) => match sites.iter().position(|s| s.name().as_str() == name) {
            Some(i) => Ok(sites.swap_remove(i)),
            None => bail!(
                "there is no site {name:?} in {}; the sites are: {}",
                dir.display(),
                names(&sites)
            ),
        },
        None if sites.len() == 1 => Ok(sites.remove(0)),
        None if sites.is_empty() => bail!("there are no sites in {}", dir.display()),
        None => bail!(
            "{} holds several sites ({}): name one with --site",
            dir.display(),
            names(&sites)
        ),
    }
}

async fn on_store<T: Send + 'static>(
    store: &Store,
    work: impl FnOnce(&Store) -> Result<T, bulwark_store::StoreError> + Send + 'static,
) -> anyhow::Result<T> {
    Ok(store.run(work).await?)
}

async fn user_exists(store: &Store, username: &str) -> anyhow::Result<bool> {
    let username = username.to_owned();
    Ok(on_store(store, move |s| s.password_hash(&username))
        .await?
        .is_some())
}

async fn hash(password: NewPassword) -> anyhow::Result<String> {
    let passwords = Arc::new(Passwords::new(HashCost::default(), HashLimits::default())?);
    Ok(passwords.hash(password).await?)
}

/// On a terminal: asked twice, not echoed. Otherwise: one line of standard
/// input (so scripts can pipe it in; it never appears in the process list).
fn read_new_password(username: &str) -> anyhow::Result<NewPassword> {
    let stdin = std::io::stdin();
    let text = if stdin.is_terminal() {
        let first = prompt_hidden(&format!("New password for {username}: "))?;
        check_given(&first)?;
        NewPassword::new(first.clone())?;
        if prompt_hidden("Again: ")? != first {
            bail!("the two passwords differ; nothing was changed");
        }
        first
    } else {
        let mut line = String::new();
        stdin
            .lock()
            .read_line(&mut line)
            .context("reading the password from standard input")?;
        let line = without_line_end(line);
        check_given(&line)?;
        line
    };
    Ok(NewPassword::new(text)?)
}

fn check_given(password: &str) -> anyhow::Result<()> {
    if password.is_empty() {
        bail!(
            "no password given: type one when asked, or pipe it in as one line on standard input"
        );
    }
    Ok(())
}

fn without_line_end(mut line: String) -> String {
    if line.ends_with('\n') {
        line.pop();
        if line.ends_with('\r') {
            line.pop();
        }
    }
    line
}

/// Reads a line from the terminal on standard input with echo off. Echo goes
/// off before the prompt appears, so nothing typed after the prompt is shown.
fn prompt_hidden(prompt: &str) -> anyhow::Result<String> {
    let fd = libc::STDIN_FILENO;
    // SAFETY: termios is plain data; tcgetattr fills it for a terminal fd.
    let mut term: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut term) } != 0 {
        return Err(std::io::Error::last_os_error()).context("reading the terminal's settings");
    }
    let saved = term;
    term.c_lflag &= !libc::ECHO;
    term.c_lflag |= libc::ECHONL;
    // SAFETY: sets the settings read above, with echo off, on the same fd.
    if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &term) } != 0 {
        return Err(std::io::Error::last_os_error()).context("turning the terminal's echo off");
    }
    let read = (|| {
        let mut err = std::io::stderr();
        write!(err, "{prompt}")?;
        err.flush()?;
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        Ok::<_, std::io::Error>(line)
    })();
    // SAFETY: puts the terminal back as it was.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &saved) };
    Ok(without_line_end(read.context("reading the password")?))
}
