//! `POST /chat/sessions/{id}/visitor-tokens/revoke`: ends every visitor
//! token (and email link) of a session, e.g. after a visitor says their
//! device was lost. The visitor sockets already open close (4401, on every
//! node); a new handshake with a revoked token is refused.

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
/// far stops working (401 `invalid_token`; its open visitor sockets close
/// with 4401 `visitor token revoked`). The visitor can start a new chat; a verified
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
    let Some(nonce) = store::revoke_tokens(&state.db, &principal.tenant, id).await? else {
        return Err(ApiError::not_found());
    };
    let company_id = principal.tenant.company_id;
    crate::realtime::credentials::visitors::tokens_revoked(
        &state.realtime.bus,
        company_id,
        id,
        nonce,
    )
    .await;
    Ok(StatusCode::NO_CONTENT)
}
