//! `/entities`: list, create, get, update.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::{Entity, store};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::ApiResult;
use crate::extract::{Id, Json, Requested};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, DataList};
use crate::router::ApiRouter;
use crate::teams::store as team_store;
use crate::time::Clock;
use crate::validate::{
    Fields, NAME_MAX, Patch, ensure, optional_id, required_enum, required_id, required_text,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::EntitiesRead, routes!(list))
        .route(Scope::EntitiesWrite, routes!(create))
        .route(Scope::EntitiesRead, routes!(get_one))
        .route(Scope::EntitiesWrite, routes!(update))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateEntity {
    #[schema(schema_with = schema::name, required)]
    name: Option<String>,
    /// An entity of the same company: makes this one a subsidiary.
    #[schema(schema_with = schema::uuid)]
    parent_id: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateEntity {
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    /// Null makes the entity top-level.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    parent_id: Patch<String>,
    /// The team (of the key's mode) new chats of the entity join, widget
    /// chats included; null: none.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    default_team_id: Patch<String>,
    /// `optional` or `required`: whether widget sessions need a verified
    /// identity token.
    #[schema(schema_with = widget_identity)]
    widget_identity: Option<String>,
    /// `auto`, `manual` or `off`: when visitors are asked for a
    /// satisfaction rating (default `auto`).
    #[schema(schema_with = crate::csat::model::csat_mode_schema)]
    csat: Option<String>,
}

/// The entity with its default team in the key's mode.
async fn with_default_team(
    db: &Db,
    principal: &Principal,
    mut entity: store::Entity,
) -> ApiResult<store::Entity> {
    entity.default_team_id = team_store::default_team(db, &principal.tenant, entity.id).await?;
    Ok(entity)
}

/// List entities
///
/// Every entity of the company (entities are shared by both modes).
#[utoipa::path(get, path = "/entities", operation_id = "list_entities", tag = "Entities",
    responses((status = 200, description = "The company's entities", body = DataList<Entity>)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<serde_json::Value>> {
    let entities = store::list_in(&db, &principal.tenant).await?;
    Ok(Json(serde_json::json!({ "data": entities })))
}

fn widget_identity() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(store::WidgetIdentity::NAMES)
}

/// Create an entity
#[utoipa::path(post, path = "/entities", operation_id = "create_entity", tag = "Entities",
    request_body = CreateEntity,
    responses((status = 201, description = "Created", body = Entity)))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<CreateEntity>,
) -> ApiResult<(StatusCode, Json<store::Entity>)> {
    let (name, parent) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        optional_id("parentId", body.parent_id.as_deref()),
    )
        .all_valid()?;
    let entity = store::create(
        &principal.acting(&state.db, requested),
        principal.tenant.company_id,
        &name,
        parent,
        state.clock.now(),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(entity)))
}

/// Get an entity
#[utoipa::path(get, path = "/entities/{id}", operation_id = "get_entity", tag = "Entities",
    params(("id" = uuid::Uuid, Path, description = "Entity id")),
    responses((status = 200, description = "The entity", body = Entity)))]
async fn get_one(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<store::Entity>> {
    Ok(Json(store::find_in(&db, &principal.tenant, id).await?))
}

/// Update an entity
///
/// Give at least one field; a `parentId` must be another entity of the
/// company and must not make a cycle; a `defaultTeamId` a team of the key's
/// mode (the default is per mode, as teams are).
#[utoipa::path(patch, path = "/entities/{id}", operation_id = "update_entity", tag = "Entities",
    request_body = UpdateEntity,
    params(("id" = uuid::Uuid, Path, description = "Entity id")),
    responses((status = 200, description = "The updated entity", body = Entity)))]
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    Json(body): Json<UpdateEntity>,
) -> ApiResult<Json<store::Entity>> {
    let entity_fields = body.name.is_some()
        || !body.parent_id.is_missing()
        || body.widget_identity.is_some()
        || body.csat.is_some();
    let (_, name, parent, widget_identity, csat, default_team) = (
        ensure(
            entity_fields || !body.default_team_id.is_missing(),
            "body",
            "give at least one of: name, parentId, widgetIdentity, csat, defaultTeamId",
        ),
        body.name
            .as_deref()
            .map(|raw| required_text("name", Some(raw), NAME_MAX))
            .transpose(),
        match &body.parent_id {
            Patch::Missing => Ok(None),
            Patch::Null => Ok(Some(None)),
            Patch::Value(raw) => required_id("parentId", Some(raw)).map(|id| Some(Some(id))),
        },
        body.widget_identity
            .as_deref()
            .map(|raw| required_enum("widgetIdentity", Some(raw)))
            .transpose(),
        body.csat
            .as_deref()
            .map(|raw| required_enum("csat", Some(raw)))
            .transpose(),
        match &body.default_team_id {
            Patch::Missing => Ok(None),
            Patch::Null => Ok(Some(None)),
            Patch::Value(raw) => required_id("defaultTeamId", Some(raw)).map(|id| Some(Some(id))),
        },
    )
        .all_valid()?;
    let company = principal.tenant.company_id;
    if let Some(Some(team)) = default_team {
        // Checked first, so a bad team changes nothing.
        team_store::ensure_team(&db, &principal.tenant, team, "defaultTeamId").await?;
    }
    let entity = if entity_fields {
        let changes = store::EntityChanges {
            name: name.as_deref(),
            parent_id: parent,
            widget_identity,
            csat,
        };
        let db = principal.acting(&db, requested);
        store::update(&db, company, id, changes, clock.now()).await?
    } else {
        store::find(&db, company, id).await?
    };
    if let Some(team) = default_team {
        team_store::set_default_team(&db, &principal.tenant, id, team).await?;
    }
    Ok(Json(with_default_team(&db, &principal, entity).await?))
}
