//! SSRF guard: webhook URLs must not reach loopback, private, link-local,
//! CGNAT, multicast, reserved or unspecified addresses (IPv4-mapped and
//! other IPv4-embedding IPv6 forms included). It runs twice: when a URL is
//! saved (literal IPs and the host's current DNS answer) and inside the HTTP
//! client's DNS resolver at every delivery, so a DNS answer that changes
//! after the check (rebinding) is caught too. `allow_private` lifts it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// How long saving a URL waits for its DNS answer.
const LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// Whether outbound calls (webhooks, identity providers) may reach a
/// private address (`SUPPORTDESK_WEBHOOK_ALLOW_PRIVATE`).
#[derive(Clone, Copy)]
pub struct AllowPrivate(pub bool);

/// Why a URL or an address is refused, and how a developer with a local
/// receiver lifts the guard.
pub const BLOCKED: &str = "must not point to a loopback, private, link-local or reserved address \
     (set SUPPORTDESK_WEBHOOK_ALLOW_PRIVATE=true to allow them, e.g. for a local receiver)";

/// True when `ip` is not a public unicast address.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_forbidden_v4(v4),
        IpAddr::V6(v6) => is_forbidden_v6(v6),
    }
}

fn is_forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_unspecified()
        || a == 0                                   // 0.0.0.0/8 "this network"
        || ip.is_loopback()                         // 127/8
        || ip.is_private()                          // 10/8, 172.16/12, 192.168/16
        || ip.is_link_local()                       // 169.254/16 (cloud metadata)
        || (a == 100 && (64..128).contains(&b))     // 100.64/10 CGNAT
        || (a == 192 && b == 0 && c == 0)           // 192.0.0/24 IETF assignments
        || (a == 192 && b == 0 && c == 2)           // 192.0.2/24 documentation
        || (a == 192 && b == 88 && c == 99)         // 192.88.99/24 6to4 relay
        || (a == 198 && (18..20).contains(&b))      // 198.18/15 benchmarking
        || (a == 198 && b == 51 && c == 100)        // 198.51.100/24 documentation
        || (a == 203 && b == 0 && c == 113)         // 203.0.113/24 documentation
        || ip.is_multicast()                        // 224/4
        || a >= 240 // 240/4 reserved, 255.255.255.255 broadcast
}

fn is_forbidden_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    // ::ffff:0:0/96 (IPv4-mapped) and ::ffff:0:0:0/96 (IPv4-translated) are
    // refused whole, whatever address they embed: neither is ever a
    // destination on the internet (IANA: not globally reachable), and a
    // client may reach the embedded IPv4 address through either.
    if s[..6] == [0, 0, 0, 0, 0, 0xffff] || s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return true;
    }
    let embedded_v4 = |hi: u16, lo: u16| Ipv4Addr::from(((hi as u32) << 16) | lo as u32);
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
        return ip.is_unspecified() || ip.is_loopback() || is_forbidden_v4(embedded_v4(s[6], s[7]));
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return is_forbidden_v4(embedded_v4(s[6], s[7])); // NAT64 64:ff9b::/96
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return true; // 64:ff9b:1::/48, NAT64 for local use only
    }
    if s[0] == 0x2002 {
        return is_forbidden_v4(embedded_v4(s[1], s[2])); // 6to4 2002::/16
    }
    (s[0] & 0xfe00) == 0xfc00                      // fc00::/7 unique local
        || (s[0] & 0xffc0) == 0xfe80               // fe80::/10 link-local
        || (s[0] & 0xffc0) == 0xfec0               // fec0::/10 site-local (deprecated)
        || (s[0] & 0xff00) == 0xff00               // ff00::/8 multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8)      // 2001:db8::/32 documentation
        || (s[0] == 0x2001 && s[1] == 0)           // 2001::/32 Teredo
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // 100::/64 discard
}

/// The literal IP of `url`'s host, if it has one (the URL parser already
/// normalises forms like `http://2130706433/` and `http://0x7f.1/`).
pub fn literal_ip(url: &Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.parse().ok()
}

/// The check made when a URL is saved: a literal IP must be public, and a
/// host name that resolves now must resolve only to public addresses. A name
/// that does not resolve yet (or not within 3 s) is accepted; delivery
/// checks it again.
pub async fn check_url(url: &Url, allow_private: bool) -> Result<(), &'static str> {
    if allow_private {
        return Ok(());
    }
    if let Some(ip) = literal_ip(url) {
        return if is_forbidden(ip) {
            Err(BLOCKED)
        } else {
            Ok(())
        };
    }
    let Some(host) = url.host_str() else {
        return Err("must have a host");
    };
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = tokio::net::lookup_host((host, port));
    match tokio::time::timeout(LOOKUP_TIMEOUT, lookup).await {
        Ok(Ok(addrs)) => {
            let addrs: Vec<SocketAddr> = addrs.collect();
            if addrs.iter().any(|a| is_forbidden(a.ip())) {
                Err(BLOCKED)
            } else {
                Ok(())
            }
        }
        Ok(Err(_)) | Err(_) => Ok(()),
    }
}

/// The HTTP client's resolver: the system resolver with forbidden addresses
/// removed; a name left with none fails to resolve.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    pub allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| allow_private || !is_forbidden(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(format!("{host} resolves only to blocked addresses").into());
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbidden(text: &str) -> bool {
        is_forbidden(text.parse().expect("ip"))
    }

    #[test]
    fn refuses_internal_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "64:ff9b:1::808:808",
            "64:ff9b:1:ffff::1",
            "::ffff:8.8.8.8",
            "::ffff:0:808:808",
            "::ffff:0:7f00:1",
            "2002:7f00:1::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
        ] {
            assert!(forbidden(ip), "{ip} should be refused");
        }
    }

    #[test]
    fn allows_public_addresses() {
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700::1111",
            "64:ff9b::808:808",
        ] {
            assert!(!forbidden(ip), "{ip} should be allowed");
        }
    }

    #[test]
    fn url_parser_normalises_odd_ipv4_forms() {
        for text in [
            "http://2130706433/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            let url = Url::parse(text).expect("url");
            let ip = literal_ip(&url).expect("literal ip");
            assert!(is_forbidden(ip), "{text} should be refused");
        }
    }
}
