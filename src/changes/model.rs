//! The feed's vocabulary: which records it carries, what happened to one,
//! and the opaque cursor that names a position in a tenant's feed.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::auth::Scope;

crate::text_enum! {
    /// A kind of record the feed carries.
    pub enum RecordType {
        Ticket = "ticket",
        Comment = "comment",
        ChatSession = "chat_session",
        ChatMessage = "chat_message",
        KbArticle = "kb_article",
    }
}

impl RecordType {
    /// The scope that reads records of this type elsewhere in the API, and
    /// so reads their entries here.
    pub fn read_scope(self) -> Scope {
        match self {
            RecordType::Ticket | RecordType::Comment => Scope::TicketsRead,
            RecordType::ChatSession | RecordType::ChatMessage => Scope::ChatRead,
            RecordType::KbArticle => Scope::KbRead,
        }
    }
}

crate::text_enum! {
    /// What happened to a record: `upsert` (created or changed; the entry
    /// carries the record as it now is) or `delete` (also when deleted with
    /// its parent; no record).
    pub enum Op {
        Upsert = "upsert",
        Delete = "delete",
    }
}

/// One change of one record, as a write records it in its transaction.
#[derive(Debug, Clone)]
pub struct RecordChange {
    pub record_type: RecordType,
    pub id: Uuid,
    pub op: Op,
    /// The record as the API shows it after the change; None for deletes.
    pub record: Option<Value>,
}

impl RecordChange {
    /// The record now is `record` (serialised as its GET returns it).
    pub fn upsert(
        record_type: RecordType,
        id: Uuid,
        record: &impl Serialize,
    ) -> Result<RecordChange, crate::error::StoreError> {
        Ok(RecordChange {
            record_type,
            id,
            op: Op::Upsert,
            record: Some(crate::events::payload(record)?),
        })
    }

    pub fn delete(record_type: RecordType, id: Uuid) -> RecordChange {
        RecordChange {
            record_type,
            id,
            op: Op::Delete,
            record: None,
        }
    }
}

/// A position in a tenant's feed: the number of the last entry read. The
/// text form is opaque to clients so the numbering may change later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor(pub i64);

const CURSOR_PREFIX: &str = "c1.";

impl Cursor {
    pub fn encode(self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{}", self.0))
    }

    /// The cursor `text` names, or None for anything `encode` did not make.
    pub fn decode(text: &str) -> Option<Cursor> {
        let bytes = URL_SAFE_NO_PAD.decode(text.trim()).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let number = text.strip_prefix(CURSOR_PREFIX)?;
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        number.parse::<i64>().ok().map(Cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_itself() {
        for seq in [0, 1, 42, i64::MAX] {
            assert_eq!(Cursor::decode(&Cursor(seq).encode()), Some(Cursor(seq)));
        }
    }

    #[test]
    fn garbage_is_not_a_cursor() {
        for text in ["", "abc", "42", "YzEu", "YzEuLTE", "%%%"] {
            assert_eq!(Cursor::decode(text), None, "{text:?}");
        }
    }

    #[test]
    fn every_type_parses_from_its_name() {
        for kind in RecordType::ALL {
            assert_eq!(kind.as_str().parse::<RecordType>(), Ok(*kind));
        }
    }
}
