//! The answers sign-in and password changes share.

use super::password;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// A password that does not meet the rules, as the field error of `field`.
pub fn refused_password(field: &str, reason: &str) -> ApiError {
    ApiError::invalid_field(field, reason)
}

/// The 401 of a sign-in that failed, whatever the reason (an unknown
/// email, a wrong password): the two are not told apart.
pub fn invalid_credentials() -> ApiError {
    ApiError::unauthorized(
        ErrorCode::InvalidCredentials,
        "The email or the password is wrong",
    )
}

/// `password::NewPassword::parse` as the API's field error.
pub fn new_password(field: &str, raw: Option<&str>) -> ApiResult<password::NewPassword> {
    password::NewPassword::parse(raw.unwrap_or(""))
        .map_err(|reason| refused_password(field, reason))
}
