//! `/automations`: list, create, get, update, delete, and the dry run.
//! Bodies are parsed here, once, into a `NewAutomation`: every problem of
//! a rule is listed in one 400.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::engine::Context;
use super::timed::{WouldChange, dry_run as run_dry};
use super::{Automation, Kind, NewAutomation, actions, conditions, parse_events, store};
use crate::attachments::links::Signer;
use crate::auth::{Principal, Scope};
use crate::custom_fields::DefinitionCache;
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Requested};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, DataList, Deleted};
use crate::router::ApiRouter;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, problem, required_enum, required_text};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::AutomationsRead, routes!(list))
        .route(Scope::AutomationsWrite, routes!(create))
        .route(Scope::AutomationsRead, routes!(get_one))
        .route(Scope::AutomationsWrite, routes!(update))
        .route(Scope::AutomationsWrite, routes!(delete))
        .route(Scope::AutomationsRead, routes!(dry_run))
}

fn kind_schema() -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(["trigger", "timed"]))
}

#[derive(Deserialize, ToSchema)]
#[schema(as = AutomationInput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct AutomationBody {
    /// Required on create.
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    /// `trigger` or `timed`; required on create.
    #[schema(schema_with = kind_schema)]
    kind: Option<String>,
    /// A trigger's events: `ticket.created`, `ticket.updated`,
    /// `comment.created`.
    #[schema(value_type = Option<Vec<String>>)]
    events: Option<Value>,
    /// `{"all": [{field, operator, value}], "any": [...]}`.
    #[schema(value_type = Option<Object>)]
    conditions: Option<Value>,
    /// `[{type, value}]`; required on create.
    #[schema(value_type = Option<Vec<Object>>)]
    actions: Option<Value>,
    /// Its place among the company's automations (lower runs first);
    /// after the last when not given.
    position: Option<i64>,
    /// Default true.
    enabled: Option<bool>,
}

/// The rule `body` names, each part from `body` or else from `current`.
fn parse(body: &AutomationBody, current: Option<&Automation>) -> ApiResult<NewAutomation> {
    let kind_text = body
        .kind
        .clone()
        .or_else(|| current.map(|c| c.kind.as_str().to_string()));
    let name = body
        .name
        .clone()
        .or_else(|| current.map(|c| c.name.clone()));
    let (name, kind) = (
        required_text("name", name.as_deref(), NAME_MAX),
        required_enum::<Kind>("kind", kind_text.as_deref()),
    )
        .all_valid()?;
    let events = body
        .events
        .clone()
        .or_else(|| current.map(|c| json(&c.events)));
    let given_conditions = body
        .conditions
        .clone()
        .or_else(|| current.map(|c| json(&c.conditions)));
    let given_actions = body
        .actions
        .clone()
        .or_else(|| current.map(|c| json(&c.actions)));
    let position = body.position.or_else(|| current.map(|c| c.position));
    let (events, conditions, actions, position) = (
        parse_events(kind, events.as_ref()),
        conditions::parse(kind, given_conditions.as_ref()),
        actions::parse(given_actions.as_ref()),
        match position {
            Some(p) if !(0..=1_000_000).contains(&p) => {
                Err(problem("position", "must be 0 to 1000000"))
            }
            p => Ok(p),
        },
    )
        .all_valid()?;
    let rule = NewAutomation {
        name,
        kind,
        events,
        conditions,
        actions,
        position,
        enabled: body
            .enabled
            .or_else(|| current.map(|c| c.enabled))
            .unwrap_or(true),
    };
    super::chat::check(&rule).map_err(ApiError::validation)?;
    Ok(rule)
}

/// What was read, as JSON, to parse again beside what a PATCH gives.
fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// List automations
///
/// The company's automations in the order they run.
#[utoipa::path(get, path = "/automations", operation_id = "list_automations", tag = "Automations",
    responses((status = 200, description = "The automations", body = DataList<Automation>)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<DataList<Automation>>> {
    let data = store::list(&db, &principal.tenant).await?;
    Ok(Json(DataList { data }))
}

/// Create an automation
///
/// `name`, `kind` and `actions` are required; a trigger names its
/// `events`, a timed automation a `minutesSince…` condition with `gte`.
/// At most 500 per company and mode (409 beyond).
#[utoipa::path(post, path = "/automations", operation_id = "create_automation", tag = "Automations",
    request_body = AutomationBody,
    responses(
        (status = 201, description = "Created", body = Automation),
        (status = 409, description = "The company has 500 automations already", body = schema::ErrorBody),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<AutomationBody>,
) -> ApiResult<(StatusCode, Json<Automation>)> {
    let new = parse(&body, None)?;
    let tenant = &principal.tenant;
    let kind = new.kind;
    let db = principal.acting(&state.db, requested);
    let created = store::create(&db, tenant, new, state.clock.now()).await?;
    if kind == Kind::Trigger {
        crate::sequences::automations::start_triggers(&state.db, tenant).await?;
    }
    Ok((StatusCode::CREATED, Json(created)))
}

/// Get an automation
#[utoipa::path(get, path = "/automations/{id}", operation_id = "get_automation", tag = "Automations",
    params(("id" = uuid::Uuid, Path, description = "Automation id")),
    responses((status = 200, description = "The automation", body = Automation)))]
async fn get_one(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Automation>> {
    Ok(Json(store::find(&db, &principal.tenant, id).await?))
}

/// Update an automation
///
/// Changes what it names; `conditions`, `actions` and `events` replace
/// theirs whole.
#[utoipa::path(patch, path = "/automations/{id}", operation_id = "update_automation", tag = "Automations",
    request_body = AutomationBody,
    params(("id" = uuid::Uuid, Path, description = "Automation id")),
    responses((status = 200, description = "The automation", body = Automation)))]
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    Json(body): Json<AutomationBody>,
) -> ApiResult<Json<Automation>> {
    let tenant = &principal.tenant;
    let current = store::find(&db, tenant, id).await?;
    let changes = parse(&body, Some(&current))?;
    let kind = changes.kind;
    let db = principal.acting(&db, requested);
    let updated = store::update(&db, tenant, id, changes, clock.now()).await?;
    if kind == Kind::Trigger {
        crate::sequences::automations::start_triggers(&db, tenant).await?;
    }
    Ok(Json(updated))
}

/// Delete an automation
#[utoipa::path(delete, path = "/automations/{id}", operation_id = "delete_automation", tag = "Automations",
    params(("id" = uuid::Uuid, Path, description = "Automation id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
) -> ApiResult<Json<Deleted>> {
    let db = principal.acting(&db, requested);
    store::delete(&db, &principal.tenant, id, clock.now()).await?;
    Ok(Json(Deleted { id, deleted: true }))
}

/// Dry-run an automation
///
/// The tickets it matches now and what it would change on each, its
/// actions run and rolled back: nothing is written, announced or sent. A
/// timed automation lists the tickets its next pass would change; a
/// trigger, the company's latest 500 tickets its conditions hold for
/// (conditions on what an event changed hold for none).
#[utoipa::path(post, path = "/automations/{id}/dry-run", operation_id = "dry_run_automation",
    tag = "Automations",
    params(("id" = uuid::Uuid, Path, description = "Automation id")),
    responses((status = 200, description = "What it would change", body = DataList<WouldChange>)))]
async fn dry_run(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(definitions_cache): State<Arc<DefinitionCache>>,
    State(signer): State<Signer>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<DataList<WouldChange>>> {
    let tenant = &principal.tenant;
    let rule = store::find(&db, tenant, id).await?;
    let definitions = crate::custom_fields::definitions(&definitions_cache, &db, tenant).await?;
    let ctx = Context {
        tenant: *tenant,
        now: clock.now(),
        signer: &signer,
        definitions: &definitions,
        parties: &crate::sequences::contacts::Parties,
        chats: &crate::sequences::automations::Chats,
    };
    let data = run_dry(&db, &ctx, &rule).await?;
    Ok(Json(DataList { data }))
}
