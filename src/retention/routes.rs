//! `GET /settings/retention`: the company's data retention and, as a dry
//! run, what the retention pass would delete of the company if it ran now.

use axum::extract::State;
use serde::Serialize;
use utoipa_axum::routes;

use super::policies::{self, Preview};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::ApiResult;
use crate::extract::Json;
use crate::router::ApiRouter;
use crate::settings::retention::DataRetention;
use crate::settings::store as settings_store;
use crate::time::Clock;

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::SettingsRead, routes!(dry_run))
}

/// The policy and what a pass now would delete.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct RetentionDryRun {
    data_retention: DataRetention,
    /// What the next pass would delete if it ran at this moment: the
    /// company's records of both modes (the policy is the company's).
    next_pass: Preview,
}

/// Count what the data retention would delete now (dry run)
///
/// Changes nothing. The pass itself runs on every node each retention
/// interval; at the same moment it deletes exactly these records.
#[utoipa::path(get, path = "/settings/retention", tag = "Settings",
    responses((status = 200, description = "The policy and the counts", body = RetentionDryRun)))]
async fn dry_run(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
) -> ApiResult<Json<RetentionDryRun>> {
    let company = principal.tenant.company_id;
    let settings = settings_store::find(&db, company).await?;
    let policy = settings.data_retention;
    let next_pass = policies::preview(&db, company, &policy, clock.now()).await?;
    Ok(Json(RetentionDryRun {
        data_retention: policy,
        next_pass,
    }))
}
