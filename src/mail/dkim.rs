//! DKIM signing of a channel's replies (lettre's `dkim`): the key as a
//! channel stores it, checked when it is written so a key lettre cannot
//! read is refused then rather than found out at sending time.

use lettre::message::dkim::{
    DkimCanonicalization, DkimCanonicalizationType, DkimConfig, DkimSigningAlgorithm,
    DkimSigningKey,
};
use lettre::message::header::HeaderName;

/// The headers signed, when the message has them: those a reader sees and
/// those that thread it (a relay that rewrote them breaks the signature,
/// as it should).
const SIGNED: &[&str] = &[
    "From",
    "Reply-To",
    "To",
    "Cc",
    "Subject",
    "Date",
    "Message-ID",
    "In-Reply-To",
    "References",
];

/// The signing of `domain`'s mail by `selector` with `private_key`: an
/// RSA key as PKCS#1 PEM (`BEGIN RSA PRIVATE KEY`), else the base64 of a
/// 32-byte Ed25519 seed. Why it cannot be used, when it cannot.
pub fn config(selector: &str, domain: &str, private_key: &str) -> Result<Signing, String> {
    let private_key = private_key.trim();
    let algorithm = if private_key.starts_with("-----BEGIN RSA PRIVATE KEY-----") {
        DkimSigningAlgorithm::Rsa
    } else if private_key.starts_with("-----BEGIN") {
        return Err("an RSA key must be PKCS#1 PEM (BEGIN RSA PRIVATE KEY)".to_string());
    } else {
        DkimSigningAlgorithm::Ed25519
    };
    // Read once here so a bad key is reported; the config is built per
    // message (lettre's holds the key and is not `Clone`).
    DkimSigningKey::new(private_key, algorithm).map_err(|e| format!("unreadable key: {e}"))?;
    Ok(Signing {
        selector: selector.to_string(),
        domain: domain.to_string(),
        private_key: private_key.to_string(),
        algorithm,
    })
}

/// A usable DKIM key of one sending domain.
#[derive(Clone)]
pub struct Signing {
    selector: String,
    domain: String,
    private_key: String,
    algorithm: DkimSigningAlgorithm,
}

impl Signing {
    /// Signs `message` (all its headers set): relaxed canonicalization of
    /// headers and body, which survives relays re-folding them.
    pub fn sign(&self, message: &mut lettre::Message) {
        let Ok(key) = DkimSigningKey::new(&self.private_key, self.algorithm) else {
            // Checked in `config`; a key read once reads again.
            return;
        };
        let headers = SIGNED
            .iter()
            .filter(|name| message.headers().get_raw(name).is_some())
            .map(|name| HeaderName::new_from_ascii_str(name))
            .collect();
        let config = DkimConfig::new(
            self.selector.clone(),
            self.domain.clone(),
            key,
            headers,
            DkimCanonicalization {
                header: DkimCanonicalizationType::Relaxed,
                body: DkimCanonicalizationType::Relaxed,
            },
        );
        message.sign(&config);
    }
}

#[cfg(test)]
mod tests {
    use super::config;

    #[test]
    fn a_pkcs8_or_garbled_key_is_refused() {
        let pkcs8 = "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----";
        assert!(config("desk", "acme.example", pkcs8).is_err());
        assert!(config("desk", "acme.example", "not base64!").is_err());
    }

    #[test]
    fn an_ed25519_seed_is_read() {
        // The base64 of 32 bytes.
        let seed = "nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=";
        assert!(config("desk", "acme.example", seed).is_ok());
    }
}
