//! HTTPS: the certificate is chosen by SNI from the site owning the name, and HTTP/2
//! is negotiated by ALPN.

use crate::common;

use common::*;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

struct Pki {
    ca_pem: String,
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

fn pki() -> Pki {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca = params.self_signed(&ca_key).unwrap();
    Pki {
        ca_pem: ca.pem(),
        ca,
        ca_key,
    }
}

fn leaf(pki: &Pki, host: &str) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec![host.to_string()])
        .unwrap()
        .signed_by(&key, &pki.ca, &pki.ca_key)
        .unwrap();
    (cert.pem(), key.serialize_pem())
}

/// The two test sites, each with its own certificate, served over TLS too (plus
/// `extra` files), and a client that trusts them and finds both names on the
/// server's TLS port.
async fn start_with_tls(extra: &[(&str, &str)]) -> (TestServer, reqwest::Client) {
    let pki = pki();
    let (a_cert, a_key) = leaf(&pki, "a.test");
    let (b_cert, b_key) = leaf(&pki, "b.test");
    let site_a = format!("{SITE_A}\n[tls]\ncert = \"tls/cert.pem\"\nkey = \"tls/key.pem\"\n");
    let site_b = format!("{SITE_B}\n[tls]\ncert = \"tls/cert.pem\"\nkey = \"tls/key.pem\"\n");
    let mut files = two_sites();
    files.retain(|(p, _)| !p.ends_with("site.toml"));
    files.extend([
        ("a/site.toml", site_a.as_str()),
        ("b/site.toml", site_b.as_str()),
        ("a/tls/cert.pem", a_cert.as_str()),
        ("a/tls/key.pem", a_key.as_str()),
        ("b/tls/cert.pem", b_cert.as_str()),
        ("b/tls/key.pem", b_key.as_str()),
    ]);
    files.extend_from_slice(extra);
    let s = start(&files, |o| {
        o.listen_tls = Some("127.0.0.1:0".parse().unwrap())
    })
    .await;
    let tls = s.tls_addr.expect("TLS listener");
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).unwrap())
        .resolve("a.test", tls)
        .resolve("b.test", tls)
        .build()
        .unwrap();
    (s, client)
}

#[tokio::test]
async fn sni_picks_each_sites_certificate_and_http2_is_negotiated() {
    let (s, client) = start_with_tls(&[]).await;
    let tls = s.tls_addr.unwrap();
    for (host, expected) in [("a.test", "site A home"), ("b.test", "site B home")] {
        let r = client
            .get(format!("https://{host}:{}/", tls.port()))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{host}: {e:?}"));
        assert_eq!(r.version(), reqwest::Version::HTTP_2);
        assert!(r.text().await.unwrap().contains(expected));
    }
    // Plain HTTP keeps working beside it.
    assert_eq!(get(s.addr, "b.test", "/").await.text(), "site B home");
    s.shutdown().await;
}

#[tokio::test]
async fn an_http2_host_header_that_disagrees_with_the_authority_gets_400() {
    let (s, client) = start_with_tls(&[]).await;
    let port = s.tls_addr.unwrap().port();
    let r = client
        .get(format!("https://a.test:{port}/"))
        .header("host", "b.test")
        .send()
        .await
        .unwrap();
    assert_eq!(r.version(), reqwest::Version::HTTP_2);
    assert_eq!(r.status(), 400);
    let r = client
        .get(format!("https://b.test:{port}/"))
        .header("host", "b.test")
        .send()
        .await
        .unwrap();
    assert_eq!(r.text().await.unwrap(), "site B home");
    s.shutdown().await;
}

#[tokio::test]
async fn strict_transport_security_is_sent_over_tls_only() {
    let (s, client) = start_with_tls(&[]).await;
    let port = s.tls_addr.unwrap().port();
    // `/` twice: rendered, then from the page cache (its prepared headers).
    for path in ["/", "/", "/lib/css/a.css", "/nope/nothing"] {
        let r = client
            .get(format!("https://a.test:{port}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.headers()
                .get("strict-transport-security")
                .map(|v| v.to_str().unwrap()),
            Some("max-age=31536000"),
            "{path}"
        );
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    }
    // The same cached page over plain HTTP.
    let plain = get(s.addr, "a.test", "/").await;
    assert_eq!(plain.header("strict-transport-security"), None);
    assert_eq!(plain.header("x-content-type-options"), Some("nosniff"));
    s.shutdown().await;
}

#[tokio::test]
async fn a_missing_certificate_file_is_a_config_error_naming_the_key() {
    let mut files = two_sites();
    files.retain(|(p, _)| *p != "b/site.toml");
    let site_b = format!("{SITE_B}\n[tls]\ncert = \"tls/nope.pem\"\nkey = \"tls/key.pem\"\n");
    files.push(("b/site.toml", &site_b));
    let dir = tempfile::tempdir().unwrap();
    for (p, t) in &files {
        write(&dir.path().join(p), t);
    }
    let err = load_sites(dir.path(), Default::default())
        .await
        .err()
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect::<String>();
    assert!(
        err.contains("b/site.toml") && err.contains("tls.cert"),
        "{err}"
    );
}
