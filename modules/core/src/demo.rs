//! Demo content: a few people, articles and edges, so a new site shows something
//! real.

use bulwark_store::{NewResource, Props, Store, StoreError};

/// A few people, articles and edges, so a new site shows something real. Runs once:
/// a config key remembers it.
pub(crate) fn create_demo_content(store: &Store) -> Result<(), StoreError> {
    if store.config_value("demo_content_created")?.is_some() {
        return Ok(());
    }
    let person = |name: &str, title: &str, bio: &str| {
        let mut r = NewResource::new(
            "person",
            Props::new().with("title", title).with("summary", bio),
        );
        r.name = Some(name.to_string());
        r.published = true;
        r
    };
    let ada = store.create_resource(person(
        "ada",
        "Ada Lovelace",
        "Writes about engines and the patterns they weave.",
    ))?;
    let alan = store.create_resource(person(
        "alan",
        "Alan Turing",
        "Asks what machines can do, and how fast.",
    ))?;
    let articles = [
        (
            "Why pages pull their data",
            "Templates ask the models for what they show. Every answer is remembered, with the keys it came from, so a change flushes exactly the pages that showed it.",
            ada,
        ),
        (
            "One render for a thousand visitors",
            "When a page is not in the cache and everybody asks for it at once, one request renders it and the others wait for that render instead of starting their own.",
            alan,
        ),
        (
            "Static files, combined and compressed once",
            "CSS and JavaScript are concatenated into one URL with a version stamp, compressed with gzip and brotli when first asked for, and cached by browsers for a year.",
            ada,
        ),
        (
            "Answering 503 instead of falling over",
            "Rendering, compiling and the database sit behind small queues with deadlines. Past the deadline the answer is a quick 503, and cached pages keep flowing.",
            alan,
        ),
        (
            "Live pages",
            "Pages subscribe to topics; when a resource changes, every page that shows it hears about it at once, over WebSocket, Server-Sent Events or long-poll.",
            ada,
        ),
    ];
    let mut ids = Vec::new();
    for (title, body, author) in articles {
        let mut r = NewResource::new(
            "article",
            Props::new()
                .with("title", title)
                .with("summary", body)
                .with("body", format!("<p>{body}</p><p>This article is demo content: edit it, and watch the pages that show it change.</p>")),
        );
        r.published = true;
        let id = store.create_resource(r)?;
        store.insert_edge(id, "author", author, None)?;
        ids.push(id);
    }
    for pair in ids.windows(2) {
        store.insert_edge(pair[1], "relation", pair[0], None)?;
    }
    // For logged-on members only: anonymous visitors get 404, members read it.
    let mut members = NewResource::new(
        "article",
        Props::new()
            .with("title", "For members")
            .with("summary", "Only logged-on members see this article.")
            .with("body", "<p>Only logged-on members see this article: it is members-only, and anonymous visitors get a 404 for it.</p>"),
    )
    .named("members_corner");
    members.published = true;
    members.visibility = bulwark_store::Visibility::Members;
    store.create_resource(members)?;
    store.set_config_value("demo_content_created", "1")?;
    Ok(())
}
