//! One error type for the whole API. Every rejection, from every layer, leaves
//! the service as `{"error": "...", "code": "...", "status": N}` (plus
//! `details` for validation errors). Internals go to the log, never the body.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

crate::text_enum! {
    /// Every `code` an error body can carry: what a client branches on, so
    /// the set is closed and each spelling is written once.
    pub enum ErrorCode {
        BadRequest = "bad_request",
        InvalidJson = "invalid_json",
        ValidationFailed = "validation_failed",
        MissingApiKey = "missing_api_key",
        InvalidApiKey = "invalid_api_key",
        ExpiredApiKey = "expired_api_key",
        InvalidCredentials = "invalid_credentials",
        TotpRequired = "totp_required",
        SignInRequired = "sign_in_required",
        SessionExpired = "session_expired",
        CsrfFailed = "csrf_failed",
        InvalidToken = "invalid_token",
        InvalidLink = "invalid_link",
        SsoFailed = "sso_failed",
        SsoNotVerified = "sso_not_verified",
        SsoRequired = "sso_required",
        IdentityRequired = "identity_required",
        AccountSuspended = "account_suspended",
        InsufficientScope = "insufficient_scope",
        NotFound = "not_found",
        MethodNotAllowed = "method_not_allowed",
        RequestTimeout = "request_timeout",
        Conflict = "conflict",
        VersionConflict = "version_conflict",
        SessionClosed = "session_closed",
        RoleInUse = "role_in_use",
        CsatOff = "csat_off",
        TicketMerged = "ticket_merged",
        OpenChildren = "open_children",
        UndoExpired = "undo_expired",
        CursorExpired = "cursor_expired",
        IdempotencyInProgress = "idempotency_in_progress",
        IdempotencyKeyReused = "idempotency_key_reused",
        IdempotencyResponseLost = "idempotency_response_lost",
        PayloadTooLarge = "payload_too_large",
        QuotaExceeded = "quota_exceeded",
        UnsupportedMediaType = "unsupported_media_type",
        RangeNotSatisfiable = "range_not_satisfiable",
        UpgradeRequired = "upgrade_required",
        RateLimited = "rate_limited",
        Internal = "internal",
        Unavailable = "unavailable",
        Timeout = "timeout",
    }
}

/// A field-level validation problem, listed in `details`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
    pub details: Vec<FieldError>,
    /// Extra response headers (e.g. `Retry-After` on 429).
    pub headers: Vec<(header::HeaderName, HeaderValue)>,
    /// Members beside `details` an error of one kind carries (a version
    /// conflict's current version and the changes since).
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    code: &'a str,
    status: u16,
    #[serde(skip_serializing_if = "<[FieldError]>::is_empty")]
    details: &'a [FieldError],
    #[serde(flatten)]
    extra: &'a serde_json::Map<String, serde_json::Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            details: Vec::new(),
            headers: Vec::new(),
            extra: serde_json::Map::new(),
        }
    }

    pub fn not_found() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            "Resource not found",
        )
    }

    /// The response of `not_found()` with its body a constant: it answers
    /// every path no route serves (scanners, typos), so it formats nothing.
    pub fn not_found_response() -> Response {
        const BODY: &[u8] = br#"{"error":"Resource not found","code":"not_found","status":404}"#;
        (
            StatusCode::NOT_FOUND,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            BODY,
        )
            .into_response()
    }

    /// A 401: the credential is missing, unknown or no longer valid.
    pub fn unauthorized(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, ErrorCode::Conflict, message)
    }

    pub fn invalid_json(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::InvalidJson, message)
    }

    /// A 400 for one field; the message is repeated in `details`.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        Self::validation(vec![FieldError {
            field: field.to_string(),
            message: message.into(),
        }])
    }

    pub fn validation(details: Vec<FieldError>) -> Self {
        let message = match details.as_slice() {
            [only] => format!("{}: {}", only.field, only.message),
            _ => "Request validation failed".to_string(),
        };
        ApiError {
            details,
            ..Self::new(
                StatusCode::BAD_REQUEST,
                ErrorCode::ValidationFailed,
                message,
            )
        }
    }

    pub fn forbidden_scope(scope: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            ErrorCode::InsufficientScope,
            format!("Missing required permission: {scope}"),
        )
    }

    /// A 403: the company is suspended (its keys, widgets and sockets).
    pub fn account_suspended() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            ErrorCode::AccountSuspended,
            "Account is suspended",
        )
    }

    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            "Internal server error",
        )
    }

    pub fn unavailable() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "Service temporarily unavailable, try again",
        )
    }

    /// A 409 `ticket_merged`: the ticket was merged into `target`, where
    /// its conversation goes on.
    pub fn ticket_merged(target: uuid::Uuid) -> Self {
        let mut error = Self::new(
            StatusCode::CONFLICT,
            ErrorCode::TicketMerged,
            format!("The ticket was merged into ticket {target}: write there"),
        );
        error
            .extra
            .insert("mergedInto".into(), target.to_string().into());
        error
    }

    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// The generic error for a status produced outside our handlers (a
    /// middleware, a timeout, a limit), so even those keep our shape.
    pub fn from_status(status: StatusCode) -> Self {
        let (code, message) = match status {
            StatusCode::NOT_FOUND => (ErrorCode::NotFound, "Resource not found"),
            StatusCode::METHOD_NOT_ALLOWED => (ErrorCode::MethodNotAllowed, "Method not allowed"),
            StatusCode::PAYLOAD_TOO_LARGE => {
                (ErrorCode::PayloadTooLarge, "Request body exceeds 1 MiB")
            }
            StatusCode::UNSUPPORTED_MEDIA_TYPE => (
                ErrorCode::UnsupportedMediaType,
                "Content-Type must be application/json",
            ),
            StatusCode::REQUEST_TIMEOUT => (ErrorCode::RequestTimeout, "Request timed out"),
            StatusCode::TOO_MANY_REQUESTS => (ErrorCode::RateLimited, "Rate limit exceeded"),
            StatusCode::SERVICE_UNAVAILABLE => (
                ErrorCode::Unavailable,
                "Service temporarily unavailable, try again",
            ),
            s if s.is_client_error() => (ErrorCode::BadRequest, "Bad request"),
            _ => (ErrorCode::Internal, "Internal server error"),
        };
        Self::new(status, code, message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: &self.message,
            code: self.code.as_str(),
            status: self.status.as_u16(),
            details: &self.details,
            extra: &self.extra,
        };
        // The body is strings and numbers, so serialising cannot fail; were
        // it to, the client still gets a JSON error rather than an empty body.
        let json = serde_json::to_vec(&body).unwrap_or_else(|_| {
            br#"{"error":"Internal server error","code":"internal","status":500}"#.to_vec()
        });
        let mut response = (
            self.status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            json,
        )
            .into_response();
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

/// Backend-neutral store errors: handlers see these, never a sqlx error.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// A unique value is taken; names the field as the request spells it
    /// (the store that wrote the row says which), or "value" when unnamed.
    #[error("conflict on {0}")]
    Conflict(String),
    /// A reference to a record that does not exist (or is another tenant's).
    #[error("invalid reference: {field}")]
    InvalidReference { field: String, message: String },
    /// Several such references, each a field error (all listed together).
    #[error("invalid references: {0:?}")]
    InvalidReferences(Vec<FieldError>),
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The server cancelled a statement that ran past its time limit.
    #[error("statement timed out: {0}")]
    TimedOut(String),
    /// A write named the version it expected (`If-Match`) and the record
    /// is at `current` now: nothing was changed.
    #[error("version conflict: the record is at version {current}")]
    VersionConflict { current: i64 },
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
    /// A rule of the record refuses the change: answered as it is.
    #[error("refused: {}", .0.message)]
    Refused(Box<ApiError>),
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match &err {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict("value".to_string())
            }
            sqlx::Error::Database(db) if db.code().as_deref().is_some_and(is_server_going_away) => {
                StoreError::Unavailable(err.to_string())
            }
            sqlx::Error::Database(db) if db.code().as_deref() == Some(QUERY_CANCELED) => {
                StoreError::TimedOut(err.to_string())
            }
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_) => StoreError::Unavailable(err.to_string()),
            _ => StoreError::Database(err),
        }
    }
}

/// Why a store refused a change: the store failed, or records still use
/// what the change would remove or strand (a 409 whose message names them,
/// so the caller knows what to change first).
#[derive(Debug)]
pub enum Refused {
    Store(StoreError),
    InUse(String),
}

impl From<StoreError> for Refused {
    fn from(err: StoreError) -> Self {
        Refused::Store(err)
    }
}

impl From<Refused> for ApiError {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Store(err) => err.into(),
            Refused::InUse(message) => ApiError::conflict(message),
        }
    }
}

/// Postgres SQLSTATEs that mean the server, not the statement, failed: a
/// connection exception (class 08) or a shutdown in progress (57P01
/// admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now). The
/// client should retry, so they are 503s like a lost connection.
/// Postgres' `query_canceled`: the statement timeout fired (the service
/// cancels no statement of its own any other way).
const QUERY_CANCELED: &str = "57014";

fn is_server_going_away(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
}

/// A value that could not be encoded for its column (an event's JSON
/// payload): a failed write like any other database error.
impl From<serde_json::Error> for StoreError {
    fn from(err: serde_json::Error) -> Self {
        StoreError::Database(sqlx::Error::Encode(Box::new(err)))
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => ApiError::not_found(),
            StoreError::Refused(error) => *error,
            StoreError::Conflict(field) => {
                ApiError::conflict(format!("A record with this {field} already exists"))
            }
            StoreError::InvalidReference { field, message } => {
                ApiError::invalid_field(&field, message)
            }
            StoreError::InvalidReferences(problems) => ApiError::validation(problems),
            StoreError::VersionConflict { current } => {
                let mut error = ApiError::new(
                    StatusCode::PRECONDITION_FAILED,
                    ErrorCode::VersionConflict,
                    format!("The record changed since; it is at version {current} now"),
                );
                error.extra.insert("currentVersion".into(), current.into());
                error
            }
            StoreError::Unavailable(reason) => {
                tracing::error!(%reason, "store unavailable");
                ApiError::unavailable()
            }
            StoreError::TimedOut(reason) => {
                tracing::warn!(%reason, "statement timed out");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::Timeout,
                    "The request took too long and was stopped; narrow it or try again later",
                )
            }
            StoreError::Database(source) => {
                tracing::error!(error = %source, "database error");
                ApiError::internal()
            }
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_shutting_down_is_unavailable_not_internal() {
        assert!(is_server_going_away("57P01"));
        assert!(is_server_going_away("08006"));
        assert!(!is_server_going_away("23505"));
        assert!(!is_server_going_away("42P01"));
    }

    #[test]
    fn a_conflict_names_the_field_not_the_constraint() {
        let error = ApiError::from(StoreError::Conflict("slug".into()));
        assert_eq!(error.status, StatusCode::CONFLICT);
        assert_eq!(error.message, "A record with this slug already exists");
    }

    #[tokio::test]
    async fn the_constant_404_is_the_not_found_error() {
        async fn parts(response: Response) -> (StatusCode, Option<HeaderValue>, Vec<u8>) {
            let (parts, body) = response.into_parts();
            let bytes = axum::body::to_bytes(body, 1024)
                .await
                .expect("a small body");
            let content_type = parts.headers.get(header::CONTENT_TYPE).cloned();
            (parts.status, content_type, bytes.to_vec())
        }
        assert_eq!(
            parts(ApiError::not_found_response()).await,
            parts(ApiError::not_found().into_response()).await
        );
    }
}
