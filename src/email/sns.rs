//! Amazon SES mail through SNS: a notification is believed only when its
//! signature verifies against the certificate at `SigningCertURL`, and
//! that URL must be an `https://sns.<region>.amazonaws.com/` address (else
//! anyone could sign with a certificate of their own). Certificates are
//! kept once fetched (`Certificates`); tests put one there instead of
//! fetching it.

use std::sync::Arc;

use aws_lc_rs::signature::{
    RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey,
};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use dashmap::DashMap;
use serde::Deserialize;

/// One SNS message as posted to an HTTPS subscription.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SnsMessage {
    #[serde(rename = "Type")]
    pub kind: String,
    pub message_id: String,
    pub token: Option<String>,
    pub topic_arn: String,
    pub subject: Option<String>,
    pub message: String,
    pub timestamp: String,
    pub signature_version: String,
    pub signature: String,
    #[serde(rename = "SigningCertURL")]
    pub signing_cert_url: String,
    #[serde(rename = "SubscribeURL")]
    pub subscribe_url: Option<String>,
}

/// The text SNS signs: the message's fields, by name, in a fixed order.
pub fn string_to_sign(message: &SnsMessage) -> String {
    let mut text = String::new();
    let mut field = |name: &str, value: &str| {
        text.push_str(name);
        text.push('\n');
        text.push_str(value);
        text.push('\n');
    };
    field("Message", &message.message);
    field("MessageId", &message.message_id);
    if message.kind == "Notification" {
        if let Some(subject) = &message.subject {
            field("Subject", subject);
        }
    } else if let Some(url) = &message.subscribe_url {
        field("SubscribeURL", url);
    }
    field("Timestamp", &message.timestamp);
    if message.kind != "Notification"
        && let Some(token) = &message.token
    {
        field("Token", token);
    }
    field("TopicArn", &message.topic_arn);
    field("Type", &message.kind);
    text
}

/// Whether `url` is an SNS signing certificate's address: https, on
/// `sns.<region>.amazonaws.com` (or `.com.cn`), default port.
pub fn is_sns_certificate_url(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let host = url.host_str().unwrap_or_default();
    let region = host
        .strip_prefix("sns.")
        .and_then(|rest| {
            rest.strip_suffix(".amazonaws.com")
                .or_else(|| rest.strip_suffix(".amazonaws.com.cn"))
        })
        .unwrap_or_default();
    url.scheme() == "https"
        && url.port().is_none()
        && url.username().is_empty()
        && !region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && url.path().ends_with(".pem")
}

/// Whether `message`'s signature verifies under the certificate `pem`.
pub fn verify(message: &SnsMessage, pem: &str) -> bool {
    let Some(key) = rsa_public_key(pem) else {
        return false;
    };
    let Ok(signature) = STANDARD.decode(message.signature.trim()) else {
        return false;
    };
    let text = string_to_sign(message);
    match message.signature_version.as_str() {
        "1" => UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY, &key)
            .verify(text.as_bytes(), &signature)
            .is_ok(),
        "2" => UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &key)
            .verify(text.as_bytes(), &signature)
            .is_ok(),
        _ => false,
    }
}

/// One DER element: its tag, its content, and what follows it.
fn element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let len = rest[..count]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[count..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The RSA public key (PKCS#1 DER) of an X.509 certificate in PEM: the
/// subject public key of its `tbsCertificate`.
pub fn rsa_public_key(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN CERTIFICATE-----"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END CERTIFICATE-----"))
        .collect();
    let der = STANDARD.decode(body.trim()).ok()?;
    let (0x30, certificate, _) = element(&der)? else {
        return None;
    };
    let (0x30, tbs, _) = element(certificate)? else {
        return None;
    };
    // [0] version (optional), serial, signature, issuer, validity, subject.
    let mut rest = tbs;
    let (tag, _, after) = element(rest)?;
    if tag == 0xa0 {
        rest = after;
    }
    for _ in 0..5 {
        rest = element(rest)?.2;
    }
    let (0x30, spki, _) = element(rest)? else {
        return None;
    };
    let (0x30, _, after_algorithm) = element(spki)? else {
        return None;
    };
    let (0x03, bits, _) = element(after_algorithm)? else {
        return None;
    };
    let (&unused, key) = bits.split_first()?;
    (unused == 0).then(|| key.to_vec())
}

/// Confirms a subscription: a GET of its `SubscribeURL`, which must be
/// on an SNS host too.
pub async fn confirm(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    let host = parsed.host_str().unwrap_or_default();
    let sns_host = host.starts_with("sns.")
        && (host.ends_with(".amazonaws.com") || host.ends_with(".amazonaws.com.cn"));
    if parsed.scheme() != "https" || !sns_host || parsed.port().is_some() {
        return Err(format!("{url} is not an SNS address"));
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())?;
    let response = client.get(parsed).send().await.map_err(|e| e.to_string())?;
    match response.status().is_success() {
        true => Ok(()),
        false => Err(format!("SNS answered {}", response.status())),
    }
}

/// Signing certificates by URL: fetched once over HTTPS, then kept.
#[derive(Default)]
pub struct Certificates {
    known: DashMap<String, Arc<str>>,
}

impl Certificates {
    /// Keeps `pem` as the certificate at `url` (a test's own certificate,
    /// or one fetched).
    pub fn insert(&self, url: &str, pem: &str) {
        self.known.insert(url.to_string(), Arc::from(pem));
    }

    /// The certificate at `url`, which must be an SNS certificate's
    /// address; fetched when not yet known.
    pub async fn get(&self, url: &str) -> Option<Arc<str>> {
        if !is_sns_certificate_url(url) {
            return None;
        }
        if let Some(pem) = self.known.get(url) {
            return Some(pem.clone());
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .ok()?;
        let response = client.get(url).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let pem = response.text().await.ok()?;
        self.insert(url, &pem);
        Some(Arc::from(pem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_sns_hosts_sign() {
        assert!(is_sns_certificate_url(
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem"
        ));
        for bad in [
            "http://sns.us-east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com.evil.example/x.pem",
            "https://evil.example/sns.us-east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com:8443/x.pem",
            "https://s3.amazonaws.com/x.pem",
        ] {
            assert!(!is_sns_certificate_url(bad), "{bad}");
        }
    }
}
