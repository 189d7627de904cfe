//! SQL for the timeline: written by every change, read oldest first.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::read::ensure_ticket;
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::model::{Activity, ActivityKind};
use crate::paging::{After, Order, push_after};
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

/// A timeline entry to write.
#[derive(Clone)]
pub(super) struct NewActivity {
    pub kind: ActivityKind,
    pub from: Option<String>,
    pub to: Option<String>,
    pub details: Option<Value>,
}

impl NewActivity {
    pub fn new(kind: ActivityKind) -> Self {
        NewActivity {
            kind,
            from: None,
            to: None,
            details: None,
        }
    }
}

pub(super) async fn add_activity(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    entry: NewActivity,
    at: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO ticket_activities (id, company_id, mode, ticket_id, kind, from_value, \
         to_value, details, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(new_id())
    .bind_tenant(tenant)
    .bind(ticket_id)
    .bind(entry.kind)
    .bind(entry.from)
    .bind(entry.to)
    .bind(entry.details)
    .bind(at)
    .execute(tx)
    .await
}

/// `add_activity` for a ticket inserted by the same statement (Postgres,
/// data-modifying CTEs): appends `, activity AS (INSERT … SELECT … FROM
/// {from})`, one entry per row of `from`, the `ticketNumber` of its
/// details (when it has some) set from `{from}.ticket_number`.
pub(super) fn push_for_new(
    query: Query,
    from: &str,
    tenant: &Tenant,
    ticket_id: Uuid,
    entry: NewActivity,
    at: Timestamp,
) -> Query {
    let mut query = query.push(
        ", activity AS (INSERT INTO ticket_activities (id, company_id, mode, ticket_id, kind, \
         from_value, to_value, details, created_at) SELECT ",
    );
    let details = query.placeholder_for(entry.details);
    query
        .push_bind(new_id())
        .push(", ")
        .push_bind(tenant.company_id)
        .push(", ")
        .push_bind(tenant.mode.as_str())
        .push(", ")
        .push_bind(ticket_id)
        .push(", ")
        .push_bind(entry.kind)
        .push(", ")
        .push_bind(entry.from)
        .push(", ")
        .push_bind(entry.to)
        .push(&format!(
            ", jsonb_set({details}, '{{ticketNumber}}', to_jsonb({from}.ticket_number)), "
        ))
        .push_bind(at)
        .push(&format!(" FROM {from})"))
}

#[derive(sqlx::FromRow)]
struct ActivityRow {
    id: Uuid,
    ticket_id: Uuid,
    kind: ActivityKind,
    from_value: Option<String>,
    to_value: Option<String>,
    details: Option<Json<Value>>,
    created_at: Timestamp,
}

/// A page of the ticket's timeline, oldest first, read with one row more
/// than `page.limit`, and its length.
pub async fn list_activities(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    page: Page,
    after: Option<&After>,
) -> Result<(Vec<Activity>, i64), StoreError> {
    ensure_ticket(db, tenant, ticket_id).await?;
    let matching = Query::new(
        "SELECT id, ticket_id, kind, from_value, to_value, details, created_at \
         FROM ticket_activities WHERE ticket_id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(ticket_id)
    .bind_tenant(tenant);
    let rows: Vec<ActivityRow> = push_after(matching, "", after, Order::OldestFirst)
        .push(" ORDER BY created_at, id LIMIT ")
        .push_bind(page.limit + 1)
        .push(" OFFSET ")
        .push_bind(page.offset)
        .fetch_all(db)
        .await?;
    let total = Query::new(
        "SELECT COUNT(*) FROM ticket_activities \
         WHERE ticket_id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .fetch_scalar(db)
    .await?;
    let activities = rows
        .into_iter()
        .map(|row| Activity {
            id: row.id,
            ticket_id: row.ticket_id,
            kind: row.kind,
            from: row.from_value,
            to: row.to_value,
            details: row.details.map(|Json(v)| v),
            created_at: row.created_at,
        })
        .collect();
    Ok((activities, total))
}
