//! Serving attachment bytes, with a key (`/api/v1/attachments/{id}/content`)
//! or a signed link (`/files/{id}?exp=…&sig=…`). Every answer is marked so
//! a browser never runs it: `nosniff`, a sandboxing CSP, and `attachment`
//! disposition for everything but raster images.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;

use super::Attachments;
use super::model::is_inline;
use super::storage::Storage;
use super::store::{self, Stored};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Id, Query};
use crate::state::AppState;
use crate::time::Clock;

/// The public route of signed links (no API key).
pub fn router() -> Router<AppState> {
    Router::new().route("/files/{id}", get(signed))
}

#[derive(Deserialize)]
struct LinkQuery {
    exp: Option<String>,
    sig: Option<String>,
}

async fn signed(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(attachments): State<Arc<Attachments>>,
    Id(id): Id,
    Query(query): Query<LinkQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let expires = query.exp.as_deref().and_then(|exp| exp.parse::<i64>().ok());
    let valid = match (expires, query.sig.as_deref()) {
        (Some(expires), Some(sig)) => attachments.links.verify(id, expires, sig, clock.now()),
        _ => false,
    };
    if !valid {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::InvalidLink,
            "This link is invalid or has expired",
        ));
    }
    let stored = store::find_signed(&db, id).await?;
    serve(&attachments.storage, &stored, &headers).await
}

/// The attachment's bytes (or the one range asked for) with its headers.
pub async fn serve(storage: &Storage, stored: &Stored, headers: &HeaderMap) -> ApiResult<Response> {
    let size = u64::try_from(stored.size).unwrap_or_default();
    let range = match requested_range(headers, size) {
        Ok(range) => range,
        Err(()) => {
            return Err(ApiError::new(
                StatusCode::RANGE_NOT_SATISFIABLE,
                ErrorCode::RangeNotSatisfiable,
                format!("The range is outside the file's {size} bytes"),
            )
            .with_header(header::CONTENT_RANGE, text(&format!("bytes */{size}"))));
        }
    };
    let key = Storage::object_key(stored.company_id, &stored.sha256);
    let download = storage.read(&key, range.clone()).await.map_err(|err| {
        tracing::error!(error = %err, attachment = %stored.id, "reading an attachment failed");
        match err {
            object_store::Error::NotFound { .. } => ApiError::not_found(),
            _ => ApiError::internal(),
        }
    })?;
    let mut response = Response::new(Body::from_stream(download.body));
    let out = response.headers_mut();
    match &range {
        Some(range) => {
            *response.status_mut() = StatusCode::PARTIAL_CONTENT;
            let out = response.headers_mut();
            out.insert(
                header::CONTENT_RANGE,
                text(&format!("bytes {}-{}/{size}", range.start, range.end - 1)),
            );
            out.insert(
                header::CONTENT_LENGTH,
                HeaderValue::from(range.end - range.start),
            );
        }
        None => {
            out.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
        }
    }
    let out = response.headers_mut();
    out.insert(header::CONTENT_TYPE, text(&stored.content_type));
    out.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    out.insert(
        header::CONTENT_DISPOSITION,
        disposition(&stored.filename, is_inline(&stored.content_type)),
    );
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    out.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox"),
    );
    out.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=300"),
    );
    Ok(response)
}

/// The one range of a `Range: bytes=…` header as a half-open interval;
/// None for no header or a form this server answers whole (several ranges,
/// another unit); Err for a range outside the file.
fn requested_range(headers: &HeaderMap, size: u64) -> Result<Option<std::ops::Range<u64>>, ()> {
    let Some(spec) = headers
        .get(header::RANGE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().strip_prefix("bytes="))
    else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let Some((first, last)) = spec.split_once('-') else {
        return Ok(None);
    };
    let (first, last) = (first.trim(), last.trim());
    let range = match (first.parse::<u64>().ok(), last.parse::<u64>().ok()) {
        // `bytes=-n`: the last n bytes.
        (None, Some(suffix)) if first.is_empty() && suffix > 0 => size.saturating_sub(suffix)..size,
        (Some(start), None) if last.is_empty() => start..size,
        (Some(start), Some(end)) if end >= start => start..end.saturating_add(1).min(size),
        _ => return Ok(None),
    };
    if range.start >= size || range.is_empty() {
        return Err(());
    }
    Ok(Some(range))
}

/// `attachment` (or `inline`) with the name in both forms: an ASCII
/// fallback and the exact name percent-encoded (RFC 6266).
fn disposition(filename: &str, inline: bool) -> HeaderValue {
    let kind = if inline { "inline" } else { "attachment" };
    let ascii: String = filename
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let encoded: String = filename
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    text(&format!(
        "{kind}; filename=\"{ascii}\"; filename*=UTF-8''{encoded}"
    ))
}

/// A header value from text this module built (printable ASCII), with a
/// safe fallback should that ever not hold.
fn text(value: &str) -> HeaderValue {
    HeaderValue::from_str(value).unwrap_or_else(|_| HeaderValue::from_static("invalid"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(value: &str, size: u64) -> Result<Option<std::ops::Range<u64>>, ()> {
        let mut headers = HeaderMap::new();
        headers.insert(header::RANGE, text(value));
        requested_range(&headers, size)
    }

    #[test]
    fn ranges_are_half_open_and_clamped() {
        assert_eq!(range("bytes=0-99", 1000), Ok(Some(0..100)));
        assert_eq!(range("bytes=900-", 1000), Ok(Some(900..1000)));
        assert_eq!(range("bytes=-10", 1000), Ok(Some(990..1000)));
        assert_eq!(range("bytes=990-2000", 1000), Ok(Some(990..1000)));
        assert_eq!(range("bytes=0-1,5-9", 1000), Ok(None));
        assert_eq!(range("bytes=1000-", 1000), Err(()));
    }

    #[test]
    fn dispositions_carry_both_name_forms() {
        let value = disposition("été \"x\".html", false);
        assert_eq!(
            value.to_str().expect("ascii"),
            "attachment; filename=\"_t_ _x_.html\"; filename*=UTF-8''%C3%A9t%C3%A9%20%22x%22.html"
        );
    }
}
