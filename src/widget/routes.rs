//! Handlers of `/widget/v1`.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, RequestExt, Router};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::store::{self, WidgetTarget};
use crate::auth::Tenant;
use crate::chat::model::NewSession;
use crate::chat::{Message, service};
use crate::companies::CompanyStatus;
use crate::custom_fields::model::{RecordKind, check_values};
use crate::custom_fields::store as field_store;
use crate::error::{ApiError, ApiResult, StoreError};
use crate::extract::{Id, Json, Query};
use crate::idempotency;
use crate::kb;
use crate::realtime::token::TokenGrant;
use crate::state::AppState;
use crate::time::Timestamp;
use crate::validate::{Fields, NAME_MAX, optional_email, optional_text, problem, required_text};

/// Search results a widget shows at most.
const SEARCH_LIMIT_MAX: i64 = 20;
const SEARCH_LIMIT_DEFAULT: i64 = 5;
/// Longer search text is cut (a query is a question, not a document).
const SEARCH_TEXT_MAX: usize = 500;

/// Each route also takes OPTIONS: the CORS layer wraps only the methods a
/// route has, and answers preflights there (the app-wide 405 fallback would
/// otherwise answer them, without CORS headers).
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/widget/v1/sessions",
            post(create_session)
                .get(super::visitors::history)
                .options(preflight)
                .route_layer(axum::middleware::from_fn(idempotent_session)),
        )
        .route(
            "/widget/v1/sessions/{id}",
            get(read_session).options(preflight),
        )
        .route(
            "/widget/v1/attachments",
            post(crate::attachments::visitor::upload).options(preflight),
        )
        .route("/widget/v1/presence", get(presence).options(preflight))
        .route("/widget/v1/kb/search", get(search).options(preflight))
        .route(
            "/widget/v1/kb/articles/{id}",
            get(article).options(preflight),
        )
        .merge(super::visitors::router())
        .merge(crate::csat::widget::router())
}

/// Reached only by an OPTIONS request that is not a CORS preflight.
pub(crate) async fn preflight() -> StatusCode {
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeyQuery {
    widget_key: Option<String>,
}

/// The target of a widget key: 400 when missing, 404 when unknown, 403
/// when its company is suspended.
async fn target(state: &AppState, widget_key: Option<&str>) -> ApiResult<WidgetTarget> {
    let (key,) = (required_text("widgetKey", widget_key, 100),).all_valid()?;
    let target = store::resolve(&state.db, &key)
        .await?
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "not_found", "Unknown widget key"))?;
    if target.company_status != CompanyStatus::Active {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "account_suspended",
            "Account is suspended",
        ));
    }
    Ok(target)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateSession {
    widget_key: Option<String>,
    visitor_name: Option<String>,
    visitor_email: Option<String>,
    /// A JWT from the customer's backend: the session is then verified.
    identity_token: Option<String>,
    /// Values of the company's visitor-writable custom fields only.
    custom_fields: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WidgetKeyOnly {
    widget_key: Option<String>,
}

/// `Idempotency-Key` on `POST /widget/v1/sessions`, scoped to the widget
/// key's company and mode. A body without a known key of an active company
/// runs as is: the handler refuses it, and nothing is recorded.
async fn idempotent_session(
    Extension(state): Extension<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    match idempotency::key_of(request.headers()) {
        Ok(Some(_)) => {}
        Ok(None) => return next.run(request).await,
        Err(error) => return error.into_response(),
    }
    let (parts, body) = request.with_limited_body().into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return ApiError::from_status(StatusCode::PAYLOAD_TOO_LARGE).into_response();
    };
    let widget_key = serde_json::from_slice::<WidgetKeyOnly>(&body)
        .ok()
        .and_then(|body| body.widget_key);
    let request = Request::from_parts(parts, Body::from(body));
    let target = match widget_key {
        Some(key) => store::resolve(&state.db, key.trim()).await.ok().flatten(),
        None => None,
    };
    match target {
        Some(target) if target.company_status == CompanyStatus::Active => {
            idempotency::run(state.clone(), target.tenant, request, next).await
        }
        _ => next.run(request).await,
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreatedSession {
    /// `Session::visitor_view`: no tags.
    #[serde(flatten)]
    session: serde_json::Value,
    /// Opens `/api/v1/ws?token=` for this session, and reads it here.
    visitor_token: String,
}

/// `POST /widget/v1/sessions {widgetKey, visitorName?, visitorEmail?,
/// identityToken?, customFields?}`: a chat session in the key's entity and
/// mode, with its visitor token. `customFields` may name visitor-writable
/// fields only. With an identity token the visitor's name and email come
/// from its claims.
async fn create_session(
    State(state): State<AppState>,
    Json(body): Json<CreateSession>,
) -> ApiResult<(StatusCode, Json<CreatedSession>)> {
    let target = target(&state, body.widget_key.as_deref()).await?;
    let definitions = field_store::list(&state.db, &target.tenant).await?;
    let (visitor_name, visitor_email, custom_fields) = (
        optional_text("visitorName", body.visitor_name.as_deref(), NAME_MAX),
        optional_email("visitorEmail", body.visitor_email.as_deref()),
        check_values(
            &definitions,
            RecordKind::Chat,
            body.custom_fields.as_ref(),
            true,
            true,
        ),
    )
        .all_valid()?;
    let (visitor_name, visitor_email, identity) = super::visitors::visitor(
        &state,
        &target,
        body.identity_token.as_deref(),
        visitor_name,
        visitor_email,
    )?;
    let new = NewSession {
        entity_id: target.entity_id,
        visitor_name,
        visitor_email,
        tags: Vec::new(),
        custom_fields,
        identity,
    };
    let (session, visitor_token) = service::create_session(&state, &target.tenant, new).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedSession {
            session: session.visitor_view(),
            visitor_token,
        }),
    ))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionWithMessages {
    /// `Session::visitor_view`: no tags.
    #[serde(flatten)]
    session: serde_json::Value,
    messages: Vec<Message>,
}

fn invalid_token(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, "invalid_token", message)
}

/// `GET /widget/v1/sessions/{id}` with `Authorization: Bearer <visitorToken>`:
/// the session and its messages (oldest first), for a widget that reloads
/// or continues from the email link. The token opens its own session only.
async fn read_session(
    State(state): State<AppState>,
    Id(id): Id,
    headers: HeaderMap,
) -> ApiResult<Json<SessionWithMessages>> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid_token("Authorization: Bearer <visitorToken> is required"))?;
    let key = state.realtime.token_key(&state.db).await?;
    let Some(TokenGrant::Visitor { tenant, session_id }) = key.verify(token) else {
        return Err(invalid_token("Invalid token"));
    };
    if session_id != id {
        return Err(ApiError::not_found());
    }
    let session = match crate::chat::store::find_session(&state.db, &tenant, id).await {
        Ok(session) => session,
        Err(StoreError::NotFound) => return Err(invalid_token("Invalid token")),
        Err(other) => return Err(other.into()),
    };
    ensure_active(&state, &tenant).await?;
    let messages = crate::chat::store::messages(&state.db, &tenant, id).await?;
    Ok(Json(SessionWithMessages {
        session: session.visitor_view(),
        messages,
    }))
}

/// 403 when the tenant's company is suspended.
pub(crate) async fn ensure_active(state: &AppState, tenant: &Tenant) -> ApiResult<()> {
    let company = crate::companies::store::find(&state.db, tenant.company_id).await?;
    if company.status != CompanyStatus::Active {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "account_suspended",
            "Account is suspended",
        ));
    }
    Ok(())
}

#[derive(Serialize)]
struct PublicAgent {
    name: String,
}

#[derive(Serialize)]
struct PresenceReply {
    online: bool,
    agents: Vec<PublicAgent>,
}

/// `GET /widget/v1/presence?widgetKey=`: whether PUBLIC agents of the key's
/// company and mode are online, with their names. Never a PRIVATE agent,
/// never an email or id.
async fn presence(
    State(state): State<AppState>,
    Query(query): Query<KeyQuery>,
) -> ApiResult<Json<PresenceReply>> {
    let target = target(&state, query.widget_key.as_deref()).await?;
    let mut agents: Vec<PublicAgent> = state
        .realtime
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

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearchQuery {
    widget_key: Option<String>,
    q: Option<String>,
    limit: Option<String>,
}

/// `GET /widget/v1/kb/search?widgetKey=&q=[&limit=]`: published articles of
/// the key's entity, ranked (the knowledge base's own search).
async fn search(
    State(state): State<AppState>,
    Query(query): Query<SearchQuery>,
) -> ApiResult<Json<Vec<kb::model::SearchHit>>> {
    let target = target(&state, query.widget_key.as_deref()).await?;
    let limit = match query.limit.as_deref().map(str::trim) {
        None | Some("") => Ok(SEARCH_LIMIT_DEFAULT),
        Some(raw) => match raw.parse::<i64>() {
            Ok(n) if n >= 1 => Ok(n.min(SEARCH_LIMIT_MAX)),
            _ => Err(problem("limit", "must be a whole number of at least 1")),
        },
    };
    let (text, limit) = (required_text("q", query.q.as_deref(), usize::MAX), limit).all_valid()?;
    let text: String = text.chars().take(SEARCH_TEXT_MAX).collect();
    let hits = kb::store::search(
        &state.db,
        &target.tenant,
        Some(target.entity_id),
        &text,
        limit,
    )
    .await?;
    Ok(Json(hits))
}

/// A published article as a visitor reads it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PublicArticle {
    id: Uuid,
    title: String,
    slug: String,
    content: String,
    excerpt: String,
    category_id: Option<Uuid>,
    updated_at: Timestamp,
}

/// `GET /widget/v1/kb/articles/{id}?widgetKey=`: one published article of
/// the key's entity (a draft, or another entity's article, is 404).
async fn article(
    State(state): State<AppState>,
    Id(id): Id,
    Query(query): Query<KeyQuery>,
) -> ApiResult<Json<PublicArticle>> {
    let target = target(&state, query.widget_key.as_deref()).await?;
    let article = kb::store::find_article(&state.db, &target.tenant, id, false).await?;
    if article.entity_id != target.entity_id || !article.is_published {
        return Err(ApiError::not_found());
    }
    Ok(Json(PublicArticle {
        id: article.id,
        title: article.title,
        slug: article.slug,
        content: article.content,
        excerpt: article.excerpt,
        category_id: article.category_id,
        updated_at: article.updated_at,
    }))
}
