//! TLS: rustls with the certificate picked by SNI from the site that owns the name.
//! ALPN offers HTTP/2 first, then HTTP/1.1.

use std::collections::HashMap;
use std::sync::Arc;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use bulwark_site::TlsFiles;

use crate::runtime::SiteTable;

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

fn load_key(files: &TlsFiles) -> Result<CertifiedKey, String> {
    let read = |p: &std::path::Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    let certs = rustls_pemfile::certs(&mut read(&files.cert)?.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", files.cert.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate found", files.cert.display()));
    }
    let key = rustls_pemfile::private_key(&mut read(&files.key)?.as_slice())
        .map_err(|e| format!("{}: {e}", files.key.display()))?
        .ok_or_else(|| format!("{}: no private key found", files.key.display()))?;
    let key = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|e| format!("{}: {e}", files.key.display()))?;
    Ok(CertifiedKey::new(certs, key))
}

/// A TLS configuration for every site that names a certificate, or `None` if none does.
pub fn server_config(table: &SiteTable) -> Result<Option<Arc<rustls::ServerConfig>>, String> {
    let mut resolver = SniResolver {
        by_host: HashMap::new(),
        fallback: None,
    };
    for rt in &table.sites {
        let config = &rt.site.config;
        let Some(files) = &config.tls else { continue };
        let key = Arc::new(load_key(files).map_err(|e| format!("site {}: tls: {e}", config.name))?);
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
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Some(Arc::new(config)))
}
