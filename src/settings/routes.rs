//! `/settings`: the company profile (name, timezone), shared by both modes;
//! `/settings/escalation-rules` has its own module.

use axum::extract::State;
use serde::Deserialize;
use utoipa_axum::routes;

use super::retention::{self, DataRetention};
use super::store::{self, CompanySettings, SettingsUpdate};
use super::{is_plausible_timezone, rules};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiResult, FieldError};
use crate::extract::{Json, Requested};
use crate::router::ApiRouter;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, Patch, ensure, problem, required_text};

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
#[schema(as = UpdateSettings)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateBody {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 255)]
    name: Patch<String>,
    /// An IANA time zone name, such as UTC or Europe/Paris.
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 64)]
    timezone: Patch<String>,
    /// Every agent signs in with a second factor (TOTP); one without it may
    /// only set it up.
    #[serde(default)]
    #[schema(value_type = bool)]
    require_two_factor: Patch<bool>,
    /// An agent's reply to an unassigned ticket or chat assigns it to them.
    #[serde(default)]
    #[schema(value_type = bool)]
    assign_on_reply: Patch<bool>,
    /// A parent ticket may be resolved or closed while a child is still
    /// open, without `force`.
    #[serde(default)]
    #[schema(value_type = bool)]
    resolve_parents_with_open_children: Patch<bool>,
    /// Days the audit log keeps an entry (1 to 36500): the retention pass
    /// drops older ones from the start of the chain. Null keeps every entry
    /// (the default).
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 36500)]
    audit_retention_days: Patch<serde_json::Value>,
    /// Days closed tickets, closed chats and contacts with nothing left
    /// are kept (each 1 to 36500, or null to keep them). A key left out
    /// keeps its value.
    #[serde(default)]
    #[schema(value_type = DataRetention)]
    data_retention: Patch<serde_json::Value>,
}

/// Get the company settings
///
/// Shared by both modes.
#[utoipa::path(get, path = "/settings", tag = "Settings",
    responses((status = 200, description = "The company profile", body = CompanySettings)))]
async fn get_settings(
    State(db): State<Db>,
    principal: Principal,
) -> ApiResult<Json<CompanySettings>> {
    Ok(Json(store::find(&db, principal.tenant.company_id).await?))
}

/// Update the company settings
#[utoipa::path(patch, path = "/settings", tag = "Settings",
    request_body = UpdateBody,
    responses((status = 200, description = "The updated profile", body = CompanySettings)))]
async fn update_settings(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    requested: Requested,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Json<CompanySettings>> {
    let timezone = match required_patch("timezone", &body.timezone, TIMEZONE_MAX) {
        Ok(Some(tz)) if !is_plausible_timezone(&tz) => Err(problem(
            "timezone",
            "must be an IANA time zone name, such as UTC or Europe/Paris",
        )),
        checked => checked,
    };
    let (
        _,
        name,
        timezone,
        require_two_factor,
        assign_on_reply,
        resolve_parents,
        audit_retention_days,
        data_retention,
    ) = (
        ensure(
            !(body.name.is_missing()
                && body.timezone.is_missing()
                && body.require_two_factor.is_missing()
                && body.assign_on_reply.is_missing()
                && body.resolve_parents_with_open_children.is_missing()
                && body.audit_retention_days.is_missing()
                && body.data_retention.is_missing()),
            "body",
            "give at least one of: name, timezone, requireTwoFactor, assignOnReply, \
             resolveParentsWithOpenChildren, auditRetentionDays, dataRetention",
        ),
        required_patch("name", &body.name, NAME_MAX),
        timezone,
        required_flag("requireTwoFactor", &body.require_two_factor),
        required_flag("assignOnReply", &body.assign_on_reply),
        required_flag(
            "resolveParentsWithOpenChildren",
            &body.resolve_parents_with_open_children,
        ),
        retention_days(&body.audit_retention_days),
        retention::parse_patch(&body.data_retention),
    )
        .all_valid()?;
    let update = SettingsUpdate {
        name,
        timezone,
        require_two_factor,
        assign_on_reply,
        resolve_parents_with_open_children: resolve_parents,
        audit_retention_days,
        data_retention,
    };
    let settings = store::update(
        &principal.acting(&db, requested),
        principal.tenant.company_id,
        update,
        clock.now(),
    )
    .await?;
    Ok(Json(settings))
}

use super::retention::RETENTION_DAYS_MAX;

/// `auditRetentionDays`: absent (kept), null (keep every entry) or a whole
/// number of days, 1 to `RETENTION_DAYS_MAX`.
fn retention_days(value: &Patch<serde_json::Value>) -> Result<Option<Option<u32>>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Ok(Some(None)),
        Patch::Value(raw) => match raw.as_u64() {
            Some(days @ 1..=RETENTION_DAYS_MAX) => Ok(Some(u32::try_from(days).ok())),
            _ => Err(problem(
                "auditRetentionDays",
                format!("must be a whole number of days from 1 to {RETENTION_DAYS_MAX}, or null"),
            )),
        },
    }
}

/// A PATCH boolean that may be absent but not null.
fn required_flag(field: &str, value: &Patch<bool>) -> Result<Option<bool>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Err(problem(field, "must not be null")),
        Patch::Value(flag) => Ok(Some(*flag)),
    }
}

/// A PATCH string that may be absent but not null or empty.
fn required_patch(
    field: &str,
    value: &Patch<String>,
    max: usize,
) -> Result<Option<String>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Err(problem(field, "must not be null")),
        Patch::Value(raw) => required_text(field, Some(raw), max).map(Some),
    }
}
