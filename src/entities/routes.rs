//! `/entities`: list, create, get, update.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::{Entity, store};
use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::extract::{Id, Json};
use crate::openapi::schema::{self, DataList};
use crate::router::ApiRouter;
use crate::state::AppState;
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
    /// `optional` or `required`: whether widget sessions need a verified
    /// identity token.
    #[schema(value_type = Option<String>)]
    widget_identity: Option<String>,
}

/// List entities
///
/// Every entity of the company (entities are shared by both modes).
#[utoipa::path(get, path = "/entities", operation_id = "list_entities", tag = "Entities",
    responses((status = 200, description = "The company's entities", body = DataList<Entity>)))]
async fn list(
    State(state): State<AppState>,
    principal: Principal,
) -> ApiResult<Json<serde_json::Value>> {
    let entities = store::list(&state.db, principal.tenant.company_id).await?;
    Ok(Json(serde_json::json!({ "data": entities })))
}

/// Create an entity
#[utoipa::path(post, path = "/entities", operation_id = "create_entity", tag = "Entities",
    request_body = CreateEntity,
    responses((status = 201, description = "Created", body = Entity)))]
async fn create(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateEntity>,
) -> ApiResult<(StatusCode, Json<store::Entity>)> {
    let (name, parent) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        optional_id("parentId", body.parent_id.as_deref()),
    )
        .all_valid()?;
    let entity = store::create(&state.db, principal.tenant.company_id, &name, parent).await?;
    Ok((StatusCode::CREATED, Json(entity)))
}

/// Get an entity
#[utoipa::path(get, path = "/entities/{id}", operation_id = "get_entity", tag = "Entities",
    params(("id" = uuid::Uuid, Path, description = "Entity id")),
    responses((status = 200, description = "The entity", body = Entity)))]
async fn get_one(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<store::Entity>> {
    Ok(Json(
        store::find(&state.db, principal.tenant.company_id, id).await?,
    ))
}

/// Update an entity
///
/// Give at least one field; a `parentId` must be another entity of the
/// company and must not make a cycle.
#[utoipa::path(patch, path = "/entities/{id}", operation_id = "update_entity", tag = "Entities",
    request_body = UpdateEntity,
    params(("id" = uuid::Uuid, Path, description = "Entity id")),
    responses((status = 200, description = "The updated entity", body = Entity)))]
async fn update(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateEntity>,
) -> ApiResult<Json<store::Entity>> {
    let (_, name, parent, widget_identity) = (
        ensure(
            body.name.is_some() || !body.parent_id.is_missing() || body.widget_identity.is_some(),
            "body",
            "give at least one of: name, parentId, widgetIdentity",
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
    )
        .all_valid()?;
    let entity = store::update(
        &state.db,
        principal.tenant.company_id,
        id,
        name.as_deref(),
        parent,
        widget_identity,
    )
    .await?;
    Ok(Json(entity))
}
