//! Each site's data: its store opened once (and kept across configuration reloads),
//! the depcache in front of it, and the task that turns committed changes into
//! cache flushes and `rsc/{id}` push messages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bulwark_depcache::DependencyKey;
use bulwark_site::{DatabaseSettings, Site};
use bulwark_store::{NewResource, Props, Store, StoreConfig, StoreError};
use bulwark_template::SiteModels;
use tokio::sync::broadcast::error::RecvError;

/// Open stores by site name, with the settings they were opened with.
#[derive(Default)]
pub struct SiteStores {
    open: Mutex<HashMap<String, (DatabaseSettings, Arc<SiteModels>)>>,
}

impl SiteStores {
    /// The site's models, opening its database the first time (or when its
    /// `[database]` settings changed).
    pub async fn models_for(
        &self,
        site: &Site,
        hub: Option<Arc<bulwark_push::Hub>>,
    ) -> Result<Arc<SiteModels>, String> {
        let settings = site.config.database.clone();
        if let Some((open_with, models)) =
            self.open.lock().expect("stores").get(site.name().as_str())
            && *open_with == settings
        {
            return Ok(models.clone());
        }
        let mut config = match &settings.url {
            Some(url) => StoreConfig::postgres(url, settings.schema.as_deref()),
            None => {
                let dir = site.dir.join("data");
                std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                StoreConfig::sqlite(dir.join("site.db"))
            }
        };
        if let Some(n) = settings.max_connections {
            config.pool.max_connections = n;
            config.pool.min_connections = config.pool.min_connections.min(n);
        }
        if let Some(n) = settings.sqlite_readers {
            config.pool.sqlite_readers = n;
        }
        if let Some(ms) = settings.pool_timeout_ms {
            config.pool.acquire_timeout = Duration::from_millis(ms);
        }
        let store = Store::open(config)
            .await
            .map_err(|e| format!("site {}: opening the database: {e}", site.name()))?;
        if settings.demo_content {
            store
                .run(create_demo_content)
                .await
                .map_err(|e| format!("site {}: demo content: {e}", site.name()))?;
        }
        store.spawn_pivot_task(100, Duration::from_millis(200));
        let models = SiteModels::new(store);
        tokio::spawn(apply_changes(models.clone(), hub));
        self.open
            .lock()
            .expect("stores")
            .insert(site.name().to_string(), (settings, models.clone()));
        Ok(models)
    }
}

/// Committed writes flush exactly the dependency keys they name, and publish on
/// `rsc/{id}` for every resource they touched, so pages can update live.
async fn apply_changes(models: Arc<SiteModels>, hub: Option<Arc<bulwark_push::Hub>>) {
    let mut changes = models.store.subscribe();
    loop {
        match changes.recv().await {
            Ok(change) => {
                for key in &change.keys {
                    models
                        .cache
                        .flush_dependency(&DependencyKey::new(key.as_str()));
                    if let (Some(hub), Some(id)) = (&hub, key.as_str().strip_prefix("rsc:")) {
                        let _ = hub.publish(
                            &format!("rsc/{id}"),
                            &format!("{{\"id\":{id},\"changed\":true}}"),
                        );
                    }
                }
            }
            // Missed events: which keys changed is unknown, so everything goes.
            Err(RecvError::Lagged(_)) => models.cache.flush_all(),
            Err(RecvError::Closed) => return,
        }
    }
}

/// A few people, articles and edges, so a new site shows something real. Runs once:
/// a config key remembers it.
fn create_demo_content(store: &Store) -> Result<(), StoreError> {
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
    store.set_config_value("demo_content_created", "1")?;
    Ok(())
}
