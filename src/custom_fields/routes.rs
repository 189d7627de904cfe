//! `/settings/custom-fields`: the company's custom field definitions (in
//! the key's mode). The key names a field for good; PATCH changes the rest.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::{Definition, FieldType, RecordKind, check_applies_to, check_key, check_options};
use super::store::{self, DefinitionInput};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::{Json, Requested};
use crate::idempotency::RequestState;
use crate::realtime::Realtime;
use crate::router::ApiRouter;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, Patch, problem, required_enum, required_text};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::SettingsRead, routes!(list))
        .route(Scope::SettingsWrite, routes!(create))
        .route(Scope::SettingsWrite, routes!(update))
        .route(Scope::SettingsWrite, routes!(delete))
}

#[derive(Serialize, ToSchema)]
#[schema(as = CustomFieldList)]
pub(crate) struct DefinitionList {
    data: Vec<Definition>,
}

/// The answer to a delete.
#[derive(Serialize, ToSchema)]
#[schema(as = DeletedCustomField)]
pub(crate) struct DeletedField {
    key: String,
    /// Always true.
    deleted: bool,
}

#[derive(Deserialize, ToSchema)]
#[schema(as = CreateCustomField)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateBody {
    /// `[a-z][a-z0-9_]{0,39}`, unique in the company and mode; immutable.
    #[schema(value_type = String, pattern = "^[a-z][a-z0-9_]{0,39}$", required)]
    key: Option<String>,
    #[schema(value_type = String, min_length = 1, max_length = 255, required)]
    label: Option<String>,
    /// `text`, `number`, `boolean`, `date`, `datetime`, `select` or
    /// `multiselect`.
    #[serde(rename = "type")]
    #[schema(schema_with = field_type_schema, required)]
    field_type: Option<String>,
    /// `["ticket"]`, `["chat"]` or both.
    #[schema(schema_with = applies_to_schema, required)]
    applies_to: Option<Value>,
    /// Required (non-empty, distinct) for select and multiselect; refused
    /// for other types.
    #[schema(value_type = Option<Vec<String>>)]
    options: Option<Value>,
    /// Default false.
    required: Option<bool>,
    /// Default false: visitors may set it through the widget.
    visitor_writable: Option<bool>,
}

/// Any of the fields but `key`; the others keep their values.
#[derive(Deserialize, ToSchema)]
#[schema(as = UpdateCustomField)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateBody {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 255)]
    label: Patch<String>,
    /// Refused (409) while records hold values of the field.
    #[serde(default, rename = "type")]
    #[schema(schema_with = field_type_schema)]
    field_type: Patch<String>,
    /// Dropping a kind is refused (409) while its records hold values.
    #[serde(default)]
    #[schema(schema_with = applies_to_schema)]
    applies_to: Patch<Value>,
    /// Removing an option is refused (409) while records hold it.
    #[serde(default)]
    #[schema(value_type = Vec<String>)]
    options: Patch<Value>,
    #[serde(default)]
    #[schema(value_type = bool)]
    required: Patch<bool>,
    #[serde(default)]
    #[schema(value_type = bool)]
    visitor_writable: Patch<bool>,
}

/// List custom fields
///
/// The company's custom field definitions in the key's mode, by key.
#[utoipa::path(get, path = "/settings/custom-fields", operation_id = "list_custom_fields",
    tag = "Settings",
    responses((status = 200, description = "The definitions", body = DefinitionList)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<DefinitionList>> {
    let data = store::list(&db, &principal.tenant).await?;
    Ok(Json(DefinitionList { data }))
}

/// Create a custom field
///
/// At most 100 per company and mode; an existing key is a 409.
#[utoipa::path(post, path = "/settings/custom-fields", operation_id = "create_custom_field",
    tag = "Settings",
    request_body = CreateBody,
    responses((status = 201, description = "Created", body = Definition),
        (status = 409, description = "The key exists", body = crate::openapi::schema::ErrorBody)))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<CreateBody>,
) -> ApiResult<(StatusCode, Json<Definition>)> {
    let (key, label, field_type, applies_to) = (
        match body.key.as_deref() {
            None => Err(problem("key", "is required")),
            Some(raw) => check_key("key", raw),
        },
        required_text("label", body.label.as_deref(), NAME_MAX),
        required_enum::<FieldType>("type", body.field_type.as_deref()),
        match &body.applies_to {
            None => Err(problem("appliesTo", "is required")),
            Some(value) => check_applies_to(value),
        },
    )
        .all_valid()?;
    let options = check_options(field_type, body.options.as_ref()).map_err(one)?;
    let input = DefinitionInput {
        label,
        field_type,
        applies_to,
        options,
        required: body.required.unwrap_or(false),
        visitor_writable: body.visitor_writable.unwrap_or(false),
    };
    let definition = store::create(
        &principal.acting(&state.db, requested),
        &principal.tenant,
        &key,
        &input,
        state.clock.now(),
    )
    .await?;
    state
        .field_definitions
        .changed(&state.realtime.bus, principal.tenant.company_id)
        .await;
    Ok((StatusCode::CREATED, Json(definition)))
}

/// Update a custom field
///
/// Changes anything but the key. Refused with 409 while records hold values
/// the change would strand: another type, a removed option, a record kind
/// the field no longer applies to.
#[utoipa::path(patch, path = "/settings/custom-fields/{key}", operation_id = "update_custom_field",
    tag = "Settings",
    request_body = UpdateBody,
    params(("key" = String, Path, description = "The field's key")),
    responses((status = 200, description = "The updated definition", body = Definition),
        (status = 409, description = "Records hold values the change would strand",
            body = crate::openapi::schema::ErrorBody)))]
#[allow(clippy::too_many_arguments)] // an axum handler: one extractor per handle it uses
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(definitions): State<Arc<super::DefinitionCache>>,
    State(realtime): State<Arc<Realtime>>,
    principal: Principal,
    requested: Requested,
    Path(key): Path<String>,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Json<Definition>> {
    let current = store::list(&db, &principal.tenant)
        .await?
        .into_iter()
        .find(|d| d.key == key)
        .ok_or_else(ApiError::not_found)?;
    let (label, field_type, applies_to, required, visitor_writable) = (
        match &body.label {
            Patch::Missing => Ok(current.label.clone()),
            Patch::Null => Err(problem("label", "must not be null")),
            Patch::Value(raw) => required_text("label", Some(raw), NAME_MAX),
        },
        match &body.field_type {
            Patch::Missing => Ok(current.field_type),
            Patch::Null => Err(problem("type", "must not be null")),
            Patch::Value(raw) => required_enum::<FieldType>("type", Some(raw)),
        },
        match &body.applies_to {
            Patch::Missing => Ok(current.applies_to.clone()),
            Patch::Null => Err(problem("appliesTo", "must not be null")),
            Patch::Value(value) => check_applies_to(value),
        },
        not_null("required", &body.required, current.required),
        not_null(
            "visitorWritable",
            &body.visitor_writable,
            current.visitor_writable,
        ),
    )
        .all_valid()?;
    // Options given are checked against the (new) type; absent ones stay
    // when the type keeps having options.
    let options = match &body.options {
        Patch::Value(value) => check_options(field_type, Some(value)),
        Patch::Null => check_options(field_type, None),
        Patch::Missing if field_type.has_options() && current.field_type.has_options() => {
            Ok(current.options.clone())
        }
        Patch::Missing => check_options(field_type, None),
    }
    .map_err(one)?;
    let input = DefinitionInput {
        label,
        field_type,
        applies_to,
        options,
        required,
        visitor_writable,
    };
    let updated = store::update(
        &principal.acting(&db, requested),
        &principal.tenant,
        &key,
        &input,
        clock.now(),
    )
    .await?;
    definitions
        .changed(&realtime.bus, principal.tenant.company_id)
        .await;
    Ok(Json(updated))
}

/// Delete a custom field
///
/// Removes its values from every ticket and chat session, in the same
/// transaction.
#[utoipa::path(delete, path = "/settings/custom-fields/{key}", operation_id = "delete_custom_field",
    tag = "Settings",
    params(("key" = String, Path, description = "The field's key")),
    responses((status = 200, description = "Deleted", body = DeletedField)))]
async fn delete(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(definitions): State<Arc<super::DefinitionCache>>,
    State(realtime): State<Arc<Realtime>>,
    principal: Principal,
    requested: Requested,
    Path(key): Path<String>,
) -> ApiResult<Json<DeletedField>> {
    let db = principal.acting(&db, requested);
    store::delete(&db, &principal.tenant, &key, clock.now()).await?;
    definitions
        .changed(&realtime.bus, principal.tenant.company_id)
        .await;
    Ok(Json(DeletedField { key, deleted: true }))
}

fn field_type_schema() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(FieldType::NAMES)
}

/// One kind of record or both (a repeat counts once).
fn applies_to_schema() -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(crate::openapi::schema::enum_of(RecordKind::NAMES))
        .min_items(Some(1))
}

fn not_null(field: &str, value: &Patch<bool>, current: bool) -> Result<bool, FieldError> {
    match value {
        Patch::Missing => Ok(current),
        Patch::Null => Err(problem(field, "must not be null")),
        Patch::Value(value) => Ok(*value),
    }
}

fn one(problem: FieldError) -> ApiError {
    ApiError::validation(vec![problem])
}

/// The definitions a list request's `cf.` filters need: none (and no
/// lookup) when the request has no such filter.
pub(crate) async fn definitions_for_filters(
    cache: &super::DefinitionCache,
    db: &Db,
    principal: &Principal,
    raw_query: Option<&str>,
) -> ApiResult<Arc<Vec<super::model::Definition>>> {
    let filtered = form_urlencoded::parse(raw_query.unwrap_or_default().as_bytes())
        .any(|(name, _)| name.starts_with("cf."));
    if !filtered {
        return Ok(Arc::default());
    }
    Ok(super::definitions(cache, db, &principal.tenant).await?)
}
