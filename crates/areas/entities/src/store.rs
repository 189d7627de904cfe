//! SQL for entities.

use serde::Serialize;
use uuid::Uuid;

use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::auth::key::random_base62;
use crate::csat_mode::CsatMode;
use crate::db::{Db, On, Query, Table, Tx, ensure_reference};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};

crate::text_enum! {
    /// Whether the visitor widget may open sessions without a verified
    /// identity token.
    pub enum WidgetIdentity {
        Optional = "optional",
        Required = "required",
    }
}

fn widget_identity() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(WidgetIdentity::NAMES)
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entity {
    pub id: Uuid,
    pub company_id: Uuid,
    pub parent_id: Option<Uuid>,
    pub name: String,
    pub widget_key_test: String,
    pub widget_key_live: String,
    /// `required`: widget sessions need a valid identity token.
    #[schema(schema_with = widget_identity)]
    pub widget_identity: WidgetIdentity,
    /// When visitors are asked for a satisfaction rating: `auto` (a chat
    /// closes, a ticket is resolved), `manual` (an agent asks) or `off`.
    #[schema(schema_with = crate::csat_mode::csat_mode_schema)]
    pub csat: CsatMode,
    /// Whether an identity secret exists (the secret itself is shown once).
    pub widget_secret_set: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// The team new chats of the entity join, in the key's mode (absent:
    /// none).
    /// Read only by `find_in` and `list_in` (zero otherwise).
    #[sqlx(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_team_id: Option<Uuid>,
}

pub const COLUMNS: &str = "id, company_id, parent_id, name, widget_key_test, widget_key_live, \
     widget_identity, csat, widget_secret IS NOT NULL AS widget_secret_set, created_at, \
     updated_at";

/// Creates an entity; a `parent_id` must be an entity of the same company.
pub async fn create(
    db: &Db,
    company_id: Uuid,
    name: &str,
    parent_id: Option<Uuid>,
    now: Timestamp,
) -> Result<Entity, StoreError> {
    let mut tx = db.begin().await?;
    if let Some(parent) = parent_id {
        ensure_reference(&mut tx, company_id, Table::Entities, parent, "parentId").await?;
    }
    let sql = format!(
        "INSERT INTO entities (id, company_id, parent_id, name, widget_key_test, widget_key_live, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING {COLUMNS}"
    );
    let id = new_id();
    let test_key = format!("wk_test_{}", random_base62(24));
    let live_key = format!("wk_live_{}", random_base62(24));
    let entity = Query::new(sql)
        .bind(id)
        .bind(company_id)
        .bind(parent_id)
        .bind(name)
        .bind(test_key)
        .bind(live_key)
        .bind(now)
        .fetch_one(&mut tx)
        .await?;
    let changes = Changes::created(&entity);
    record(&mut tx, company_id, id, now, Action::EntityCreated, changes).await?;
    tx.commit().await?;
    Ok(entity)
}

/// Writes the audit entry of `action` on entity `id` in `tx`; an update
/// that changed nothing writes none.
async fn record(
    tx: &mut Tx,
    company_id: Uuid,
    id: Uuid,
    now: Timestamp,
    action: Action,
    changes: Changes,
) -> Result<(), StoreError> {
    if action == Action::EntityUpdated && changes.is_empty_update() {
        return Ok(());
    }
    let target = Target::new(TargetType::Entity, id);
    crate::audit::record(tx, company_id, now, action, target, changes).await
}

/// The entity `id` of `company_id`; another company's entity is NotFound.
pub async fn find(db: &Db, company_id: Uuid, id: Uuid) -> Result<Entity, StoreError> {
    find_on(db, company_id, id).await
}

async fn find_on<'c>(
    on: impl Into<On<'c>>,
    company_id: Uuid,
    id: Uuid,
) -> Result<Entity, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM entities WHERE id = $1 AND company_id = $2");
    Query::new(sql)
        .bind(id)
        .bind(company_id)
        .fetch_one(on)
        .await
}

/// The entity's default team in the mode bound at `mode_param`, read in
/// the entity's own SELECT (it cost a second round trip per entity, and per
/// row of a list, before).
fn default_team(mode_param: &str) -> String {
    format!(
        "(SELECT d.team_id FROM entity_default_teams d JOIN teams t ON t.id = d.team_id \
         WHERE d.entity_id = entities.id AND d.mode = {mode_param} \
         AND t.company_id = entities.company_id) AS default_team_id"
    )
}

/// The entity `id` of the tenant's company with its default team in the
/// tenant's mode, as the API shows it; another company's is NotFound.
pub async fn find_in(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Entity, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS}, {} FROM entities WHERE id = $1 AND company_id = $2",
        default_team("$3")
    );
    Query::new(sql)
        .bind(id)
        .bind_tenant(tenant)
        .fetch_one(db)
        .await
}

/// Every entity of the tenant's company with its default team in the
/// tenant's mode, newest first.
pub async fn list_in(db: &Db, tenant: &Tenant) -> Result<Vec<Entity>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS}, {} FROM entities WHERE company_id = $1 \
         ORDER BY created_at DESC, id DESC",
        default_team("$2")
    );
    Query::new(sql).bind_tenant(tenant).fetch_all(db).await
}

/// What a change of an entity sets (`None`: kept).
#[derive(Debug, Default)]
pub struct EntityChanges<'a> {
    pub name: Option<&'a str>,
    /// `Some(None)` makes the entity top-level.
    pub parent_id: Option<Option<Uuid>>,
    pub widget_identity: Option<WidgetIdentity>,
    pub csat: Option<CsatMode>,
}

/// Renames an entity and/or moves it under another parent, and its widget
/// settings, stamped `now`. A parent that would make a cycle is refused.
pub async fn update(
    db: &Db,
    company_id: Uuid,
    id: Uuid,
    changes: EntityChanges<'_>,
    now: Timestamp,
) -> Result<Entity, StoreError> {
    let EntityChanges {
        name,
        parent_id,
        widget_identity,
        csat,
    } = changes;
    let mut tx = db.begin().await?;
    let current = find_on(&mut tx, company_id, id).await?;
    let parent = match parent_id {
        None => current.parent_id,
        Some(None) => None,
        Some(Some(parent)) => {
            ensure_not_descendant(&mut tx, company_id, id, parent).await?;
            Some(parent)
        }
    };
    let sql = format!(
        "UPDATE entities SET name = $3, parent_id = $4, updated_at = $5, widget_identity = $6, \
         csat = $7 WHERE id = $1 AND company_id = $2 RETURNING {COLUMNS}"
    );
    let name = name.unwrap_or(&current.name);
    let widget_identity = widget_identity.unwrap_or(current.widget_identity);
    let csat = csat.unwrap_or(current.csat);
    let entity = Query::new(sql)
        .bind(id)
        .bind(company_id)
        .bind(name)
        .bind(parent)
        .bind(now)
        .bind(widget_identity)
        .bind(csat)
        .fetch_one(&mut tx)
        .await?;
    let changes = Changes::updated(&current, &entity);
    record(&mut tx, company_id, id, now, Action::EntityUpdated, changes).await?;
    tx.commit().await?;
    Ok(entity)
}

/// `parent` must exist in the company and must not be `id` or below it.
async fn ensure_not_descendant(
    tx: &mut Tx,
    company_id: Uuid,
    id: Uuid,
    parent: Uuid,
) -> Result<(), StoreError> {
    let cycle = || StoreError::InvalidReference {
        field: "parentId".into(),
        message: "must not be the entity itself or one of its subsidiaries".into(),
    };
    let mut cursor = Some(parent);
    let mut steps = 0;
    while let Some(current) = cursor {
        if current == id {
            return Err(cycle());
        }
        let entity = match find_on(&mut *tx, company_id, current).await {
            Ok(entity) => entity,
            Err(StoreError::NotFound) => return Err(Table::Entities.invalid_reference("parentId")),
            Err(other) => return Err(other),
        };
        cursor = entity.parent_id;
        steps += 1;
        if steps > 64 {
            return Err(cycle());
        }
    }
    Ok(())
}
