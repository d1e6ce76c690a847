//! Store benchmarks on both backends with 100,000 resources: import, pivot
//! throughput, read by id, search by category + text, update throughput.
//!
//! Run: `cargo bench -p bulwark-store --bench store` (both backends), or
//! `cargo bench -p bulwark-store --bench store -- sqlite 100000`.
//! PostgreSQL comes from BULWARK_TEST_PG_URL (default 127.0.0.1:5432/test),
//! in a throwaway schema that is dropped afterwards.

use std::time::{Duration, Instant};

use bulwark_store::*;

/// A 2,000-word vocabulary of made-up words ("bakolu", "tesima", ...),
/// drawn with a skew so some words are common and most are rare, like text.
fn vocabulary() -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ba", "ko", "lu", "te", "si", "ma", "ri", "no", "de", "ga", "pu", "ze", "vi", "ho", "fa",
        "ne", "tu", "lo", "ki", "ra",
    ];
    let mut words = Vec::new();
    for a in SYLLABLES {
        for b in SYLLABLES {
            for c in SYLLABLES.iter().take(5) {
                words.push(format!("{a}{b}{c}"));
            }
        }
    }
    words
}

/// Deterministic pseudo-random numbers: the same data on every run and backend.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Skewed pick: low indexes are much more frequent (roughly Zipf-like).
fn word<'a>(rng: &mut Lcg, vocab: &'a [String]) -> &'a str {
    let u = rng.below(1 << 20) as f64 / (1 << 20) as f64;
    &vocab[((u * u * u) * vocab.len() as f64) as usize]
}

fn sentence(rng: &mut Lcg, vocab: &[String], words: usize) -> String {
    (0..words)
        .map(|_| word(rng, vocab))
        .collect::<Vec<_>>()
        .join(" ")
}

struct Latencies(Vec<Duration>);
impl Latencies {
    fn report(mut self, what: &str, total: Duration) -> String {
        self.0.sort();
        let n = self.0.len();
        let p = |q: f64| self.0[((n as f64 * q) as usize).min(n - 1)];
        format!(
            "| {what} | {n} | {:.0}/s | {:.1} µs | {:.1} µs |",
            n as f64 / total.as_secs_f64(),
            p(0.50).as_secs_f64() * 1e6,
            p(0.99).as_secs_f64() * 1e6,
        )
    }
}

fn timed<T>(lat: &mut Vec<Duration>, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let v = f();
    lat.push(t.elapsed());
    v
}

fn run(store: &Store, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rng = Lcg(42);
    let vocab = vocabulary();
    let cats = ["article", "news", "event", "person", "document"];

    // Import in batches of 1,000 (one transaction each).
    let t = Instant::now();
    let mut ids = Vec::with_capacity(n);
    for chunk in 0..n.div_ceil(1000) {
        let batch: Vec<NewResource> = (0..1000.min(n - chunk * 1000))
            .map(|_| {
                let cat = cats[rng.below(cats.len())];
                NewResource::new(
                    cat,
                    Props::new()
                        .with("title", sentence(&mut rng, &vocab, 4))
                        .with("body", format!("<p>{}</p>", sentence(&mut rng, &vocab, 30)))
                        .with(
                            "date_start",
                            format!("2024-{:02}-{:02}", 1 + rng.below(12), 1 + rng.below(28)),
                        ),
                )
                .published(rng.below(10) != 0)
            })
            .collect();
        ids.extend(store.create_resources(batch).unwrap());
    }
    let el = t.elapsed();
    out.push(format!(
        "| import (batches of 1,000) | {n} | {:.0}/s | - | - |",
        n as f64 / el.as_secs_f64()
    ));

    // Pivot: the queue holds every new resource.
    let t = Instant::now();
    let indexed = store.pivot_all(100).unwrap();
    let el = t.elapsed();
    out.push(format!(
        "| pivot (batches of 100) | {indexed} | {:.0}/s | - | - |",
        indexed as f64 / el.as_secs_f64()
    ));

    // What `bulwark import` does after a bulk load.
    store.analyze().unwrap();

    // Read by id.
    let reads = 20_000;
    let mut lat = Vec::with_capacity(reads);
    let t = Instant::now();
    for _ in 0..reads {
        let id = ids[rng.below(ids.len())];
        timed(&mut lat, || store.resource(id).unwrap().unwrap());
    }
    out.push(Latencies(lat).report("read by id", t.elapsed()));

    // Search: category (with subcategories) + one or two words, published
    // only, newest first, 20 per page; once with the total count (a pager)
    // and once without (a "newest matching" list).
    let searches = 1_000;
    // Searched words are drawn like the text: common ones more often.
    let texts: Vec<String> = (0..searches)
        .map(|i| {
            if i % 2 == 0 {
                word(&mut rng, &vocab).to_owned()
            } else {
                format!("{} {}", word(&mut rng, &vocab), word(&mut rng, &vocab))
            }
        })
        .collect();
    for count_total in [true, false] {
        let mut lat = Vec::with_capacity(searches);
        let mut hits = 0u64;
        let t = Instant::now();
        for text in &texts {
            let q = SearchQuery {
                categories: vec!["text".into()],
                text: Some(text.clone()),
                published_only: true,
                sort: SortKey::Modified,
                descending: true,
                limit: 20,
                count_total,
                ..Default::default()
            };
            hits += timed(&mut lat, || store.search(&q).unwrap())
                .total
                .unwrap_or(0);
        }
        let what = if count_total {
            eprintln!("average matches per search: {}", hits / searches as u64);
            "search category + text, page + total"
        } else {
            "search category + text, page only"
        };
        out.push(Latencies(lat).report(what, t.elapsed()));
    }

    // Updates (each: a revision, the update, a pivot queue entry).
    let updates = 5_000;
    let mut lat = Vec::with_capacity(updates);
    let t = Instant::now();
    for _ in 0..updates {
        let id = ids[rng.below(ids.len())];
        let r = store.resource(id).unwrap().unwrap();
        let title = sentence(&mut rng, &vocab, 4);
        timed(&mut lat, || {
            store
                .update_resource(
                    ResourceUpdate::new(id, r.version).merge(Props::new().with("title", title)),
                )
                .unwrap()
        });
    }
    out.push(Latencies(lat).report("update (read + write)", t.elapsed()));
    let t = Instant::now();
    let indexed = store.pivot_all(100).unwrap();
    out.push(format!(
        "| re-pivot after updates | {indexed} | {:.0}/s | - | - |",
        indexed as f64 / t.elapsed().as_secs_f64()
    ));
    out
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let only = args.first().cloned();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut report = Vec::new();

    if only.as_deref().is_none_or(|b| b == "sqlite") {
        let dir = tempfile::tempdir().unwrap();
        let store = rt
            .block_on(Store::open(StoreConfig::sqlite(
                dir.path().join("bench.db"),
            )))
            .unwrap();
        let s = store.clone();
        let rows = rt.block_on(async {
            tokio::task::spawn_blocking(move || run(&s, n))
                .await
                .unwrap()
        });
        report.push(("sqlite", rows));
    }
    if only.as_deref().is_none_or(|b| b == "postgres") {
        let url = std::env::var("BULWARK_TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
        let schema = format!("bench_{}", std::process::id());
        let store = rt
            .block_on(Store::open(StoreConfig::postgres(&url, Some(&schema))))
            .expect("PostgreSQL is needed for the postgres half of the benchmark");
        let s = store.clone();
        let rows = rt.block_on(async {
            tokio::task::spawn_blocking(move || run(&s, n))
                .await
                .unwrap()
        });
        drop(store);
        // BULWARK_BENCH_KEEP=1 keeps the schema for EXPLAIN ANALYZE.
        let keep = std::env::var("BULWARK_BENCH_KEEP").is_ok_and(|v| v == "1");
        rt.block_on(async {
            if keep {
                eprintln!("kept schema {schema}");
                return;
            }
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP SCHEMA \"{schema}\" CASCADE"
            )))
            .execute(&mut c)
            .await
            .unwrap();
        });
        report.push(("postgres", rows));
    }
    for (backend, rows) in report {
        println!("\n### {backend}, {n} resources\n");
        println!("| operation | count | throughput | p50 | p99 |");
        println!("| --- | --- | --- | --- | --- |");
        for r in rows {
            println!("{r}");
        }
    }
}
