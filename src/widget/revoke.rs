//! `POST /chat/sessions/{id}/visitor-tokens/revoke`: ends every visitor
//! token (and email link) of a session, e.g. after a visitor says their
//! device was lost. A visitor socket already open stays open but posts no
//! more messages (each `message` frame checks the session's nonce); a new
//! handshake with a revoked token is refused.

use axum::http::StatusCode;
use utoipa_axum::routes;

use super::store;
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::extract::Id;
use crate::idempotency::RequestState;
use crate::router::ApiRouter;

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::ChatWrite, routes!(revoke))
}

/// Revoke a chat's visitor tokens
///
/// Every visitor token and email continue link issued for the session so
/// far stops working (401 `invalid_token`; an open visitor socket of it
/// may no longer post). The visitor can start a new chat; a verified
/// visitor finds this one in their history again.
#[utoipa::path(post, path = "/chat/sessions/{id}/visitor-tokens/revoke",
    operation_id = "revoke_visitor_tokens", tag = "Chat",
    params(("id" = uuid::Uuid, Path, description = "Session id")),
    responses((status = 204, description = "Revoked"),
        (status = 404, description = "`not_found`")))]
async fn revoke(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<StatusCode> {
    if !store::revoke_tokens(&state.db, &principal.tenant, id).await? {
        return Err(ApiError::not_found());
    }
    Ok(StatusCode::NO_CONTENT)
}
