//! SQL for the tag tables (`ticket_tags`, `chat_session_tags`): one row per
//! record and tag. Writes run in the caller's transaction, after the caller
//! has locked the record, so concurrent edits of one record take turns and
//! the per-record limit is checked against what is really there.

use std::collections::HashMap;

use serde::Serialize;
use uuid::Uuid;

use super::model::{TAGS_PER_RECORD, TagChange, TagEdit, TagFilter, too_many};
use crate::auth::Tenant;
use crate::db::{Backend, Db, On, Query, Tx};
use crate::error::StoreError;

/// The kind of record a tag table belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tagged {
    Ticket,
    ChatSession,
}

impl Tagged {
    fn table(self) -> &'static str {
        match self {
            Tagged::Ticket => "ticket_tags",
            Tagged::ChatSession => "chat_session_tags",
        }
    }

    fn owner(self) -> &'static str {
        match self {
            Tagged::Ticket => "ticket_id",
            Tagged::ChatSession => "session_id",
        }
    }
}

/// The record's tags, sorted (by code point, in Rust, so both backends
/// agree whatever the database's collation).
pub async fn of<'c>(
    on: impl Into<On<'c>>,
    kind: Tagged,
    record: Uuid,
) -> Result<Vec<String>, StoreError> {
    let mut tags: Vec<String> = Query::new(format!(
        "SELECT tag FROM {} WHERE {} = $1",
        kind.table(),
        kind.owner()
    ))
    .bind(record)
    .fetch_column(on)
    .await?;
    tags.sort();
    Ok(tags)
}

/// A record's tags as SQL's `string_agg(tag, ' ')` joins them (a tag
/// never holds a space: `normalize` refuses it), sorted as [`of`] sorts.
pub fn split_joined(joined: Option<&str>) -> Vec<String> {
    let mut tags: Vec<String> = joined
        .map(|list| list.split(' ').map(str::to_owned).collect())
        .unwrap_or_default();
    tags.sort();
    tags
}

/// The tags of each of `records` (one query), each list sorted; records
/// without tags are absent.
pub async fn of_each(
    db: &Db,
    kind: Tagged,
    records: &[Uuid],
) -> Result<HashMap<Uuid, Vec<String>>, StoreError> {
    let mut tags: HashMap<Uuid, Vec<String>> = HashMap::new();
    if records.is_empty() {
        return Ok(tags);
    }
    let rows: Vec<(Uuid, String)> = Query::new(format!(
        "SELECT {owner}, tag FROM {table} WHERE {owner} IN ",
        owner = kind.owner(),
        table = kind.table()
    ))
    .push_bind_list(records.iter().copied())
    .fetch_all(db)
    .await?;
    for (record, tag) in rows {
        tags.entry(record).or_default().push(tag);
    }
    for list in tags.values_mut() {
        list.sort();
    }
    Ok(tags)
}

/// Makes `wanted` (a sorted set) the record's tags; answers what changed.
pub async fn replace(
    tx: &mut Tx,
    tenant: &Tenant,
    kind: Tagged,
    record: Uuid,
    wanted: &[String],
) -> Result<TagChange, StoreError> {
    let current = of(&mut *tx, kind, record).await?;
    let change = TagChange::between(&current, wanted);
    delete(tx, kind, record, &change.removed).await?;
    insert(tx, tenant, kind, record, &change.added).await?;
    Ok(change)
}

/// Tags a record created in `tx` (it has none yet, so nothing is read);
/// the tags it now has.
pub async fn add_to_new(
    tx: &mut Tx,
    tenant: &Tenant,
    kind: Tagged,
    record: Uuid,
    tags: &[String],
) -> Result<Vec<String>, StoreError> {
    insert(tx, tenant, kind, record, tags).await
}

/// Adds and removes tags without reading the set first: each statement
/// answers the rows it really changed. More than `TAGS_PER_RECORD` tags
/// afterwards is a 400 on `add`, and the caller's transaction rolls back.
pub async fn edit(
    tx: &mut Tx,
    tenant: &Tenant,
    kind: Tagged,
    record: Uuid,
    edit: &TagEdit,
) -> Result<TagChange, StoreError> {
    let mut change = TagChange {
        removed: delete(tx, kind, record, &edit.remove).await?,
        added: insert(tx, tenant, kind, record, &edit.add).await?,
    };
    change.added.sort();
    change.removed.sort();
    if !change.added.is_empty() {
        let count: i64 = Query::new(format!(
            "SELECT COUNT(*) FROM {} WHERE {} = $1",
            kind.table(),
            kind.owner()
        ))
        .bind(record)
        .fetch_scalar(&mut *tx)
        .await?;
        if count > TAGS_PER_RECORD as i64 {
            // The store's way to a 400 `validation_failed` naming a field.
            return Err(StoreError::InvalidReferences(vec![too_many("add")]));
        }
    }
    Ok(change)
}

/// Inserts the tags the record does not have yet; answers those.
async fn insert(
    tx: &mut Tx,
    tenant: &Tenant,
    kind: Tagged,
    record: Uuid,
    tags: &[String],
) -> Result<Vec<String>, StoreError> {
    if tags.is_empty() {
        return Ok(Vec::new());
    }
    let mut query = Query::new(format!(
        "INSERT INTO {} ({}, company_id, mode, tag) VALUES ",
        kind.table(),
        kind.owner()
    ))
    .bind(record)
    .bind_tenant(tenant);
    for (i, tag) in tags.iter().enumerate() {
        let row = if i == 0 {
            "($1, $2, $3, "
        } else {
            ", ($1, $2, $3, "
        };
        query = query.push(row).push_bind(tag).push(")");
    }
    query
        .push(" ON CONFLICT DO NOTHING RETURNING tag")
        .fetch_column(tx)
        .await
}

/// Deletes those of `tags` the record has; answers those.
async fn delete(
    tx: &mut Tx,
    kind: Tagged,
    record: Uuid,
    tags: &[String],
) -> Result<Vec<String>, StoreError> {
    if tags.is_empty() {
        return Ok(Vec::new());
    }
    Query::new(format!(
        "DELETE FROM {} WHERE {} = $1 AND tag IN ",
        kind.table(),
        kind.owner()
    ))
    .bind(record)
    .push_bind_list(tags)
    .push(" RETURNING tag")
    .fetch_column(tx)
    .await
}

/// Adds `filter` to a list query as EXISTS probes of the tag table's
/// primary key (`record_id` is the listed record's id column, `t.id`):
/// one per tag of `all`, and one per tag of `any` joined by OR. (One
/// EXISTS with `tag IN (…)` is flattened by SQLite's planner into a join
/// that repeats a record carrying several of the tags.)
pub fn push_filter(mut query: Query, kind: Tagged, record_id: &str, filter: &TagFilter) -> Query {
    let sql = filter_text(kind, record_id, filter, |tag| query.placeholder_for(tag));
    query.push(&sql)
}

/// The text `push_filter` adds, for a query written as text with numbered
/// placeholders: the tags take `$first` onwards, and the caller binds
/// `filter.values()` to them in that order.
pub fn filter_sql(kind: Tagged, record_id: &str, filter: &TagFilter, first: usize) -> String {
    let mut next = first;
    filter_text(kind, record_id, filter, |_| {
        next += 1;
        format!("${}", next - 1)
    })
}

fn filter_text(
    kind: Tagged,
    record_id: &str,
    filter: &TagFilter,
    mut placeholder: impl FnMut(&String) -> String,
) -> String {
    let exists = format!(
        "EXISTS (SELECT 1 FROM {table} x WHERE x.{owner} = {record_id} AND x.tag = ",
        table = kind.table(),
        owner = kind.owner()
    );
    let mut sql = String::new();
    for tag in &filter.all {
        sql.push_str(&format!(" AND {exists}{})", placeholder(tag)));
    }
    for (i, tag) in filter.any.iter().enumerate() {
        let joint = if i == 0 { " AND (" } else { " OR " };
        sql.push_str(&format!("{joint}{exists}{})", placeholder(tag)));
    }
    if !filter.any.is_empty() {
        sql.push(')');
    }
    sql
}

/// One tag of the company with how many records carry it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
pub struct TagCount {
    pub tag: String,
    /// Open tickets (OPEN or IN_PROGRESS) and active chat sessions.
    pub open: i64,
    /// Tickets and chat sessions, whatever their status.
    pub total: i64,
}

/// The tenant's tags starting with `prefix`, most used first (then by
/// name, by code point on both backends), at most `limit`.
pub async fn counts(
    db: &Db,
    tenant: &Tenant,
    prefix: &str,
    limit: i64,
) -> Result<Vec<TagCount>, StoreError> {
    // Tags hold no `%` or `\`; `_` is a tag character, not a wildcard.
    let pattern = format!("{}%", prefix.replace('_', "\\_"));
    let by_name = match db.backend() {
        Backend::Postgres => "tag COLLATE \"C\"",
        Backend::Sqlite => "tag",
    };
    Query::new(
        "SELECT tag, CAST(SUM(open) AS BIGINT) AS open, COUNT(*) AS total FROM ( \
         SELECT x.tag, CASE WHEN t.status IN ('OPEN', 'IN_PROGRESS') THEN 1 ELSE 0 END AS open \
         FROM ticket_tags x JOIN tickets t ON t.id = x.ticket_id \
         WHERE x.company_id = $1 AND x.mode = $2 AND x.tag LIKE $3 ESCAPE '\\' \
         UNION ALL \
         SELECT x.tag, CASE WHEN s.status = 'ACTIVE' THEN 1 ELSE 0 END AS open \
         FROM chat_session_tags x JOIN chat_sessions s ON s.id = x.session_id \
         WHERE x.company_id = $1 AND x.mode = $2 AND x.tag LIKE $3 ESCAPE '\\' \
         ) tagged GROUP BY tag ORDER BY total DESC, ",
    )
    .push(by_name)
    .push(" LIMIT $4")
    .bind_tenant(tenant)
    .bind(pattern)
    .bind(limit)
    .fetch_all(db)
    .await
}
