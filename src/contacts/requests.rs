//! A person's data on request: `POST /contacts/{id}/export` and
//! `POST /contacts/{id}/erase` start a background job (202), `GET
//! /jobs/{id}` reads its state and progress and, once an export is ready,
//! a signed link (`/exports/{id}?exp=…&sig=…`, outside the API: a browser
//! opens it) that serves the archive once.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::routes;
use uuid::Uuid;

use super::model::{DataJob, JobKind, JobState};
use super::store::jobs;
use crate::attachments::Attachments;
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Id, Json, Query, Requested};
use crate::idempotency::RequestState;
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::time::Clock;
use crate::time::Timestamp;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ContactsWrite, routes!(export))
        .route(Scope::ContactsErase, routes!(erase))
        .route(Scope::ContactsRead, routes!(job))
}

/// The public route of export links (no API key).
pub fn downloads() -> Router<AppState> {
    Router::new().route("/exports/{id}", get(download))
}

/// A data request as `GET /jobs/{id}` shows it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobView {
    id: Uuid,
    /// `export` or `erase`.
    #[schema(value_type = String, example = "erase")]
    kind: JobKind,
    contact_id: Uuid,
    /// `queued`, `running`, `done` or `failed`.
    #[schema(value_type = String, example = "running")]
    state: JobState,
    /// Percent done, 0 to 100.
    progress: i64,
    /// A finished export's archive (a zip), valid for 15 minutes and for
    /// one download; null before, and once downloaded.
    download_url: Option<String>,
    /// Why a failed job failed.
    error: Option<String>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

fn view(attachments: &Attachments, clock: &Clock, job: DataJob) -> JobView {
    let download_url = (job.archive_ready && job.downloaded_at.is_none())
        .then(|| attachments.links.export_url(job.id, clock.now()));
    JobView {
        id: job.id,
        kind: job.kind,
        contact_id: job.contact_id,
        state: job.state,
        progress: job.progress,
        download_url,
        error: job.error,
        created_at: job.created_at,
        updated_at: job.updated_at,
    }
}

/// Starts an export of everything stored about this contact: a job whose
/// `downloadUrl` serves one zip once it is done.
#[utoipa::path(post, path = "/contacts/{id}/export", operation_id = "export_contact",
    tag = "Contacts",
    params(("id" = uuid::Uuid, Path, description = "The contact")),
    responses((status = 202, description = "Started", body = JobView)))]
async fn export(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
) -> ApiResult<(StatusCode, Json<JobView>)> {
    let now = state.clock.now();
    let job = jobs::request(
        &principal.acting(&state.db, requested),
        &principal.tenant,
        id,
        JobKind::Export,
        now,
    )
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(view(&state.attachments, &state.clock, job)),
    ))
}

/// Erases this contact's personal data everywhere it is stored, as a job;
/// asked again, answers the same job and does nothing. Emits
/// `contact.erased` when done.
#[utoipa::path(post, path = "/contacts/{id}/erase", operation_id = "erase_contact",
    tag = "Contacts",
    params(("id" = uuid::Uuid, Path, description = "The contact")),
    responses((status = 202, description = "Started (or started before)", body = JobView)))]
async fn erase(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<(StatusCode, Json<JobView>)> {
    let now = state.clock.now();
    let job = jobs::request(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        id,
        JobKind::Erase,
        now,
    )
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(view(&state.attachments, &state.clock, job)),
    ))
}

/// A data request's state and progress.
#[utoipa::path(get, path = "/jobs/{id}", operation_id = "get_job", tag = "Contacts",
    params(("id" = uuid::Uuid, Path, description = "The job")),
    responses((status = 200, description = "The job", body = JobView)))]
async fn job(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(attachments): State<Arc<Attachments>>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<JobView>> {
    let job = jobs::find(&db, &principal.tenant, id).await?;
    Ok(Json(view(&attachments, &clock, job)))
}

#[derive(Deserialize)]
struct LinkQuery {
    exp: Option<String>,
    sig: Option<String>,
}

async fn download(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(attachments): State<Arc<Attachments>>,
    requested: Requested,
    Id(id): Id,
    Query(query): Query<LinkQuery>,
) -> ApiResult<Response> {
    let now = clock.now();
    let expires = query.exp.as_deref().and_then(|exp| exp.parse::<i64>().ok());
    let valid = match (expires, query.sig.as_deref()) {
        (Some(expires), Some(sig)) => attachments.links.verify_export(id, expires, sig, now),
        _ => false,
    };
    if !valid {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::InvalidLink,
            "This link is invalid or has expired",
        ));
    }
    let archive = jobs::take_archive(&db.with_request(requested.0), id, now).await?;
    let disposition = format!("attachment; filename=\"contact-export-{id}.zip\"");
    let mut response = Response::new(Body::from(archive));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
