//! Passwords: the rules a new one meets, and argon2id hashing.
//!
//! The hash is argon2id with the `argon2` crate's defaults (version 0x13,
//! 19 MiB of memory, 2 passes, 1 lane: the OWASP minimum for argon2id),
//! kept as a PHC string, so parameters raised later still verify the
//! hashes made before. Hashing takes tens of milliseconds of one core on
//! purpose: callers run it on the blocking pool.

use std::sync::OnceLock;

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash};

/// Shorter passwords are refused (NIST SP 800-63B asks for at least 8;
/// support desks hold customers' data, so a little more).
pub const MIN_CHARS: usize = 10;
/// Longer ones are refused: argon2 reads the whole input, and a megabyte
/// password would cost every sign-in attempt that much.
pub const MAX_BYTES: usize = 256;

/// A password that meets the rules, as typed.
#[derive(Clone)]
pub struct NewPassword(String);

impl std::fmt::Debug for NewPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NewPassword(…)")
    }
}

impl NewPassword {
    /// The password, or why it is refused (a field message).
    pub fn parse(raw: &str) -> Result<NewPassword, &'static str> {
        if raw.chars().count() < MIN_CHARS {
            return Err("must be at least 10 characters");
        }
        if raw.len() > MAX_BYTES {
            return Err("must be at most 256 bytes");
        }
        if raw.trim().is_empty() {
            return Err("must not be blank");
        }
        Ok(NewPassword(raw.to_owned()))
    }

    /// The PHC string to store (argon2id, a fresh salt). CPU-bound: run it
    /// on the blocking pool.
    pub fn hash(&self) -> Result<String, argon2::password_hash::Error> {
        Ok(Argon2::default()
            .hash_password(self.0.as_bytes())?
            .to_string())
    }
}

/// Whether `password` matches the PHC string `stored`. A hash that does not
/// parse matches nothing. CPU-bound: run it on the blocking pool.
pub fn verify(stored: &str, password: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    if password.len() > MAX_BYTES {
        // Checked after parsing so a long guess costs about what a short
        // one does; no stored password is this long.
        return false;
    }
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
}

/// A hash no password is known for, made once: sign-in verifies against it
/// when the email matches no account, so an unknown email costs the same
/// time as a wrong password.
pub fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| {
        let secret = infra::key::random_base62(32);
        NewPassword(secret)
            .hash()
            .unwrap_or_else(|_| String::from("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let password = NewPassword::parse("correct horse battery").expect("valid");
        let hash = password.hash().expect("hash");
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(verify(&hash, "correct horse battery"));
        assert!(!verify(&hash, "correct horse battery!"));
    }

    #[test]
    fn short_and_huge_passwords_are_refused() {
        assert!(NewPassword::parse("short").is_err());
        assert!(NewPassword::parse(&"x".repeat(MAX_BYTES + 1)).is_err());
        assert!(NewPassword::parse("          ").is_err());
    }

    #[test]
    fn a_malformed_hash_matches_nothing() {
        assert!(!verify("not a hash", "anything at all"));
    }

    #[test]
    fn the_decoy_hash_is_a_real_argon2id_hash() {
        assert!(decoy_hash().starts_with("$argon2id$"));
        assert!(!verify(decoy_hash(), "guess guess guess"));
    }
}
