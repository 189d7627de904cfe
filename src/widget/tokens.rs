//! `/widget/v1/tokens/…`: a visitor token's refresh while the widget is
//! open, and the trade of an agent-reply email's link token for one.

use axum::extract::State;
use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::access::{self, IssuedToken, VisitorTokens};
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::openapi::schema::ErrorBody;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionToken {
    /// The session the token opens.
    session_id: Uuid,
    #[serde(flatten)]
    issued: IssuedToken,
}

/// Refresh a visitor token (visitor)
///
/// A fresh token for the same session in exchange for one still valid
/// (unexpired, not revoked); the widget calls it before its token expires.
/// The old token keeps working until its own expiry.
#[utoipa::path(post, path = "/widget/v1/tokens/refresh", operation_id = "widget_refresh_token",
    tag = "Widget",
    security(("VisitorToken" = [])),
    params(("Idempotency-Key" = Option<String>, Header)),
    responses(
        (status = 200, description = "A fresh token", body = SessionToken),
        (status = 401, description = "`invalid_token`: forged, expired or revoked", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody)))]
pub(crate) async fn refresh(
    State(tokens): State<VisitorTokens>,
    headers: HeaderMap,
) -> ApiResult<Json<SessionToken>> {
    let (session_id, issued) = access::refresh(&tokens, access::bearer(&headers)?).await?;
    Ok(Json(SessionToken { session_id, issued }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LinkExchange {
    /// The `vl_…` token of an agent-reply email's continue link.
    #[schema(value_type = String, required)]
    link_token: Option<String>,
}

/// Trade an email link for a visitor token (visitor)
///
/// The continue link of an agent-reply email carries a link token, never a
/// visitor token. It works once, for 7 days: trading it retires it and
/// every link mailed before it; revoking the session's tokens retires it
/// too.
#[utoipa::path(post, path = "/widget/v1/tokens/exchange", operation_id = "widget_exchange_link",
    tag = "Widget",
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = LinkExchange,
    responses(
        (status = 200, description = "A visitor token of the link's session", body = SessionToken),
        (status = 400, description = "`validation_failed`: no link token", body = ErrorBody),
        (status = 401, description = "`invalid_token`: forged, expired, used or revoked",
            body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody)))]
pub(crate) async fn exchange(
    State(tokens): State<VisitorTokens>,
    Json(body): Json<LinkExchange>,
) -> ApiResult<Json<SessionToken>> {
    let link = body
        .link_token
        .as_deref()
        .map(str::trim)
        .unwrap_or_default();
    if link.is_empty() {
        return Err(ApiError::invalid_field("linkToken", "is required"));
    }
    let (session_id, issued) = access::exchange(&tokens, link).await?;
    Ok(Json(SessionToken { session_id, issued }))
}
