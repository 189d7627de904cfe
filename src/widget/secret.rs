//! `POST /entities/{id}/widget-secret/rotate`: the secret with which the
//! customer's backend signs visitor identity tokens. Shown once; the old
//! one keeps verifying for a grace period so that pages already holding
//! tokens keep working while the backend switches over. Without a grace,
//! the open sockets of visitors it verified close at once.

use axum::body::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa_axum::routes;

use super::{identity, store};
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Requested};
use crate::idempotency::RequestState;
use crate::router::ApiRouter;
use crate::time::Timestamp;
use crate::webhooks::routes::{DEFAULT_GRACE_SECS, MAX_GRACE_SECS};

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::EntitiesWrite, routes!(rotate))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RotateWidgetSecret {
    /// How long the previous secret keeps verifying tokens (default 24 h,
    /// at most 7 days, 0 for a leaked secret).
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 604800)]
    grace_period_seconds: Option<Value>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RotatedWidgetSecret {
    entity_id: uuid::Uuid,
    /// `wis_…`: shown only here.
    secret: String,
    /// Until when tokens signed with the previous secret are accepted
    /// (null: not at all, or there was none).
    previous_secret_expires_at: Option<Timestamp>,
}

/// Rotate the widget identity secret
///
/// Creates the entity's first secret, or replaces it. The body is optional.
#[utoipa::path(post, path = "/entities/{id}/widget-secret/rotate",
    operation_id = "rotate_widget_secret", tag = "Entities",
    request_body(content = Option<RotateWidgetSecret>, description = "Optional"),
    params(("id" = uuid::Uuid, Path, description = "Entity id")),
    responses((status = 200, description = "The new secret", body = RotatedWidgetSecret)))]
async fn rotate(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    body: Bytes,
) -> ApiResult<Json<RotatedWidgetSecret>> {
    let body: RotateWidgetSecret = if body.iter().all(u8::is_ascii_whitespace) {
        RotateWidgetSecret::default()
    } else {
        serde_json::from_slice(&body).map_err(|err| match err.classify() {
            serde_json::error::Category::Data => ApiError::invalid_field("body", err.to_string()),
            _ => ApiError::invalid_json("Request body is not valid JSON"),
        })?
    };
    let grace = match &body.grace_period_seconds {
        None | Some(Value::Null) => DEFAULT_GRACE_SECS,
        Some(value) => match value.as_u64() {
            Some(secs) if secs <= MAX_GRACE_SECS => secs,
            _ => {
                return Err(ApiError::invalid_field(
                    "gracePeriodSeconds",
                    format!("must be a whole number of seconds from 0 to {MAX_GRACE_SECS}"),
                ));
            }
        },
    };
    let secret = identity::new_secret();
    let until = store::rotate_secret(
        &principal.acting(&state.db, requested),
        principal.tenant.company_id,
        id,
        &secret,
        std::time::Duration::from_secs(grace),
        state.clock.now(),
    )
    .await?;
    if grace == 0 {
        // The old secret vouches for no one any more: its visitors' open
        // sockets close (with a grace, the re-check closes them at its end).
        let company_id = principal.tenant.company_id;
        crate::realtime::credentials::visitors::secret_rotated(
            &state.realtime.bus,
            company_id,
            id,
            &secret,
        )
        .await;
    }
    Ok(Json(RotatedWidgetSecret {
        entity_id: id,
        secret,
        previous_secret_expires_at: until,
    }))
}
