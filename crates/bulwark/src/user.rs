//! `bulwark user add | passwd | list`: a site's accounts, worked on in its
//! database directly (opened the way serving opens it), without starting the
//! server. The accounts module does the work; this file picks the site, reads
//! the password and prints.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};

use bulwark_module_auth::accounts::{self, Account};
use bulwark_module_auth::{GroupName, HashCost, HashLimits, NewPassword, Passwords};
use bulwark_site::Site;
use bulwark_store::Store;
use bulwark_web::{enabled_modules, open_site_store};

use crate::{SiteChoice, UserCommand, lines, modules};

pub fn run(command: UserCommand) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        match command {
            UserCommand::Add { name, group, site } => add(&site, &name, &group).await,
            UserCommand::Passwd { name, site } => passwd(&site, &name).await,
            UserCommand::List { site } => list(&site).await,
        }
    })
}

async fn add(choice: &SiteChoice, name: &str, group: &str) -> anyhow::Result<()> {
    let (site, store) = open(choice).await?;
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
    let hash = hash(read_new_password(name)?).await?;
    let (username, for_store) = (name.to_owned(), group.clone());
    store
        .run(move |s| Ok(accounts::add_user(s, &username, &for_store, &hash)))
        .await??;
    println!("site {}: added user {name} ({group})", site.name());
    Ok(())
}

async fn passwd(choice: &SiteChoice, name: &str) -> anyhow::Result<()> {
    let (site, store) = open(choice).await?;
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

async fn list(choice: &SiteChoice) -> anyhow::Result<()> {
    let (_, store) = open(choice).await?;
    let users = on_store(&store, accounts::accounts).await?;
    print!("{}", user_table(&users));
    Ok(())
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
async fn open(choice: &SiteChoice) -> anyhow::Result<(Arc<Site>, Store)> {
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
    Ok((site, store))
}

fn choose_site(
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
