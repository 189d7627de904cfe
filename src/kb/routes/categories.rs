//! Categories: list, create, read, change, delete.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use super::super::model::Category;
use super::{patched_slug, slug_conflict, slug_field, slug_schema, title_schema};
use crate::auth::Principal;
use crate::db::Db;
use crate::error::ApiResult;
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::kb::store;
use crate::openapi::schema::{self, DataList, Deleted, ErrorBody};
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, ensure, optional_id, required_id, required_text};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct CategoryParams {
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
}

/// List categories
#[utoipa::path(get, path = "/kb/categories", tag = "Knowledge base",
    params(CategoryParams),
    responses((status = 200, description = "Categories", body = DataList<Category>)))]
pub(super) async fn list_categories(
    State(db): State<Db>,
    principal: Principal,
    Query(params): Query<CategoryParams>,
) -> ApiResult<Json<Value>> {
    let (entity,) = (optional_id("entityId", params.entity_id.as_deref()),).all_valid()?;
    let tenant = principal.tenant;
    let categories = store::list_categories(&db, &tenant, entity).await?;
    Ok(Json(json!({ "data": categories })))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateCategory {
    #[schema(schema_with = schema::uuid, required)]
    entity_id: Option<String>,
    #[schema(schema_with = title_schema, required)]
    name: Option<String>,
    #[schema(schema_with = slug_schema)]
    slug: Option<String>,
}

/// Create a category
#[utoipa::path(post, path = "/kb/categories", tag = "Knowledge base",
    request_body = CreateCategory,
    responses(
        (status = 201, description = "Created", body = Category),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
pub(super) async fn create_category(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateCategory>,
) -> ApiResult<(StatusCode, Json<Category>)> {
    let (name, entity_id, slug) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        required_id("entityId", body.entity_id.as_deref()),
        slug_field(body.slug.as_deref()),
    )
        .all_valid()?;
    let (tenant, now) = (&principal.tenant, state.clock.now());
    let category =
        store::create_category(&state.db, tenant, entity_id, &name, slug.as_deref(), now)
            .await
            .map_err(slug_conflict("category"))?;
    Ok((StatusCode::CREATED, Json(category)))
}

/// Get a category
#[utoipa::path(get, path = "/kb/categories/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses((status = 200, description = "The category", body = Category)))]
pub(super) async fn get_category(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Category>> {
    Ok(Json(
        store::find_category(&db, &principal.tenant, id).await?,
    ))
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct UpdateCategory {
    #[schema(schema_with = title_schema)]
    name: Option<String>,
    #[schema(schema_with = slug_schema)]
    slug: Option<String>,
}

/// Update a category
#[utoipa::path(patch, path = "/kb/categories/{id}", tag = "Knowledge base",
    request_body = UpdateCategory,
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses(
        (status = 200, description = "The updated category", body = Category),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
pub(super) async fn update_category(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateCategory>,
) -> ApiResult<Json<Category>> {
    let (_, name, slug) = (
        ensure(
            body.name.is_some() || body.slug.is_some(),
            "body",
            "give at least one of: name, slug",
        ),
        body.name
            .as_deref()
            .map(|raw| required_text("name", Some(raw), NAME_MAX))
            .transpose(),
        patched_slug(body.slug.as_deref()),
    )
        .all_valid()?;
    let category = store::update_category(
        &db.acting(principal.actor()),
        &principal.tenant,
        id,
        name.as_deref(),
        slug.as_deref(),
        clock.now(),
    )
    .await
    .map_err(slug_conflict("category"))?;
    Ok(Json(category))
}

/// Delete a category
///
/// Its articles become uncategorised.
#[utoipa::path(delete, path = "/kb/categories/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
pub(super) async fn delete_category(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Value>> {
    let db = db.acting(principal.actor());
    store::delete_category(&db, &principal.tenant, id, clock.now()).await?;
    Ok(Json(json!({ "id": id, "deleted": true })))
}
