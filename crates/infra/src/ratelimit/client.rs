//! Who a per-client limit counts: the client's address as the server
//! resolved it (`client_address`: the TCP peer, or what trusted proxies
//! forwarded), with every IPv6 address of one /64 counted as one client. A /64 is what one customer line or host is usually given, so
//! counting single IPv6 addresses would let one client pose as 2^64 others.

use std::net::{IpAddr, Ipv6Addr};

use axum::http::Extensions;

use crate::client_address::ClientAddress;

/// The address a limit is keyed by: an IPv4 address as it is (also when it
/// arrives IPv4-mapped, `::ffff:a.b.c.d`), an IPv6 address cut to its /64.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !(u128::from(u64::MAX));
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    }
}

/// The limit key of the client that sent a request, if the server
/// recorded it.
pub fn client_of(extensions: &Extensions) -> Option<IpAddr> {
    ClientAddress::of(extensions).map(client_key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> String {
        client_key(text.parse().expect("an address")).to_string()
    }

    #[test]
    fn ipv6_addresses_count_by_their_64_prefix() {
        assert_eq!(key("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::");
        assert_eq!(key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff::9"));
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
    }

    #[test]
    fn ipv4_addresses_count_alone_also_when_mapped() {
        assert_eq!(key("203.0.113.7"), "203.0.113.7");
        assert_ne!(key("203.0.113.7"), key("203.0.113.8"));
        assert_eq!(key("::ffff:203.0.113.7"), "203.0.113.7");
    }
}
