//! Sealing and opening cursors.
//!
//! A cursor is `base64url(payload) . base64url(HMAC-SHA256)`. The payload is
//! the JSON sort key (a short tuple of typed values: `created_at, id` today;
//! a search rank can lead it later without a new format). The MAC covers a
//! version tag, the list's identity (its name, the tenant, and a canonical
//! text of its filters and parent record) and the payload; the identity is
//! not in the cursor, the server recomputes it from the request, so a
//! cursor replayed on another list or filter set fails like a forged one.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::error::{ApiError, FieldError};
use crate::time::Timestamp;
use crate::validate::problem;

/// Bumped if the payload's meaning changes: older cursors then fail to open
/// (a 400; the client starts again from the first page).
const VERSION: &[u8] = b"cursor-v1";

/// The query parameter a bad cursor is reported on.
const FIELD: &str = "after";

/// One value of a sort key, tagged with its type so a key round-trips
/// exactly (timestamps to the millisecond, ranks as floats).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SortValue {
    #[serde(rename = "t")]
    Time(Timestamp),
    #[serde(rename = "u")]
    Id(Uuid),
    #[serde(rename = "f")]
    Real(f64),
    #[serde(rename = "i")]
    Int(i64),
}

/// A record's place in its list's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SortKey(pub Vec<SortValue>);

/// The position of lists ordered by `(created_at, id)`, newest or oldest
/// first: every list today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct After {
    pub created_at: Timestamp,
    pub id: Uuid,
}

impl After {
    pub fn key(created_at: Timestamp, id: Uuid) -> SortKey {
        SortKey(vec![SortValue::Time(created_at), SortValue::Id(id)])
    }

    fn from_key(key: &SortKey) -> Option<After> {
        match key.0.as_slice() {
            [SortValue::Time(created_at), SortValue::Id(id)] => Some(After {
                created_at: *created_at,
                id: *id,
            }),
            _ => None,
        }
    }
}

/// What a cursor is valid for: one list of one tenant with one set of
/// filters (and, for nested lists, one parent record).
#[derive(Debug, Clone)]
pub struct ListId {
    text: String,
}

impl ListId {
    /// `filters` is any canonical text of the filters and parent record;
    /// the filter structs' `Debug` output serves (the page size and offset
    /// stay out: a client may change the page size between pages).
    pub fn new(name: &str, tenant: &Tenant, filters: &impl std::fmt::Debug) -> ListId {
        ListId {
            text: format!(
                "{name}\0{}\0{}\0{filters:?}",
                tenant.company_id,
                tenant.mode.as_str()
            ),
        }
    }
}

/// The service-wide cursor key (the same on every node, see `secret`).
#[derive(Clone)]
pub struct Cursors {
    key: [u8; 32],
}

impl std::fmt::Debug for Cursors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cursors(..)")
    }
}

impl Cursors {
    pub fn with_key(key: [u8; 32]) -> Cursors {
        Cursors { key }
    }

    fn mac(&self, list: &ListId, payload: &[u8]) -> Hmac<Sha256> {
        // HMAC accepts keys of any length: this cannot fail.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(VERSION);
        mac.update(b"\0");
        mac.update(list.text.as_bytes());
        mac.update(b"\0");
        mac.update(payload);
        mac
    }

    /// The cursor of the page that starts after `key` in `list`.
    pub fn seal(&self, list: &ListId, key: &SortKey) -> String {
        // A Vec of plain enums always serialises.
        let payload = serde_json::to_vec(key).unwrap_or_default();
        let tag = self.mac(list, &payload).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// The sort key of a cursor sealed for `list`; anything else (changed,
    /// truncated, sealed for another list, tenant or filter set, or by
    /// another version) is a 400 on `after`.
    pub fn open(&self, list: &ListId, cursor: &str) -> Result<SortKey, FieldError> {
        let invalid = || problem(FIELD, "is not a cursor of this list and filter set");
        let (payload, tag) = cursor.trim().split_once('.').ok_or_else(invalid)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| invalid())?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
        self.mac(list, &payload)
            .verify_slice(&tag)
            .map_err(|_| invalid())?;
        serde_json::from_slice(&payload).map_err(|_| invalid())
    }

    /// `open` for the lists ordered by `(created_at, id)`: `None` without a
    /// cursor.
    pub fn open_after(
        &self,
        list: &ListId,
        cursor: Option<&str>,
    ) -> Result<Option<After>, ApiError> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let invalid = || problem(FIELD, "is not a cursor of this list and filter set");
        let key = self
            .open(list, cursor)
            .map_err(|err| ApiError::validation(vec![err]))?;
        After::from_key(&key)
            .map(Some)
            .ok_or_else(|| ApiError::validation(vec![invalid()]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant() -> Tenant {
        Tenant::new(uuid::Uuid::now_v7(), crate::auth::Mode::Test)
    }

    #[test]
    fn a_sealed_key_opens_on_its_own_list_only() {
        let cursors = Cursors::with_key([7; 32]);
        let tenant = tenant();
        let list = ListId::new("tickets", &tenant, &("OPEN", 1));
        let key = SortKey(vec![
            SortValue::Real(0.25),
            SortValue::Time(Timestamp::now()),
            SortValue::Id(Uuid::now_v7()),
        ]);
        let cursor = cursors.seal(&list, &key);
        assert_eq!(cursors.open(&list, &cursor).ok(), Some(key));
        let other_filters = ListId::new("tickets", &tenant, &("OPEN", 2));
        assert!(cursors.open(&other_filters, &cursor).is_err());
        let other_list = ListId::new("chat_sessions", &tenant, &("OPEN", 1));
        assert!(cursors.open(&other_list, &cursor).is_err());
        let other_key = Cursors::with_key([8; 32]);
        assert!(other_key.open(&list, &cursor).is_err());
    }

    #[test]
    fn a_changed_character_breaks_the_cursor() {
        let cursors = Cursors::with_key([1; 32]);
        let list = ListId::new("kb_articles", &tenant(), &());
        let cursor = cursors.seal(&list, &After::key(Timestamp::now(), Uuid::now_v7()));
        for at in 0..cursor.len() {
            let mut bytes = cursor.clone().into_bytes();
            bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap_or_default();
            assert!(cursors.open(&list, &changed).is_err(), "position {at}");
        }
    }
}
