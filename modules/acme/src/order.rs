//! Keeping a site's certificate: serve what the database has, and order a
//! new one (one node at a time) when there is none, it does not cover the
//! site's host names, or its end is near.

use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, ChallengeType, Identifier, NewAccount,
    NewOrder, OrderStatus, RetryPolicy,
};
use serde::{Deserialize, Serialize};

use bulwark_site::Site;
use bulwark_store::Store;
use bulwark_web::Certificates;

use crate::Settings;

/// How long one node may hold the right to order.
const LOCK_MS: i64 = 10 * 60 * 1000;

/// The certificate as kept in `acme_state`.
#[derive(Serialize, Deserialize, Clone, PartialEq)]
struct Kept {
    chain: String,
    key: String,
    hosts: Vec<String>,
    not_after: DateTime<Utc>,
}

fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

fn read_state(store: &Store, name: &str) -> Result<Option<String>, String> {
    let name = name.to_owned();
    store
        .module_read(|sql| {
            Ok(sql
                .query(
                    "SELECT value FROM acme_state WHERE name = $1",
                    &[name.as_str().into()],
                )?
                .first()
                .map(|r| r.text(0)))
        })
        .map_err(|e| e.to_string())
}

fn write_state(store: &Store, name: &str, value: &str) -> Result<(), String> {
    store
        .module_write(|sql| {
            sql.execute(
                "INSERT INTO acme_state (name, value, updated) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated = excluded.updated",
                &[name.into(), value.into(), now_ms().into()],
            )?;
            Ok(())
        })
        .map_err(|e| e.to_string())
}

/// Takes the right to order for `holder`, if nobody holds it.
fn lock(store: &Store, holder: &str) -> Result<bool, String> {
    let holder = holder.to_owned();
    store
        .module_write(|sql| {
            let now = now_ms();
            let rows = sql.query(
                "INSERT INTO acme_lock (name, holder, until) VALUES ('order', $1, $2) \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until \
                 WHERE acme_lock.until < $3 OR acme_lock.holder = $1 RETURNING holder",
                &[holder.as_str().into(), (now + LOCK_MS).into(), now.into()],
            )?;
            Ok(!rows.is_empty())
        })
        .map_err(|e| e.to_string())
}

fn unlock(store: &Store, holder: &str) {
    let holder = holder.to_owned();
    let _ = store.module_write(|sql| {
        sql.execute(
            "DELETE FROM acme_lock WHERE name = 'order' AND holder = $1",
            &[holder.as_str().into()],
        )?;
        Ok(())
    });
}

/// Orders for one set of names placed in seven days, at most: what Let's
/// Encrypt allows for the same names (its duplicate certificate limit), so
/// that orders failing again and again (a challenge that cannot be reached,
/// a name that does not point here) stop before the CA refuses the account.
const ORDERS_PER_WEEK: i64 = 5;

/// The orders placed for `hosts` (space-separated, as recorded) in the last
/// seven days, by any node.
fn orders_this_week(store: &Store, hosts: &str) -> Result<i64, String> {
    let since = now_ms() - 7 * 24 * 3600 * 1000;
    let hosts = hosts.to_owned();
    store
        .module_read(|sql| {
            Ok(sql
                .query_one(
                    "SELECT count(*) FROM acme_order WHERE hosts = $1 AND placed > $2",
                    &[hosts.as_str().into(), since.into()],
                )?
                .map_or(0, |r| r.int(0)))
        })
        .map_err(|e| e.to_string())
}

/// The certificate kept in the site's database, if any (one that does not
/// parse counts as none: a new one is ordered).
fn kept_certificate(store: &Store) -> Result<Option<Kept>, String> {
    Ok(read_state(store, "certificate")?.and_then(|text| serde_json::from_str(&text).ok()))
}

/// [`kept_certificate`], off the runtime's workers.
async fn read_kept(store: &Store) -> Result<Option<Kept>, String> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || kept_certificate(&store))
        .await
        .map_err(|e| e.to_string())?
}

/// The site's samples for `/metrics`: when its certificate ends (none
/// before there is one) and the orders placed for its names this week (a
/// number that climbs while orders fail; [`ORDERS_PER_WEEK`] stops them).
pub(crate) fn metrics(store: &Store, hosts: &[String]) -> Vec<bulwark_web::Metric> {
    use bulwark_web::Metric;
    let mut metrics = Vec::new();
    let kept = kept_certificate(store).ok().flatten();
    if let Some(k) = kept {
        metrics.push(Metric::gauge(
            "bulwark_certificate_expiry_timestamp_seconds",
            "When the certificate the site serves over ACME ends (Unix time): \
             alert on it minus time() (renewal runs well before).",
            k.not_after.timestamp() as f64,
        ));
    }
    match orders_this_week(store, &hosts.join(" ")) {
        Ok(placed) => metrics.push(Metric::gauge(
            "bulwark_acme_orders_week",
            "ACME orders placed for the site's names in the last seven days, by every \
             node: more than one or two means orders are failing (at five no more are placed).",
            placed as f64,
        )),
        Err(e) => tracing::warn!("acme: counting orders for /metrics: {e}"),
    }
    metrics
}

/// When a PEM certificate (the first of a chain) ends.
fn not_after(chain: &str) -> Result<DateTime<Utc>, String> {
    validity(chain).map(|(_, end)| end)
}

/// When a PEM certificate (the first of a chain) begins and ends.
fn validity(chain: &str) -> Result<(DateTime<Utc>, DateTime<Utc>), String> {
    let (_, pem) = x509_parser::pem::parse_x509_pem(chain.as_bytes()).map_err(|e| e.to_string())?;
    let cert = pem.parse_x509().map_err(|e| e.to_string())?;
    let time = |t: x509_parser::time::ASN1Time| {
        DateTime::from_timestamp(t.timestamp(), 0).ok_or_else(|| "a date out of range".to_owned())
    };
    Ok((
        time(cert.validity().not_before)?,
        time(cert.validity().not_after)?,
    ))
}

/// When a certificate valid from `begins` until `ends` is renewed:
/// `renew_days` before it ends, unless that is its whole life or more (a
/// short-lived certificate would be due the moment it arrived, and ordered
/// again at every look): then when a third of its life is left.
fn renew_at(begins: DateTime<Utc>, ends: DateTime<Utc>, renew_days: u64) -> DateTime<Utc> {
    let life = ends - begins;
    let window = chrono::Duration::days(i64::try_from(renew_days).unwrap_or(i64::MAX / 86_400_000));
    ends - if window >= life { life / 3 } else { window }
}

/// The site's host names a certificate must cover.
pub(crate) fn hosts(site: &Site) -> Vec<String> {
    let mut hosts: Vec<String> = site.config.host_names().cloned().collect();
    hosts.sort();
    hosts
}

/// Looks at the certificate every `check_seconds` while the site's load
/// lives.
pub(crate) fn spawn(
    alive: Weak<()>,
    site: Arc<Site>,
    store: Store,
    certificates: Arc<Certificates>,
    settings: Settings,
) {
    if tokio::runtime::Handle::try_current().is_err() {
        return; // A command, not a server.
    }
    let holder = format!("{}:{}", std::process::id(), site.dir.display());
    store.clone().spawn_while_open(async move {
        let mut installed: Option<Kept> = None;
        let mut failures = 0;
        loop {
            if alive.upgrade().is_none() {
                return;
            }
            match keep(
                &site,
                &store,
                &settings,
                &holder,
                &mut installed,
                &certificates,
            )
            .await
            {
                Ok(()) => failures = 0,
                Err(e) => {
                    failures += 1;
                    tracing::error!(site = %site.name(), "acme: {e}");
                }
            }
            let every = Duration::from_secs(settings.check_seconds);
            tokio::time::sleep(next_look(every, failures)).await;
        }
    });
}

/// The longest wait between looks after failures.
const MOST_BACK_OFF: Duration = Duration::from_secs(6 * 3600);

/// When to look again after `failures` failed looks in a row: every `every`
/// while all is well, and twice as long after each failure (up to
/// [`MOST_BACK_OFF`], or `every` if that is longer), so a CA that refuses or
/// a challenge that cannot be answered is not asked again and again.
fn next_look(every: Duration, failures: u32) -> Duration {
    let backed_off = every.saturating_mul(1 << failures.min(16));
    backed_off.min(MOST_BACK_OFF.max(every))
}

async fn keep(
    site: &Site,
    store: &Store,
    settings: &Settings,
    holder: &str,
    installed: &mut Option<Kept>,
    certificates: &Certificates,
) -> Result<(), String> {
    let wanted = hosts(site);
    let kept = read_kept(store).await?;
    let due = |k: &Kept| {
        let begins = validity(&k.chain).map_or(k.not_after, |(begins, _)| begins);
        k.hosts != wanted || Utc::now() >= renew_at(begins, k.not_after, settings.renew_days)
    };
    if let Some(k) = &kept
        && installed.as_ref() != Some(k)
    {
        certificates
            .install(&site.config, &k.chain, &k.key)
            .map_err(|e| e.to_string())?;
        tracing::info!(site = %site.name(), "acme: serving the certificate valid until {}", k.not_after);
        *installed = Some(k.clone());
    }
    if kept.as_ref().is_some_and(|k| !due(k)) {
        return Ok(());
    }
    let placed = {
        let (store, hosts) = (store.clone(), wanted.join(" "));
        tokio::task::spawn_blocking(move || orders_this_week(&store, &hosts))
            .await
            .map_err(|e| e.to_string())??
    };
    if placed >= ORDERS_PER_WEEK {
        return Err(format!(
            "{placed} orders for {wanted:?} in the last seven days, the most a CA allows \
             (Let's Encrypt: five certificates for the same names a week): no new order until \
             the oldest is a week old; see the log above for why they failed"
        ));
    }
    let locked = {
        let (store, holder) = (store.clone(), holder.to_owned());
        tokio::task::spawn_blocking(move || lock(&store, &holder))
            .await
            .map_err(|e| e.to_string())??
    };
    if !locked {
        // Another node is ordering: its certificate shows up at a next look.
        return Ok(());
    }
    // Another node may have finished its order between this look's first
    // reading and the lock: read again, holding the lock.
    let kept_now = read_kept(store).await?;
    if kept_now.as_ref().is_some_and(|k| !due(k)) {
        let (store, holder) = (store.clone(), holder.to_owned());
        let _ = tokio::task::spawn_blocking(move || unlock(&store, &holder)).await;
        return Ok(()); // Installed at the next look.
    }
    let ordered = order(site, store, settings, holder, &wanted).await;
    {
        let (store, holder) = (store.clone(), holder.to_owned());
        let _ = tokio::task::spawn_blocking(move || unlock(&store, &holder)).await;
    }
    let k = ordered?;
    certificates
        .install(&site.config, &k.chain, &k.key)
        .map_err(|e| e.to_string())?;
    tracing::info!(site = %site.name(), "acme: new certificate for {:?}, valid until {}", k.hosts, k.not_after);
    *installed = Some(k);
    Ok(())
}

async fn account(store: &Store, settings: &Settings) -> Result<Account, String> {
    let builder = || match &settings.root {
        Some(root) => Account::builder_with_root(root),
        None => Account::builder(),
    };
    let stored = {
        let store = store.clone();
        tokio::task::spawn_blocking(move || read_state(&store, "account"))
            .await
            .map_err(|e| e.to_string())??
    };
    if let Some(text) = stored {
        let credentials: AccountCredentials =
            serde_json::from_str(&text).map_err(|e| format!("the stored account: {e}"))?;
        return builder()
            .map_err(|e| e.to_string())?
            .from_credentials(credentials)
            .await
            .map_err(|e| format!("the stored account: {e}"));
    }
    let contact: Vec<&str> = settings.contact.iter().map(String::as_str).collect();
    let (account, credentials) = builder()
        .map_err(|e| e.to_string())?
        .create(
            &NewAccount {
                contact: &contact,
                terms_of_service_agreed: true,
                only_return_existing: false,
            },
            settings.directory.clone(),
            None,
        )
        .await
        .map_err(|e| format!("creating the account at {}: {e}", settings.directory))?;
    let text = serde_json::to_string(&credentials).map_err(|e| e.to_string())?;
    let store = store.clone();
    tokio::task::spawn_blocking(move || write_state(&store, "account", &text))
        .await
        .map_err(|e| e.to_string())??;
    Ok(account)
}

async fn order(
    site: &Site,
    store: &Store,
    settings: &Settings,
    holder: &str,
    hosts: &[String],
) -> Result<Kept, String> {
    let account = account(store, settings).await?;
    let identifiers: Vec<Identifier> = hosts.iter().cloned().map(Identifier::Dns).collect();
    let mut order = account
        .new_order(&NewOrder::new(&identifiers))
        .await
        .map_err(|e| format!("placing the order: {e}"))?;
    {
        let (store, holder, hosts) = (store.clone(), holder.to_owned(), hosts.join(" "));
        let _ = tokio::task::spawn_blocking(move || {
            store.module_write(|sql| {
                sql.execute(
                    "INSERT INTO acme_order (placed, node, hosts) VALUES ($1, $2, $3)",
                    &[
                        now_ms().into(),
                        holder.as_str().into(),
                        hosts.as_str().into(),
                    ],
                )?;
                Ok(())
            })
        })
        .await;
    }
    tracing::info!(site = %site.name(), "acme: ordering a certificate for {hosts:?}");
    let mut authorizations = order.authorizations();
    while let Some(authz) = authorizations.next().await {
        let mut authz = authz.map_err(|e| format!("an authorization: {e}"))?;
        match authz.status {
            AuthorizationStatus::Pending => {}
            AuthorizationStatus::Valid => continue,
            other => return Err(format!("an authorization is {other:?}")),
        }
        let mut challenge = authz
            .challenge(ChallengeType::Http01)
            .ok_or("the ACME server offers no HTTP-01 challenge")?;
        let token = challenge.token.clone();
        let answer = challenge.key_authorization().as_str().to_owned();
        {
            let store = store.clone();
            tokio::task::spawn_blocking(move || {
                store.module_write(|sql| {
                    sql.execute(
                        "INSERT INTO acme_challenge (token, key_authorization, expires) \
                         VALUES ($1, $2, $3) ON CONFLICT (token) DO UPDATE SET \
                         key_authorization = excluded.key_authorization, expires = excluded.expires",
                        &[token.as_str().into(), answer.as_str().into(), (now_ms() + LOCK_MS).into()],
                    )?;
                    Ok(())
                })
            })
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        }
        challenge
            .set_ready()
            .await
            .map_err(|e| format!("answering a challenge: {e}"))?;
    }
    let status = order
        .poll_ready(&RetryPolicy::default())
        .await
        .map_err(|e| format!("waiting for the order: {e}"))?;
    if status != OrderStatus::Ready {
        return Err(format!("the order is {status:?}, not ready"));
    }
    let key = order
        .finalize()
        .await
        .map_err(|e| format!("finalizing the order: {e}"))?;
    let chain = order
        .poll_certificate(&RetryPolicy::default())
        .await
        .map_err(|e| format!("fetching the certificate: {e}"))?;
    let kept = Kept {
        not_after: not_after(&chain)?,
        chain,
        key,
        hosts: hosts.to_vec(),
    };
    let text = serde_json::to_string(&kept).map_err(|e| e.to_string())?;
    let store = store.clone();
    tokio::task::spawn_blocking(move || {
        write_state(&store, "certificate", &text)?;
        store
            .module_write(|sql| {
                sql.execute("DELETE FROM acme_challenge", &[])?;
                Ok(())
            })
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())??;
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_looks_wait_twice_as_long_each_time_up_to_six_hours() {
        let hour = Duration::from_secs(3600);
        let waits: Vec<u64> = (0..6)
            .map(|f| next_look(hour, f).as_secs() / 3600)
            .collect();
        assert_eq!(waits, [1, 2, 4, 6, 6, 6]);
        let second = Duration::from_secs(1);
        assert_eq!(next_look(second, 3), Duration::from_secs(8));
        assert_eq!(next_look(second, 40), MOST_BACK_OFF);
        let week = Duration::from_secs(7 * 86400);
        assert_eq!(next_look(week, 2), week, "never sooner than every");
    }

    fn day(n: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap() + chrono::Duration::days(n)
    }

    #[test]
    fn a_certificate_is_renewed_renew_days_before_it_ends_or_with_a_third_of_a_short_life_left() {
        // Ninety days, renewed thirty days before the end.
        assert_eq!(renew_at(day(0), day(90), 30), day(60));
        // Six days (a short-lived certificate): thirty days would be at once,
        // at every look; a third of its life is left instead.
        assert_eq!(renew_at(day(0), day(6), 30), day(4));
        // A window as long as its life is no window either.
        assert_eq!(renew_at(day(0), day(30), 30), day(20));
        // Shorter than its life: as set.
        assert_eq!(renew_at(day(0), day(45), 40), day(5));
    }
}
