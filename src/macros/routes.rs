//! `/macros`: list, create, get, update and delete. A personal macro
//! belongs to the agent who made it (signed in, or by their personal key)
//! and is NotFound to everyone else; a shared one is every agent's. The
//! actions are checked here, once, into a `macros::Actions`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::{
    Actions, DESCRIPTION_MAX, Macro, NewMacro, PLACEHOLDERS, Set, Visibility, store,
    unknown_placeholders,
};
use crate::auth::{Principal, Scope};
use crate::custom_fields::DefinitionCache;
use crate::custom_fields::model::{Definition, RecordKind, check_values};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::{Id, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, DataList, Deleted, ErrorBody};
use crate::router::ApiRouter;
use crate::tags::model::tag_set;
use crate::tickets::model::COMMENT_MAX;
use crate::time::Clock;
use crate::validate::{
    Fields, NAME_MAX, Patch, ensure, optional_enum, optional_text, problem, required_enum,
    required_id, required_text,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::MacrosRead, routes!(list))
        .route(Scope::MacrosWrite, routes!(create))
        .route(Scope::MacrosRead, routes!(get_one))
        .route(Scope::MacrosWrite, routes!(update))
        .route(Scope::MacrosWrite, routes!(delete))
}

/// What a macro does; at least one part.
#[derive(Deserialize, ToSchema)]
#[schema(as = MacroActionsInput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ActionsBody {
    #[schema(schema_with = schema::ticket_status)]
    status: Option<String>,
    #[schema(schema_with = schema::ticket_priority)]
    priority: Option<String>,
    /// A user of the company; null unassigns.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    assigned_to_id: Patch<String>,
    /// A team of the company; null takes the ticket out of its team.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    team_id: Patch<String>,
    /// Tags to add (normalised as on a ticket).
    #[schema(value_type = Option<Vec<String>>)]
    add_tags: Option<Value>,
    /// Tags to remove.
    #[schema(value_type = Option<Vec<String>>)]
    remove_tags: Option<Value>,
    /// Custom field values to set (null clears one), by key.
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<Value>,
    /// A public reply. Placeholders: `{{ticket.number}}`,
    /// `{{ticket.subject}}`, `{{ticket.status}}`, `{{ticket.priority}}`,
    /// `{{requester.name}}`, `{{requester.email}}`, `{{agent.name}}`,
    /// `{{ticket.customFields.<key>}}`.
    #[schema(schema_with = comment_text)]
    reply: Option<String>,
    /// An internal note, with the same placeholders.
    #[schema(schema_with = comment_text)]
    note: Option<String>,
}

fn comment_text() -> utoipa::openapi::ObjectBuilder {
    schema::text(COMMENT_MAX)
}

fn description_text() -> utoipa::openapi::ObjectBuilder {
    schema::text(DESCRIPTION_MAX)
}

fn visibility_schema() -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(["personal", "shared"]))
}

#[derive(Deserialize, ToSchema)]
#[schema(as = MacroInput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct MacroBody {
    /// Required on create.
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    #[schema(schema_with = description_text)]
    description: Option<String>,
    /// `personal` (only its agent sees it; needs an agent: a session or a
    /// personal key) or `shared`. Required on create.
    #[schema(schema_with = visibility_schema)]
    visibility: Option<String>,
    /// Required on create; on update it replaces the actions whole.
    actions: Option<ActionsBody>,
}

/// The checked actions of `body`, the custom fields against the company's
/// `definitions`.
pub(crate) fn parse_actions(
    definitions: &[Definition],
    body: &ActionsBody,
) -> Result<Actions, Vec<FieldError>> {
    let tags = |field: &str, raw: &Option<Value>| match raw {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(raw) => tag_set(field, raw),
    };
    let (status, priority, assigned_to_id, team_id, add_tags, remove_tags, custom_fields) = (
        optional_enum("actions.status", body.status.as_deref()),
        optional_enum("actions.priority", body.priority.as_deref()),
        set_id("actions.assignedToId", &body.assigned_to_id),
        set_id("actions.teamId", &body.team_id),
        tags("actions.addTags", &body.add_tags),
        tags("actions.removeTags", &body.remove_tags),
        match &body.custom_fields {
            None | Some(Value::Null) => Ok(Default::default()),
            Some(raw) => check_values(definitions, RecordKind::Ticket, Some(raw), false, false),
        },
    )
        .collect_errors()?;
    let (reply, note) = (
        template("actions.reply", body.reply.as_deref()),
        template("actions.note", body.note.as_deref()),
    )
        .collect_errors()?;
    let actions = Actions {
        status,
        priority,
        assigned_to_id,
        team_id,
        add_tags,
        remove_tags,
        custom_fields,
        reply,
        note,
    };
    ensure(
        !actions.is_empty(),
        "actions",
        "give at least one of: status, priority, assignedToId, teamId, addTags, removeTags, \
         customFields, reply, note",
    )
    .map_err(|problem| vec![problem])?;
    Ok(actions)
}

fn set_id(field: &str, value: &Patch<String>) -> Result<Set<uuid::Uuid>, FieldError> {
    match value {
        Patch::Missing => Ok(Set::Keep),
        Patch::Null => Ok(Set::Clear),
        Patch::Value(raw) => required_id(field, Some(raw)).map(Set::To),
    }
}

/// A reply or note: text whose placeholders are all known.
fn template(field: &str, value: Option<&str>) -> Result<Option<String>, FieldError> {
    let Some(text) = optional_text(field, value, COMMENT_MAX)? else {
        return Ok(None);
    };
    match unknown_placeholders(&text).first() {
        Some(unknown) => Err(problem(
            field,
            format!(
                "unknown placeholder {{{{{unknown}}}}}; known: {}, ticket.customFields.<key>",
                PLACEHOLDERS.join(", ")
            ),
        )),
        None => Ok(Some(text)),
    }
}

/// The owner a macro of `visibility` gets: the acting agent for a personal
/// one (a company key has none: 400), none for a shared one.
fn owner(principal: &Principal, visibility: Visibility) -> Result<Option<uuid::Uuid>, ApiError> {
    match (visibility, principal.acting_user()) {
        (Visibility::Shared, _) => Ok(None),
        (Visibility::Personal, Some(agent)) => Ok(Some(agent)),
        (Visibility::Personal, None) => Err(ApiError::invalid_field(
            "visibility",
            "a personal macro belongs to an agent: sign in or use a personal key",
        )),
    }
}

pub(crate) async fn definitions(
    cache: &DefinitionCache,
    db: &Db,
    principal: &Principal,
) -> ApiResult<std::sync::Arc<Vec<Definition>>> {
    let tenant = &principal.tenant;
    Ok(crate::custom_fields::definitions(cache, db, tenant).await?)
}

/// List macros
///
/// The shared macros and the caller's personal ones, by name (at most
/// 1,000).
#[utoipa::path(get, path = "/macros", operation_id = "list_macros", tag = "Macros",
    responses((status = 200, description = "The macros", body = DataList<Macro>)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<DataList<Macro>>> {
    let data = store::list(&db, &principal.tenant, principal.acting_user()).await?;
    Ok(Json(DataList { data }))
}

/// Create a macro
///
/// `name`, `visibility` and `actions` are required. At most 1,000 per
/// company and mode (409 beyond).
#[utoipa::path(post, path = "/macros", operation_id = "create_macro", tag = "Macros",
    request_body = MacroBody,
    responses(
        (status = 201, description = "Created", body = Macro),
        (status = 409, description = "The company has 1,000 macros already", body = ErrorBody),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<MacroBody>,
) -> ApiResult<(StatusCode, Json<Macro>)> {
    let definitions = definitions(&state.field_definitions, &state.db, &principal).await?;
    let (name, description, visibility, actions) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        optional_text("description", body.description.as_deref(), DESCRIPTION_MAX),
        required_enum::<Visibility>("visibility", body.visibility.as_deref()),
        match &body.actions {
            None => Err(vec![problem("actions", "is required")]),
            Some(actions) => parse_actions(&definitions, actions),
        },
    )
        .all_valid()?;
    let new = NewMacro {
        name,
        description,
        visibility,
        owner_id: owner(&principal, visibility)?,
        actions,
    };
    let created = store::create(&state.db, &principal.tenant, new, state.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Get a macro
#[utoipa::path(get, path = "/macros/{id}", operation_id = "get_macro", tag = "Macros",
    params(("id" = uuid::Uuid, Path, description = "Macro id")),
    responses((status = 200, description = "The macro", body = Macro)))]
async fn get_one(State(db): State<Db>, principal: Principal, Id(id): Id) -> ApiResult<Json<Macro>> {
    let found = store::find(&db, &principal.tenant, principal.acting_user(), id).await?;
    Ok(Json(found))
}

/// Update a macro
///
/// Changes what it names; `actions` replaces the actions whole.
#[utoipa::path(patch, path = "/macros/{id}", operation_id = "update_macro", tag = "Macros",
    request_body = MacroBody,
    params(("id" = uuid::Uuid, Path, description = "Macro id")),
    responses((status = 200, description = "The macro", body = Macro)))]
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(definitions_cache): State<Arc<DefinitionCache>>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<MacroBody>,
) -> ApiResult<Json<Macro>> {
    let viewer = principal.acting_user();
    let definitions = definitions(&definitions_cache, &db, &principal).await?;
    let (name, description, visibility, actions) = (
        body.name
            .as_deref()
            .map(|name| required_text("name", Some(name), NAME_MAX))
            .transpose(),
        optional_text("description", body.description.as_deref(), DESCRIPTION_MAX),
        optional_enum::<Visibility>("visibility", body.visibility.as_deref()),
        body.actions
            .as_ref()
            .map(|actions| parse_actions(&definitions, actions))
            .transpose(),
    )
        .all_valid()?;
    let current = store::find(&db, &principal.tenant, viewer, id).await?;
    let visibility = visibility.unwrap_or(current.visibility);
    let owner_id = match visibility == current.visibility {
        true => current.owner_id,
        false => owner(&principal, visibility)?,
    };
    let changes = NewMacro {
        name: name.unwrap_or(current.name),
        description: match body.description {
            Some(_) => description,
            None => current.description,
        },
        visibility,
        owner_id,
        actions: actions.unwrap_or(current.actions),
    };
    let now = clock.now();
    let updated = store::update(&db, &principal.tenant, viewer, id, changes, now).await?;
    Ok(Json(updated))
}

/// Delete a macro
#[utoipa::path(delete, path = "/macros/{id}", operation_id = "delete_macro", tag = "Macros",
    params(("id" = uuid::Uuid, Path, description = "Macro id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Deleted>> {
    store::delete(&db, &principal.tenant, principal.acting_user(), id).await?;
    Ok(Json(Deleted { id, deleted: true }))
}
