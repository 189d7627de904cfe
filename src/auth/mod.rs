//! Who is calling: API keys, their scopes, and the tenant (company + mode)
//! every store function is given so that no query can forget it.

pub mod cache;
pub mod key;
pub mod middleware;
pub mod scope;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use scope::{Scope, ScopeSet};

/// TEST keys see only test data, LIVE keys only live data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Mode {
    Test,
    Live,
}

impl Mode {
    /// The value stored in `mode` columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Test => "test",
            Mode::Live => "live",
        }
    }

    /// The value shown in the API (`TEST`, `LIVE`).
    pub fn as_api(self) -> &'static str {
        match self {
            Mode::Test => "TEST",
            Mode::Live => "LIVE",
        }
    }

    pub fn parse(value: &str) -> Option<Mode> {
        match value.to_ascii_lowercase().as_str() {
            "test" => Some(Mode::Test),
            "live" => Some(Mode::Live),
            _ => None,
        }
    }
}

/// The data partition a request may touch: one company, one mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tenant {
    pub company_id: Uuid,
    pub mode: Mode,
}

/// The authenticated caller, put into request extensions by the auth
/// middleware and read by handlers through the `Principal` extractor.
#[derive(Debug, Clone)]
pub struct Principal {
    pub key_id: Uuid,
    pub tenant: Tenant,
    pub scopes: ScopeSet,
    pub rate_limit: i64,
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Principal {
    type Rejection = crate::error::ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<Principal>().cloned().ok_or_else(|| {
            crate::error::ApiError::new(
                axum::http::StatusCode::UNAUTHORIZED,
                "missing_api_key",
                "X-API-Key header is required",
            )
        })
    }
}
