//! Forms on the starter site over real HTTP, on SQLite and PostgreSQL, with a
//! real SMTP server (aiosmtpd): a form made through the API shows every field
//! type; answers are checked field by field (a wrong one named, what was
//! typed kept), stored, listed, exported as CSV and mailed; a file goes
//! through the media module's checks and is seen by editors only; a bot's
//! answers are thanked for and dropped; the starter's contact form delivers.

use crate::common;
use crate::databases as db;
use crate::smtp;
use crate::starter_api;
use crate::tickets;

use std::time::Duration;

use serde_json::{Value, json};

use common::*;
use smtp::SmtpSink;
use tickets::aged_ticket;

const TOKEN: &str = "forms-test-token";

/// The starter site with the API token, mail to `smtp` and `database`.
async fn site(smtp: &SmtpSink, database: &str) -> TestServer {
    let mail = format!(
        "[mail]\nsmtp = \"{}\"\nfrom = \"Site <noreply@localhost>\"\n\
         retry_delay_ms = 300\npoll_interval_ms = 200\ntimeout_ms = 2000\n",
        smtp.url()
    );
    starter_api::start_starter(TOKEN, database, &mail, |t| t).await
}

async fn api(s: &TestServer, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    starter_api::call(s, Some(TOKEN), method, path, body).await
}

/// A form with a field of every type but files, told to `desk@example.org`.
async fn survey(s: &TestServer) -> i64 {
    let (status, made) = api(
        s,
        "POST",
        "/api/rsc",
        Some(json!({"category": "form", "name": "form_survey", "published": true, "props": {
            "title": "Survey",
            "recipients": ["desk@example.org"],
            "thanks": "Thanks, we read every answer.",
            "submit": "Send it",
            "fields": [
                {"name": "name", "label": "Your name", "type": "text", "required": true},
                {"name": "story", "label": "Your story", "type": "textarea"},
                {"name": "email", "label": "E-mail", "type": "email", "required": true},
                {"name": "age", "label": "Age", "type": "number", "min": 0, "max": 130},
                {"name": "day", "label": "Day", "type": "date"},
                {"name": "topic", "label": "Topic", "type": "choice", "options": ["Sales", "Help"], "required": true},
                {"name": "likes", "label": "Likes", "type": "multiple", "options": ["Tea", "Coffee"]},
                {"name": "agree", "label": "I agree", "type": "checkbox", "required": true},
            ],
        }})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    made["id"].as_i64().unwrap()
}

async fn post_form(
    s: &TestServer,
    form: i64,
    fields: &[(&str, &str)],
    json: bool,
) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(format!("http://{}/forms/{form}/submit", s.addr))
        .header("Host", "localhost")
        .form(fields);
    if json {
        req = req.header("Accept", "application/json");
    }
    req.send().await.unwrap()
}

async fn submissions(s: &TestServer, form: i64) -> Vec<Value> {
    let (status, answer) = api(s, "GET", &format!("/api/forms/{form}/submissions"), None).await;
    assert_eq!(status, 200, "{answer}");
    answer["submissions"].as_array().unwrap().clone()
}

async fn answers_are_checked_stored_listed_exported_and_mailed(database: &str) {
    let sink = SmtpSink::start();
    let s = site(&sink, database).await;
    let form = survey(&s).await;

    // Its page shows every field, with its label, and the send button.
    let page = get(s.addr, "localhost", &format!("/page/{form}"))
        .await
        .text();
    for shown in [
        "Your name",
        "type=\"email\"",
        "type=\"number\"",
        "type=\"date\"",
        "type=\"radio\"",
        "value=\"Coffee\"",
        "type=\"checkbox\"",
        "<textarea",
        "Send it",
        "name=\"_ticket\"",
        "name=\"extra_info\"",
    ] {
        assert!(page.contains(shown), "{shown}: {page}");
    }

    // Wrong answers: each named, what was typed kept.
    let ticket = aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await;
    let resp = post_form(
        &s,
        form,
        &[
            ("_ticket", &ticket),
            ("name", "Ann"),
            ("email", "ann"),
            ("age", "200"),
            ("topic", "Other"),
        ],
        false,
    )
    .await;
    assert_eq!(resp.status().as_u16(), 400);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let again = resp.text().await.unwrap();
    for said in [
        "give an e-mail address",
        "at most 130",
        "choose one of the options",
        "tick this to go on",
    ] {
        assert!(again.contains(said), "{said}: {again}");
    }
    assert!(again.contains("value=\"Ann\""), "what was typed comes back");
    let resp = post_form(
        &s,
        form,
        &[
            (
                "_ticket",
                &aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await,
            ),
            ("name", "Ann"),
        ],
        true,
    )
    .await;
    assert_eq!(resp.status().as_u16(), 400);
    let problem: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(problem["fields"]["email"], "fill this in", "{problem}");
    assert!(submissions(&s, form).await.is_empty());

    // Good answers: thanked, stored, listed, mailed.
    let resp = post_form(
        &s,
        form,
        &[
            (
                "_ticket",
                &aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await,
            ),
            ("name", "Ann Smith"),
            (
                "story",
                "=HYPERLINK(\"http://evil.example\") Line one,\nline \"two\"",
            ),
            ("email", "ann@example.org"),
            ("age", "41"),
            ("day", "2026-05-31"),
            ("topic", "Help"),
            ("likes", "Tea"),
            ("likes", "Coffee"),
            ("agree", "yes"),
        ],
        false,
    )
    .await;
    assert_eq!(resp.status().as_u16(), 200);
    assert!(
        resp.text()
            .await
            .unwrap()
            .contains("Thanks, we read every answer.")
    );
    let stored = submissions(&s, form).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["answers"]["likes"], json!(["Tea", "Coffee"]));
    assert_eq!(stored[0]["answers"]["age"], 41);
    let mails = sink.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(mails[0].header("To").as_deref(), Some("desk@example.org"));
    let body = mails[0].body();
    assert!(
        body.contains("Your name: Ann Smith")
            && body.contains("Likes: Tea, Coffee")
            && body.contains("I agree: yes"),
        "{body}"
    );

    // As CSV: a column per field, then when and from where.
    let resp = reqwest::Client::new()
        .get(format!(
            "http://{}/api/forms/{form}/submissions.csv",
            s.addr
        ))
        .header("Host", "localhost")
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let csv = resp.text().await.unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("Your name,Your story,E-mail,Age,Day,Topic,Likes,I agree,Sent,From")
    );
    // A cell a spreadsheet would run as a formula begins with a quote.
    assert!(csv.contains("Ann Smith,\"'=HYPERLINK(\"\"http://evil.example\"\") Line one,\nline \"\"two\"\"\",ann@example.org,41,2026-05-31,Help,\"Tea, Coffee\",yes,"), "{csv}");

    // Visitors read none of it.
    let resp = get(
        s.addr,
        "localhost",
        &format!("/api/forms/{form}/submissions"),
    )
    .await;
    assert!(matches!(resp.status, 401 | 403), "{}", resp.status);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_answers_are_checked_stored_listed_exported_and_mailed() {
    answers_are_checked_stored_listed_exported_and_mailed(starter_api::SQLITE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_answers_are_checked_stored_listed_exported_and_mailed() {
    let schema = db::pg_schema("forms");
    let database = format!(
        "[database]\nurl = \"{}\"\nschema = \"{schema}\"\ndemo_content = true\n",
        db::pg_url()
    );
    answers_are_checked_stored_listed_exported_and_mailed(&database).await;
    db::drop_schema(&schema);
}

/// A multipart body with text fields and one file.
fn multipart(fields: &[(&str, &str)], file: (&str, &str, &[u8])) -> (String, Vec<u8>) {
    let boundary = "----bulwark-test-boundary";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    let (name, file_name, bytes) = file;
    body.extend(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
    body.extend(bytes);
    body.extend(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// A 1 x 1 PNG.
fn png() -> Vec<u8> {
    hex::decode(
        "89504E470D0A1A0A0000000D49484452000000010000000108060000001F15C489\
         0000000D4944415478DA63F8FFFF3F0005FE02FEA7D6A4C50000000049454E44AE426082",
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_goes_through_the_media_checks_and_only_editors_see_it_and_bots_are_dropped() {
    let sink = SmtpSink::start();
    let s = site(&sink, starter_api::SQLITE).await;
    let (status, made) = api(
        &s,
        "POST",
        "/api/rsc",
        Some(json!({"category": "form", "published": true, "props": {
            "title": "Apply",
            "fields": [
                {"name": "name", "label": "Name", "type": "text", "required": true},
                {"name": "photo", "label": "A photo", "type": "file", "required": true},
            ],
        }})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let form = made["id"].as_i64().unwrap();
    let page = get(s.addr, "localhost", &format!("/page/{form}"))
        .await
        .text();
    assert!(
        page.contains("enctype=\"multipart/form-data\"") && page.contains("type=\"file\""),
        "{page}"
    );
    let ticket = aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await;
    let send = |content_type: String, body: Vec<u8>| {
        reqwest::Client::new()
            .post(format!("http://{}/forms/{form}/submit", s.addr))
            .header("Host", "localhost")
            .header("Content-Type", content_type)
            .body(body)
            .send()
    };

    // A file that is not a picture, document or sound the site takes.
    let (ct, body) = multipart(
        &[("_ticket", &ticket), ("name", "Ann")],
        ("photo", "run.exe", b"MZ\x90\x00 not a picture at all"),
    );
    let resp = send(ct, body).await.unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    assert!(
        resp.text()
            .await
            .unwrap()
            .contains("cannot be uploaded here")
    );

    // A picture: kept as a media resource nobody but editors sees.
    let (ct, body) = multipart(
        &[
            (
                "_ticket",
                &aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await,
            ),
            ("name", "Ann"),
        ],
        ("photo", "me.png", &png()),
    );
    let resp = send(ct, body).await.unwrap();
    assert_eq!(
        resp.status().as_u16(),
        200,
        "{}",
        resp.text().await.unwrap()
    );
    let stored = submissions(&s, form).await;
    assert_eq!(stored.len(), 1);
    let media = stored[0]["answers"]["photo"]
        .as_i64()
        .expect("the file's media id");
    assert_eq!(
        get(s.addr, "localhost", &format!("/media/file/{media}"))
            .await
            .status,
        404,
        "visitors do not see it"
    );
    let resp = reqwest::Client::new()
        .get(format!("http://{}/api/rsc/{media}", s.addr))
        .header("Host", "localhost")
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let media_rsc: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(
        (
            media_rsc["category"].as_str(),
            media_rsc["published"].as_bool()
        ),
        (Some("image"), Some(false)),
        "{media_rsc}"
    );

    // A bot: the hidden field filled. Thanked; nothing kept, not its file either.
    let (ct, body) = multipart(
        &[
            (
                "_ticket",
                &aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await,
            ),
            ("extra_info", "x"),
            ("name", "Bot"),
        ],
        ("photo", "b.png", &png()),
    );
    let resp = send(ct, body).await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        submissions(&s, form).await.len(),
        1,
        "the bot's answers are not kept"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_starter_contact_form_delivers() {
    let sink = SmtpSink::start();
    let s = site(&sink, starter_api::SQLITE).await;
    // (minijinja writes `/` in attributes as `&#x2f;`.)
    let page = get(s.addr, "localhost", "/contact")
        .await
        .text()
        .replace("&#x2f;", "/");
    let action = page
        .split("action=\"")
        .find_map(|rest| rest.split('"').next().filter(|a| a.starts_with("/forms/")))
        .unwrap_or_else(|| panic!("the contact page has a form: {page}"))
        .to_owned();
    let form: i64 = action.split('/').nth(2).unwrap().parse().unwrap();
    // The administrator has an address: with no recipients of its own, the
    // form tells the site's editors.
    s.models["default"]
        .store
        .run(|s| {
            bulwark_module_auth::accounts::set_email(s, "admin", "admin@example.org").unwrap();
            Ok(())
        })
        .await
        .unwrap();
    let ticket = aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await;
    let resp = post_form(
        &s,
        form,
        &[
            ("_ticket", &ticket),
            ("name", "Eve"),
            ("email", "eve@example.org"),
            ("message", "Hello there"),
        ],
        false,
    )
    .await;
    assert_eq!(resp.status().as_u16(), 200);
    let text = resp.text().await.unwrap();
    assert!(text.contains("Thank you"), "{text}");
    assert_eq!(submissions(&s, form).await.len(), 1);
    let mails = sink.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(mails[0].header("To").as_deref(), Some("admin@example.org"));
    // Answering the mail answers the visitor, not the site's noreply.
    assert_eq!(
        mails[0].header("Reply-To").as_deref(),
        Some("eve@example.org")
    );
    assert!(
        mails[0].body().contains("Message: Hello there"),
        "{}",
        mails[0].body()
    );
    s.shutdown().await;
}

/// Resource `id`'s page as a visitor gets it (after a move to its address).
async fn visitor_page(s: &TestServer, id: i64) -> RawResponse {
    let page = get(s.addr, "localhost", &format!("/page/{id}")).await;
    match page.status {
        301 | 302 => get(s.addr, "localhost", page.header("location").unwrap()).await,
        _ => page,
    }
}

#[tokio::test]
async fn a_published_form_without_fields_is_not_there_for_visitors_until_it_has_one() {
    let sink = SmtpSink::start();
    let s = site(&sink, starter_api::SQLITE).await;
    let (status, made) = api(
        &s,
        "POST",
        "/api/rsc",
        Some(json!({"category": "form", "published": true, "props": {"title": "Sign up"}})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().unwrap();
    let page = visitor_page(&s, id).await;
    assert_eq!(page.status, 404, "no fields yet: {}", page.text());

    // With a field it is there, at once (the change flushes the cached 404).
    let (status, changed) = api(
        &s,
        "PATCH",
        &format!("/api/rsc/{id}"),
        Some(json!({"props": {"fields": [{"name": "email", "label": "E-mail", "type": "email"}]}})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    let page = visitor_page(&s, id).await;
    assert_eq!(page.status, 200);
    assert!(page.text().contains("E-mail"), "{}", page.text());
}

/// A visitor's ticket is good for one sending of its own form within an
/// hour: sent twice, used on the contact form, or older than an hour, the
/// answers are taken for a bot's (the thanks, nothing kept).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_is_for_one_post_to_its_own_form_within_an_hour() {
    let sink = SmtpSink::start();
    let s = site(&sink, starter_api::SQLITE).await;
    let form = survey(&s).await;
    let contact = s.models["default"]
        .store
        .run(|s| s.resource_id("form_contact"))
        .await
        .unwrap()
        .expect("the starter's contact form")
        .0;
    let answers = |ticket: String| async move {
        vec![
            ("_ticket".to_owned(), ticket),
            ("name".to_owned(), "Ann".to_owned()),
            ("email".to_owned(), "ann@example.org".to_owned()),
            ("message".to_owned(), "Hello".to_owned()),
            ("topic".to_owned(), "Help".to_owned()),
            ("agree".to_owned(), "yes".to_owned()),
        ]
    };
    let server = &s;
    let send = |form: i64, fields: Vec<(String, String)>| async move {
        let fields: Vec<(&str, &str)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        post_form(server, form, &fields, true)
            .await
            .status()
            .as_u16()
    };
    let ticket = aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await;
    assert_eq!(send(form, answers(ticket.clone()).await).await, 201);
    assert_eq!(
        submissions(&s, form).await.len(),
        1,
        "the first sending is kept"
    );
    assert_eq!(send(form, answers(ticket).await).await, 201);
    assert_eq!(
        submissions(&s, form).await.len(),
        1,
        "the same ticket again: dropped"
    );

    let for_survey = aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(10)).await;
    assert_eq!(send(contact, answers(for_survey).await).await, 201);
    assert_eq!(
        submissions(&s, contact).await.len(),
        0,
        "the survey's ticket on the contact form: dropped"
    );
    let stale = aged_ticket(&s, &format!("form:{form}"), Duration::from_secs(3700)).await;
    assert_eq!(send(form, answers(stale).await).await, 201);
    assert_eq!(submissions(&s, form).await.len(), 1, "an hour old: dropped");

    let fresh = aged_ticket(&s, &format!("form:{contact}"), Duration::from_secs(10)).await;
    assert_eq!(send(contact, answers(fresh).await).await, 201);
    assert_eq!(
        submissions(&s, contact).await.len(),
        1,
        "its own ticket: kept"
    );

    // A ticket is asked for a form or page by name.
    let no_target = reqwest::Client::new()
        .get(format!("http://{}/api/form-ticket", s.addr))
        .header("Host", "localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(no_target.status().as_u16(), 400);
    s.shutdown().await;
}
