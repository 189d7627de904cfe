//! Webhook secrets and signatures.
//!
//! A secret is `whsec_` + base64 (standard alphabet) of 24 random bytes.
//! - `X-Service-Signature: sha256=<hex>`: HMAC-SHA256 of the exact body
//!   bytes, keyed with the whole secret string (`whsec_…`) as UTF-8 bytes,
//!   the way a receiver following docs/api.md ("Webhooks") computes it.
//! - `webhook-signature: v1,<base64>` (Standard Webhooks): HMAC-SHA256 of
//!   `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded
//!   part after `whsec_`, which is what the Standard Webhooks libraries do
//!   with a `whsec_` secret.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngExt;
use sha2::Sha256;

pub const SECRET_PREFIX: &str = "whsec_";

/// A new random secret, shown to the caller once.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 24];
    rand::rng().fill(&mut bytes);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    // HMAC accepts keys of any length: this cannot fail.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().to_vec()
}

/// `sha256=<hex HMAC-SHA256 of body keyed with the secret string>`.
pub fn service_signature(secret: &str, body: &[u8]) -> String {
    format!(
        "sha256={}",
        hex::encode(hmac_sha256(secret.as_bytes(), &[body]))
    )
}

/// The key Standard Webhooks verifiers derive from a `whsec_` secret.
pub fn standard_key(secret: &str) -> Vec<u8> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    STANDARD
        .decode(encoded)
        .unwrap_or_else(|_| encoded.as_bytes().to_vec())
}

/// One `v1,<base64>` Standard Webhooks signature.
pub fn standard_signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let ts = timestamp.to_string();
    let mac = hmac_sha256(
        &standard_key(secret),
        &[id.as_bytes(), b".", ts.as_bytes(), b".", body],
    );
    format!("v1,{}", STANDARD.encode(mac))
}

/// The signature headers of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signatures {
    pub service: String,
    /// Space-separated `v1,…` values: the current secret first, then the
    /// previous one while its rotation grace period lasts.
    pub standard: String,
}

/// Signs `body` for delivery `id` at unix time `timestamp`.
pub fn sign(
    secret: &str,
    previous: Option<&str>,
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> Signatures {
    let mut standard = standard_signature(secret, id, timestamp, body);
    if let Some(old) = previous {
        standard.push(' ');
        standard.push_str(&standard_signature(old, id, timestamp, body));
    }
    Signatures {
        service: service_signature(secret, body),
        standard,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_prefixed_and_decode() {
        let secret = new_secret();
        assert!(secret.starts_with("whsec_"));
        assert_eq!(standard_key(&secret).len(), 24);
        assert_ne!(secret, new_secret());
    }

    #[test]
    fn matches_the_standard_webhooks_reference_vector() {
        // From the Standard Webhooks reference implementations' tests.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            standard_signature(secret, id, 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn rotation_carries_both_signatures() {
        let s = sign("whsec_AAAA", Some("whsec_BBBB"), "d1", 1, b"{}");
        let parts: Vec<&str> = s.standard.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], standard_signature("whsec_AAAA", "d1", 1, b"{}"));
        assert_eq!(parts[1], standard_signature("whsec_BBBB", "d1", 1, b"{}"));
        assert!(s.service.starts_with("sha256="));
        assert_eq!(s.service.len(), 7 + 64);
    }
}
