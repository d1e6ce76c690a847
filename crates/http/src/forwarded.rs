//! The visitor behind a proxy: when a request comes from an address named
//! trusted (`--trusted-proxy`), its `X-Forwarded-For` says whom the proxy
//! serves and its `X-Forwarded-Proto` whether the visitor came over HTTPS.
//! Everything kept per address (push clients, logon throttles, the access
//! log) then sees the visitor rather than the balancer.
//!
//! `X-Forwarded-For` is a list each proxy appends the address it saw to, and
//! a visitor may start it with anything. It is read from the right: the
//! first address that is not a trusted proxy is the visitor, so what a
//! visitor wrote itself is never believed. From any other address the headers
//! are ignored.

use std::net::{IpAddr, SocketAddr};

use http::HeaderMap;
use ipnet::IpNet;

use crate::Peer;

/// A `--trusted-proxy` that is neither an address nor a network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} is not an address or a network (such as 10.0.0.0/8)")]
pub struct NotAnAddress {
    pub given: String,
}

/// A list of addresses and networks (`10.0.0.0/8`, `127.0.0.1`, `::1`): the
/// trusted proxies, or who may read a site's `/metrics`.
#[derive(Debug, Clone, Default)]
pub struct Networks(Vec<IpNet>);

impl Networks {
    pub fn parse<S: AsRef<str>>(list: &[S]) -> Result<Networks, NotAnAddress> {
        list.iter()
            .map(|s| {
                let s = s.as_ref().trim();
                s.parse::<IpNet>()
                    .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| NotAnAddress {
                        given: s.to_owned(),
                    })
            })
            .collect::<Result<_, _>>()
            .map(Networks)
    }

    /// Whether `ip` (an IPv4 address mapped into IPv6 as itself) is in one
    /// of the networks.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The proxies whose forwarding headers are believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Networks);

impl TrustedProxies {
    /// From addresses and networks: `10.0.0.0/8`, `127.0.0.1`, `::1`.
    pub fn parse<S: AsRef<str>>(list: &[S]) -> Result<TrustedProxies, NotAnAddress> {
        Networks::parse(list).map(TrustedProxies)
    }

    /// Whether `ip` is one of the trusted proxies.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.0.contains(ip)
    }

    /// The peer as the request's proxies tell it, when it came from one.
    pub fn resolve(&self, peer: Peer, headers: &HeaderMap) -> Peer {
        if self.0.is_empty() || !self.trusts(peer.addr.ip()) {
            return peer;
        }
        let mut visitor = None;
        let hops = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .collect::<Vec<_>>();
        for hop in hops.iter().rev() {
            // What cannot be read ends the walk: the visitor is then the
            // last proxy that could be.
            let Some(ip) = hop_address(hop) else { break };
            visitor = Some(ip);
            if !self.trusts(ip) {
                break;
            }
        }
        let secure = headers
            .get_all("x-forwarded-proto")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .next_back()
            .map(|p| p.trim().to_ascii_lowercase());
        Peer {
            addr: visitor.map_or(peer.addr, |ip| SocketAddr::new(ip, 0)),
            secure: match secure.as_deref() {
                Some("https") => true,
                Some("http") => false,
                _ => peer.secure,
            },
        }
    }
}

/// One entry of `X-Forwarded-For`: an address, maybe with a port (`[::1]:80`).
fn hop_address(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    hop.parse::<IpAddr>()
        .or_else(|_| hop.parse::<SocketAddr>().map(|a| a.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
}

/// The addresses one visitor is taken to hold: an IPv4 address as it is, an
/// IPv6 one by its /64 (one customer's network hands out as many of its
/// addresses as it likes); an IPv4-mapped IPv6 address is the IPv4 one. What
/// every per-address limit counts by.
pub fn visitor_network(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(std::net::Ipv6Addr::from(
            v6.to_bits() & !((1u128 << 64) - 1),
        )),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(addr: &str, secure: bool) -> Peer {
        Peer {
            addr: addr.parse().unwrap(),
            secure,
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn the_visitor_is_the_first_untrusted_address_from_the_right() {
        let trusted = TrustedProxies::parse(&["10.0.0.0/8", "127.0.0.1"]).unwrap();
        let from_balancer = peer("127.0.0.1:5000", false);
        let ip = |h: &[(&str, &str)]| trusted.resolve(from_balancer, &headers(h)).addr.ip();
        assert_eq!(
            ip(&[("x-forwarded-for", "203.0.113.7")]),
            "203.0.113.7".parse::<IpAddr>().unwrap()
        );
        // What the visitor wrote itself is left of what the proxies added.
        assert_eq!(
            ip(&[("x-forwarded-for", "1.2.3.4, 203.0.113.7, 10.0.0.2")]),
            "203.0.113.7".parse::<IpAddr>().unwrap()
        );
        // Over two header lines, and with a port.
        assert_eq!(
            ip(&[
                ("x-forwarded-for", "1.2.3.4"),
                ("x-forwarded-for", "[2001:db8::1]:443")
            ]),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        );
        // Garbage where the visitor should be: the last proxy that could be.
        assert_eq!(
            ip(&[("x-forwarded-for", "nonsense, 10.0.0.2")]),
            "10.0.0.2".parse::<IpAddr>().unwrap()
        );
        // No header: the proxy itself.
        assert_eq!(ip(&[]), "127.0.0.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn headers_from_anyone_else_are_ignored() {
        let trusted = TrustedProxies::parse(&["10.0.0.0/8"]).unwrap();
        let h = headers(&[
            ("x-forwarded-for", "203.0.113.7"),
            ("x-forwarded-proto", "https"),
        ]);
        let direct = peer("198.51.100.9:4000", false);
        let got = trusted.resolve(direct, &h);
        assert_eq!((got.addr, got.secure), (direct.addr, false));
        // Nobody trusted (the default): the same.
        let got = TrustedProxies::default().resolve(peer("10.0.0.1:1", false), &h);
        assert_eq!(got.addr, "10.0.0.1:1".parse().unwrap());
    }

    #[test]
    fn the_scheme_is_the_nearest_proxys_word() {
        let trusted = TrustedProxies::parse(&["::1"]).unwrap();
        let from = peer("[::1]:9000", false);
        let secure = |v: &str| {
            trusted
                .resolve(from, &headers(&[("x-forwarded-proto", v)]))
                .secure
        };
        assert!(secure("https"));
        assert!(secure("HTTPS"));
        assert!(!secure("http"));
        assert!(secure("http, https"));
        assert!(!secure("gopher"), "anything else: the connection's own");
        // An IPv4 proxy reaching an IPv6 socket is trusted by its IPv4 name.
        let v4 = TrustedProxies::parse(&["192.0.2.1"]).unwrap();
        let mapped = peer("[::ffff:192.0.2.1]:80", false);
        let h = headers(&[("x-forwarded-for", "203.0.113.7")]);
        assert_eq!(
            v4.resolve(mapped, &h).addr.ip(),
            "203.0.113.7".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn a_list_that_names_no_address_is_refused() {
        let e = TrustedProxies::parse(&["10.0.0.0/8", "proxy.local"]).unwrap_err();
        assert_eq!(e.given, "proxy.local");
        assert!(e.to_string().contains("10.0.0.0/8"), "{e}");
        assert!(TrustedProxies::parse(&["10.0.0.0/33"]).is_err());
    }
}
