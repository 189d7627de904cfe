//! The API key format: `svc_test_` or `svc_live_`, 32 random base62
//! characters, then a 6-character base62 CRC32 of everything before it, so a
//! typo is caught before any lookup and secret scanners can recognise keys.
//! Only the SHA-256 of the whole key is stored.

use rand::RngExt;
use sha2::{Digest, Sha256};

use vocab::tenant::Mode;

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LEN: usize = 32;
const CHECKSUM_LEN: usize = 6;
/// How many leading characters are kept for display (`svc_test_abc`).
pub const DISPLAY_PREFIX_LEN: usize = 12;

fn prefix(mode: Mode) -> &'static str {
    match mode {
        Mode::Test => "svc_test_",
        Mode::Live => "svc_live_",
    }
}

/// Random base62 text of `len` characters (also used for other secrets).
pub fn random_base62(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| BASE62[rng.random_range(0..BASE62.len())] as char)
        .collect()
}

/// The checksum's characters (base62, so ASCII), on the stack: `parse` runs
/// on every request.
fn checksum(body: &str) -> [u8; CHECKSUM_LEN] {
    let mut value = crc32fast::hash(body.as_bytes()) as u64;
    let mut out = [b'0'; CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(value % 62) as usize];
        value /= 62;
    }
    out
}

/// A new key for `mode`.
pub fn generate(mode: Mode) -> String {
    let mut key = format!("{}{}", prefix(mode), random_base62(RANDOM_LEN));
    let sum = checksum(&key);
    key.extend(sum.iter().map(|&b| char::from(b)));
    key
}

/// The mode of a well-formed key whose checksum matches, else `None`.
pub fn parse(key: &str) -> Option<Mode> {
    let mode = if key.starts_with("svc_test_") {
        Mode::Test
    } else if key.starts_with("svc_live_") {
        Mode::Live
    } else {
        return None;
    };
    let expected_len = prefix(mode).len() + RANDOM_LEN + CHECKSUM_LEN;
    if key.len() != expected_len || !key.is_ascii() {
        return None;
    }
    let (body, sum) = key.split_at(expected_len - CHECKSUM_LEN);
    let random = &body[prefix(mode).len()..];
    if !random.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    // Not a secret comparison: the checksum is derived from public text.
    (checksum(body) == sum.as_bytes()).then_some(mode)
}

/// The SHA-256 of the whole key: what the key cache is keyed by.
pub fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// What is stored and looked up: hex SHA-256 of the whole key.
pub fn hash(key: &str) -> String {
    hex::encode(digest(key))
}

pub fn display_prefix(key: &str) -> String {
    key.chars().take(DISPLAY_PREFIX_LEN).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_and_typos_do_not() {
        let key = generate(Mode::Live);
        assert!(key.starts_with("svc_live_"));
        assert_eq!(key.len(), 9 + 32 + 6);
        assert_eq!(parse(&key), Some(Mode::Live));
        assert_eq!(parse(&generate(Mode::Test)), Some(Mode::Test));

        let mut typo = key.clone().into_bytes();
        typo[12] = if typo[12] == b'a' { b'b' } else { b'a' };
        let typo = String::from_utf8(typo).expect("ascii");
        assert_eq!(parse(&typo), None);
        assert_eq!(parse("svc_live_short"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn hash_is_stable_hex() {
        assert_eq!(hash("abc").len(), 64);
        assert_eq!(hash("abc"), hash("abc"));
    }
}
