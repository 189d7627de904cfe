//! SQL for the timeline: written by every change, read oldest first.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::read::ensure_ticket;
use crate::actor::Actor;
use crate::auth::Tenant;
use crate::db::{Db, NewRows, Query, Tx};
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
    let actor = tx.actor().clone();
    activity_rows(tenant, ticket_id, entry, &actor, at)
        .insert()
        .execute(tx)
        .await
}

/// The timeline entry's row, described once for both ways of writing it
/// (`NewRows`): alone, or after the new ticket it belongs to in the one
/// statement of a plain create (its details then take the ticket's number);
/// made by `actor`.
pub(super) fn activity_rows(
    tenant: &Tenant,
    ticket_id: Uuid,
    entry: NewActivity,
    actor: &Actor,
    at: Timestamp,
) -> NewRows {
    NewRows::of(
        "ticket_activities",
        "id, company_id, mode, ticket_id, kind, from_value, to_value, details, created_at, actor",
        [
            new_id().into(),
            tenant.company_id.into(),
            tenant.mode.as_str().into(),
            ticket_id.into(),
            entry.kind.into(),
            entry.from.into(),
            entry.to.into(),
            entry.details.into(),
            at.into(),
            crate::event_log::actor_json(actor).into(),
        ],
    )
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
    actor: Option<Json<Actor>>,
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
        "SELECT id, ticket_id, kind, from_value, to_value, details, created_at, actor \
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
            actor: row.actor.map(|Json(actor)| actor),
            created_at: row.created_at,
        })
        .collect();
    Ok((activities, total))
}
