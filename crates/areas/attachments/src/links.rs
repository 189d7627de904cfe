//! Signed download links: `/files/<id>?exp=<unix seconds>&sig=<hex>`, an
//! HMAC of the id and the expiry with a key derived from the service-wide
//! secret, so every node signs and checks the same links without any
//! configuration, and a browser can open one without an API key.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::time::Timestamp;

/// How long a link stays valid.
pub const LINK_TTL_SECS: i64 = 15 * 60;

#[derive(Clone)]
pub struct Links {
    key: [u8; 32],
    /// The service's public base URL, without a trailing slash.
    base: std::sync::Arc<str>,
}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Links(..)")
    }
}

impl Links {
    pub fn new(key: [u8; 32], base: std::sync::Arc<str>) -> Links {
        Links { key, base }
    }

    fn mac(&self, id: Uuid, expires: i64) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(format!("{id}\0{expires}").as_bytes());
        mac
    }

    /// The MAC of an export's link: its own prefix, so a file's link never
    /// opens an export of the same id, nor the reverse.
    fn export_mac(&self, id: Uuid, expires: i64) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(format!("export\0{id}\0{expires}").as_bytes());
        mac
    }

    /// A link to the archive of export `id` valid for [`LINK_TTL_SECS`]
    /// from `now`.
    pub fn export_url(&self, id: Uuid, now: Timestamp) -> String {
        let expires = now.0.timestamp() + LINK_TTL_SECS;
        let sig = hex::encode(self.export_mac(id, expires).finalize().into_bytes());
        format!("{}/exports/{id}?exp={expires}&sig={sig}", self.base)
    }

    /// Whether `sig` signs export `id`'s link until `expires`, still ahead.
    pub fn verify_export(&self, id: Uuid, expires: i64, sig: &str, now: Timestamp) -> bool {
        let Ok(sig) = hex::decode(sig) else {
            return false;
        };
        self.export_mac(id, expires).verify_slice(&sig).is_ok() && now.0.timestamp() < expires
    }

    /// A link to `id` valid for [`LINK_TTL_SECS`] from `now`.
    pub fn url(&self, id: Uuid, now: Timestamp) -> String {
        let expires = now.0.timestamp() + LINK_TTL_SECS;
        let sig = hex::encode(self.mac(id, expires).finalize().into_bytes());
        format!("{}/files/{id}?exp={expires}&sig={sig}", self.base)
    }

    /// Whether `sig` signs `id` until `expires`, and that is still ahead.
    pub fn verify(&self, id: Uuid, expires: i64, sig: &str, now: Timestamp) -> bool {
        let Ok(sig) = hex::decode(sig) else {
            return false;
        };
        // Constant-time comparison: `verify_slice` does not leak how many
        // leading bytes of a forged signature were right.
        self.mac(id, expires).verify_slice(&sig).is_ok() && now.0.timestamp() < expires
    }
}

/// The links of one answer: signed by `links` as of `now`, so every
/// attachment in it carries a link valid for [`LINK_TTL_SECS`] from then.
/// The stores that read attachments take one, and an attachment is only
/// made with its link: none is ever written out without one.
#[derive(Debug, Clone)]
pub struct Signer {
    links: Links,
    now: Timestamp,
}

impl Signer {
    pub fn new(links: Links, now: Timestamp) -> Signer {
        Signer { links, now }
    }

    /// A fresh link to `id`.
    pub fn url(&self, id: Uuid) -> String {
        self.links.url(id, self.now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links() -> Links {
        Links::new([7; 32], "http://desk.test".into())
    }

    fn query(url: &str) -> (i64, String) {
        let (_, query) = url.split_once('?').expect("query");
        let mut exp = 0;
        let mut sig = String::new();
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some(("exp", value)) => exp = value.parse().expect("exp"),
                Some(("sig", value)) => sig = value.to_string(),
                _ => {}
            }
        }
        (exp, sig)
    }

    #[test]
    fn a_link_verifies_until_it_expires() {
        let id = Uuid::now_v7();
        let now = Timestamp::now();
        let (exp, sig) = query(&links().url(id, now));
        assert!(links().verify(id, exp, &sig, now));
        let later = now.plus(std::time::Duration::from_secs(LINK_TTL_SECS as u64 + 1));
        assert!(!links().verify(id, exp, &sig, later));
    }

    #[test]
    fn a_signer_signs_as_of_its_time() {
        let id = Uuid::now_v7();
        let now = Timestamp::now();
        let signer = Signer::new(links(), now);
        assert_eq!(signer.url(id), links().url(id, now));
    }

    #[test]
    fn an_altered_link_does_not_verify() {
        let id = Uuid::now_v7();
        let now = Timestamp::now();
        let (exp, sig) = query(&links().url(id, now));
        assert!(!links().verify(id, exp + 60, &sig, now));
        assert!(!links().verify(Uuid::now_v7(), exp, &sig, now));
        assert!(!links().verify(id, exp, "00", now));
    }
}
