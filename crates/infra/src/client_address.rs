//! Who sent a request: the TCP peer's address, or, when the peer is one of
//! the trusted proxies (`SUPPORTDESK_TRUSTED_PROXIES`), the address the
//! proxies forwarded. The server resolves it once per request
//! (`ClientAddress::resolve`) and every per-client limit, the idempotency
//! caller of a chat start and the request log read it from there
//! (`ClientAddress` as an extractor, `ClientAddress::of` in middleware).
//!
//! The forwarded chain is read right to left, the order proxies append
//! in: addresses of trusted proxies are skipped and the first other one is
//! the client, so whatever a client wrote into the header itself (the
//! left part) is never believed. `X-Forwarded-For` is read when a request
//! carries one; `Forwarded` (RFC 7239) otherwise. The two headers' grammars
//! are small and the crates that parse them bring a framework of their own,
//! so they are parsed here.

use std::net::{IpAddr, SocketAddr};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap, HeaderName};
use ipnet::IpNet;

/// The networks whose peers' forwarding headers are believed; none by
/// default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses a comma-separated list of CIDRs (`10.0.0.0/8, fd00::/8`); a
    /// bare address is a network of one.
    pub fn parse(text: &str) -> anyhow::Result<TrustedProxies> {
        text.split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| {
                part.parse::<IpNet>()
                    .or_else(|_| part.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "invalid trusted proxy {part:?}: expected a CIDR such as 10.0.0.0/8"
                        )
                    })
            })
            .collect::<anyhow::Result<Vec<_>>>()
            .map(TrustedProxies)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn trusts(&self, address: IpAddr) -> bool {
        let address = unmapped(address);
        self.0.iter().any(|net| net.contains(&address))
    }
}

/// The client's address, as the server resolved it for this request; `None`
/// for a request that did not come through a listener (a router called
/// directly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub Option<IpAddr>);

impl ClientAddress {
    /// The client of a request from `peer` with `headers`: the peer itself,
    /// unless it is a trusted proxy.
    pub fn resolve(peer: SocketAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
        let peer = unmapped(peer.ip());
        if !trusted.trusts(peer) {
            return peer;
        }
        let chain = forwarded_chain(headers);
        // The hop nearest to this server that is not a trusted proxy; a
        // hop that wrote something unreadable is itself the client.
        let mut client = peer;
        for hop in chain.iter().rev() {
            let Some(address) = hop else {
                return client;
            };
            client = *address;
            if !trusted.trusts(client) {
                return client;
            }
        }
        client
    }

    /// The address the server recorded in `extensions`.
    pub fn of(extensions: &Extensions) -> Option<IpAddr> {
        extensions
            .get::<ClientAddress>()
            .and_then(|client| client.0)
    }
}

/// The address, or nothing when there is none (for the request log).
impl std::fmt::Display for ClientAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(address) => address.fmt(f),
            None => Ok(()),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientAddress(ClientAddress::of(&parts.extensions)))
    }
}

/// An IPv4 address arriving IPv4-mapped (`::ffff:a.b.c.d`) as IPv4.
fn unmapped(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// The forwarded addresses, client first, each header line in order;
/// `None` for an entry that is not an address (`unknown`, an obfuscated
/// name, garbage).
fn forwarded_chain(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let values = |name| {
        headers
            .get_all(name)
            .iter()
            .map(|value| value.to_str().unwrap_or("\u{0}"))
            .flat_map(|line| line.split(','))
            .map(str::trim)
            .collect::<Vec<_>>()
    };
    let x_forwarded_for = values(X_FORWARDED_FOR);
    if x_forwarded_for.iter().any(|entry| !entry.is_empty()) {
        return x_forwarded_for.into_iter().map(node_address).collect();
    }
    values(axum::http::header::FORWARDED)
        .into_iter()
        .map(forwarded_for)
        .collect()
}

/// The `for=` node of one `Forwarded` element
/// (`for=192.0.2.60;proto=http;by=203.0.113.43`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("for") {
            return None;
        }
        node_address(value.trim().trim_matches('"'))
    })
}

/// A node as the headers write it: `192.0.2.60`, `192.0.2.60:4711`,
/// `2001:db8::1`, `[2001:db8::1]`, `[2001:db8::1]:4711`.
fn node_address(node: &str) -> Option<IpAddr> {
    if let Ok(address) = node.parse::<IpAddr>() {
        return Some(unmapped(address));
    }
    if let Ok(socket) = node.parse::<SocketAddr>() {
        return Some(unmapped(socket.ip()));
    }
    let bracketed = node.strip_prefix('[')?.strip_suffix(']')?;
    bracketed.parse::<IpAddr>().ok().map(unmapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(peer: &str, trusted: &str, headers: &[(&str, &str)]) -> String {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).expect("name"),
                value.parse().expect("value"),
            );
        }
        let trusted = TrustedProxies::parse(trusted).expect("trusted");
        let peer = format!("{peer}:443").parse().expect("peer");
        ClientAddress::resolve(peer, &map, &trusted).to_string()
    }

    #[test]
    fn headers_from_an_untrusted_peer_are_ignored() {
        let forged = [("x-forwarded-for", "198.51.100.1")];
        assert_eq!(resolved("203.0.113.9", "", &forged), "203.0.113.9");
        assert_eq!(
            resolved("203.0.113.9", "10.0.0.0/8", &forged),
            "203.0.113.9"
        );
    }

    #[test]
    fn the_right_most_untrusted_hop_is_the_client() {
        let chain = [("x-forwarded-for", "6.6.6.6, 198.51.100.1, 10.0.0.2")];
        assert_eq!(resolved("10.0.0.1", "10.0.0.0/8", &chain), "198.51.100.1");
        // Header lines are one list, in order.
        let lines = [
            ("x-forwarded-for", "6.6.6.6"),
            ("x-forwarded-for", "198.51.100.1"),
        ];
        assert_eq!(resolved("10.0.0.1", "10.0.0.0/8", &lines), "198.51.100.1");
    }

    #[test]
    fn an_unreadable_hop_leaves_the_proxy_that_wrote_it() {
        let chain = [("x-forwarded-for", "198.51.100.1, unknown, 10.0.0.2")];
        assert_eq!(resolved("10.0.0.1", "10.0.0.0/8", &chain), "10.0.0.2");
    }

    #[test]
    fn forwarded_is_read_without_x_forwarded_for() {
        let forwarded = [(
            "forwarded",
            "for=6.6.6.6, for=\"[2001:db8:cafe::17]:4711\";proto=https, for=10.0.0.2",
        )];
        assert_eq!(
            resolved("10.0.0.1", "10.0.0.0/8", &forwarded),
            "2001:db8:cafe::17"
        );
    }

    #[test]
    fn x_forwarded_for_is_read_before_forwarded() {
        let both = [
            ("forwarded", "for=6.6.6.6"),
            ("x-forwarded-for", "198.51.100.1"),
        ];
        assert_eq!(resolved("10.0.0.1", "10.0.0.0/8", &both), "198.51.100.1");
    }

    #[test]
    fn a_chain_of_trusted_hops_only_ends_at_its_first() {
        let chain = [("x-forwarded-for", "10.0.0.3, 10.0.0.2")];
        assert_eq!(resolved("10.0.0.1", "10.0.0.0/8", &chain), "10.0.0.3");
        assert_eq!(resolved("10.0.0.1", "10.0.0.0/8", &[]), "10.0.0.1");
    }

    #[test]
    fn trusted_proxies_parse_as_cidrs_or_addresses() {
        let parsed = TrustedProxies::parse(" 10.0.0.0/8, fd00::/8 ,192.0.2.7").expect("parses");
        assert!(parsed.trusts("10.1.2.3".parse().expect("ip")));
        assert!(parsed.trusts("::ffff:192.0.2.7".parse().expect("ip")));
        assert!(!parsed.trusts("192.0.2.8".parse().expect("ip")));
        assert!(TrustedProxies::parse("").expect("parses").is_empty());
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
    }
}
