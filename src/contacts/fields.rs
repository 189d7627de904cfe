//! The checks `/contacts` and `/organizations` share: an optional array or
//! object field read into its checked value (null and absent alike
//! leave it unset on a create; on a PATCH null clears where clearing means
//! something).

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::validate::{Patch, optional_text, problem};

/// An optional field of the create body checked by `check` (absent or null:
/// the default).
pub(super) fn optional<T: Default>(
    field: &str,
    value: Option<&Value>,
    check: impl Fn(&str, &Value) -> Result<T, FieldError>,
) -> Result<T, FieldError> {
    match value {
        None | Some(Value::Null) => Ok(T::default()),
        Some(value) => check(field, value),
    }
}

/// A PATCH field that replaces a list or an object: absent keeps it, null
/// empties it.
pub(super) fn replaced<T: Default>(
    field: &str,
    value: &Patch<Value>,
    check: impl Fn(&str, &Value) -> Result<T, FieldError>,
) -> Result<Option<T>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Ok(Some(T::default())),
        Patch::Value(value) => check(field, value).map(Some),
    }
}

/// A PATCH text field: absent keeps it, null (or empty) clears it.
pub(super) fn patched_text(
    field: &str,
    value: &Patch<String>,
    max: usize,
) -> Result<Option<Option<String>>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Ok(Some(None)),
        Patch::Value(raw) => optional_text(field, Some(raw), max).map(Some),
    }
}

/// The custom fields of a record: see `model::custom_fields`.
pub(super) fn custom_fields(field: &str, value: &Value) -> Result<Map<String, Value>, FieldError> {
    crate::contacts::model::custom_fields(field, value)
}

/// A PATCH body that changes nothing is a 400 naming what it may hold.
pub(super) fn something(given: bool, fields: &str) -> Result<(), FieldError> {
    match given {
        true => Ok(()),
        false => Err(problem("body", format!("give at least one of: {fields}"))),
    }
}
