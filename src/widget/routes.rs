//! Handlers of `/widget/v1`.

use std::sync::Arc;

use axum::extract::{FromRef, State};
use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::access::{self, IssuedToken, VisitorTokens};
use super::target::target;
use crate::actor::Actor;
use crate::attachments::links::Signer;
use crate::chat::model::{NewSession, VisitorMessage, VisitorSession};
use crate::chat::{ChatDeps, Message, service};
use crate::custom_fields::model::{RecordKind, check_values, without_agent_only};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::ErrorBody;
use crate::realtime::Realtime;
use crate::state::AppState;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, optional_email, optional_text};

/// The routes with their OpenAPI operations: each handler's
/// `#[utoipa::path]` gives its method and path, so a route and its
/// operation are one declaration. Each route also takes OPTIONS: the CORS
/// layer wraps only the methods a route has, and answers preflights there
/// (the app-wide 405 fallback would otherwise answer them, without CORS
/// headers).
pub fn router() -> OpenApiRouter<AppState> {
    documented()
        .into_iter()
        .fold(OpenApiRouter::new(), |router, routes| router.routes(routes))
}

/// Every schema the handlers of `router` register, as (name, schema)
/// pairs, before the document keeps one per name.
pub fn registered_schemas() -> Vec<(String, RefOr<Schema>)> {
    documented()
        .into_iter()
        .flat_map(|(schemas, _, _)| schemas)
        .collect()
}

fn documented() -> Vec<Documented> {
    let (schemas, paths, sessions) = routes!(create_session, super::visitors::history);
    let sessions = sessions
        .options(preflight)
        .route_layer(axum::middleware::from_fn(super::idempotent::session));
    vec![
        (schemas, paths, sessions),
        with_preflight(routes!(read_session)),
        keyed(with_preflight(routes!(super::tokens::refresh))),
        keyed(with_preflight(routes!(super::tokens::exchange))),
        keyed(with_preflight(routes!(crate::attachments::visitor::upload))),
        with_preflight(routes!(presence)),
        with_preflight(routes!(super::kb::search)),
        with_preflight(routes!(super::suggestions::suggest)),
        with_preflight(routes!(super::suggestions::answered)),
        with_preflight(routes!(super::kb::article)),
        with_preflight(routes!(super::visitors::confirm_email)),
        keyed(with_preflight(routes!(crate::csat::widget::rate))),
        with_preflight(routes!(crate::csat::widget::page)),
    ]
}

type Documented = utoipa_axum::router::UtoipaMethodRouter<AppState>;

fn with_preflight((schemas, paths, methods): Documented) -> Documented {
    (schemas, paths, methods.options(preflight))
}

/// A visitor POST under its `Idempotency-Key` (see `idempotent::visitor`).
fn keyed((schemas, paths, methods): Documented) -> Documented {
    let methods = methods.route_layer(axum::middleware::from_fn(super::idempotent::visitor));
    (schemas, paths, methods)
}

/// Reached only by an OPTIONS request that is not a CORS preflight.
pub(crate) async fn preflight() -> StatusCode {
    StatusCode::NO_CONTENT
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(super) struct KeyQuery {
    /// The entity's public widget key (`wk_test_…` or `wk_live_…`).
    #[param(value_type = String, required, min_length = 1, max_length = 100)]
    pub(super) widget_key: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct StartChat {
    /// The entity's public widget key (`wk_test_…` or `wk_live_…`).
    #[schema(value_type = String, required, min_length = 1, max_length = 100)]
    widget_key: Option<String>,
    /// Default `Visitor`; an identity token's `name` wins.
    #[schema(value_type = Option<String>, max_length = 255)]
    visitor_name: Option<String>,
    /// Unverified: agent replies are mailed to it only after the visitor
    /// confirms it through the link sent to it. An identity token's
    /// `email` wins.
    #[schema(value_type = Option<String>, format = Email, max_length = 255)]
    visitor_email: Option<String>,
    /// A JWT (HS256) from the customer's backend, signed with the entity's
    /// widget identity secret: the session is then verified.
    #[schema(value_type = Option<String>)]
    identity_token: Option<String>,
    /// Values of the company's visitor-writable custom fields. A field
    /// only agents may set is left out (named in `ignoredCustomFields`).
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<serde_json::Value>,
    /// The question the visitor typed before asking for a human ("I still
    /// need help"): the articles suggested for it are kept for the agent
    /// (`GET /api/v1/kb/suggestions?chatSessionId=`).
    #[schema(value_type = Option<String>, max_length = 500)]
    question: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct StartedChat {
    /// The session as its visitor sees it.
    #[serde(flatten)]
    #[schema(value_type = VisitorSession)]
    session: serde_json::Value,
    /// `visitorToken` (`vt_…`) opens `/api/v1/ws?token=` for this session,
    /// and is the bearer token of the other visitor operations, until
    /// `visitorTokenExpiresAt` (refresh it before).
    #[serde(flatten)]
    token: IssuedToken,
    /// The keys of `customFields` left out because only agents may set
    /// them (sorted; absent when none was).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ignored_custom_fields: Vec<String>,
}

/// Start a chat (visitor)
///
/// A chat session in the widget key's entity and mode, with its visitor
/// token. `customFields` sets visitor-writable fields; a field only agents
/// may set is left out and named in `ignoredCustomFields`. With an
/// identity token the visitor's name and email come from its claims; when
/// the entity's `widgetIdentity` is `required`, a session without one is
/// refused. Each client IP may start a few chats at a time
/// (`SUPPORTDESK_WIDGET_SESSION_RATE`), then 429.
#[utoipa::path(post, path = "/widget/v1/sessions", operation_id = "widget_create_session",
    tag = "Widget",
    // Marks the operation as idempotent: the document states the header
    // and its answers as on every API POST.
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = StartChat,
    responses(
        (status = 201, description = "Started", body = StartedChat),
        (status = 400, description = "`validation_failed` or `invalid_json`", body = ErrorBody),
        (status = 401, description = "`invalid_token`: the identity token is invalid, expired \
            or for another entity; `identity_required`: the entity requires one",
            body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown widget key", body = ErrorBody)))]
async fn create_session(
    RequestState(state): RequestState,
    Json(body): Json<StartChat>,
) -> ApiResult<(StatusCode, Json<StartedChat>)> {
    let target = target(&state.db, &state.clock, body.widget_key.as_deref()).await?;
    let definitions =
        crate::custom_fields::definitions(&state.field_definitions, &state.db, &target.tenant)
            .await?;
    let (given_fields, ignored_custom_fields) =
        without_agent_only(&definitions, RecordKind::Chat, body.custom_fields.as_ref());
    let (visitor_name, visitor_email, custom_fields, question) = (
        optional_text("visitorName", body.visitor_name.as_deref(), NAME_MAX),
        optional_email("visitorEmail", body.visitor_email.as_deref()),
        check_values(
            &definitions,
            RecordKind::Chat,
            given_fields.as_ref(),
            true,
            true,
        ),
        super::suggestions::question_field(body.question.as_deref()),
    )
        .all_valid()?;
    let (visitor_name, visitor_email, identity, secret) = super::visitors::visitor(
        &state.public_url,
        state.clock.now(),
        &target,
        body.identity_token.as_deref(),
        visitor_name,
        visitor_email,
    )?;
    let new = NewSession {
        id: crate::time::new_id(),
        entity_id: target.entity_id,
        visitor_name,
        visitor_email,
        tags: Vec::new(),
        custom_fields,
        identity,
    };
    let actor = Actor::visitor(new.id, &new.visitor_name);
    let (session, token) = service::create_session(
        &ChatDeps::from_ref(&state),
        &actor,
        &target.tenant,
        new,
        secret,
    )
    .await?;
    if let Some(question) = question {
        // The chat is open whatever happens here: a failure to keep the
        // suggestions is logged, never the visitor's problem.
        if let Err(error) =
            super::suggestions::hand_off(&state.db, &state.clock, &target, question, session.id)
                .await
        {
            tracing::warn!(?error, session = %session.id, "could not keep the suggestions");
        }
    }
    Ok((
        StatusCode::CREATED,
        Json(StartedChat {
            session: session.visitor_view(),
            token,
            ignored_custom_fields,
        }),
    ))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct VisitorChat {
    /// The session as its visitor sees it.
    #[serde(flatten)]
    #[schema(value_type = VisitorSession)]
    session: serde_json::Value,
    /// Oldest first; an agent's name, never their user id.
    messages: Vec<VisitorMessage>,
}

/// Read a chat with its messages (visitor)
///
/// The session and its messages (oldest first), for a widget that reloads
/// or continues from the email link. The visitor token opens its own
/// session only.
#[utoipa::path(get, path = "/widget/v1/sessions/{id}", operation_id = "widget_read_session",
    tag = "Widget",
    params(("id" = Uuid, Path, description = "The session's id")),
    security(("VisitorToken" = [])),
    responses(
        (status = 200, description = "The session and its messages", body = VisitorChat),
        (status = 401, description = "`invalid_token`", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 404, description = "`not_found`: not the token's session", body = ErrorBody)))]
async fn read_session(
    State(tokens): State<VisitorTokens>,
    State(signer): State<Signer>,
    Id(id): Id,
    headers: HeaderMap,
) -> ApiResult<Json<VisitorChat>> {
    let visitor = access::from_headers(&tokens, &headers, access::Use::Read).await?;
    if visitor.session_id() != id {
        return Err(ApiError::not_found());
    }
    let tenant = visitor.tenant();
    let session = crate::chat::store::find_session(&tokens.db, &tenant, id).await?;
    let messages = crate::chat::store::messages(&tokens.db, &tenant, id, &signer).await?;
    Ok(Json(VisitorChat {
        session: session.visitor_view(),
        messages: messages.iter().map(Message::visitor_view).collect(),
    }))
}

/// An online agent as visitors see them.
#[derive(Serialize, ToSchema)]
struct PublicAgent {
    name: String,
}

#[derive(Serialize, ToSchema)]
struct PresenceReply {
    /// Whether any public agent is online.
    online: bool,
    /// By name.
    agents: Vec<PublicAgent>,
}

/// Whether agents are online (visitor)
///
/// Whether PUBLIC agents of the key's company and mode are online, with
/// their names. Never a PRIVATE agent, never an email or id.
#[utoipa::path(get, path = "/widget/v1/presence", operation_id = "widget_presence",
    tag = "Widget",
    params(KeyQuery),
    responses(
        (status = 200, description = "Who is online", body = PresenceReply),
        (status = 400, description = "`validation_failed`: no widget key", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown widget key", body = ErrorBody)))]
async fn presence(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(realtime): State<Arc<Realtime>>,
    Query(query): Query<KeyQuery>,
) -> ApiResult<Json<PresenceReply>> {
    let target = target(&db, &clock, query.widget_key.as_deref()).await?;
    let mut agents: Vec<PublicAgent> = realtime
        .presence
        .online(&target.tenant)
        .await?
        .into_iter()
        .filter(|agent| agent.is_public())
        .map(|agent| PublicAgent { name: agent.name })
        .collect();
    agents.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Json(PresenceReply {
        online: !agents.is_empty(),
        agents,
    }))
}
