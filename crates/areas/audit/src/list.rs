//! Reading a company's entries, newest first, by the list's filters (the
//! actor, the action, the target, a time range) with keyset paging.

use uuid::Uuid;

use crate::actor::{Actor, ActorType};
use crate::db::{Db, Query, TeamOwned};
use crate::error::StoreError;
use crate::paging::{After, COUNT_CAP, Order, Total, capped_count, push_after};
use crate::time::Timestamp;
use vocab::tenant::Visibility;

use super::chain::{CHAIN_COLUMNS, ChainRow};
use super::model::{Action, Entry, Target, TargetType};

/// What a list keeps; `None` keeps everything.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub actor: Option<Uuid>,
    pub action: Option<Action>,
    pub target_type: Option<TargetType>,
    pub target_id: Option<Uuid>,
    /// Written at or after.
    pub from: Option<Timestamp>,
    /// Written before.
    pub to: Option<Timestamp>,
    /// Who reads: a caller limited to teams sees only the entries about a
    /// ticket, comment or chat of their teams (one since deleted is no
    /// team's, as in the change feed; an entry about no such record, a
    /// company-wide change, is no team's either).
    pub seen_by: Visibility,
}

/// The target types of team-owned records, and which records they are.
const TEAM_OWNED: &[(&str, TeamOwned)] = &[
    ("target_type = 'ticket'", TeamOwned::Ticket),
    ("target_type = 'comment'", TeamOwned::Comment),
    ("target_type = 'chat_session'", TeamOwned::ChatSession),
];

/// The condition of a list by `filters` on company `company_id`,
/// after what `head` selects.
fn matching(head: &str, company_id: Uuid, filters: &Filters) -> Query {
    let mut query =
        Query::new(format!("{head} FROM audit_entries WHERE company_id = ")).push_bind(company_id);
    if let Some(actor) = filters.actor {
        query = query.push(" AND actor_id = ").push_bind(actor);
    }
    if let Some(action) = filters.action {
        query = query.push(" AND action = ").push_bind(action);
    }
    if let Some(kind) = filters.target_type {
        query = query.push(" AND target_type = ").push_bind(kind);
    }
    if let Some(id) = filters.target_id {
        query = query.push(" AND target_id = ").push_bind(id);
    }
    if let Some(from) = filters.from {
        query = query.push(" AND created_at >= ").push_bind(from);
    }
    if let Some(to) = filters.to {
        query = query.push(" AND created_at < ").push_bind(to);
    }
    query.push_only_visible(filters.seen_by, TEAM_OWNED, "target_id")
}

/// Up to `limit` entries of company `company_id` after `after` (or past
/// `offset`), newest first.
pub async fn page(
    db: &Db,
    company_id: Uuid,
    filters: &Filters,
    after: Option<&After>,
    limit: i64,
    offset: i64,
) -> Result<Vec<Entry>, StoreError> {
    let query = matching(&format!("SELECT {CHAIN_COLUMNS}"), company_id, filters);
    let rows: Vec<ChainRow> = push_after(query, "", after, Order::NewestFirst)
        .push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(limit)
        .push(" OFFSET ")
        .push_bind(offset)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().filter_map(entry_of).collect())
}

/// How many entries the list by `filters` holds (capped).
pub async fn total(db: &Db, company_id: Uuid, filters: &Filters) -> Result<Total, StoreError> {
    capped_count(db, matching("SELECT 1", company_id, filters), COUNT_CAP).await
}

/// The entry a row holds; a row whose closed sets this build does not know
/// (a newer build's, during a rolling deploy) is left out.
pub(crate) fn entry_of(row: ChainRow) -> Option<Entry> {
    let changes = serde_json::from_str(&row.changes).unwrap_or(serde_json::Value::Null);
    Some(Entry {
        id: row.id,
        seq: row.seq,
        at: row.created_at,
        actor: Actor {
            kind: row.actor_type.parse::<ActorType>().ok()?,
            id: row.actor_id,
            name: row.actor_name,
        },
        action: row.action.parse().ok()?,
        target: Target {
            kind: row.target_type.parse().ok()?,
            id: row.target_id,
        },
        changes,
        request_id: row.request_id,
        ip: row.ip,
        user_agent: row.user_agent,
        hash: row.hash,
        prev_hash: row.prev_hash,
    })
}
