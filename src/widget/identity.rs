//! Visitor identity tokens: a JWT that the customer's own backend signs
//! with the entity's widget identity secret (HS256 only), passed by the
//! host page to the widget. HMAC by hand rather than a JWT crate: one
//! algorithm is all we accept, so a library's algorithm negotiation (the
//! source of `alg: none` and key-confusion bugs) is exactly what we avoid.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngExt;
use serde::Deserialize;
use sha2::Sha256;

use crate::time::Timestamp;
use crate::validate::{NAME_MAX, optional_email};

pub const SECRET_PREFIX: &str = "wis_";

/// Longest a token may live: a leaked token must not open a visitor's
/// history for long.
pub const MAX_LIFETIME_SECS: i64 = 24 * 3600;
/// Clock difference tolerated between the customer's backend and us.
pub const LEEWAY_SECS: i64 = 60;
/// Longest `sub` (the customer's own user id).
pub const SUB_MAX: usize = 255;
/// A token is short; a longer one is refused before any work.
const TOKEN_MAX: usize = 8 * 1024;

/// A new random secret, shown to the caller once.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    format!("{SECRET_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// Who the customer's backend says the visitor is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub external_id: String,
    pub email: Option<String>,
    pub name: Option<String>,
    /// The token's `iat` (Unix seconds).
    pub issued_at: i64,
}

/// Why a token was refused; the text goes to the client as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    Malformed,
    Algorithm,
    Signature,
    Expired,
    TooLong,
    Claims(&'static str),
}

impl Refused {
    pub fn message(self) -> &'static str {
        match self {
            Refused::Malformed => "Identity token is not a well-formed JWT",
            Refused::Algorithm => "Identity token must be signed with HS256",
            Refused::Signature => "Identity token signature is invalid",
            Refused::Expired => "Identity token has expired",
            Refused::TooLong => "Identity token must expire within 24 hours of being issued",
            Refused::Claims(message) => message,
        }
    }
}

#[derive(Deserialize)]
struct Header {
    alg: Option<String>,
}

#[derive(Deserialize)]
struct Claims {
    sub: Option<serde_json::Value>,
    email: Option<serde_json::Value>,
    name: Option<serde_json::Value>,
    exp: Option<serde_json::Value>,
    iat: Option<serde_json::Value>,
}

/// Checks `token` against each secret in `secrets` (the current one, and
/// the previous one during a rotation's grace period) at time `now`.
pub fn verify(token: &str, secrets: &[&str], now: Timestamp) -> Result<Identity, Refused> {
    verify_which(token, secrets, now).map(|(identity, _)| identity)
}

/// `verify`, with the secret of `secrets` that signed the token.
pub fn verify_which<'s>(
    token: &str,
    secrets: &[&'s str],
    now: Timestamp,
) -> Result<(Identity, &'s str), Refused> {
    if token.len() > TOKEN_MAX {
        return Err(Refused::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refused::Malformed);
    };
    let header: Header = decode_json(header)?;
    if header.alg.as_deref() != Some("HS256") {
        return Err(Refused::Algorithm);
    }
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|_| Refused::Malformed)?;
    let signed = &token[..header_and_payload_len(token)];
    let Some(secret) = secrets
        .iter()
        .find(|secret| signed_by(secret, signed, &signature))
    else {
        return Err(Refused::Signature);
    };
    let claims: Claims = decode_json(payload)?;
    Ok((check_claims(claims, now.0.timestamp())?, secret))
}

fn header_and_payload_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(0)
}

fn decode_json<T: serde::de::DeserializeOwned>(part: &str) -> Result<T, Refused> {
    let bytes = URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| Refused::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| Refused::Malformed)
}

/// Constant-time comparison (`verify_slice`).
fn signed_by(secret: &str, signed: &str, signature: &[u8]) -> bool {
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()) else {
        return false;
    };
    mac.update(signed.as_bytes());
    mac.verify_slice(signature).is_ok()
}

fn check_claims(claims: Claims, now: i64) -> Result<Identity, Refused> {
    let sub = match claims.sub {
        Some(serde_json::Value::String(sub)) if !sub.trim().is_empty() => sub.trim().to_string(),
        _ => {
            return Err(Refused::Claims(
                "Identity token needs a non-empty sub claim",
            ));
        }
    };
    if sub.chars().count() > SUB_MAX {
        return Err(Refused::Claims(
            "Identity token sub is longer than 255 characters",
        ));
    }
    // Stored as text, which cannot hold NUL on Postgres.
    if sub.contains('\0') {
        return Err(Refused::Claims(
            "Identity token sub must not contain NUL characters",
        ));
    }
    let exp = seconds(claims.exp).ok_or(Refused::Claims("Identity token needs an exp claim"))?;
    let iat = seconds(claims.iat).ok_or(Refused::Claims("Identity token needs an iat claim"))?;
    if exp <= now - LEEWAY_SECS {
        return Err(Refused::Expired);
    }
    if iat > now + LEEWAY_SECS {
        return Err(Refused::Claims("Identity token iat is in the future"));
    }
    // Both bounds: a token issued long ago with a far expiry is as
    // dangerous as a fresh one that never expires. Checked: the claims are
    // the client's numbers, and an absurd `iat` would overflow.
    let lifetime = exp.checked_sub(iat);
    if lifetime.is_none_or(|lifetime| lifetime > MAX_LIFETIME_SECS)
        || exp > now + MAX_LIFETIME_SECS + LEEWAY_SECS
    {
        return Err(Refused::TooLong);
    }
    let email = match claims.email {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(email)) => optional_email("email", Some(&email))
            .map_err(|_| Refused::Claims("Identity token email is not a valid email address"))?,
        Some(_) => return Err(Refused::Claims("Identity token email must be a string")),
    };
    let name = match claims.name {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(name)) => {
            let name = name.trim();
            if name.chars().count() > NAME_MAX {
                return Err(Refused::Claims(
                    "Identity token name is longer than 255 characters",
                ));
            }
            if name.contains('\0') {
                return Err(Refused::Claims(
                    "Identity token name must not contain NUL characters",
                ));
            }
            (!name.is_empty()).then(|| name.to_string())
        }
        Some(_) => return Err(Refused::Claims("Identity token name must be a string")),
    };
    Ok(Identity {
        external_id: sub,
        email,
        name,
        issued_at: iat,
    })
}

/// A NumericDate: whole seconds (a fraction is cut, as RFC 7519 allows).
fn seconds(value: Option<serde_json::Value>) -> Option<i64> {
    let value = value?;
    value
        .as_i64()
        .or_else(|| value.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
}

/// Signs `claims` as the customer's backend would: for tests and the demo.
pub fn sign(claims: &serde_json::Value, secret: &str) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signed = format!("{header}.{payload}");
    let signature = match <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()) {
        Ok(mut mac) => {
            mac.update(signed.as_bytes());
            mac.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    };
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SECRET: &str = "wis_test_secret";

    fn now() -> Timestamp {
        Timestamp::now()
    }

    fn claims(extra: serde_json::Value) -> serde_json::Value {
        let t = now().0.timestamp();
        let mut base = json!({"sub": "u-1", "email": "a@example.com", "name": "Ann",
            "iat": t, "exp": t + 600});
        if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                base.insert(k.clone(), v.clone());
            }
        }
        base
    }

    #[test]
    fn a_valid_token_gives_its_claims() {
        let token = sign(&claims(json!({})), SECRET);
        let identity = verify(&token, &[SECRET], now()).expect("valid");
        assert_eq!(identity.external_id, "u-1");
        assert_eq!(identity.email.as_deref(), Some("a@example.com"));
        assert_eq!(identity.name.as_deref(), Some("Ann"));
    }

    #[test]
    fn alg_none_is_refused_even_without_a_signature() {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let payload = URL_SAFE_NO_PAD.encode(claims(json!({})).to_string());
        let token = format!("{header}.{payload}.");
        assert_eq!(verify(&token, &[SECRET], now()), Err(Refused::Algorithm));
    }

    #[test]
    fn a_token_signed_with_another_secret_is_refused() {
        let token = sign(&claims(json!({})), "wis_other");
        assert_eq!(verify(&token, &[SECRET], now()), Err(Refused::Signature));
    }

    #[test]
    fn a_nul_in_the_sub_or_the_name_is_refused() {
        for extra in [json!({"sub": "u\u{0}1"}), json!({"name": "A\u{0}nn"})] {
            let token = sign(&claims(extra), SECRET);
            assert!(matches!(
                verify(&token, &[SECRET], now()),
                Err(Refused::Claims(_))
            ));
        }
    }

    #[test]
    fn expiry_lifetime_and_sub_are_enforced() {
        let t = now().0.timestamp();
        let cases = [
            (json!({"exp": t - 3600, "iat": t - 7200}), Refused::Expired),
            (json!({"exp": t + 2 * 86400}), Refused::TooLong),
            (json!({"iat": t - 86400, "exp": t + 3600}), Refused::TooLong),
            (json!({"iat": i64::MIN, "exp": t + 600}), Refused::TooLong),
            (json!({"iat": -1e300, "exp": t + 600}), Refused::TooLong),
        ];
        for (extra, refused) in cases {
            let token = sign(&claims(extra), SECRET);
            assert_eq!(verify(&token, &[SECRET], now()), Err(refused));
        }
        let token = sign(&claims(json!({"sub": ""})), SECRET);
        assert!(matches!(
            verify(&token, &[SECRET], now()),
            Err(Refused::Claims(_))
        ));
    }
}
