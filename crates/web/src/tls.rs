//! TLS: rustls with the certificate picked by SNI from the site that owns the name.
//! ALPN offers HTTP/2 first, then HTTP/1.1.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use bulwark_site::TlsFiles;

use crate::table::SiteTable;

#[derive(Debug)]
struct SniResolver {
    by_host: HashMap<String, Arc<CertifiedKey>>,
    fallback: Option<Arc<CertifiedKey>>,
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        hello
            .server_name()
            .and_then(|name| self.by_host.get(&name.to_ascii_lowercase()))
            .or(self.fallback.as_ref())
            .cloned()
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
    let invalid = |file: &Path, problem: String| TlsError::Invalid {
        site: site.to_string(),
        file: file.to_path_buf(),
        problem,
    };
    let certs = rustls_pemfile::certs(&mut read(&files.cert)?.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(&files.cert, e.to_string()))?;
    if certs.is_empty() {
        return Err(invalid(&files.cert, "no certificate found".into()));
    }
    let key = rustls_pemfile::private_key(&mut read(&files.key)?.as_slice())
        .map_err(|e| invalid(&files.key, e.to_string()))?
        .ok_or_else(|| invalid(&files.key, "no private key found".into()))?;
    let key = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|e| invalid(&files.key, e.to_string()))?;
    Ok(CertifiedKey::new(certs, key))
}

/// A TLS configuration for every site that names a certificate, or `None` if none does.
pub(crate) fn server_config(
    table: &SiteTable,
) -> Result<Option<Arc<rustls::ServerConfig>>, TlsError> {
    let mut resolver = SniResolver {
        by_host: HashMap::new(),
        fallback: None,
    };
    for served in &table.sites {
        let config = &served.runtime.config();
        let Some(files) = &config.tls else { continue };
        let key = Arc::new(load_key(config.name.as_str(), files)?);
        for host in std::iter::once(&config.hostname).chain(&config.aliases) {
            resolver.by_host.insert(host.clone(), key.clone());
        }
        if config.is_default || resolver.fallback.is_none() {
            resolver.fallback = Some(key);
        }
    }
    if resolver.by_host.is_empty() {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Rustls)?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Some(Arc::new(config)))
}
