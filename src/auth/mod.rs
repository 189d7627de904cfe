//! Who is calling: API keys, their scopes, and the tenant (company + mode)
//! every store function is given so that no query can forget it.

pub mod by_id;
pub mod cache;
pub mod key;
pub mod middleware;
pub mod ready;
pub mod scope;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::domain::UnknownValue;

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

    /// The spellings of `mode` columns, in `ALL` order.
    pub const STORED: &'static [&'static str] = &["test", "live"];

    /// A `mode` column's value, spelt exactly as stored: anything else is
    /// a damaged row, never a mode to guess.
    pub fn from_stored(text: &str) -> Result<Mode, UnknownValue> {
        match text {
            "test" => Ok(Mode::Test),
            "live" => Ok(Mode::Live),
            _ => Err(UnknownValue {
                value: text.to_string(),
                allowed: Self::STORED,
            }),
        }
    }
}

// The API spells modes `TEST`/`LIVE` and the columns `test`/`live`, so Mode
// cannot use `text_enum!` (one spelling for both); its columns are decoded
// here with the stored spelling.
crate::decoded_from_text!(Mode, Mode::from_stored);

/// The data partition a request may touch: one company, one mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tenant {
    pub company_id: Uuid,
    pub mode: Mode,
}

#[cfg(test)]
impl Tenant {
    /// The TEST mode of a company of its own, for unit tests.
    pub fn of_new_company() -> Tenant {
        Tenant {
            company_id: Uuid::now_v7(),
            mode: Mode::Test,
        }
    }
}

/// The authenticated caller, put into request extensions by the auth
/// middleware and read by handlers through the `Principal` extractor.
#[derive(Debug, Clone)]
pub struct Principal {
    pub key_id: Uuid,
    pub tenant: Tenant,
    pub scopes: ScopeSet,
    pub rate_limit: i64,
    /// When the key expires, if it does (open sockets close then).
    pub expires_at: Option<crate::time::Timestamp>,
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

#[cfg(test)]
mod tests {
    use super::Mode;

    #[test]
    fn stored_modes_read_back_only_in_their_column_spelling() {
        for mode in [Mode::Test, Mode::Live] {
            assert_eq!(Mode::from_stored(mode.as_str()), Ok(mode));
        }
        let err = Mode::from_stored("TEST").expect_err("the API spelling is not stored");
        assert_eq!(err.allowed, Mode::STORED);
    }
}
