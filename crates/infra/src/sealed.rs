//! Secrets kept sealed at rest (a user's TOTP secret): AES-256-GCM with a
//! key derived from one of the shared server secrets (`server_secret`), so
//! a copy of the database without the `server_secrets` table, or a row
//! moved to another record, opens nothing.
//!
//! The stored form is `sealed1:` and the base64url (no padding) of the
//! random 12-byte nonce, then the ciphertext and its tag. The record's id
//! is the associated data: a sealed value copied to another row does not
//! open. A value without the prefix was written before sealing and is read
//! as it is (see [`SealingKey::open`]).

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::Digest;
use store::Db;
use uuid::Uuid;
use vocab::error::StoreError;

/// The prefix of a sealed value (never the start of a base32 secret, whose
/// alphabet has no lower case or colon).
const PREFIX: &str = "sealed1:";

/// What a stored value turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// Sealed, and opened.
    Sealed(String),
    /// Written before values were sealed: the value as stored (seal it
    /// when convenient).
    Plain(String),
}

impl Opened {
    pub fn into_inner(self) -> String {
        match self {
            Opened::Sealed(value) | Opened::Plain(value) => value,
        }
    }
}

/// A key that seals and opens values of one kind.
pub struct SealingKey {
    key: RandomizedNonceKey,
}

impl SealingKey {
    /// The key of the server secret `name`, created by the first node that
    /// asks (every node then reads the same one).
    pub async fn load(db: &Db, name: &str) -> Result<SealingKey, StoreError> {
        let secret = crate::server_secret::server_secret(db, name).await?;
        Ok(SealingKey::from_secret(&secret))
    }

    /// The key of a server secret's value: its SHA-256 under a label, so
    /// the bytes never serve as the key of anything else.
    pub fn from_secret(secret: &str) -> SealingKey {
        let mut digest = sha2::Sha256::new();
        digest.update(b"supportdesk sealed values v1\0");
        digest.update(secret.as_bytes());
        let bytes: [u8; 32] = digest.finalize().into();
        let key = RandomizedNonceKey::new(&AES_256_GCM, &bytes)
            // A 32-byte key is what AES-256-GCM takes; this cannot fail.
            .unwrap_or_else(|_| unreachable!("a 32-byte AES-256-GCM key"));
        SealingKey { key }
    }

    /// `value` sealed for record `owner`; None only if the cipher fails.
    pub fn seal(&self, owner: Uuid, value: &str) -> Option<String> {
        let mut buffer = value.as_bytes().to_vec();
        let nonce = self
            .key
            .seal_in_place_append_tag(Aad::from(owner.as_bytes()), &mut buffer)
            .ok()?;
        let mut stored = nonce.as_ref().to_vec();
        stored.extend_from_slice(&buffer);
        Some(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(stored)))
    }

    /// The value `stored` holds for record `owner`: opened if sealed (None
    /// when it does not open: altered, another record's, or another
    /// key's), as it is if it was stored before sealing.
    pub fn open(&self, owner: Uuid, stored: &str) -> Option<Opened> {
        let Some(sealed) = stored.strip_prefix(PREFIX) else {
            return Some(Opened::Plain(stored.to_string()));
        };
        let bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, rest) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buffer = rest.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(owner.as_bytes()), &mut buffer)
            .ok()?;
        String::from_utf8(plain.to_vec()).ok().map(Opened::Sealed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "JBSWY3DPEHPK3PXP";

    #[test]
    fn a_sealed_value_opens_for_its_record_only() {
        let key = SealingKey::from_secret("server secret");
        let owner = Uuid::now_v7();
        let sealed = key.seal(owner, SECRET).expect("sealed");
        assert!(sealed.starts_with(PREFIX));
        assert!(!sealed.contains(SECRET));
        assert_eq!(
            key.open(owner, &sealed),
            Some(Opened::Sealed(SECRET.to_string()))
        );
        assert_eq!(key.open(Uuid::now_v7(), &sealed), None);
    }

    #[test]
    fn each_seal_differs() {
        let key = SealingKey::from_secret("server secret");
        let owner = Uuid::now_v7();
        assert_ne!(key.seal(owner, SECRET), key.seal(owner, SECRET));
    }

    #[test]
    fn another_key_or_an_altered_value_opens_nothing() {
        let owner = Uuid::now_v7();
        let sealed = SealingKey::from_secret("one")
            .seal(owner, SECRET)
            .expect("sealed");
        assert_eq!(SealingKey::from_secret("two").open(owner, &sealed), None);
        let mut altered = sealed.clone();
        let last = altered.pop().expect("a character");
        altered.push(if last == 'A' { 'B' } else { 'A' });
        let key = SealingKey::from_secret("one");
        assert_eq!(key.open(owner, &altered), None);
        assert_eq!(key.open(owner, "sealed1:"), None);
    }

    #[test]
    fn a_value_stored_before_sealing_reads_as_it_is() {
        let key = SealingKey::from_secret("server secret");
        assert_eq!(
            key.open(Uuid::now_v7(), SECRET),
            Some(Opened::Plain(SECRET.to_string()))
        );
    }
}
