//! TLS: rustls with the certificate picked by SNI from the site that owns the name.
//! ALPN offers HTTP/2 first, then HTTP/1.1. Certificates change while the
//! server runs: files are read again when they change, and modules install
//! the ones they obtain (ACME).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use bulwark_site::{SiteConfig, TlsFiles};

/// The certificates served, by host name (SNI): from the sites' files and
/// from modules (the `acme` module's). A handshake reads the current table
/// without a lock; a change (a file that changed, a certificate issued or
/// renewed) builds a new table and swaps it in.
#[derive(Debug, Default)]
pub struct Certificates {
    current: ArcSwap<Table>,
    /// What the files gave, by site, with the files' stamps.
    from_files: Mutex<HashMap<String, (Served, Vec<FileStamp>)>>,
    /// What modules installed, by site.
    installed: Mutex<HashMap<String, Served>>,
}

#[derive(Debug, Default)]
struct Table {
    by_host: HashMap<String, Arc<CertifiedKey>>,
    fallback: Option<Arc<CertifiedKey>>,
}

#[derive(Debug, Clone)]
struct Served {
    hosts: Vec<String>,
    default: bool,
    key: Arc<CertifiedKey>,
}

type FileStamp = (PathBuf, Option<std::time::SystemTime>, u64);

fn stamp(path: &Path) -> FileStamp {
    let meta = std::fs::metadata(path).ok();
    (
        path.to_path_buf(),
        meta.as_ref().and_then(|m| m.modified().ok()),
        meta.map_or(0, |m| m.len()),
    )
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let table = self.current.load();
        hello
            .server_name()
            .and_then(|name| table.by_host.get(&name.to_ascii_lowercase()))
            .or(table.fallback.as_ref())
            .cloned()
    }
}

impl Certificates {
    /// Serves `chain_pem` with `key_pem` for a site's host names (a module's
    /// certificate: ACME).
    pub fn install(
        &self,
        site: &SiteConfig,
        chain_pem: &str,
        key_pem: &str,
    ) -> Result<(), TlsError> {
        let key = certified_key(
            site.name.as_str(),
            chain_pem.as_bytes(),
            key_pem.as_bytes(),
            || PathBuf::from("(installed)"),
        )?;
        self.installed
            .lock()
            .expect("certificates")
            .insert(site.name.to_string(), served(site, Arc::new(key)));
        self.rebuild();
        Ok(())
    }

    /// Whether any certificate is served.
    pub fn is_empty(&self) -> bool {
        self.current.load().by_host.is_empty()
    }

    /// Reads the certificate files of every site in `sites` whose files are
    /// new or changed since they were last read; a site whose files do not
    /// read keeps what it had. Returns the errors.
    pub(crate) fn load_files<'a>(
        &self,
        sites: impl IntoIterator<Item = &'a SiteConfig>,
    ) -> Vec<TlsError> {
        let mut errors = Vec::new();
        let mut from_files = self.from_files.lock().expect("certificates");
        let mut seen = Vec::new();
        let mut changed = false;
        for config in sites {
            let Some(files) = config.tls.as_ref().and_then(|t| t.files.as_ref()) else {
                continue;
            };
            let name = config.name.to_string();
            seen.push(name.clone());
            let stamps = vec![stamp(&files.cert), stamp(&files.key)];
            if from_files
                .get(&name)
                .is_some_and(|(s, old)| *old == stamps && s.hosts == hosts(config))
            {
                continue;
            }
            match load_key(&name, files) {
                Ok(key) => {
                    from_files.insert(name, (served(config, Arc::new(key)), stamps));
                    changed = true;
                }
                Err(e) => errors.push(e),
            }
        }
        let before = from_files.len();
        from_files.retain(|name, _| seen.contains(name));
        changed |= from_files.len() != before;
        drop(from_files);
        if changed {
            self.rebuild();
        }
        errors
    }

    fn rebuild(&self) {
        let from_files = self.from_files.lock().expect("certificates");
        let installed = self.installed.lock().expect("certificates");
        let mut table = Table::default();
        for served in from_files
            .values()
            .map(|(s, _)| s)
            .chain(installed.values())
        {
            for host in &served.hosts {
                table.by_host.insert(host.clone(), served.key.clone());
            }
            if served.default || table.fallback.is_none() {
                table.fallback = Some(served.key.clone());
            }
        }
        self.current.store(Arc::new(table));
    }
}

fn hosts(config: &SiteConfig) -> Vec<String> {
    config.host_names().cloned().collect()
}

fn served(config: &SiteConfig, key: Arc<CertifiedKey>) -> Served {
    Served {
        hosts: hosts(config),
        default: config.is_default,
        key,
    }
}

/// Why the TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("site {site}: tls: {}: {source}", file.display())]
    Read {
        site: String,
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("site {site}: tls: {}: {problem}", file.display())]
    Invalid {
        site: String,
        file: PathBuf,
        problem: String,
    },
    #[error("tls: {0}")]
    Rustls(#[source] rustls::Error),
}

fn load_key(site: &str, files: &TlsFiles) -> Result<CertifiedKey, TlsError> {
    let read = |file: &Path| {
        std::fs::read(file).map_err(|source| TlsError::Read {
            site: site.to_string(),
            file: file.to_path_buf(),
            source,
        })
    };
    let (chain, key) = (read(&files.cert)?, read(&files.key)?);
    certified_key(site, &chain, &key, || files.cert.clone())
}

/// A certificate chain and its key (PEM) as rustls serves them.
fn certified_key(
    site: &str,
    chain: &[u8],
    key: &[u8],
    file: impl Fn() -> PathBuf,
) -> Result<CertifiedKey, TlsError> {
    let invalid = |problem: String| TlsError::Invalid {
        site: site.to_string(),
        file: file(),
        problem,
    };
    let certs = rustls_pemfile::certs(&mut &chain[..])
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(e.to_string()))?;
    if certs.is_empty() {
        return Err(invalid("no certificate found".into()));
    }
    let key = rustls_pemfile::private_key(&mut &key[..])
        .map_err(|e| invalid(e.to_string()))?
        .ok_or_else(|| invalid("no private key found".into()))?;
    let key =
        rustls::crypto::ring::sign::any_supported_type(&key).map_err(|e| invalid(e.to_string()))?;
    Ok(CertifiedKey::new(certs, key))
}

/// A TLS configuration serving `certificates`, if any site is served over
/// TLS (from files or over ACME); the files are read first.
pub(crate) fn server_config(
    sites: &[&SiteConfig],
    certificates: &Arc<Certificates>,
) -> Result<Option<Arc<rustls::ServerConfig>>, TlsError> {
    if let Some(e) = certificates
        .load_files(sites.iter().copied())
        .into_iter()
        .next()
    {
        return Err(e);
    }
    if !sites.iter().any(|config| config.tls.is_some()) {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Rustls)?
        .with_no_client_auth()
        .with_cert_resolver(certificates.clone());
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Some(Arc::new(config)))
}
