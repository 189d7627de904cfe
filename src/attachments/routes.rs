//! `/attachments`: upload (raw body or `multipart/form-data`), read the
//! metadata, download the bytes with a key.

use axum::body::Body;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::routes;
use uuid::Uuid;

use super::form::{FORM_ALLOWANCE, FormBound, HEAD_MAX, receive_form};
use super::ingest::{IngestError, ingest};
use super::model::{self, Attachment};
use super::quota::{self, Bound, Room, VisitorQuota};
use super::store::{self, NewAttachment, Stored};
use super::{Attachments, Storage, files};
use crate::auth::{Principal, Scope, Tenant};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::router::ApiRouter;
use crate::state::AppState;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route_upload(Scope::AttachmentsWrite, routes!(upload))
        .route_or(Scope::AttachmentsRead, RECORD_READ, routes!(get_one))
        .route_or(Scope::AttachmentsRead, RECORD_READ, routes!(content))
}

/// Read scopes that reach a file through the record it is attached to.
const RECORD_READ: &[Scope] = &[Scope::TicketsRead, Scope::ChatRead];

/// The tenant's upload `id` if the key may read it: with
/// `attachments:read` any of them; otherwise one on a ticket or comment
/// with `tickets:read`, one on a chat message with `chat:read`. Anything
/// else (unattached, another record's, missing) is the missing scope, so a
/// key without `attachments:read` learns nothing about other uploads.
async fn readable(db: &Db, principal: &Principal, id: Uuid) -> ApiResult<Stored> {
    if principal.scopes.contains(Scope::AttachmentsRead) {
        return Ok(store::find(db, &principal.tenant, id).await?);
    }
    let needed = match store::owner_kind(db, &principal.tenant, id).await? {
        Some(store::Kind::Ticket | store::Kind::Comment) => Some(Scope::TicketsRead),
        Some(store::Kind::Message) => Some(Scope::ChatRead),
        None => None,
    };
    match needed {
        Some(scope) if principal.scopes.contains(scope) => {
            Ok(store::find(db, &principal.tenant, id).await?)
        }
        _ => Err(ApiError::forbidden_scope(Scope::AttachmentsRead.as_str())),
    }
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct UploadQuery {
    /// The file's name, for a raw body without `Content-Disposition`.
    filename: Option<String>,
}

/// The `multipart/form-data` form: one `file` part.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(crate) struct UploadForm {
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// Upload an attachment
///
/// The file is the raw body (`Content-Type` the client's claim, the name in
/// `Content-Disposition: attachment; filename="…"` or `?filename=`), or
/// the `file` part of a `multipart/form-data` body. It is streamed to
/// storage; past the size limit (25 MiB by default) the upload stops with
/// 413 and nothing is kept; an empty file is 400. The type is sniffed from
/// the bytes. Unattached uploads are deleted after 24 hours.
#[utoipa::path(post, path = "/attachments", operation_id = "upload_attachment",
    tag = "Attachments",
    params(UploadQuery),
    request_body(content(
        (Vec<u8> = "application/octet-stream"),
        (UploadForm = "multipart/form-data"),
    )),
    responses(
        (status = 201, description = "Stored", body = Attachment),
        (status = 413, description = "Larger than the limit", body = crate::openapi::schema::ErrorBody),
    ))]
async fn upload(
    RequestState(state): RequestState,
    principal: Principal,
    Query(query): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<(StatusCode, Json<Attachment>)> {
    let rules = Rules {
        limit: state.attachments.max_bytes,
        session: None,
        allowed: |_| true,
        quota: None,
    };
    let stored = receive(
        &state,
        &principal.tenant,
        &headers,
        query.filename,
        body,
        rules,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(stored.into())))
}

/// Get an attachment's metadata
///
/// With `attachments:read`, or the read scope of the record the file is
/// attached to (`tickets:read` for a ticket's or comment's, `chat:read`
/// for a chat message's).
#[utoipa::path(get, path = "/attachments/{id}", operation_id = "get_attachment",
    tag = "Attachments",
    params(("id" = uuid::Uuid, Path, description = "Attachment id")),
    responses((status = 200, description = "The attachment", body = Attachment)))]
async fn get_one(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Attachment>> {
    let stored = readable(&db, &principal, id).await?;
    Ok(Json(stored.into()))
}

/// Download an attachment
///
/// The bytes, with `Content-Disposition: attachment` (inline only for PNG,
/// JPEG, GIF and WebP), `X-Content-Type-Options: nosniff` and
/// `Content-Security-Policy: sandbox`. A single `Range` is honoured (206).
/// With `attachments:read`, or the read scope of the record the file is
/// attached to (`tickets:read` for a ticket's or comment's, `chat:read`
/// for a chat message's).
#[utoipa::path(get, path = "/attachments/{id}/content", operation_id = "download_attachment",
    tag = "Attachments",
    params(("id" = uuid::Uuid, Path, description = "Attachment id")),
    responses(
        (status = 200, description = "The bytes, typed as sniffed at upload", content_type = "*/*", body = Vec<u8>),
        (status = 206, description = "The requested range", content_type = "*/*", body = Vec<u8>),
    ))]
async fn content(
    State(db): State<Db>,
    State(attachments): State<Arc<Attachments>>,
    principal: Principal,
    Id(id): Id,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let stored = readable(&db, &principal, id).await?;
    files::serve(&attachments.storage, &stored, &headers).await
}

/// What an upload may be: how large, for which chat session (a visitor's),
/// of which sniffed types, and within which quota of unattached uploads
/// (a visitor's, with its session).
pub(crate) struct Rules {
    pub limit: u64,
    pub session: Option<Uuid>,
    pub allowed: fn(&str) -> bool,
    pub quota: Option<VisitorQuota>,
}

/// Streams the upload in `body` to storage and records it.
pub(crate) async fn receive(
    state: &AppState,
    tenant: &Tenant,
    headers: &HeaderMap,
    query_name: Option<String>,
    body: Body,
    rules: Rules,
) -> ApiResult<Stored> {
    let attachments: &Attachments = &state.attachments;
    let storage = &attachments.storage;
    // What the quota leaves bounds the upload as it streams.
    let room = match (rules.quota, rules.session) {
        (Some(quota), Some(session)) => {
            let room = quota::room(&state.db, tenant, session, quota).await?;
            if room.bytes == 0 {
                return Err(over_quota(room));
            }
            Some(room).filter(|room| room.bytes < rules.limit)
        }
        _ => None,
    };
    let limit = room.map_or(rules.limit, |room| room.bytes);
    let refused = |err| match (err, room) {
        (IngestError::TooLarge(_), Some(room)) => over_quota(room),
        (err, _) => ingest_error(err),
    };
    let claimed = header_text(headers, header::CONTENT_TYPE);
    let (name, claimed, ingested) = match multipart_boundary(claimed.as_deref()) {
        Some(boundary) => receive_form(storage, body.into_data_stream(), boundary, limit)
            .await
            .map_err(refused)?,
        None => {
            let name = header_text(headers, header::CONTENT_DISPOSITION)
                .and_then(|value| model::disposition_filename(&value))
                .or(query_name);
            let ingested = ingest(storage, body.into_data_stream(), limit)
                .await
                .map_err(refused)?;
            (name, claimed, ingested)
        }
    };
    let content_type = model::content_type(&ingested.head, claimed.as_deref());
    if !(rules.allowed)(&content_type) {
        let _ = storage.remove(&ingested.temporary).await;
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::UnsupportedMediaType,
            format!("Files of type {content_type} cannot be uploaded here"),
        ));
    }
    let new = NewAttachment {
        filename: model::sanitize_filename(name.as_deref().unwrap_or_default()),
        content_type,
        size: i64::try_from(ingested.size).unwrap_or(i64::MAX),
        sha256: ingested.sha256,
        session_id: rules.session,
    };
    let created = store::create(&state.db, tenant, new, rules.quota, state.clock.now())
        .await
        .map_err(ApiError::from)
        // Over the quota now: uploads racing this one took the room it had.
        .and_then(|recorded| recorded.map_err(over_quota));
    let stored = match created {
        Ok(stored) => stored,
        Err(err) => {
            let _ = storage.remove(&ingested.temporary).await;
            return Err(err);
        }
    };
    // The row first, then the bytes: a sweeper that saw no row for these
    // bytes has finished (the row waited for it) before they are put back.
    let key = Storage::object_key(tenant.company_id, &stored.sha256);
    if let Err(err) = storage.publish(&ingested.temporary, &key).await {
        tracing::error!(error = %err, "storing an attachment failed");
        let _ = store::forget(&state.db, tenant, stored.id).await;
        let _ = storage.remove(&ingested.temporary).await;
        return Err(ApiError::internal());
    }
    Ok(stored)
}

fn multipart_boundary(content_type: Option<&str>) -> Option<String> {
    let content_type = content_type?;
    if !content_type
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        return None;
    }
    multer::parse_boundary(content_type).ok()
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

/// 413 `quota_exceeded`, naming the quota that `room` is left of.
fn over_quota(room: Room) -> ApiError {
    let message = match room.bound {
        Bound::Session => format!(
            "This chat's uploads not yet sent with a message may hold at most {} bytes \
             (the session's upload quota): send them, or wait until unsent ones expire",
            room.limit
        ),
        Bound::Company => format!(
            "Visitors' uploads not yet sent with a message may hold at most {} bytes for \
             this company (the company's upload quota): try again later",
            room.limit
        ),
    };
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::QuotaExceeded,
        message,
    )
}

fn ingest_error(err: IngestError) -> ApiError {
    match err {
        IngestError::TooLarge(limit) => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            format!("Attachments may be at most {limit} bytes"),
        ),
        IngestError::Form(bound) => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            match bound {
                FormBound::Whole(limit) => format!(
                    "The form may be at most {limit} bytes: its file at most {}, \
                     the rest {FORM_ALLOWANCE}",
                    limit.saturating_sub(FORM_ALLOWANCE)
                ),
                FormBound::PartHead => format!(
                    "A form part's headers, with the text before them, may be at most \
                     {HEAD_MAX} bytes"
                ),
            },
        ),
        IngestError::NoFilePart => ApiError::invalid_field("file", "the form has no `file` part"),
        IngestError::Empty => ApiError::invalid_field("file", "must not be empty"),
        IngestError::Client(reason) => {
            ApiError::invalid_field("file", format!("could not be read: {reason}"))
        }
        IngestError::Storage(err) => {
            tracing::error!(error = %err, "writing an attachment failed");
            ApiError::internal()
        }
    }
}
