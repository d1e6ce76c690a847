//! Logon, sessions and CSRF over real HTTP, on the starter site with the
//! accounts module: the session id rotates at logon, state-changing requests
//! need the CSRF token, wrong passwords are throttled and an unknown user looks
//! the same, and the page cache never mixes anonymous and logged-on pages.

use crate::accounts;
use crate::common;

use std::sync::atomic::Ordering;
use std::time::Instant;

use accounts::*;
use bulwark_store::{NewResource, Props, ResourceId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logon_sets_a_fresh_session_and_logoff_ends_it() {
    let s = starter_with("").await;
    let mia = add_user(&s, "mia", "members").await;
    let (status, page) = get(&s, "/logon", None).await;
    assert_eq!(status, 200);
    assert!(page.contains(r#"name="password""#), "{page}");
    let first = logon(&s, "mia").await;
    let who = me(&s, &first).await;
    assert_eq!(who["user"], mia.0);
    assert_eq!(who["groups"], serde_json::json!(["anonymous", "members"]));
    let csrf = who["csrf_token"].as_str().unwrap().to_string();
    // The cookie is HttpOnly, SameSite=Lax, and not Secure over plain HTTP.
    let resp = logon_form(
        &s,
        Some(&first),
        &[
            ("username", "mia"),
            ("password", PASSWORD),
            ("_csrf", &csrf),
        ],
    )
    .await;
    let raw = resp.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        raw.contains("HttpOnly") && raw.contains("SameSite=Lax") && raw.contains("Path=/"),
        "{raw}"
    );
    let second = session_cookie(&resp).unwrap();
    assert_ne!(first, second, "logon rotates the session id");
    // The session from before the logon does not survive it.
    let (_, body) = get(&s, "/api/auth/me", Some(&first)).await;
    assert!(body.contains(r#""user":null"#), "{body}");
    assert_eq!(me(&s, &second).await["user"], mia.0);

    // "Keep me logged in": the cookie outlives the browser.
    let kept = logon_form(
        &s,
        None,
        &[
            ("username", "mia"),
            ("password", PASSWORD),
            ("remember", "1"),
        ],
    )
    .await;
    assert!(
        kept.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=")
    );
    let kept = session_cookie(&kept).unwrap();

    // The user sees and ends their sessions.
    let listed = client()
        .get(url(&s, "/api/auth/sessions"))
        .header("cookie", &second)
        .send()
        .await
        .unwrap();
    let listed: serde_json::Value = serde_json::from_str(&listed.text().await.unwrap()).unwrap();
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed}");
    let csrf2 = me(&s, &second).await["csrf_token"]
        .as_str()
        .unwrap()
        .to_string();
    let ended = client()
        .post(url(&s, "/api/auth/sessions"))
        .header("cookie", &second)
        .header("x-csrf-token", &csrf2)
        .body(r#"{"end":"others"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 200);
    assert!(
        me(&s, &kept).await["user"].is_null(),
        "the other session ended"
    );

    // Logoff ends the session and drops the cookie.
    let off = client()
        .post(url(&s, "/logoff"))
        .header("cookie", &second)
        .form(&[("_csrf", csrf2.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(off.status(), 303);
    assert!(
        off.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert!(me(&s, &second).await["user"].is_null());
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_a_session_needs_its_csrf_token() {
    let s = starter_with("").await;
    add_user(&s, "mia", "members").await;
    let cookie = logon(&s, "mia").await;
    let csrf = me(&s, &cookie).await["csrf_token"]
        .as_str()
        .unwrap()
        .to_string();
    let post = |token: Option<(&'static str, String)>, form: Vec<(&'static str, String)>| {
        let mut req = client()
            .post(url(&s, "/logoff"))
            .header("cookie", cookie.clone())
            .form(&form);
        if let Some((name, value)) = token {
            req = req.header(name, value);
        }
        req.send()
    };
    // Missing, wrong, or another session's: 403, and the session lives on.
    for (header, form) in [
        (None, vec![]),
        (None, vec![("_csrf", "0".repeat(64))]),
        (Some(("x-csrf-token", "f".repeat(64))), vec![]),
        (
            Some(("x-csrf-token", String::new())),
            vec![("_csrf", csrf.clone())],
        ),
    ] {
        let resp = post(header, form).await.unwrap();
        assert_eq!(resp.status(), 403);
        // The page says what to do.
        let page = resp.text().await.unwrap();
        assert!(
            page.contains("This form has expired, or it was not sent from this site"),
            "{page}"
        );
        assert!(!me(&s, &cookie).await["user"].is_null());
    }
    // A page she may not see, asked for plainly: no word of forms.
    let (status, page) = get(&s, "/admin", Some(&cookie)).await;
    assert_eq!(status, 403);
    assert!(page.contains("You may not see this page."), "{page}");
    assert!(!page.contains("form"), "{page}");
    let json = client()
        .post(url(&s, "/api/auth/logoff"))
        .header("cookie", &cookie)
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(json.status(), 403);
    assert!(json.text().await.unwrap().contains("CSRF"));
    // Right, in the form or the header: done.
    let resp = post(None, vec![("_csrf", csrf.clone())]).await.unwrap();
    assert_eq!(resp.status(), 303);
    assert!(me(&s, &cookie).await["user"].is_null());
    // Without a session cookie no token is needed (nothing to forge); the
    // page shows the way to a forgotten password.
    let (status, page) = get(&s, "/logon", None).await;
    assert_eq!(status, 200);
    assert!(
        page.contains(r#"<a href="/logon/reset">Forgot your password?</a>"#),
        "{page}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nth_wrong_password_waits_and_an_unknown_user_looks_the_same() {
    let s = starter_with("\n[auth]\nlogon_attempts = 3\nlogon_window = 60\n").await;
    add_user(&s, "mia", "members").await;
    let attempt = |user: &'static str, password: &'static str| {
        client()
            .post(url(&s, "/api/auth/logon"))
            .header("content-type", "application/json")
            .body(serde_json::json!({ "username": user, "password": password }).to_string())
            .send()
    };
    let timed = |user, password| async move {
        let started = Instant::now();
        let resp = attempt(user, password).await.unwrap();
        let status = resp.status().as_u16();
        let retry = resp
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string());
        (status, resp.text().await.unwrap(), retry, started.elapsed())
    };
    let (s1, wrong, _, _) = timed("mia", "not the password").await;
    let (s2, unknown, _, _) = timed("ghost", "not the password").await;
    assert_eq!((s1, s2), (401, 401));
    assert_eq!(wrong, unknown, "an unknown user gets the very same answer");
    // Both checked a hash: neither answers in a fraction of the other's time.
    // Timed on a site of its own with room for more attempts, as the median
    // of five of each, taken in turn: one timing in a test binary that runs
    // hundreds of servers at once says more about the machine than the hash.
    let roomy = starter_with("\n[auth]\nlogon_attempts = 100\nlogon_window = 60\n").await;
    add_user(&roomy, "mia", "members").await;
    let time_one = |user: &'static str| {
        let addr = url(&roomy, "/api/auth/logon");
        async move {
            let started = Instant::now();
            let resp = client()
                .post(addr)
                .header("content-type", "application/json")
                .body(serde_json::json!({ "username": user, "password": "not it" }).to_string())
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), 401);
            started.elapsed()
        }
    };
    let (mut t_wrongs, mut t_unknowns) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        t_wrongs.push(time_one("mia").await);
        t_unknowns.push(time_one("ghost").await);
    }
    t_wrongs.sort();
    t_unknowns.sort();
    let (t_wrong, t_unknown) = (t_wrongs[2], t_unknowns[2]);
    assert!(
        t_unknown * 4 > t_wrong && t_wrong * 4 > t_unknown,
        "{t_wrongs:?} {t_unknowns:?}"
    );
    roomy.shutdown().await;
    let (s3, ..) = timed("mia", "still not").await;
    assert_eq!(s3, 401);
    // The third failure used up the address's attempts: even the right
    // password waits now, for a known or an unknown user alike.
    for (user, password) in [("mia", PASSWORD), ("ghost", "x")] {
        let (status, body, retry, _) = timed(user, password).await;
        assert_eq!(status, 429, "{body}");
        let retry: u64 = retry.expect("Retry-After").parse().unwrap();
        assert!((1..=60).contains(&retry));
    }
    // The page answers the same way, with the form to try again later.
    let page = logon_form(&s, None, &[("username", "mia"), ("password", PASSWORD)]).await;
    assert_eq!(page.status(), 429);
    assert!(page.headers().contains_key("retry-after"));
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("Too many failed attempts")
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_each_visitor_has_their_own_attempts_and_scheme() {
    let settings = "\n[auth]\nlogon_attempts = 2\nlogon_window = 60\n";
    let s = starter_served(
        |text| text.push_str(settings),
        |o| o.trusted_proxies = bulwark_http::TrustedProxies::parse(&["127.0.0.1"]).unwrap(),
    )
    .await;
    add_user(&s, "mia", "members").await;
    // Attempts count against the user name and the address: the wrong ones
    // here are for a name nobody has, so only the address is held back.
    for _ in 0..2 {
        assert_eq!(logon_at(&s, "203.0.113.7", "ghost", "wrong").await.0, 401);
    }
    assert_eq!(logon_at(&s, "203.0.113.7", "mia", PASSWORD).await.0, 429);
    // Naming another visitor in front (as the visitor may, the proxy adding
    // the address it saw after it) does not shake the throttle off.
    let spoofed = logon_at(&s, "198.51.100.1, 203.0.113.7", "mia", PASSWORD).await;
    assert_eq!(spoofed.0, 429);
    // Another visitor through the same proxy logs on, and over "HTTPS", as
    // the proxy says: the cookie is the secure one.
    let (status, cookie) = logon_at(&s, "198.51.100.1", "mia", PASSWORD).await;
    assert_eq!(status, 200);
    let cookie = cookie.expect("a session cookie");
    assert!(
        cookie.starts_with("__Host-") && cookie.contains("; Secure"),
        "{cookie}"
    );
    s.shutdown().await;

    // Nobody trusted (the default): the headers change nothing, and every
    // visitor is the one address the requests come from.
    let s = starter_with(settings).await;
    add_user(&s, "mia", "members").await;
    for forwarded_for in ["203.0.113.7", "203.0.113.8"] {
        assert_eq!(logon_at(&s, forwarded_for, "ghost", "wrong").await.0, 401);
    }
    let (status, cookie) = logon_at(&s, "198.51.100.1", "mia", PASSWORD).await;
    assert_eq!((status, cookie), (429, None));
    s.shutdown().await;
}

/// A logon as a proxy sends it on, for a visitor who came over HTTPS: the
/// status and the cookie set.
async fn logon_at(
    s: &common::TestServer,
    forwarded_for: &str,
    user: &str,
    password: &str,
) -> (u16, Option<String>) {
    let resp = client()
        .post(url(s, "/api/auth/logon"))
        .header("content-type", "application/json")
        .header("x-forwarded-for", forwarded_for)
        .header("x-forwarded-proto", "https")
        .body(serde_json::json!({ "username": user, "password": password }).to_string())
        .send()
        .await
        .unwrap();
    let cookie = resp
        .headers()
        .get("set-cookie")
        .map(|v| v.to_str().unwrap().to_owned());
    (resp.status().as_u16(), cookie)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_anonymous_pages_and_members_pages_never_mix() {
    let s = starter_with("").await;
    let mia = add_user(&s, "mia", "members").await;
    let store = store(&s);
    // A draft of Mia's, and the demo's members-only article.
    let draft = tokio::task::spawn_blocking(move || {
        let mut n = NewResource::new("article", Props::new().with("title", "Mias secret draft"));
        n.creator = Some(mia);
        let draft = store.create_resource(n).unwrap();
        let members = store.resource_id("members_corner").unwrap().unwrap();
        (draft, members)
    })
    .await
    .unwrap();
    let (draft, members_page) = draft;
    // The writes' cache flushes arrive from the site's change task: let them
    // land before counting renders.
    common::changes_applied(&s.models["default"]).await;
    let renders = || s.models["default"].renders.load(Ordering::Relaxed);
    let path = |id: ResourceId| format!("/page/{}", id.0);

    // Anonymous: the members-only page and the draft are absent.
    assert_eq!(get(&s, &path(members_page), None).await.0, 404);
    assert_eq!(get(&s, &path(draft), None).await.0, 404);
    let (_, home) = get(&s, "/en/", None).await;
    assert!(home.contains("Log on") && !home.contains("Mias secret draft"));
    let before = renders();
    let (_, again) = get(&s, "/en/", None).await;
    assert_eq!(
        renders(),
        before,
        "the anonymous home page comes from the page cache"
    );
    assert_eq!(home, again);

    // Mia: her own render, never the cached anonymous page.
    let cookie = logon(&s, "mia").await;
    let (status, page) = get(&s, &path(members_page), Some(&cookie)).await;
    assert_eq!(status, 200);
    assert!(page.contains("For members"));
    assert_eq!(get(&s, &path(draft), Some(&cookie)).await.0, 200);
    let before = renders();
    let (_, hers) = get(&s, "/en/", Some(&cookie)).await;
    assert!(
        renders() > before,
        "a logged-on visitor's page is rendered for them"
    );
    assert!(
        hers.contains("Log off") && !hers.contains(">Log on<"),
        "{hers}"
    );

    // And her page never reaches the next anonymous visitor.
    let (_, anon) = get(&s, "/en/", None).await;
    assert!(anon.contains("Log on") && !anon.contains("Log off"));
    assert!(!anon.contains("Mias secret draft"));
    assert_eq!(get(&s, &path(members_page), None).await.0, 404);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_with_a_second_factor_needs_its_code() {
    use bulwark_module_auth::second_factor;
    use bulwark_module_auth::totp::{TotpKey, unix_now};
    let s = starter_with("\n[auth]\nrequire_second_factor = [\"editors\"]\n").await;
    let mia = add_user(&s, "mia", "members").await;
    let eddy = add_user(&s, "eddy", "editors").await;
    let store = store(&s);
    let then = unix_now() - 90;
    let (secret, recovery) = tokio::task::spawn_blocking(move || {
        let pending = second_factor::start_enrolment(&store, mia, "default", "mia").unwrap();
        let key = TotpKey::from_base32(&pending.secret).unwrap();
        let codes =
            second_factor::confirm_enrolment_at(&store, mia, &key.code_at(then), then).unwrap();
        (pending.secret, codes.codes()[0].clone())
    })
    .await
    .unwrap();
    let key = TotpKey::from_base32(&secret).unwrap();
    let attempt = |user: &'static str, code: Option<String>| {
        let mut body = serde_json::json!({ "username": user, "password": PASSWORD });
        if let Some(code) = code {
            body["code"] = code.into();
        }
        client()
            .post(url(&s, "/api/auth/logon"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    // The right password alone is not enough; it sets no cookie.
    let resp = attempt("mia", None).await.unwrap();
    assert_eq!(resp.status(), 401);
    assert!(session_cookie(&resp).is_none());
    assert!(
        resp.text()
            .await
            .unwrap()
            .contains(r#""second_factor":true"#)
    );
    let resp = attempt("mia", Some("000000".into())).await.unwrap();
    assert_eq!(resp.status(), 401);
    assert!(session_cookie(&resp).is_none());
    // With the app's current code, or a recovery code (once).
    let resp = attempt("mia", Some(key.code_at(unix_now()))).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(session_cookie(&resp).is_some());
    assert_eq!(
        attempt("mia", Some(recovery.clone()))
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(attempt("mia", Some(recovery)).await.unwrap().status(), 401);
    // The page asks for the code alone after a right password, carrying a
    // ticket for it: the password is not typed twice, nor written back.
    let page = logon_form(&s, None, &[("username", "mia"), ("password", PASSWORD)]).await;
    let page = page.text().await.unwrap();
    assert!(page.contains(r#"name="code""#), "{page}");
    assert!(!page.contains(r#"name="password""#), "{page}");
    assert!(!page.contains(PASSWORD));
    let ticket = page
        .split(r#"name="ticket" value=""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a ticket in the page")
        .to_string();
    let server = &s;
    let with_ticket = |ticket: String, code: String| async move {
        let form = [("username", "mia"), ("ticket", &ticket), ("code", &code)];
        logon_form(server, None, &form).await
    };
    // A wrong code asks for the code again (the password stays proven).
    let again = with_ticket(ticket.clone(), "000000".into()).await;
    assert!(session_cookie(&again).is_none());
    let again = again.text().await.unwrap();
    assert!(again.contains("That code is not right"), "{again}");
    assert!(again.contains(&ticket), "{again}");
    // A ticket changed by hand is no password: no session, the first step again.
    let forged = format!("9{ticket}");
    let refused = with_ticket(forged, key.code_at(unix_now())).await;
    assert!(session_cookie(&refused).is_none());
    assert!(
        refused
            .text()
            .await
            .unwrap()
            .contains("Wrong username or password.")
    );
    // The right code with the ticket logs on (the next one: the current
    // code was used above, and a code is taken once).
    let resp = with_ticket(ticket, key.code_at(unix_now() + 30)).await;
    assert_eq!(resp.status(), 303);
    assert!(session_cookie(&resp).is_some());
    // Editors must have one: without it, no logon.
    let resp = attempt("eddy", None).await.unwrap();
    assert_eq!(resp.status(), 403);
    assert!(session_cookie(&resp).is_none());
    let _ = eddy;
    s.shutdown().await;
}

/// The site behind a trusted proxy, so a test can speak from any address.
async fn proxied(settings: &str) -> common::TestServer {
    let settings = settings.to_owned();
    starter_served(
        move |text| text.push_str(&settings),
        |o| o.trusted_proxies = bulwark_http::TrustedProxies::parse(&["127.0.0.1"]).unwrap(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_guesses_at_once_from_one_address_get_no_more_checks_than_the_limit() {
    let s = proxied("\n[auth]\nlogon_attempts = 10\nlogon_window = 600\n").await;
    add_user(&s, "mia", "members").await;
    let guesses = (0..300).map(|i| {
        let s = &s;
        async move {
            logon_at(s, "203.0.113.7", "mia", &format!("guess {i}"))
                .await
                .0
        }
    });
    let statuses = futures_util::future::join_all(guesses).await;
    let checked = statuses.iter().filter(|s| **s == 401).count();
    let held = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(
        (checked, held),
        (10, 290),
        "checked, held back: {statuses:?}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_codes_at_once_for_a_second_factor_get_no_more_checks_than_the_limit() {
    use bulwark_module_auth::second_factor;
    use bulwark_module_auth::totp::{TotpKey, unix_now};
    let s = proxied("\n[auth]\nlogon_attempts = 5\nlogon_window = 600\n").await;
    let mia = add_user(&s, "mia", "members").await;
    let store = store(&s);
    tokio::task::spawn_blocking(move || {
        let pending = second_factor::start_enrolment(&store, mia, "default", "mia").unwrap();
        let key = TotpKey::from_base32(&pending.secret).unwrap();
        let then = unix_now() - 90;
        second_factor::confirm_enrolment_at(&store, mia, &key.code_at(then), then).unwrap();
    })
    .await
    .unwrap();
    // The right password with wrong codes: each is an attempt like any other.
    let codes = (0..60).map(|i| {
        let s = &s;
        async move {
            client()
                .post(url(s, "/api/auth/logon"))
                .header("content-type", "application/json")
                .header("x-forwarded-for", "203.0.113.9")
                .body(
                    serde_json::json!({"username": "mia", "password": PASSWORD, "code": format!("{i:06}")})
                        .to_string(),
                )
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    });
    let statuses = futures_util::future::join_all(codes).await;
    let checked = statuses.iter().filter(|s| **s == 401).count();
    assert!(checked <= 5, "{checked} checked: {statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 60 - checked);
    // And the right password without a code is held back like a wrong one.
    assert_eq!(logon_at(&s, "203.0.113.9", "mia", PASSWORD).await.0, 429);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attacker_elsewhere_cannot_keep_the_owner_out() {
    let s = proxied("\n[auth]\nlogon_attempts = 3\nlogon_window = 600\n").await;
    add_user(&s, "mia", "members").await;
    // Wrong passwords for Mia from three addresses: each address is held
    // back after three; Mia's account is only slowed down.
    for attacker in ["203.0.113.7", "203.0.113.8", "203.0.113.9"] {
        for _ in 0..3 {
            assert_eq!(logon_at(&s, attacker, "mia", "wrong").await.0, 401);
        }
        assert_eq!(logon_at(&s, attacker, "mia", "wrong").await.0, 429);
    }
    // Mia, at home, gets in.
    let (status, cookie) = logon_at(&s, "198.51.100.1", "mia", PASSWORD).await;
    assert_eq!(status, 200);
    assert!(cookie.is_some());
    // Her logon gave back her address's attempt and cleared the account's
    // count: the next ones are as fast as ever and still checked.
    assert_eq!(logon_at(&s, "198.51.100.1", "mia", "typo").await.0, 401);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_on_another_site_cannot_log_a_visitor_on_as_someone() {
    let s = starter_with("").await;
    add_user(&s, "eve", "members").await;
    let form = |origin: Option<String>, fetch_site: Option<&'static str>| {
        let mut req = client()
            .post(url(&s, "/logon"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "username=eve&password={}",
                PASSWORD.replace(' ', "+")
            ));
        if let Some(origin) = origin {
            req = req.header("origin", origin);
        }
        if let Some(site) = fetch_site {
            req = req.header("sec-fetch-site", site);
        }
        req.send()
    };
    // Eve's page elsewhere posts her credentials for the visitor's browser
    // (login CSRF): refused, and no session for the visitor.
    let port = s.addr.port();
    for (origin, fetch_site) in [
        (Some("https://evil.example".to_owned()), Some("cross-site")),
        (
            Some(format!("http://localhost:{}", port.wrapping_add(1))),
            None,
        ),
        (Some("null".to_owned()), None),
        (None, Some("cross-site")),
    ] {
        let resp = form(origin.clone(), fetch_site).await.unwrap();
        assert_eq!(resp.status(), 403, "{origin:?} {fetch_site:?}");
        assert!(session_cookie(&resp).is_none());
    }
    // The site's own logon page, and a program that says nothing, log on.
    for origin in [Some(format!("http://localhost:{port}")), None] {
        let resp = form(origin.clone(), None).await.unwrap();
        assert_eq!(resp.status(), 303, "{origin:?}");
        assert!(session_cookie(&resp).is_some());
    }
    s.shutdown().await;
}
