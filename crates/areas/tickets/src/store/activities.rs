//! SQL for the timeline: written by every change, read oldest first.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::read::ensure_ticket;
use crate::actor::Actor;
use crate::auth::Tenant;
use crate::db::{self, Db, NewRows, Query, Tx};
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

/// Writes the entry with the version its change gave the ticket (the
/// change bumps the version before it writes its entries), so a refused
/// `If-Match` can list the entries after the version it named.
pub(super) async fn add_activity(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    entry: NewActivity,
    at: Timestamp,
) -> Result<(), StoreError> {
    let actor = tx.actor().clone();
    let query = Query::new(format!(
        "INSERT INTO ticket_activities ({ACTIVITY_COLUMNS}, version) VALUES ($1, $2, $3, $4, \
         $5, $6, $7, $8, $9, $10, (SELECT t.version FROM tickets t WHERE t.id = $4))"
    ));
    let query = activity_values(tenant, ticket_id, entry, &actor, at)
        .into_iter()
        .fold(query, Query::bind);
    query.execute(tx).await
}

/// A timeline entry of `kind` with only `details`, for a step outside the
/// store that records on the timeline (an automation chain that stopped).
pub(crate) async fn add_entry(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    kind: ActivityKind,
    details: Value,
    at: Timestamp,
) -> Result<(), StoreError> {
    let entry = NewActivity {
        details: Some(details),
        ..NewActivity::new(kind)
    };
    add_activity(tx, tenant, ticket_id, entry, at).await
}

const ACTIVITY_COLUMNS: &str =
    "id, company_id, mode, ticket_id, kind, from_value, to_value, details, created_at, actor";

fn activity_values(
    tenant: &Tenant,
    ticket_id: Uuid,
    entry: NewActivity,
    actor: &Actor,
    at: Timestamp,
) -> [db::Value; 10] {
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
    ]
}

/// The timeline entry's row, described once for both ways of writing it
/// (`NewRows`): alone, or after the new ticket it belongs to in the one
/// statement of a plain create (its details then take the ticket's number;
/// its version is the new ticket's, 1, the column's default); made by
/// `actor`.
pub(super) fn activity_rows(
    tenant: &Tenant,
    ticket_id: Uuid,
    entry: NewActivity,
    actor: &Actor,
    at: Timestamp,
) -> NewRows {
    NewRows::of(
        "ticket_activities",
        ACTIVITY_COLUMNS,
        activity_values(tenant, ticket_id, entry, actor, at),
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
    version: i64,
}

impl From<ActivityRow> for Activity {
    fn from(row: ActivityRow) -> Self {
        Activity {
            id: row.id,
            ticket_id: row.ticket_id,
            kind: row.kind,
            from: row.from_value,
            to: row.to_value,
            details: row.details.map(|Json(v)| v),
            actor: row.actor.map(|Json(actor)| actor),
            created_at: row.created_at,
            version: row.version,
        }
    }
}

const ACTIVITY_SELECT: &str = "SELECT id, ticket_id, kind, from_value, to_value, details, \
     created_at, actor, version FROM ticket_activities";

/// The ticket's timeline entries after version `since`, oldest first: what
/// changed since a caller read the ticket (at most `CHANGES_MAX`, the
/// newest kept).
pub async fn changes_since(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    since: i64,
) -> Result<Vec<Activity>, StoreError> {
    let mut rows: Vec<ActivityRow> = Query::new(ACTIVITY_SELECT)
        .push(" WHERE ticket_id = $1 AND company_id = $2 AND mode = $3 AND version > $4")
        .bind(ticket_id)
        .bind_tenant(tenant)
        .bind(since)
        .push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(CHANGES_MAX)
        .fetch_all(db)
        .await?;
    rows.reverse();
    Ok(rows.into_iter().map(Activity::from).collect())
}

/// How many changes a version conflict lists.
const CHANGES_MAX: i64 = 100;

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
    let matching = Query::new(ACTIVITY_SELECT)
        .push(" WHERE ticket_id = $1 AND company_id = $2 AND mode = $3")
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
    let activities = rows.into_iter().map(Activity::from).collect();
    Ok((activities, total))
}
