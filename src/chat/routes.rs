//! `/chat/sessions`: sessions and their tags. Sending a message is
//! `message_routes`; agent presence and `/ws/tokens` (the short-lived
//! socket tokens for browser agent consoles) are `presence_routes`.

use std::sync::Arc;

use axum::extract::{FromRef, RawQuery, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa_axum::routes;

use super::model::{Message, NewSession, Session, SessionFilter, SessionTags, session_status};
use super::{ChatDeps, service, store};
use crate::attachments::links::Signer;
use crate::auth::{Principal, Scope};
use crate::custom_fields::DefinitionCache;
use crate::custom_fields::model::{RecordKind, check_values, field_filter};
use crate::custom_fields::routes::definitions_for_filters;
use crate::db::Db;
use crate::error::{ApiResult, FieldError};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::ErrorBody;
use crate::paging::{After, CursorPage, Cursors, ListId, ListRequest, refuse_after_in_rank_order};
use crate::query_params::SessionLabelFilters;
use crate::router::ApiRouter;
use crate::search;
use crate::tags::model::{optional_tag_set, tag_filter, tag_set};
use crate::tags::routes::{TagEditBody, tag_edit};
use crate::validate::{
    Fields, NAME_MAX, Patch, ensure, optional_email, optional_enum, optional_id, optional_text,
    required_id,
};
use crate::versions::{IfMatch, Versioned};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ChatWrite, routes!(create_session))
        .route(Scope::ChatRead, routes!(list_sessions))
        .route(Scope::ChatRead, routes!(get_session))
        .route(Scope::ChatWrite, routes!(update_session))
        .route(Scope::ChatWrite, routes!(edit_session_tags))
        .merge(super::message_routes::router())
        .merge(super::presence_routes::router())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateSession {
    #[schema(value_type = uuid::Uuid, required)]
    entity_id: Option<String>,
    /// Defaults to "Visitor".
    #[schema(max_length = 255)]
    visitor_name: Option<String>,
    #[schema(format = Email, max_length = 255)]
    visitor_email: Option<String>,
    /// Tags: trimmed and lower-cased, 1-50 letters, digits, `-`, `_`, `:`
    /// or `.` each, at most 50; duplicates collapse.
    #[schema(value_type = Option<Vec<String>>)]
    tags: Option<serde_json::Value>,
    /// Values of custom fields applying to chats, by key; each required
    /// one must be given.
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<serde_json::Value>,
    /// A team of the company (in the key's mode); defaults to the entity's
    /// default team. A routed team assigns the chat or queues it.
    #[schema(value_type = Option<uuid::Uuid>)]
    team_id: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreatedSession {
    #[serde(flatten)]
    session: Session,
    /// For the visitor's widget: its socket and its messages, until
    /// `visitorTokenExpiresAt`.
    #[serde(flatten)]
    visitor_token: crate::widget::access::IssuedToken,
}

/// Start a chat session
///
/// Returns the visitor's token (for the widget's socket) once.
#[utoipa::path(post, path = "/chat/sessions", tag = "Chat",
    request_body = CreateSession,
    responses((status = 201, description = "Created", body = CreatedSession)))]
async fn create_session(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateSession>,
) -> ApiResult<(StatusCode, Json<CreatedSession>)> {
    let definitions =
        crate::custom_fields::definitions(&state.field_definitions, &state.db, &principal.tenant)
            .await?;
    let (entity_id, visitor_name, visitor_email, tags, custom_fields, team_id) = (
        required_id("entityId", body.entity_id.as_deref()),
        optional_text("visitorName", body.visitor_name.as_deref(), NAME_MAX),
        optional_email("visitorEmail", body.visitor_email.as_deref()),
        optional_tag_set("tags", body.tags.as_ref()),
        check_values(
            &definitions,
            RecordKind::Chat,
            body.custom_fields.as_ref(),
            true,
            false,
        ),
        optional_id("teamId", body.team_id.as_deref()),
    )
        .all_valid()?;
    let new = NewSession {
        id: crate::time::new_id(),
        entity_id,
        visitor_name: visitor_name.unwrap_or_else(|| "Visitor".into()),
        visitor_email,
        tags,
        custom_fields,
        identity: Default::default(),
    };
    let (session, visitor_token) = service::create_session_in(
        &ChatDeps::from_ref(&state),
        &principal.actor(),
        &principal.tenant,
        new,
        team_id,
        None,
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedSession {
            session,
            visitor_token,
        }),
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    entity_id: Option<String>,
    team_id: Option<String>,
    status: Option<String>,
    q: Option<String>,
    #[serde(flatten)]
    page: ListRequest,
}

/// List chat sessions
#[utoipa::path(get, path = "/chat/sessions", tag = "Chat",
    params(
        ("entityId" = Option<uuid::Uuid>, Query, description = "Only this entity's sessions"),
        ("status" = Option<String>, Query, description = "ACTIVE or CLOSED"),
        ("teamId" = Option<uuid::Uuid>, Query, description = "Only this team's sessions"),
        ("q" = Option<String>, Query, max_length = 500,
            description = "Full-text search: ranks matches by visitor name, then visitor \
                           email, then message bodies. Every word must match (stemmed), the \
                           last one also as a prefix; punctuation and operators are ignored. \
                           Results come best match first, then newest. Blank means no search; \
                           at most 500 characters."),
        SessionLabelFilters,
        ListRequest,
    ),
    responses((status = 200, description = "A page of sessions", body = CursorPage<Session>)))]
async fn list_sessions(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    State(definitions_cache): State<Arc<DefinitionCache>>,
    principal: Principal,
    Query(query): Query<ListQuery>,
    RawQuery(raw_query): RawQuery,
) -> ApiResult<Json<CursorPage<Session>>> {
    let definitions =
        definitions_for_filters(&definitions_cache, &db, &principal, raw_query.as_deref()).await?;
    let ((page, after), entity_id, team_id, status, tags, search, custom_fields) = (
        query.page.check(20, 100),
        optional_id("entityId", query.entity_id.as_deref()),
        optional_id("teamId", query.team_id.as_deref()),
        optional_enum("status", query.status.as_deref()),
        tag_filter(raw_query.as_deref()),
        search::optional_query(query.q.as_deref()),
        field_filter(raw_query.as_deref(), &definitions, RecordKind::Chat),
    )
        .all_valid()?;
    let filter = SessionFilter {
        entity_id,
        team_id,
        status,
        tags,
        search,
        custom_fields,
    };
    let list = ListId::new("chat_sessions", &principal.tenant, &filter);
    let searching = filter.search.is_some();
    let after = refuse_after_in_rank_order(searching, after)?;
    let after = cursors.open_after(&list, after.as_deref())?;
    let (sessions, total) =
        store::list_sessions(&db, &principal.tenant, &filter, page, after.as_ref()).await?;
    let position = |session: &Session| After {
        created_at: session.created_at,
        id: session.id,
    };
    let page = CursorPage::by_time(sessions, total, page, &cursors, &list, position);
    Ok(Json(page.ranked(searching)))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionWithMessages {
    #[serde(flatten)]
    session: Session,
    messages: Vec<Message>,
}

/// Get a chat session with its messages
///
/// `ETag` is the session's version.
#[utoipa::path(get, path = "/chat/sessions/{id}", tag = "Chat",
    params(("id" = uuid::Uuid, Path, description = "Session id")),
    responses(
        (status = 200, description = "The session and its messages", body = SessionWithMessages,
            headers(("ETag" = String, description = "The session's version, `\"<version>\"`: it grows with every change."))),
    ))]
async fn get_session(
    State(db): State<Db>,
    State(signer): State<Signer>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Versioned<SessionWithMessages>> {
    let session = store::find_session(&db, &principal.tenant, id).await?;
    let messages = store::messages(&db, &principal.tenant, id, &signer).await?;
    Ok(Versioned(
        session.version,
        SessionWithMessages { session, messages },
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateSession {
    #[schema(schema_with = session_status)]
    status: Option<String>,
    /// Replaces the session's tags (normalised as on create).
    #[schema(value_type = Option<Vec<String>>)]
    tags: Option<serde_json::Value>,
    /// Sets the custom field values it names (null clears one) and keeps
    /// the others.
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<serde_json::Value>,
    /// Moves the chat to this team (null: no team).
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    team_id: Patch<String>,
    /// Assigns the chat to this user (null: unassigned, so a routed team
    /// queues it). Routing never changes an assignee a person chose.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    assignee_id: Patch<String>,
}

/// A PATCH's id that may be null: kept, cleared or set.
fn patch_id(field: &str, value: &Patch<String>) -> Result<Option<Option<uuid::Uuid>>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Ok(Some(None)),
        Patch::Value(raw) => required_id(field, Some(raw)).map(|id| Some(Some(id))),
    }
}

/// Close or reopen a chat session, replace its tags, set custom fields,
/// assign it
///
/// At least one of `status`, `tags`, `customFields`, `teamId` and
/// `assigneeId`. A change of team or assignee emits `chat.assigned` (reason
/// `manual`) and pushes an `assignment` frame. With `If-Match` on a version
/// the session is no longer at, nothing changes: 412 `version_conflict`.
#[utoipa::path(patch, path = "/chat/sessions/{id}", tag = "Chat",
    request_body = UpdateSession,
    params(("id" = uuid::Uuid, Path, description = "Session id"),
        ("If-Match" = Option<String>, Header, description = "The session's version the change is based on (its `ETag`, `\"<version>\"`): when the session is at another version now, nothing changes and the answer is 412 `version_conflict` with `currentVersion`. `*` or no header: any version.")),
    responses((status = 200, description = "The session", body = Session,
        headers(("ETag" = String, description = "The session's version, `\"<version>\"`: it grows with every change."))),
        (status = 412, description = "`version_conflict`: the session is no longer at the version `If-Match` named; nothing changed. `currentVersion` is its version now.", body = ErrorBody)))]
async fn update_session(
    State(chat): State<ChatDeps>,
    State(definitions_cache): State<Arc<DefinitionCache>>,
    principal: Principal,
    Id(id): Id,
    IfMatch(expected): IfMatch,
    Json(body): Json<UpdateSession>,
) -> ApiResult<Versioned<Session>> {
    let definitions = match &body.custom_fields {
        Some(_) => {
            crate::custom_fields::definitions(&definitions_cache, &chat.db, &principal.tenant)
                .await?
        }
        None => Default::default(),
    };
    let assigning = !body.team_id.is_missing() || !body.assignee_id.is_missing();
    let others = body.status.is_some() || body.tags.is_some() || body.custom_fields.is_some();
    let (_, status, tags, custom_fields, team, assignee) = (
        ensure(
            others || assigning,
            "body",
            "give at least one of: status, tags, customFields, teamId, assigneeId",
        ),
        optional_enum("status", body.status.as_deref()),
        body.tags
            .as_ref()
            .map(|tags| tag_set("tags", tags))
            .transpose(),
        match &body.custom_fields {
            None => Ok(Default::default()),
            Some(raw) => check_values(&definitions, RecordKind::Chat, Some(raw), false, false),
        },
        patch_id("teamId", &body.team_id),
        patch_id("assigneeId", &body.assignee_id),
    )
        .all_valid()?;
    if assigning {
        service::assign_session(
            &chat,
            &principal.actor(),
            &principal.tenant,
            id,
            team,
            assignee,
            expected,
        )
        .await?;
    }
    // The assignment found the session among those the caller sees; it may
    // have moved it to a team the caller does not, and the rest of this
    // change (and its answer) still concerns it.
    let tenant = match assigning {
        true => principal.tenant.whole(),
        false => principal.tenant,
    };
    if !others {
        let session = store::find_session(&chat.db, &tenant, id).await?;
        return Ok(Versioned(session.version, session));
    }
    let tags = tags.map(SessionTags::Replace).unwrap_or_default();
    // An assignment above checked `If-Match` in its own transaction and
    // moved the version on.
    let expected = if assigning { None } else { expected };
    let session = service::update_session(
        &chat,
        &principal.actor(),
        &tenant,
        id,
        expected,
        status,
        tags,
        custom_fields,
    )
    .await?;
    Ok(Versioned(session.version, session))
}

/// Add and remove a session's tags
///
/// One atomic change: concurrent calls each keep their own tags. More than
/// 50 tags afterwards is a 400 that changes nothing. A real change is
/// pushed to the session's sockets as `chat.session`. With `If-Match` on a
/// version the session is no longer at, nothing changes: 412
/// `version_conflict`.
#[utoipa::path(post, path = "/chat/sessions/{id}/tags", tag = "Chat",
    operation_id = "edit_session_tags",
    request_body = TagEditBody,
    params(("id" = uuid::Uuid, Path, description = "Session id"),
        ("If-Match" = Option<String>, Header, description = "The session's version the change is based on (its `ETag`, `\"<version>\"`): when the session is at another version now, nothing changes and the answer is 412 `version_conflict` with `currentVersion`. `*` or no header: any version.")),
    responses((status = 200, description = "The session with its tags", body = Session),
        (status = 412, description = "`version_conflict`: the session is no longer at the version `If-Match` named; nothing changed. `currentVersion` is its version now.", body = ErrorBody)))]
async fn edit_session_tags(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    IfMatch(expected): IfMatch,
    Json(body): Json<TagEditBody>,
) -> ApiResult<Json<Session>> {
    let edit = SessionTags::Edit(tag_edit(&body)?);
    let session = service::update_session(
        &ChatDeps::from_ref(&state),
        &principal.actor(),
        &principal.tenant,
        id,
        expected,
        None,
        edit,
        Default::default(),
    )
    .await?;
    Ok(Json(session))
}
