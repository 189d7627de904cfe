//! Checks of single fields: each returns the parsed value or its
//! `FieldError`.

use std::str::FromStr;

use uuid::Uuid;

use crate::domain::UnknownValue;
use crate::error::FieldError;

pub const NAME_MAX: usize = 255;

/// The problem `message` on `field`.
pub fn problem(field: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// A required string, trimmed, of 1..=max characters.
pub fn required_text(field: &str, value: Option<&str>, max: usize) -> Result<String, FieldError> {
    match value.map(str::trim) {
        None => Err(problem(field, "is required")),
        Some("") => Err(problem(field, "must not be empty")),
        Some(v) => checked_len(field, v, max),
    }
}

/// An optional string, trimmed; empty counts as absent.
pub fn optional_text(
    field: &str,
    value: Option<&str>,
    max: usize,
) -> Result<Option<String>, FieldError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => checked_len(field, v, max).map(Some),
    }
}

/// An optional email address, trimmed and checked for a plausible shape.
pub fn optional_email(field: &str, value: Option<&str>) -> Result<Option<String>, FieldError> {
    match optional_text(field, value, NAME_MAX)? {
        Some(email) if !is_plausible_email(&email) => {
            Err(problem(field, "must be a valid email address"))
        }
        email => Ok(email),
    }
}

/// An optional enum value that must match one of the set exactly.
pub fn optional_enum<E>(field: &str, value: Option<&str>) -> Result<Option<E>, FieldError>
where
    E: FromStr<Err = UnknownValue>,
{
    value
        .map(|raw| {
            raw.parse::<E>().map_err(|unknown| {
                problem(
                    field,
                    format!("must be one of: {}", unknown.allowed.join(", ")),
                )
            })
        })
        .transpose()
}

/// A required enum value.
pub fn required_enum<E>(field: &str, value: Option<&str>) -> Result<E, FieldError>
where
    E: FromStr<Err = UnknownValue>,
{
    optional_enum(field, value)?.ok_or_else(|| problem(field, "is required"))
}

/// An optional id given as a string; empty counts as absent, malformed is
/// a 400.
pub fn optional_id(field: &str, value: Option<&str>) -> Result<Option<Uuid>, FieldError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(raw) => Uuid::parse_str(raw)
            .map(Some)
            .map_err(|_| problem(field, "must be a valid id")),
    }
}

/// A required id given as a string.
pub fn required_id(field: &str, value: Option<&str>) -> Result<Uuid, FieldError> {
    optional_id(field, value)?.ok_or_else(|| problem(field, "is required"))
}

/// A rule across fields: `Err(problem)` unless `holds`.
pub fn ensure(holds: bool, field: &str, message: &str) -> Result<(), FieldError> {
    if holds {
        Ok(())
    } else {
        Err(problem(field, message))
    }
}

fn checked_len(field: &str, value: &str, max: usize) -> Result<String, FieldError> {
    // Postgres refuses NUL in text; refusing it here keeps both backends
    // answering 400 instead of one of them failing with a 500.
    if value.contains('\0') {
        Err(problem(field, "must not contain NUL characters"))
    } else if value.chars().count() > max {
        Err(problem(field, format!("must be at most {max} characters")))
    } else {
        Ok(value.to_string())
    }
}

pub fn is_plausible_email(value: &str) -> bool {
    let Some((local, domain)) = value.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !value.chars().any(|c| c.is_whitespace() || c.is_control())
}
