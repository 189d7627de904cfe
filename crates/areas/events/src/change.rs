//! A change of one record, as the write that makes it records it for the
//! change feed (`changes`): which record, upsert or delete, and its
//! snapshot. Written as an `events` row in the write's transaction.

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use store::{Backend, Query, Tx};
use vocab::error::StoreError;
use vocab::scope::Scope;
use vocab::tenant::Tenant;

vocab::text_enum! {
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

vocab::text_enum! {
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
    ) -> Result<RecordChange, StoreError> {
        Ok(RecordChange {
            record_type,
            id,
            op: Op::Upsert,
            record: Some(super::payload(record)?),
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

/// The next feed number of `tenant`, for an entry written in `tx`, or None
/// where entries are numbered after their write commits (Postgres; see
/// `changes::store::number_committed`). SQLite has one writer at a time, so
/// numbering at write time is numbering in commit order there.
pub(super) async fn number_in_write(
    tx: &mut Tx,
    tenant: &Tenant,
) -> Result<Option<i64>, StoreError> {
    if tx.backend() == Backend::Postgres {
        return Ok(None);
    }
    let next: i64 = Query::new(
        "INSERT INTO counters (company_id, mode, name, value) VALUES ($1, $2, 'changes', 1) \
         ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1 \
         RETURNING value",
    )
    .bind_tenant(tenant)
    .fetch_scalar(tx)
    .await?;
    Ok(Some(next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_parses_from_its_name() {
        for kind in RecordType::ALL {
            assert_eq!(kind.as_str().parse::<RecordType>(), Ok(*kind));
        }
    }
}
