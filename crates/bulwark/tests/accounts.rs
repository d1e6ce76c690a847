//! `bulwark user ...` and a site's first administrator, as an operator meets
//! them: real processes on a real site folder, checked against the hashes the
//! site's database holds.

use crate::common;
use bulwark_testkit::eventually_blocking;
use common::{bulwark, collect, free_port, run, wait_for};

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use bulwark_module_auth::accounts;
use bulwark_module_auth::second_factor;
use bulwark_module_auth::totp::{self, TotpKey};
use bulwark_module_auth::{HashCost, HashLimits, Password, Passwords, SecondFactorCheck};
use bulwark_store::{Store, StoreConfig};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A folder with one site, `shop`, made by `bulwark site new`.
fn one_site() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["site", "new", "shop", "--sites", "sites"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let site = dir.path().join("sites/shop");
    (dir, site)
}

/// Runs `work` on the site's database (SQLite, as `bulwark site new` makes it).
fn on_site_db<T: Send + 'static>(
    site: &Path,
    work: impl FnOnce(&Store) -> T + Send + 'static,
) -> T {
    let config = StoreConfig::sqlite(site.join("data/site.db"));
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let store = Store::open(config).await.unwrap();
            store.run(move |s| Ok(work(s))).await.unwrap()
        })
}

/// Whether `password` is the one stored for `username` in the site's database,
/// checked with the accounts module's own verification.
fn password_is(site: &Path, username: &str, password: &str) -> bool {
    let (username, password) = (username.to_owned(), password.to_owned());
    on_site_db(site, move |s| {
        let (_, hash) = s
            .password_hash(&username)
            .unwrap()
            .expect("the user exists");
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{hash}"
        );
        let passwords = Passwords::new(HashCost::default(), HashLimits::default()).unwrap();
        passwords.verify_blocking(&Password::new(password).unwrap(), &hash)
    })
}

#[test]
fn a_user_added_with_a_password_on_stdin_is_listed_with_its_group_and_can_change_it() {
    let (dir, site) = one_site();
    let out = run(
        dir.path(),
        &[
            "user", "add", "alice", "--group", "editors", "--sites", "sites",
        ],
        "correct horse battery\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("added user alice (editors)"));
    assert!(password_is(&site, "alice", "correct horse battery"));

    let out = run(dir.path(), &["user", "list", "--sites", "sites"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    let mut lines = listing.lines();
    let header: Vec<_> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "GROUPS", "CREATED"]);
    let alice: Vec<_> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(&alice[..2], ["alice", "editors"], "{listing}");
    assert!(alice[2].starts_with("20"), "a date: {listing}");
    assert_eq!(lines.next(), None, "{listing}");

    // Alice's logons: a session and an API token, which the new password ends.
    on_site_db(&site, |s| {
        bulwark_module_auth::migrate(s).unwrap();
        let alice = accounts::person_of(s, "alice").unwrap();
        let now = chrono::Utc::now();
        bulwark_module_auth::session_table::create(
            s,
            &bulwark_module_auth::Session {
                id_hash: "ab".repeat(32),
                person: alice,
                csrf_token: "csrf".into(),
                created: now,
                last_seen: now,
                expires: now + chrono::Duration::days(1),
                persistent: false,
                user_agent: None,
                address: None,
            },
            None,
        )
        .unwrap();
        bulwark_module_auth::api_tokens::ApiTokens::create_blocking(s, alice, "script").unwrap();
    });
    // A password on standard input may end in CRLF; it is not part of it.
    let out = run(
        dir.path(),
        &[
            "user", "passwd", "alice", "--site", "shop", "--sites", "sites",
        ],
        "battery staple horse\r\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(password_is(&site, "alice", "battery staple horse"));
    assert!(!password_is(&site, "alice", "correct horse battery"));
    let (sessions, tokens) = on_site_db(&site, |s| {
        let alice = accounts::person_of(s, "alice").unwrap();
        (
            bulwark_module_auth::session_table::of_person(s, alice)
                .unwrap()
                .len(),
            bulwark_module_auth::api_tokens::ApiTokens::list_blocking(s, alice)
                .unwrap()
                .len(),
        )
    });
    assert_eq!((sessions, tokens), (0, 0), "every session and token ended");

    let out = run(
        dir.path(),
        &["user", "passwd", "bob", "--sites", "sites"],
        "battery staple horse\n",
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("there is no user \"bob\""),
        "{}",
        text(&out.stderr)
    );
}

/// The `email` property of `username`'s person, read from the site's database.
fn email_of(site: &Path, username: &str) -> Option<String> {
    let config = StoreConfig::sqlite(site.join("data/site.db"));
    let username = username.to_owned();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let store = Store::open(config).await.unwrap();
            store
                .run(move |s| bulwark_module_auth::accounts::find_by_username(s, &username))
                .await
                .unwrap()
                .and_then(|user| user.email)
        })
}

#[test]
fn a_user_added_with_an_email_address_can_be_found_by_it_and_a_bad_or_taken_one_is_refused() {
    let (dir, site) = one_site();
    let add = |name: &str, email: &str| {
        let args = [
            "user", "add", name, "--group", "members", "--email", email, "--sites", "sites",
        ];
        run(dir.path(), &args, "correct horse battery\n")
    };
    let out = add("dora", "Dora@Example.org");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("added user dora (members, Dora@Example.org)"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(email_of(&site, "dora").as_deref(), Some("dora@example.org"));

    let out = add("eve", "dora@example.org");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("belongs to another user"),
        "{}",
        text(&out.stderr)
    );
    let out = add("eve", "not an address");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("not an e-mail address"),
        "{}",
        text(&out.stderr)
    );
    let out = run(dir.path(), &["user", "list", "--sites", "sites"], "");
    assert_eq!(text(&out.stdout).lines().count(), 2, "eve was not added");

    // `bulwark user email` changes it later; another user's address is refused.
    let email = |name: &str, address: &str| {
        run(
            dir.path(),
            &["user", "email", name, address, "--sites", "sites"],
            "",
        )
    };
    let out = email("dora", "dora@example.net");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(email_of(&site, "dora").as_deref(), Some("dora@example.net"));
    let out = email("dora", "dora@example.net");
    assert!(
        out.status.success(),
        "her own address again: {}",
        text(&out.stderr)
    );
    let out = add("eve", "eve@example.org");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = email("eve", "dora@example.net");
    assert!(
        text(&out.stderr).contains("belongs to another user"),
        "{}",
        text(&out.stderr)
    );
    let out = email("nobody", "x@example.org");
    assert!(
        text(&out.stderr).contains("there is no user"),
        "{}",
        text(&out.stderr)
    );
    let out = email("eve", "nonsense");
    assert!(!out.status.success());
    assert_eq!(email_of(&site, "eve").as_deref(), Some("eve@example.org"));
}

#[test]
fn short_or_empty_passwords_and_unknown_groups_are_refused_with_a_clear_message() {
    let (dir, site) = one_site();
    let add = |group: &str, stdin: &str| {
        run(
            dir.path(),
            &["user", "add", "carol", "--group", group, "--sites", "sites"],
            stdin,
        )
    };
    let out = add("members", "seven77\n");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("too short: use at least 8 characters"),
        "{}",
        text(&out.stderr)
    );
    let out = add("members", "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no password given"),
        "{}",
        text(&out.stderr)
    );

    let out = add("admins", "correct horse battery\n");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("no user group \"admins\"")
            && err.contains("anonymous, members, editors, authors, managers, administrators"),
        "{err}"
    );

    let out = run(dir.path(), &["user", "list", "--sites", "sites"], "");
    assert_eq!(text(&out.stdout).lines().count(), 1, "only the header");

    // The password is changed only to an acceptable one.
    assert!(add("members", "correct horse battery\n").status.success());
    let out = run(
        dir.path(),
        &["user", "passwd", "carol", "--sites", "sites"],
        "short\n",
    );
    assert!(!out.status.success());
    assert!(password_is(&site, "carol", "correct horse battery"));
    // A taken name is refused before any password is read.
    let out = add("members", "");
    assert!(
        text(&out.stderr).contains("the username \"carol\" is taken"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn with_several_sites_the_site_must_be_named_and_the_message_lists_them() {
    let (dir, _) = one_site();
    let out = run(dir.path(), &["site", "new", "blog", "--sites", "sites"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(dir.path(), &["user", "list", "--sites", "sites"], "");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("several sites (blog, shop): name one with --site"),
        "{err}"
    );
    let out = run(
        dir.path(),
        &["user", "list", "--site", "nope", "--sites", "sites"],
        "",
    );
    assert!(text(&out.stderr).contains("there is no site \"nope\""));
    let out = run(
        dir.path(),
        &["user", "list", "--site", "blog", "--sites", "sites"],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Starts `bulwark serve` on the folder, waits until it answers, stops it, and
/// returns what it wrote to standard output.
fn serve_once(dir: &Path, admin_password: Option<&str>) -> String {
    let port = free_port();
    let mut command = bulwark(dir);
    if let Some(password) = admin_password {
        command.env("BULWARK_ADMIN_PASSWORD", password);
    }
    let mut child: Child = command
        .args([
            "serve",
            "--sites",
            "sites",
            "--access-log",
            "off",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    eventually_blocking("the server comes up", Duration::from_secs(20), || {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the server stopped: {status}");
        }
        std::net::TcpStream::connect(("127.0.0.1", port)).ok()
    });
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(child.wait().unwrap().success());
    stdout
}

/// The password in the first start's banner.
fn printed_password(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("password: "))
        .map(str::to_owned)
}

#[test]
fn the_first_start_prints_a_working_admin_password_once() {
    let dir = tempfile::tempdir().unwrap();
    // No site: serve writes the starter site, which enables accounts.
    let first = serve_once(dir.path(), None);
    let password = printed_password(&first).unwrap_or_else(|| panic!("no password in {first:?}"));
    assert!(first.contains("username: admin"), "{first}");
    assert!(
        first.contains("bulwark user passwd admin --site default"),
        "{first}"
    );
    assert_eq!(first.matches(&password).count(), 1, "printed once: {first}");
    let site = dir.path().join("sites/default");
    assert!(password_is(&site, "admin", &password));

    let second = serve_once(dir.path(), None);
    assert_eq!(printed_password(&second), None, "{second}");
    assert!(!second.contains(&password), "{second}");
    let out = run(dir.path(), &["user", "list", "--sites", "sites"], "");
    let listing = text(&out.stdout);
    assert_eq!(listing.lines().count(), 2, "{listing}");
    assert!(
        listing
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("admin  administrators  "),
        "{listing}"
    );
}

#[test]
fn bulwark_admin_password_is_the_first_password_and_is_not_printed() {
    let (dir, site) = one_site();
    let stdout = serve_once(dir.path(), Some("given at start 42"));
    assert_eq!(printed_password(&stdout), None, "{stdout}");
    assert!(!stdout.contains("given at start 42"), "{stdout}");
    assert!(password_is(&site, "admin", "given at start 42"));

    // Too short: the start stops before any site loads, with the reason.
    let out = bulwark(dir.path())
        .env("BULWARK_ADMIN_PASSWORD", "short")
        .args(["serve", "--sites", "sites", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("BULWARK_ADMIN_PASSWORD") && err.contains("too short"),
        "{err}"
    );
}

/// A pseudo-terminal: the child's end (its standard input) and ours, which
/// sees what the terminal echoes.
fn pseudo_terminal() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain libc calls on the descriptor they return; ptsname_r writes
    // at most the buffer's length.
    unsafe {
        let ours = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(ours >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(ours), 0);
        assert_eq!(libc::unlockpt(ours), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(ours, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap();
        let theirs = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        (std::fs::File::from_raw_fd(ours), theirs)
    }
}

#[test]
fn on_a_terminal_the_password_is_asked_twice_and_never_echoed() {
    let (dir, site) = one_site();
    let (mut terminal, child_end) = pseudo_terminal();
    let mut child = bulwark(dir.path())
        .args([
            "user", "add", "dave", "--group", "members", "--sites", "sites",
        ])
        .stdin(Stdio::from(child_end))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let prompts = collect(child.stderr.take().unwrap());
    let echoed = collect(terminal.try_clone().unwrap());
    wait_for(&prompts, "New password for dave: ");
    terminal.write_all(b"typed on a terminal\n").unwrap();
    wait_for(&prompts, "Again: ");
    terminal.write_all(b"typed on a terminal\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", prompts.lock().unwrap());
    assert!(text(&out.stdout).contains("added user dave (members)"));
    assert!(password_is(&site, "dave", "typed on a terminal"));
    assert!(
        !echoed.lock().unwrap().contains("typed"),
        "echoed: {:?}",
        echoed.lock().unwrap()
    );
}

/// What `check` says about `code` as `username`'s second factor, now, in the
/// site's database.
fn second_factor_check(site: &Path, username: &str, code: &str) -> SecondFactorCheck {
    let (username, code) = (username.to_owned(), code.to_owned());
    on_site_db(site, move |s| {
        let person = accounts::person_of(s, &username).unwrap();
        second_factor::verify_second_factor(s, person, &code).unwrap()
    })
}

/// Runs `bulwark user totp NAME` on the folder, answering its prompt with the
/// code `answer` makes from the printed secret; returns the secret, the whole
/// output and how it ended.
fn enrol(dir: &Path, name: &str, answer: impl Fn(&TotpKey) -> String) -> (TotpKey, String, Output) {
    use std::io::BufRead;
    let mut child = bulwark(dir)
        .args(["user", "totp", name, "--sites", "sites"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let secret = loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            let out = child.wait_with_output().unwrap();
            panic!("no secret in {printed:?}; stderr: {}", text(&out.stderr));
        }
        printed.push_str(&line);
        if let Some(secret) = line.trim().strip_prefix("secret: ") {
            break TotpKey::from_base32(secret).unwrap();
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{}\n", answer(&secret)).as_bytes())
        .unwrap();
    drop(stdin);
    stdout.read_to_string(&mut printed).unwrap();
    let out = child.wait_with_output().unwrap();
    (secret, printed, out)
}

fn add_user(dir: &Path, name: &str, group: &str) {
    let args = ["user", "add", name, "--group", group, "--sites", "sites"];
    let out = run(dir, &args, "correct horse battery\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// The recovery codes in `bulwark user totp` or `recovery-codes` output.
fn printed_recovery_codes(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.len() == 19 && l.split('-').count() == 4)
        .map(str::to_owned)
        .collect()
}

#[test]
fn totp_enrols_with_a_code_from_the_printed_secret_and_recovery_codes_work_once() {
    let (dir, site) = one_site();
    add_user(dir.path(), "ann", "editors");

    let (key, stdout, out) = enrol(dir.path(), "Ann", |key| key.code_at(totp::unix_now()));
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!(
            "URI:    otpauth://totp/shop:ann?secret={}&issuer=shop",
            key.base32()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("ann now logs on with a code from the app"),
        "{stdout}"
    );
    let codes = printed_recovery_codes(&stdout);
    assert_eq!(codes.len(), 10, "{stdout}");
    // The confirming code was used up; a recovery code works once.
    let now = totp::unix_now();
    assert_eq!(
        second_factor_check(&site, "ann", &key.code_at(now - 30)),
        SecondFactorCheck::Refused
    );
    assert_eq!(
        second_factor_check(&site, "ann", &codes[0]),
        SecondFactorCheck::AcceptedRecoveryCode { remaining: 9 }
    );
    assert_eq!(
        second_factor_check(&site, "ann", &codes[0]),
        SecondFactorCheck::Refused
    );

    // New recovery codes replace the old ones.
    let out = run(
        dir.path(),
        &["user", "recovery-codes", "ann", "--sites", "sites"],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let fresh = printed_recovery_codes(&text(&out.stdout));
    assert_eq!(fresh.len(), 10, "{}", text(&out.stdout));
    assert_eq!(
        second_factor_check(&site, "ann", &codes[1]),
        SecondFactorCheck::Refused
    );
    assert_eq!(
        second_factor_check(&site, "ann", &fresh[1]),
        SecondFactorCheck::AcceptedRecoveryCode { remaining: 9 }
    );

    let out = run(
        dir.path(),
        &["user", "totp", "ann", "--disable", "--sites", "sites"],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("removed the second factor of ann"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        second_factor_check(&site, "ann", &fresh[2]),
        SecondFactorCheck::Refused
    );
    let out = run(
        dir.path(),
        &["user", "recovery-codes", "ann", "--sites", "sites"],
        "",
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr)
            .contains("ann has no second factor; set one up with: bulwark user totp ann"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_wrong_or_missing_totp_code_changes_nothing() {
    let (dir, site) = one_site();
    add_user(dir.path(), "bob", "members");
    let (first, _, out) = enrol(dir.path(), "bob", |key| key.code_at(totp::unix_now()));
    assert!(out.status.success(), "{}", text(&out.stderr));

    // Another secret's code: refused, and the first secret stays in force.
    let (second, stdout, out) = enrol(dir.path(), "bob", |_| {
        TotpKey::random().code_at(totp::unix_now())
    });
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("current second factor stays in force"),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("the code does not match the new secret")
            && text(&out.stderr).contains("bob: the code did not match; nothing was changed"),
        "{}",
        text(&out.stderr)
    );
    assert!(printed_recovery_codes(&stdout).is_empty(), "{stdout}");
    let next = totp::unix_now() + 30;
    assert_eq!(
        second_factor_check(&site, "bob", &second.code_at(next)),
        SecondFactorCheck::Refused
    );
    assert_eq!(
        second_factor_check(&site, "bob", &first.code_at(next)),
        SecondFactorCheck::Accepted
    );

    let out = run(dir.path(), &["user", "totp", "bob", "--sites", "sites"], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no code given"),
        "{}",
        text(&out.stderr)
    );
    let out = run(
        dir.path(),
        &["user", "totp", "nobody", "--sites", "sites"],
        "",
    );
    assert!(
        text(&out.stderr).contains("there is no user \"nobody\""),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn requiring_a_second_factor_for_a_group_that_does_not_exist_stops_the_site() {
    let (dir, site) = one_site();
    let toml = site.join("site.toml");
    let config = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        format!("{config}\n[auth]\nrequire_second_factor = [\"editor\"]\n"),
    )
    .unwrap();
    let out = run(dir.path(), &["user", "list", "--sites", "sites"], "");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("auth.require_second_factor[0]: there is no user group \"editor\"")
            && err.contains("anonymous, members, editors, authors, managers, administrators"),
        "{err}"
    );
    std::fs::write(
        &toml,
        format!("{config}\n[auth]\nrequire_second_factor = [\"editors\"]\n"),
    )
    .unwrap();
    let out = run(dir.path(), &["user", "list", "--sites", "sites"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
}
