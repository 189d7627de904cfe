//! Signed rating links: a token naming a chat or a ticket and an expiry,
//! with an HMAC made with a key derived from a service-wide secret, so every
//! node signs and checks the same links, and a visitor who follows the link
//! in an email can rate without any other credential.

use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::model::RatingTarget;
use crate::db::Db;
use crate::error::StoreError;
use crate::time::Timestamp;

/// How long a rating link stays valid: long enough for a visitor who reads
/// the resolution email late, and for the 7 days of changes after that.
pub const LINK_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// The server secret (table `server_secrets`) the links are signed with.
const LINK_SECRET: &str = "rating-links";

/// Signs and checks rating link tokens.
pub struct RatingLinks {
    key: [u8; 32],
}

/// Why a link token does not open a rating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadLink {
    /// Not a token we made, or altered.
    Invalid,
    /// A token we made, past its expiry.
    Expired,
}

impl RatingLinks {
    /// The signer with the service-wide rating link key (made on first use).
    pub async fn load(db: &Db) -> Result<RatingLinks, StoreError> {
        let secret = infra::server_secret::server_secret(db, LINK_SECRET).await?;
        Ok(RatingLinks::with_key(
            Sha256::digest(secret.as_bytes()).into(),
        ))
    }

    pub fn with_key(key: [u8; 32]) -> RatingLinks {
        RatingLinks { key }
    }

    fn mac(&self, payload: &str) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(payload.as_bytes());
        mac
    }

    /// A token for `target`, valid for [`LINK_TTL`] from `now`:
    /// `c.<id>.<expiry>.<signature>` (a chat) or `t.…` (a ticket).
    pub fn token(&self, target: RatingTarget, now: Timestamp) -> String {
        let expires = now.plus(LINK_TTL).0.timestamp();
        let payload = payload(target, expires);
        let sig = hex::encode(self.mac(&payload).finalize().into_bytes());
        format!("{payload}.{sig}")
    }

    /// The link a resolution email carries: the rating page with the token.
    pub fn url(&self, base: &str, target: RatingTarget, now: Timestamp) -> String {
        format!("{base}/widget/v1/rate?token={}", self.token(target, now))
    }

    /// What `token` lets its holder rate at `now`.
    pub fn open(&self, token: &str, now: Timestamp) -> Result<RatingTarget, BadLink> {
        let mut parts = token.trim().split('.');
        let (Some(kind), Some(id), Some(expires), Some(sig), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(BadLink::Invalid);
        };
        let id: Uuid = id.parse().map_err(|_| BadLink::Invalid)?;
        let expires: i64 = expires.parse().map_err(|_| BadLink::Invalid)?;
        let target = match kind {
            "c" => RatingTarget::Chat(id),
            "t" => RatingTarget::Ticket(id),
            _ => return Err(BadLink::Invalid),
        };
        let sig = hex::decode(sig).map_err(|_| BadLink::Invalid)?;
        // Constant-time comparison: a forged signature learns nothing from
        // how long the check took.
        self.mac(&payload(target, expires))
            .verify_slice(&sig)
            .map_err(|_| BadLink::Invalid)?;
        if now.0.timestamp() >= expires {
            return Err(BadLink::Expired);
        }
        Ok(target)
    }
}

fn payload(target: RatingTarget, expires: i64) -> String {
    let kind = match target {
        RatingTarget::Chat(_) => "c",
        RatingTarget::Ticket(_) => "t",
    };
    format!("{kind}.{}.{expires}", target.id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links() -> RatingLinks {
        RatingLinks::with_key([3; 32])
    }

    #[test]
    fn a_token_opens_its_target_until_it_expires() {
        let now = Timestamp::now();
        let target = RatingTarget::Ticket(Uuid::now_v7());
        let token = links().token(target, now);
        assert_eq!(links().open(&token, now), Ok(target));
        let later = now.plus(LINK_TTL + Duration::from_secs(1));
        assert_eq!(links().open(&token, later), Err(BadLink::Expired));
    }

    #[test]
    fn an_altered_token_is_invalid() {
        let now = Timestamp::now();
        let id = Uuid::now_v7();
        let token = links().token(RatingTarget::Ticket(id), now);
        let as_chat = token.replacen("t.", "c.", 1);
        assert_eq!(links().open(&as_chat, now), Err(BadLink::Invalid));
        let other = token.replace(&id.to_string(), &Uuid::now_v7().to_string());
        assert_eq!(links().open(&other, now), Err(BadLink::Invalid));
        assert_eq!(links().open("t.x.1.00", now), Err(BadLink::Invalid));
        let other_key = RatingLinks::with_key([4; 32]);
        assert_eq!(other_key.open(&token, now), Err(BadLink::Invalid));
    }
}
