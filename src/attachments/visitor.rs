//! `POST /widget/v1/attachments`: a visitor's upload with its visitor token
//! (`Authorization: Bearer vt_…`). Smaller (10 MiB by default), images and
//! PDFs only, and usable only on messages of the token's own session. The
//! widget's per-IP limit applies as on every widget route, each session
//! has its own upload budget (`SUPPORTDESK_VISITOR_UPLOAD_RATE`), and what
//! unattached uploads hold is bounded per session and per company
//! (`quota`).

use axum::body::Body;
use axum::extract::FromRef;
use axum::http::{HeaderMap, StatusCode};

use super::model::{Attachment, visitor_may_upload};
use super::routes::{Rules, UploadForm, receive};
use crate::chat::model::SessionStatus;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::ErrorBody;
use crate::ratelimit::Limiter;

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct VisitorUploadQuery {
    /// The file's name, for a raw body without `Content-Disposition`.
    filename: Option<String>,
}

/// Upload an image or PDF (visitor)
///
/// Like `POST /api/v1/attachments` (a raw body or a `multipart/form-data`
/// `file` part), with the visitor token: images and PDFs only, 10 MiB by
/// default, attachable only to messages of the token's own session. Each
/// session has its own upload budget (`SUPPORTDESK_VISITOR_UPLOAD_RATE`).
/// Uploads not yet sent with a message may hold 50 MiB per session and
/// 1 GiB per company by default (then 413 `quota_exceeded`), and are
/// deleted after an hour.
#[utoipa::path(post, path = "/widget/v1/attachments", operation_id = "widget_upload_attachment",
    tag = "Widget",
    params(VisitorUploadQuery, ("Idempotency-Key" = Option<String>, Header)),
    security(("VisitorToken" = [])),
    request_body(content(
        (Vec<u8> = "application/octet-stream"),
        (UploadForm = "multipart/form-data"),
    )),
    responses(
        (status = 201, description = "Stored", body = Attachment),
        (status = 400, description = "`validation_failed`: an empty or unreadable file",
            body = ErrorBody),
        (status = 401, description = "`invalid_token`", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 409, description = "`session_closed`", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: larger than the visitor limit; \
            `quota_exceeded`: the session's or the company's unattached uploads would hold \
            more than their quota", body = ErrorBody),
        (status = 415, description = "Not an image or a PDF", body = ErrorBody)))]
pub(crate) async fn upload(
    RequestState(state): RequestState,
    Query(query): Query<VisitorUploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<(StatusCode, Json<Attachment>)> {
    let visitor = crate::widget::access::from_headers(
        &crate::widget::access::VisitorTokens::from_ref(&state),
        &headers,
        crate::widget::access::Use::Write,
    )
    .await?;
    let (tenant, session_id) = (visitor.tenant(), visitor.session_id());
    let session = crate::chat::store::find_session(&state.db, &tenant, session_id).await?;
    if session.status == SessionStatus::Closed {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::SessionClosed,
            "The chat session is closed",
        ));
    }
    // A session's own budget, so one chat cannot fill storage from many
    // addresses; the per-IP limit only sees one address at a time.
    let rate = state.config.visitor_upload_rate;
    let bucket = format!("visitor-upload:{session_id}");
    // Never an error: without Redis the node's own limiter decides.
    if let Ok(decision) = state
        .access
        .limiter
        .check(&bucket, rate.limit, rate.window)
        .await
        && !decision.allowed
    {
        crate::metrics::rate_limited(crate::metrics::Limiter::VisitorUploads);
        return Err(crate::ratelimit::exceeded(decision.retry_after_secs));
    }
    let rules = Rules {
        limit: state.attachments.max_visitor_bytes,
        session: Some(session_id),
        allowed: visitor_may_upload,
        quota: Some(state.attachments.visitor_quota),
    };
    let stored = receive(&state, &tenant, &headers, query.filename, body, rules).await?;
    Ok((StatusCode::CREATED, Json(stored.into())))
}
