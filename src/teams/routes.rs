//! `/teams`: list, create, get, update (members, entities, routing) and
//! delete. A change that can free or add capacity (routing, members) drains
//! the team's queue at once.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::{NewTeam, Routing, Team, TeamPatch, id_set, routing_patch};
use super::{routing, store};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiResult, FieldError};
use crate::extract::{Id, Json, Requested};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, DataList};
use crate::router::ApiRouter;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, ensure, required_text};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TeamsRead, routes!(list))
        .route(Scope::TeamsWrite, routes!(create))
        .route(Scope::TeamsRead, routes!(get_one))
        .route(Scope::TeamsWrite, routes!(update))
        .route(Scope::TeamsWrite, routes!(delete))
}

/// The routing settings of a create or PATCH; each field optional.
#[derive(Deserialize, ToSchema)]
#[schema(as = RoutingInput)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // read as JSON for field-by-field errors; here for the schema
pub(crate) struct RoutingBody {
    #[schema(schema_with = super::model::routing_mode)]
    mode: Option<String>,
    #[schema(minimum = 0, maximum = 1000)]
    chat_capacity: Option<i64>,
    #[schema(minimum = 0, maximum = 100000)]
    ticket_capacity: Option<i64>,
    include_tickets: Option<bool>,
}

#[derive(Deserialize, ToSchema)]
#[schema(as = TeamInput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TeamBody {
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    /// Users of the company; a user may be in several teams.
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    member_ids: Option<Value>,
    /// Entities of the company the team serves.
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    entity_ids: Option<Value>,
    #[schema(value_type = Option<RoutingBody>)]
    routing: Option<Value>,
}

fn optional_ids(field: &str, value: Option<&Value>) -> Result<Option<Vec<uuid::Uuid>>, FieldError> {
    value.map(|v| id_set(field, v)).transpose()
}

fn optional_routing(value: Option<&Value>) -> Result<super::model::RoutingPatch, Vec<FieldError>> {
    value
        .map(routing_patch)
        .transpose()
        .map(Option::unwrap_or_default)
}

/// List teams
///
/// The teams of the key's company and mode, oldest first, each with its
/// queue length.
#[utoipa::path(get, path = "/teams", operation_id = "list_teams", tag = "Teams",
    responses((status = 200, description = "The teams", body = DataList<Team>)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<Value>> {
    let teams = store::list(&db, &principal.tenant).await?;
    Ok(Json(serde_json::json!({ "data": teams })))
}

/// Create a team
///
/// `name` and `memberIds` are required; `routing` defaults to `manual`
/// with `chatCapacity` 3, `ticketCapacity` 20 and `includeTickets` false.
#[utoipa::path(post, path = "/teams", operation_id = "create_team", tag = "Teams",
    request_body = TeamBody,
    responses((status = 201, description = "Created", body = Team)))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<TeamBody>,
) -> ApiResult<(StatusCode, Json<Team>)> {
    let (name, members, entities, routing) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        body.member_ids
            .as_ref()
            .ok_or_else(|| crate::validate::problem("memberIds", "is required"))
            .and_then(|v| id_set("memberIds", v)),
        optional_ids("entityIds", body.entity_ids.as_ref()),
        optional_routing(body.routing.as_ref()),
    )
        .all_valid()?;
    let new = NewTeam {
        name,
        member_ids: members,
        entity_ids: entities.unwrap_or_default(),
        routing: routing.apply(Routing::default()),
    };
    let db = principal.acting(&state.db, requested);
    let team = store::create(&db, &principal.tenant, &new, state.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(team)))
}

/// Get a team
#[utoipa::path(get, path = "/teams/{id}", operation_id = "get_team", tag = "Teams",
    params(("id" = uuid::Uuid, Path, description = "Team id")),
    responses((status = 200, description = "The team", body = Team)))]
async fn get_one(State(db): State<Db>, principal: Principal, Id(id): Id) -> ApiResult<Json<Team>> {
    Ok(Json(store::find(&db, &principal.tenant, id).await?))
}

/// Update a team
///
/// Give at least one field; `memberIds` and `entityIds` replace the lists,
/// `routing` changes the fields it names. Queued chats are assigned at once
/// when the change lets members take them (routing turned on, capacity
/// raised, members added).
#[utoipa::path(patch, path = "/teams/{id}", operation_id = "update_team", tag = "Teams",
    request_body = TeamBody,
    params(("id" = uuid::Uuid, Path, description = "Team id")),
    responses((status = 200, description = "The updated team", body = Team)))]
async fn update(
    State(queues): State<routing::Routing>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    Json(body): Json<TeamBody>,
) -> ApiResult<Json<Team>> {
    let given = body.name.is_some()
        || body.member_ids.is_some()
        || body.entity_ids.is_some()
        || body.routing.is_some();
    let (_, name, members, entities, routing) = (
        ensure(
            given,
            "body",
            "give at least one of: name, memberIds, entityIds, routing",
        ),
        body.name
            .as_deref()
            .map(|raw| required_text("name", Some(raw), NAME_MAX))
            .transpose(),
        optional_ids("memberIds", body.member_ids.as_ref()),
        optional_ids("entityIds", body.entity_ids.as_ref()),
        optional_routing(body.routing.as_ref()),
    )
        .all_valid()?;
    let patch = TeamPatch {
        name,
        member_ids: members,
        entity_ids: entities,
        routing,
    };
    let db = principal.acting(&queues.db, requested);
    store::update(&db, &principal.tenant, id, &patch, queues.clock.now()).await?;
    // The change has committed: a failed drain is logged, and the periodic
    // drain assigns the chats instead.
    if let Err(err) = routing::drain(&queues, &principal.tenant, id).await {
        tracing::warn!(error = %err, team = %id, "team queue drain failed");
    }
    let team = store::find(&queues.db, &principal.tenant, id).await?;
    Ok(Json(team))
}

/// Delete a team
///
/// Its chat sessions and tickets keep their assignee and lose the team;
/// its queued chats stay unassigned.
#[utoipa::path(delete, path = "/teams/{id}", operation_id = "delete_team", tag = "Teams",
    params(("id" = uuid::Uuid, Path, description = "Team id")),
    responses((status = 204, description = "Deleted")))]
async fn delete(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
) -> ApiResult<StatusCode> {
    let db = principal.acting(&db, requested);
    store::delete(&db, &principal.tenant, id, clock.now()).await?;
    Ok(StatusCode::NO_CONTENT)
}
