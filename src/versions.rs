//! Versions of records (tickets, chat sessions): the `ETag` a record's
//! answer carries and the `If-Match` a write names, read and written in one
//! place so every versioned record spells them alike.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::extract::Json;

/// The version named by `If-Match` (`"5"`, `W/"5"` or `5`); None without
/// the header or with `*` (any version).
#[derive(Debug, Clone, Copy)]
pub struct IfMatch(pub Option<i64>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let Some(raw) = parts.headers.get(header::IF_MATCH) else {
            return Ok(IfMatch(None));
        };
        let invalid = || ApiError::invalid_field("If-Match", "must be a version: \"<number>\"");
        let text = raw.to_str().map_err(|_| invalid())?.trim();
        if text == "*" {
            return Ok(IfMatch(None));
        }
        let bare = text.strip_prefix("W/").unwrap_or(text);
        let bare = bare
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            .unwrap_or(bare);
        match bare.parse::<i64>() {
            Ok(version) if version >= 1 => Ok(IfMatch(Some(version))),
            _ => Err(invalid()),
        }
    }
}

/// `ETag: "<version>"`.
pub fn etag(version: i64) -> [(header::HeaderName, HeaderValue); 1] {
    let value = HeaderValue::from_str(&format!("\"{version}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("\"0\""));
    [(header::ETAG, value)]
}

/// A record answered with its version as its ETag.
pub struct Versioned<T>(pub i64, pub T);

impl<T: serde::Serialize> IntoResponse for Versioned<T> {
    fn into_response(self) -> Response {
        (etag(self.0), Json(self.1)).into_response()
    }
}
