//! Tokens for sockets opened by browsers, which cannot send `X-API-Key`:
//!
//! - visitor tokens (`vt_…`): one chat session, short-lived (refreshed by the
//!   widget while it is open), carrying the session's nonce (revocation) and
//!   the fingerprint of the identity secret that verified the visitor
//!   (rotation); returned when the session is created;
//! - link tokens (`vl_…`): the continue link of an agent-reply email, good
//!   only for trading once for a visitor token (`/widget/v1/tokens/exchange`);
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
const LINK_PREFIX: &str = "vl_";
const KIND_VISITOR: u8 = 1;
const KIND_SOCKET: u8 = 2;
const KIND_LINK: u8 = 3;
/// kind, session, company, mode, expiry, nonce, secret fingerprint.
const VISITOR_LEN: usize = 1 + 16 + 16 + 1 + 8 + 8 + 8;
/// A visitor payload and the link epoch.
const LINK_LEN: usize = VISITOR_LEN + 8;

/// The first 8 bytes of the SHA-256 of a widget identity secret: enough to
/// tell the secrets of one entity apart, and says nothing of the secret.
pub type SecretFingerprint = [u8; 8];

/// What a visitor token (or a link token) says of its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisitorClaims {
    pub tenant: Tenant,
    pub session_id: Uuid,
    /// Unix seconds.
    pub expires_at: i64,
    /// The session's `token_nonce` when the token was minted.
    pub nonce: i64,
    /// The identity secret that verified the visitor (None: anonymous).
    pub secret: Option<SecretFingerprint>,
}

/// What a link token says: the visitor claims and the session's link epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkClaims {
    pub visitor: VisitorClaims,
    pub epoch: i64,
}

/// The fingerprint of `secret`.
pub fn fingerprint(secret: &str) -> SecretFingerprint {
    use sha2::Digest;
    let digest = Sha256::digest(secret.as_bytes());
    let mut print = [0u8; 8];
    print.copy_from_slice(&digest[..8]);
    print
}
const MAC_LEN: usize = 16;
const FLAG_CHAT_WRITE: u8 = 1;
/// The id in a socket token is an agent's session, not a key: the two are
/// looked up in different tables, so the token must say which it names.
const FLAG_SESSION: u8 = 2;

/// Whose credentials a socket token stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Minter {
    /// An API key (a personal key included).
    Key(Uuid),
    /// An agent's session (the token was minted with the session cookie).
    Session(Uuid),
}

/// What a verified token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenGrant {
    /// One chat session; expiry, nonce and secret are the caller's to check.
    Visitor(VisitorClaims),
    /// A pass for agent sockets of `minter`'s credentials. `scopes` are the
    /// chat scopes they had when they minted the token; the handshake goes
    /// by their scopes at that moment instead.
    Socket {
        tenant: Tenant,
        minter: Minter,
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

    /// A visitor token with `claims`.
    pub fn visitor_token(&self, claims: &VisitorClaims) -> String {
        self.seal(VISITOR_PREFIX, visitor_payload(KIND_VISITOR, claims))
    }

    /// A link token with `claims`.
    pub fn link_token(&self, claims: &LinkClaims) -> String {
        let mut payload = visitor_payload(KIND_LINK, &claims.visitor);
        payload.extend_from_slice(&claims.epoch.to_be_bytes());
        self.seal(LINK_PREFIX, payload)
    }

    /// The claims of a genuine link token, or `None` (expiry, nonce and
    /// epoch are the caller's to check).
    pub fn verify_link(&self, token: &str) -> Option<LinkClaims> {
        let payload = self.open(token.strip_prefix(LINK_PREFIX)?)?;
        if payload.first() != Some(&KIND_LINK) || payload.len() != LINK_LEN {
            return None;
        }
        Some(LinkClaims {
            visitor: visitor_claims(&payload)?,
            epoch: i64_at(&payload, VISITOR_LEN)?,
        })
    }

    /// The payload of a genuine sealed token (without its prefix).
    fn open(&self, encoded: &str) -> Option<Vec<u8>> {
        let mut bytes = URL_SAFE_NO_PAD.decode(encoded).ok()?;
        if bytes.len() <= MAC_LEN {
            return None;
        }
        let tag = bytes.split_off(bytes.len() - MAC_LEN);
        self.mac(&bytes).verify_truncated_left(&tag).ok()?;
        Some(bytes)
    }

    /// A socket token of `minter` carrying the chat scopes of `scopes`,
    /// valid until `expires_at`.
    pub fn socket_token(
        &self,
        tenant: &Tenant,
        minter: Minter,
        scopes: &ScopeSet,
        expires_at: Timestamp,
    ) -> String {
        let (id, mut flags) = match minter {
            Minter::Key(id) => (id, 0),
            Minter::Session(id) => (id, FLAG_SESSION),
        };
        let mut payload = vec![KIND_SOCKET];
        payload.extend_from_slice(id.as_bytes());
        payload.extend_from_slice(tenant.company_id.as_bytes());
        payload.push(mode_byte(tenant.mode));
        if scopes.contains(Scope::ChatWrite) {
            flags |= FLAG_CHAT_WRITE;
        }
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
        let payload = self.open(encoded)?;
        let payload = payload.as_slice();
        match (payload.first()?, token.starts_with(VISITOR_PREFIX)) {
            (&KIND_VISITOR, true) if payload.len() == VISITOR_LEN => {
                Some(TokenGrant::Visitor(visitor_claims(payload)?))
            }
            (&KIND_SOCKET, false) if payload.len() == 43 => {
                let mut scopes = vec![Scope::ChatRead];
                if payload[34] & FLAG_CHAT_WRITE != 0 {
                    scopes.push(Scope::ChatWrite);
                }
                let expires = i64_at(payload, 35)?;
                let id = uuid_at(payload, 1)?;
                let minter = match payload[34] & FLAG_SESSION {
                    0 => Minter::Key(id),
                    _ => Minter::Session(id),
                };
                Some(TokenGrant::Socket {
                    minter,
                    tenant: Tenant::new(uuid_at(payload, 17)?, mode_from(payload[33])?),
                    scopes: ScopeSet::from_scopes(scopes),
                    expires_at: expires,
                })
            }
            _ => None,
        }
    }
}

fn visitor_payload(kind: u8, claims: &VisitorClaims) -> Vec<u8> {
    let mut payload = vec![kind];
    payload.extend_from_slice(claims.session_id.as_bytes());
    payload.extend_from_slice(claims.tenant.company_id.as_bytes());
    payload.push(mode_byte(claims.tenant.mode));
    payload.extend_from_slice(&claims.expires_at.to_be_bytes());
    payload.extend_from_slice(&claims.nonce.to_be_bytes());
    // All zero for an anonymous visitor: a SHA-256 prefix is never that in practice.
    payload.extend_from_slice(&claims.secret.unwrap_or_default());
    payload
}

fn visitor_claims(payload: &[u8]) -> Option<VisitorClaims> {
    let secret: SecretFingerprint = payload.get(50..58)?.try_into().ok()?;
    Some(VisitorClaims {
        session_id: uuid_at(payload, 1)?,
        tenant: Tenant::new(uuid_at(payload, 17)?, mode_from(*payload.get(33)?)?),
        expires_at: i64_at(payload, 34)?,
        nonce: i64_at(payload, 42)?,
        secret: (secret != [0; 8]).then_some(secret),
    })
}

fn i64_at(bytes: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_be_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
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
        Tenant::new(Uuid::now_v7(), Mode::Live)
    }

    fn claims(secret: Option<SecretFingerprint>) -> VisitorClaims {
        VisitorClaims {
            tenant: tenant(),
            session_id: Uuid::now_v7(),
            expires_at: 1_900_000_000,
            nonce: 7,
            secret,
        }
    }

    #[test]
    fn visitor_tokens_verify_only_with_their_key() {
        let key = TokenKey::new("secret-one");
        let claims = claims(Some(fingerprint("wis_x")));
        let token = key.visitor_token(&claims);
        assert!(token.starts_with("vt_"));
        assert_eq!(key.verify(&token), Some(TokenGrant::Visitor(claims)));
        assert_eq!(TokenKey::new("secret-two").verify(&token), None);
        // Any changed character breaks the signature.
        let mut tampered = token.clone().into_bytes();
        let last = tampered.len() - 3;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            key.verify(&String::from_utf8(tampered).expect("ascii")),
            None
        );
        // A visitor payload under the socket or link prefix is refused.
        assert_eq!(key.verify(&token.replacen("vt_", "st_", 1)), None);
        assert_eq!(key.verify_link(&token.replacen("vt_", "vl_", 1)), None);
    }

    #[test]
    fn an_anonymous_visitor_token_has_no_secret() {
        let key = TokenKey::new("secret");
        let claims = claims(None);
        let token = key.visitor_token(&claims);
        assert_eq!(key.verify(&token), Some(TokenGrant::Visitor(claims)));
    }

    #[test]
    fn link_tokens_are_not_visitor_tokens() {
        let key = TokenKey::new("secret");
        let link = LinkClaims {
            visitor: claims(None),
            epoch: 3,
        };
        let token = key.link_token(&link);
        assert!(token.starts_with("vl_"));
        assert_eq!(key.verify_link(&token), Some(link));
        assert_eq!(key.verify(&token), None);
        assert_eq!(key.verify(&token.replacen("vl_", "vt_", 1)), None);
    }

    #[test]
    fn socket_tokens_carry_chat_scopes_and_expiry() {
        let key = TokenKey::new("secret");
        let tenant = tenant();
        let key_id = Uuid::now_v7();
        let expires = Timestamp::now();
        let scopes = ScopeSet::from_scopes([Scope::ChatRead, Scope::TicketsRead]);
        let token = key.socket_token(&tenant, Minter::Key(key_id), &scopes, expires);
        match key.verify(&token) {
            Some(TokenGrant::Socket {
                tenant: t,
                minter,
                scopes,
                expires_at,
            }) => {
                assert_eq!((t, minter), (tenant, Minter::Key(key_id)));
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

    #[test]
    fn a_sessions_socket_token_names_the_session() {
        let key = TokenKey::new("secret");
        let tenant = tenant();
        let session = Uuid::now_v7();
        let scopes = ScopeSet::from_scopes([Scope::ChatRead, Scope::ChatWrite]);
        let token = key.socket_token(&tenant, Minter::Session(session), &scopes, Timestamp::now());
        match key.verify(&token) {
            Some(TokenGrant::Socket { minter, scopes, .. }) => {
                assert_eq!(minter, Minter::Session(session));
                assert!(scopes.contains(Scope::ChatWrite));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
