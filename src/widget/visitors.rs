//! Who a widget visitor is: a verified identity from the customer's
//! backend, or an anonymous visitor whose typed email must be confirmed
//! before agent replies are mailed to it (otherwise anyone holding the
//! public widget key could have replies mailed to someone else).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Html;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::identity::{self, Identity};
use super::store::WidgetTarget;
use crate::auth::key::{hash, random_base62};
use crate::chat::model::SessionIdentity;
use crate::chat::model::VisitorSession;
use crate::chat::{service, store as chat_store};
use crate::entities::store::WidgetIdentity;
use crate::error::{ApiError, ApiResult, ErrorCode, StoreError};
use crate::extract::{Json, Query};
use crate::mail::Email;
use crate::openapi::schema::{DataList, ErrorBody};
use crate::realtime::token::TokenGrant;
use crate::state::AppState;

/// Earlier sessions a verified visitor is shown at most.
const HISTORY_MAX: i64 = 50;

/// The visitor of a new session: from `token` when given (which must be
/// valid), else anonymous with the typed name and email, unless the
/// entity requires an identity.
pub(super) fn visitor(
    state: &AppState,
    target: &WidgetTarget,
    token: Option<&str>,
    typed_name: Option<String>,
    typed_email: Option<String>,
) -> ApiResult<(String, Option<String>, SessionIdentity)> {
    let token = token.map(str::trim).filter(|t| !t.is_empty());
    let Some(token) = token else {
        if target.identity == WidgetIdentity::Required {
            return Err(ApiError::unauthorized(
                ErrorCode::IdentityRequired,
                "This widget needs a verified identity token (identityToken)",
            ));
        }
        let name = typed_name.unwrap_or_else(|| "Visitor".into());
        let confirmation = typed_email
            .as_deref()
            .map(|email| confirmation(state, &name, email));
        let identity = SessionIdentity {
            email_verified: confirmation.is_none(),
            confirmation,
            ..SessionIdentity::default()
        };
        return Ok((name, typed_email, identity));
    };
    let secrets: Vec<&str> = target.secrets.iter().map(String::as_str).collect();
    let Identity {
        external_id,
        email,
        name,
    } = identity::verify(token, &secrets, state.clock.now())
        .map_err(|refused| ApiError::unauthorized(ErrorCode::InvalidToken, refused.message()))?;
    let identity = SessionIdentity {
        external_id: Some(external_id),
        verified: true,
        email_verified: true,
        confirmation: None,
    };
    let name = name.or(typed_name).unwrap_or_else(|| "Visitor".into());
    Ok((name, email, identity))
}

/// A one-time confirmation link for `email`: the hash to store, and the
/// email that carries the link.
fn confirmation(state: &AppState, name: &str, email: &str) -> (String, Email) {
    let token = format!("ect_{}", random_base62(32));
    let link = format!("{}/widget/v1/confirm-email?token={token}", state.public_url);
    let text = format!(
        "Hello {name},\n\nYou gave this address in a support chat. Confirm it to receive \
         the agents' replies by email:\n\n{link}\n\nIf this was not you, ignore this email: \
         nothing will be sent to you.\n"
    );
    let email = Email {
        to: email.to_string(),
        subject: "Confirm your email for support replies".into(),
        text,
        html: None,
    };
    (hash(&token), email)
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ConfirmQuery {
    /// The `ect_…` token of the confirmation email's link.
    #[param(value_type = String, required)]
    token: Option<String>,
}

/// Confirm a visitor's email (the link in the confirmation email)
///
/// Works once; afterwards (or for an unknown token) 404. Answers a small
/// page, since a person opens it in a browser.
#[utoipa::path(get, path = "/widget/v1/confirm-email", operation_id = "widget_confirm_email",
    tag = "Widget",
    params(ConfirmQuery),
    responses(
        (status = 200, description = "Confirmed", body = String, content_type = "text/html"),
        (status = 400, description = "`validation_failed`: no token", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown or already used", body = ErrorBody)))]
pub(crate) async fn confirm_email(
    State(state): State<AppState>,
    Query(query): Query<ConfirmQuery>,
) -> ApiResult<Html<&'static str>> {
    let token = query.token.as_deref().map(str::trim).unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::invalid_field("token", "is required"));
    }
    match service::confirm_visitor_email(&state, &hash(token)).await? {
        Some(_) => Ok(Html(
            "<!doctype html><meta charset=utf-8><title>Email confirmed</title>\
             <p>Thank you: your email is confirmed. Replies to your chat will reach you there.</p>",
        )),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            "This confirmation link is unknown or was already used",
        )),
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PastSession {
    #[serde(flatten)]
    #[schema(value_type = VisitorSession)]
    session: serde_json::Value,
    /// Reads that session (`GET /widget/v1/sessions/{id}`).
    visitor_token: String,
}

/// A visitor's chats (visitor)
///
/// The sessions of the token's visitor in its entity, newest first (at
/// most 50), each with its own visitor token: a verified visitor's history
/// follows them to another device. An anonymous visitor sees only their
/// own session.
#[utoipa::path(get, path = "/widget/v1/sessions", operation_id = "widget_list_sessions",
    tag = "Widget",
    security(("VisitorToken" = [])),
    responses(
        (status = 200, description = "The visitor's sessions", body = DataList<PastSession>),
        (status = 401, description = "`invalid_token`", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody)))]
pub(crate) async fn history(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> ApiResult<Json<DataList<PastSession>>> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::unauthorized(
                ErrorCode::InvalidToken,
                "Authorization: Bearer <visitorToken> is required",
            )
        })?;
    let key = state.realtime.token_key(&state.db).await?;
    let Some(TokenGrant::Visitor { tenant, session_id }) = key.verify(token) else {
        return Err(ApiError::unauthorized(
            ErrorCode::InvalidToken,
            "Invalid token",
        ));
    };
    let session = match chat_store::find_session(&state.db, &tenant, session_id).await {
        Ok(session) => session,
        Err(StoreError::NotFound) => {
            return Err(ApiError::unauthorized(
                ErrorCode::InvalidToken,
                "Invalid token",
            ));
        }
        Err(other) => return Err(other.into()),
    };
    crate::companies::ensure_active(&state.db, &tenant).await?;
    let sessions = match (&session.visitor.external_id, session.visitor.verified) {
        (Some(external_id), true) => {
            chat_store::visitor_sessions(
                &state.db,
                &tenant,
                session.entity_id,
                external_id,
                HISTORY_MAX,
            )
            .await?
        }
        _ => vec![session],
    };
    let mut data = Vec::with_capacity(sessions.len());
    for past in sessions {
        let visitor_token = state
            .realtime
            .visitor_token(&state.db, &tenant, past.id)
            .await?;
        data.push(PastSession {
            session: past.visitor_view(),
            visitor_token,
        });
    }
    Ok(Json(DataList { data }))
}
