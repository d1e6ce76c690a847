//! How much room the site takes and has left: its database's size and the
//! free space on the disk holding its data (what the admin's dashboard shows
//! too), each one cheap question (a pragma or `pg_database_size`, a
//! `statvfs`).

use bulwark_site::Site;
use bulwark_store::Store;
use bulwark_web::Metric;

pub fn metrics(site: &Site, store: &Store) -> Vec<Metric> {
    let mut out = Vec::new();
    match store.database_bytes() {
        Ok(bytes) => out.push(Metric::gauge(
            "bulwark_database_bytes",
            "The database's size: the site's SQLite file, or the whole PostgreSQL database \
             the site is in.",
            bytes as f64,
        )),
        Err(e) => tracing::warn!("metrics: the database's size: {e}"),
    }
    match site.disk_space() {
        Ok(space) => {
            out.push(Metric::gauge(
                "bulwark_disk_free_bytes",
                "Free space on the disk holding the site's data (what the server may use).",
                space.free as f64,
            ));
            out.push(Metric::gauge(
                "bulwark_disk_size_bytes",
                "The size of the disk holding the site's data.",
                space.total as f64,
            ));
        }
        Err(e) => tracing::warn!("metrics: the disk's free space: {e}"),
    }
    out
}
