//! `/settings`: the company profile (name, timezone), shared by both modes;
//! `/settings/escalation-rules` has its own module.

use axum::extract::State;
use serde::Deserialize;
use utoipa_axum::routes;

use super::store::{self, CompanySettings, SettingsUpdate};
use super::{is_plausible_timezone, rules};
use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::extract::Json;
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::validate::{NAME_MAX, Patch, Validator};

/// Longest IANA name accepted.
const TIMEZONE_MAX: usize = 64;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::SettingsRead, routes!(get_settings))
        .route(Scope::SettingsWrite, routes!(update_settings))
        .merge(rules::router())
}

/// Only these can change; anything else is a 400.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateBody {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 255)]
    name: Patch<String>,
    /// An IANA time zone name, such as UTC or Europe/Paris.
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 64)]
    timezone: Patch<String>,
}

/// Get the company settings
///
/// Shared by both modes.
#[utoipa::path(get, path = "/settings", tag = "Settings",
    responses((status = 200, description = "The company profile", body = CompanySettings)))]
async fn get_settings(
    State(state): State<AppState>,
    principal: Principal,
) -> ApiResult<Json<CompanySettings>> {
    Ok(Json(
        store::find(&state.db, principal.tenant.company_id).await?,
    ))
}

/// Update the company settings
#[utoipa::path(patch, path = "/settings", tag = "Settings",
    request_body = UpdateBody,
    responses((status = 200, description = "The updated profile", body = CompanySettings)))]
async fn update_settings(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Json<CompanySettings>> {
    let mut v = Validator::new();
    if body.name.is_missing() && body.timezone.is_missing() {
        v.add("body", "give at least one of: name, timezone");
    }
    let name = required_patch(&mut v, "name", &body.name, NAME_MAX);
    let timezone = required_patch(&mut v, "timezone", &body.timezone, TIMEZONE_MAX);
    if let Some(tz) = &timezone
        && !is_plausible_timezone(tz)
    {
        v.add(
            "timezone",
            "must be an IANA time zone name, such as UTC or Europe/Paris",
        );
    }
    v.finish()?;
    let update = SettingsUpdate { name, timezone };
    let settings = store::update(&state.db, principal.tenant.company_id, update).await?;
    Ok(Json(settings))
}

/// A PATCH string that may be absent but not null or empty.
fn required_patch(
    v: &mut Validator,
    field: &str,
    value: &Patch<String>,
    max: usize,
) -> Option<String> {
    match value {
        Patch::Missing => None,
        Patch::Null => {
            v.add(field, "must not be null");
            None
        }
        Patch::Value(raw) => v.required(field, Some(raw), max),
    }
}
