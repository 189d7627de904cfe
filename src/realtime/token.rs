//! Tokens for sockets opened by browsers, which cannot send `X-API-Key`:
//!
//! - visitor tokens (`vt_…`): one chat session, no expiry (the email link
//!   that continues a chat carries one), returned when the session is created;
//! - socket tokens (`st_…`): an agent console's short-lived pass, minted by
//!   `POST /api/v1/ws/tokens` from an API key with `chat:read`.
//!
//! Both are `prefix + base64url(payload ‖ HMAC-SHA256(payload)[..16])`, keyed
//! by the server secret `socket-tokens` (table `server_secrets`), so every
//! node verifies what any node signed without a lookup.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::auth::{Mode, Scope, ScopeSet, Tenant};
use crate::time::Timestamp;

const VISITOR_PREFIX: &str = "vt_";
const SOCKET_PREFIX: &str = "st_";
const KIND_VISITOR: u8 = 1;
const KIND_SOCKET: u8 = 2;
const MAC_LEN: usize = 16;
const FLAG_CHAT_WRITE: u8 = 1;

/// What a verified token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenGrant {
    /// One chat session of `tenant`.
    Visitor { tenant: Tenant, session_id: Uuid },
    /// A pass for agent sockets of key `key_id`. `scopes` are the chat
    /// scopes the key had when it minted the token; the handshake goes by
    /// the key's scopes at that moment instead.
    Socket {
        tenant: Tenant,
        key_id: Uuid,
        scopes: ScopeSet,
        expires_at: i64,
    },
}

/// The signing key, derived from the server secret.
pub struct TokenKey {
    key: Vec<u8>,
}

impl TokenKey {
    pub fn new(secret: &str) -> Self {
        TokenKey {
            key: secret.as_bytes().to_vec(),
        }
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(payload);
        mac
    }

    fn seal(&self, prefix: &str, payload: Vec<u8>) -> String {
        let tag = self.mac(&payload).finalize().into_bytes();
        let mut bytes = payload;
        bytes.extend_from_slice(&tag[..MAC_LEN]);
        format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The visitor token of session `session_id` of `tenant`.
    pub fn visitor_token(&self, tenant: &Tenant, session_id: Uuid) -> String {
        let mut payload = vec![KIND_VISITOR];
        payload.extend_from_slice(session_id.as_bytes());
        payload.extend_from_slice(tenant.company_id.as_bytes());
        payload.push(mode_byte(tenant.mode));
        self.seal(VISITOR_PREFIX, payload)
    }

    /// A socket token carrying the chat scopes of `scopes`, valid until `expires_at`.
    pub fn socket_token(
        &self,
        tenant: &Tenant,
        key_id: Uuid,
        scopes: &ScopeSet,
        expires_at: Timestamp,
    ) -> String {
        let mut payload = vec![KIND_SOCKET];
        payload.extend_from_slice(key_id.as_bytes());
        payload.extend_from_slice(tenant.company_id.as_bytes());
        payload.push(mode_byte(tenant.mode));
        let flags = if scopes.contains(Scope::ChatWrite) {
            FLAG_CHAT_WRITE
        } else {
            0
        };
        payload.push(flags);
        payload.extend_from_slice(&expires_at.0.timestamp().to_be_bytes());
        self.seal(SOCKET_PREFIX, payload)
    }

    /// The grant of a genuine token (any kind), or `None`. Expiry is the
    /// caller's to check (`TokenGrant::Socket::expires_at`).
    pub fn verify(&self, token: &str) -> Option<TokenGrant> {
        let encoded = token
            .strip_prefix(VISITOR_PREFIX)
            .or_else(|| token.strip_prefix(SOCKET_PREFIX))?;
        let bytes = URL_SAFE_NO_PAD.decode(encoded).ok()?;
        if bytes.len() <= MAC_LEN {
            return None;
        }
        let (payload, tag) = bytes.split_at(bytes.len() - MAC_LEN);
        self.mac(payload).verify_truncated_left(tag).ok()?;
        match (payload.first()?, token.starts_with(VISITOR_PREFIX)) {
            (&KIND_VISITOR, true) if payload.len() == 34 => Some(TokenGrant::Visitor {
                session_id: uuid_at(payload, 1)?,
                tenant: Tenant {
                    company_id: uuid_at(payload, 17)?,
                    mode: mode_from(payload[33])?,
                },
            }),
            (&KIND_SOCKET, false) if payload.len() == 43 => {
                let mut scopes = vec![Scope::ChatRead];
                if payload[34] & FLAG_CHAT_WRITE != 0 {
                    scopes.push(Scope::ChatWrite);
                }
                let expires = i64::from_be_bytes(payload[35..43].try_into().ok()?);
                Some(TokenGrant::Socket {
                    key_id: uuid_at(payload, 1)?,
                    tenant: Tenant {
                        company_id: uuid_at(payload, 17)?,
                        mode: mode_from(payload[33])?,
                    },
                    scopes: ScopeSet::from_scopes(scopes),
                    expires_at: expires,
                })
            }
            _ => None,
        }
    }
}

fn uuid_at(bytes: &[u8], at: usize) -> Option<Uuid> {
    Uuid::from_slice(bytes.get(at..at + 16)?).ok()
}

fn mode_byte(mode: Mode) -> u8 {
    match mode {
        Mode::Test => 0,
        Mode::Live => 1,
    }
}

fn mode_from(byte: u8) -> Option<Mode> {
    match byte {
        0 => Some(Mode::Test),
        1 => Some(Mode::Live),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant() -> Tenant {
        Tenant {
            company_id: Uuid::now_v7(),
            mode: Mode::Live,
        }
    }

    #[test]
    fn visitor_tokens_verify_only_with_their_key() {
        let key = TokenKey::new("secret-one");
        let tenant = tenant();
        let session = Uuid::now_v7();
        let token = key.visitor_token(&tenant, session);
        assert!(token.starts_with("vt_"));
        assert_eq!(
            key.verify(&token),
            Some(TokenGrant::Visitor {
                tenant,
                session_id: session
            })
        );
        assert_eq!(TokenKey::new("secret-two").verify(&token), None);
        // Any changed character breaks the signature.
        let mut tampered = token.clone().into_bytes();
        let last = tampered.len() - 3;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            key.verify(&String::from_utf8(tampered).expect("ascii")),
            None
        );
        // A visitor payload under the socket prefix is refused.
        assert_eq!(key.verify(&token.replacen("vt_", "st_", 1)), None);
    }

    #[test]
    fn socket_tokens_carry_chat_scopes_and_expiry() {
        let key = TokenKey::new("secret");
        let tenant = tenant();
        let key_id = Uuid::now_v7();
        let expires = Timestamp::now();
        let scopes = ScopeSet::from_scopes([Scope::ChatRead, Scope::TicketsRead]);
        let token = key.socket_token(&tenant, key_id, &scopes, expires);
        match key.verify(&token) {
            Some(TokenGrant::Socket {
                tenant: t,
                key_id: k,
                scopes,
                expires_at,
            }) => {
                assert_eq!((t, k), (tenant, key_id));
                assert!(scopes.contains(Scope::ChatRead));
                assert!(!scopes.contains(Scope::ChatWrite));
                assert!(!scopes.contains(Scope::TicketsRead));
                assert_eq!(expires_at, expires.0.timestamp());
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(key.verify("st_garbage"), None);
        assert_eq!(key.verify("nope"), None);
    }
}
