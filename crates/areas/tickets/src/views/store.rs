//! SQL for saved views. Every read and change names the agent asking
//! (`viewer`, None for a company key): another agent's personal view is
//! NotFound to them, as another tenant's is.

use serde_json::{Map, Value};
use sqlx::types::Json;
use uuid::Uuid;

use super::{MAX_VIEWS, NewView, Sort, View, Visibility};
use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::{Refused, StoreError};
use crate::time::{Timestamp, new_id};

const VIEW_SELECT: &str = "SELECT v.id, v.name, v.visibility, v.owner_id, v.filters, v.sort, \
     v.created_at, v.updated_at FROM ticket_views v";

#[derive(sqlx::FromRow)]
struct ViewRow {
    id: Uuid,
    name: String,
    visibility: Visibility,
    owner_id: Option<Uuid>,
    filters: Json<Map<String, Value>>,
    sort: Sort,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<ViewRow> for View {
    fn from(row: ViewRow) -> Self {
        View {
            id: row.id,
            name: row.name,
            visibility: row.visibility,
            owner_id: row.owner_id,
            filters: row.filters.0,
            sort: row.sort,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// `WHERE` the tenant's views `viewer` sees: the shared ones and their own.
fn visible(select: &str, tenant: &Tenant, viewer: Option<Uuid>) -> Query {
    Query::new(select)
        .push(" WHERE ")
        .push_tenant(tenant, "v")
        .push(" AND (v.visibility = 'shared' OR v.owner_id = ")
        .push_bind(viewer)
        .push(")")
}

/// The views `viewer` sees, by name.
pub async fn list(db: &Db, tenant: &Tenant, viewer: Option<Uuid>) -> Result<Vec<View>, StoreError> {
    let rows: Vec<ViewRow> = visible(VIEW_SELECT, tenant, viewer)
        .push(" ORDER BY v.name, v.id LIMIT ")
        .push_bind(MAX_VIEWS)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(View::from).collect())
}

/// The view `id`, if `viewer` sees it.
pub async fn find(
    db: &Db,
    tenant: &Tenant,
    viewer: Option<Uuid>,
    id: Uuid,
) -> Result<View, StoreError> {
    let row: ViewRow = visible(VIEW_SELECT, tenant, viewer)
        .push(" AND v.id = ")
        .push_bind(id)
        .fetch_one(db)
        .await?;
    Ok(row.into())
}

/// Creates a view; more than `MAX_VIEWS` in the tenant is refused.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: NewView,
    now: Timestamp,
) -> Result<View, Refused> {
    let mut tx = db.begin().await?;
    let count: i64 = Query::new("SELECT COUNT(*) FROM ticket_views v WHERE ")
        .push_tenant(tenant, "v")
        .fetch_scalar(&mut tx)
        .await?;
    if count >= MAX_VIEWS {
        return Err(Refused::InUse(format!(
            "a company has at most {MAX_VIEWS} saved views per mode: delete one first"
        )));
    }
    let id = new_id();
    Query::new(
        "INSERT INTO ticket_views (id, company_id, mode, name, visibility, owner_id, filters, \
         sort, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(new.name)
    .bind(new.visibility)
    .bind(new.owner_id)
    .bind(Value::Object(new.filters))
    .bind(new.sort)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let row: ViewRow = Query::new(VIEW_SELECT)
        .push(" WHERE v.id = ")
        .push_bind(id)
        .fetch_one(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(row.into())
}

/// Replaces the view `id` `viewer` sees with `changes`.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    viewer: Option<Uuid>,
    id: Uuid,
    changes: NewView,
    now: Timestamp,
) -> Result<View, StoreError> {
    let mut tx = db.begin().await?;
    let _: (Uuid,) = visible("SELECT v.id FROM ticket_views v", tenant, viewer)
        .push(" AND v.id = ")
        .push_bind(id)
        .fetch_one(&mut tx)
        .await?;
    Query::new(
        "UPDATE ticket_views SET name = $2, visibility = $3, owner_id = $4, filters = $5, \
         sort = $6, updated_at = $7 WHERE id = $1",
    )
    .bind(id)
    .bind(changes.name)
    .bind(changes.visibility)
    .bind(changes.owner_id)
    .bind(Value::Object(changes.filters))
    .bind(changes.sort)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let row: ViewRow = Query::new(VIEW_SELECT)
        .push(" WHERE v.id = ")
        .push_bind(id)
        .fetch_one(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(row.into())
}

/// Deletes the view `id` `viewer` sees.
pub async fn delete(
    db: &Db,
    tenant: &Tenant,
    viewer: Option<Uuid>,
    id: Uuid,
) -> Result<(), StoreError> {
    visible("DELETE FROM ticket_views AS v", tenant, viewer)
        .push(" AND v.id = ")
        .push_bind(id)
        .execute_or_not_found(db)
        .await
}
