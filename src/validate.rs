//! Input rules shared by every area (docs/api.md, "Errors"): trimmed strings
//! with length limits, exact enum values, emails, ids, pagination. Each field
//! check returns the parsed value or its `FieldError`; `Fields::all_valid`
//! over a tuple of checks returns every value, or one 400 that lists every
//! problem in `details`, in the order of the tuple.

use std::str::FromStr;

use serde::Deserialize;
use uuid::Uuid;

use crate::domain::UnknownValue;
use crate::error::{ApiError, FieldError};

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

/// What a failed check reports: one problem or several.
pub trait IntoFieldErrors {
    fn append_to(self, errors: &mut Vec<FieldError>);
}

impl IntoFieldErrors for FieldError {
    fn append_to(self, errors: &mut Vec<FieldError>) {
        errors.push(self);
    }
}

impl IntoFieldErrors for Vec<FieldError> {
    fn append_to(mut self, errors: &mut Vec<FieldError>) {
        errors.append(&mut self);
    }
}

/// A tuple of checks, each `Result<T, E: IntoFieldErrors>`.
pub trait Fields {
    type Output;

    /// Every value, or every problem in tuple order.
    fn collect_errors(self) -> Result<Self::Output, Vec<FieldError>>;

    /// Every value, or the 400 that lists every problem.
    fn all_valid(self) -> Result<Self::Output, ApiError>
    where
        Self: Sized,
    {
        self.collect_errors().map_err(ApiError::validation)
    }
}

macro_rules! tuple_fields {
    ($($value:ident: $ty:ident / $err:ident),+) => {
        impl<$($ty, $err: IntoFieldErrors),+> Fields for ($(Result<$ty, $err>,)+) {
            type Output = ($($ty,)+);

            fn collect_errors(self) -> Result<Self::Output, Vec<FieldError>> {
                let ($($value,)+) = self;
                let mut errors = Vec::new();
                $(
                    let $value = match $value {
                        Ok(value) => Some(value),
                        Err(err) => {
                            err.append_to(&mut errors);
                            None
                        }
                    };
                )+
                match ($($value,)+) {
                    ($(Some($value),)+) => Ok(($($value,)+)),
                    _ => Err(errors),
                }
            }
        }
    };
}

tuple_fields!(a: A / EA);
tuple_fields!(a: A / EA, b: B / EB);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC, d: D / ED);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF, g: G / EG);
tuple_fields!(
    a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF, g: G / EG, h: H / EH
);
tuple_fields!(
    a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF, g: G / EG, h: H / EH,
    i: I / EI
);
tuple_fields!(
    a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF, g: G / EG, h: H / EH,
    i: I / EI, j: J / EJ
);

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

/// Raw pagination parameters: strings, so that a non-numeric value is our
/// 400 rather than a deserializer's message.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page size (clamped to the endpoint's maximum).
    #[param(value_type = Option<i64>, minimum = 1)]
    pub limit: Option<String>,
    /// Records to skip.
    #[param(value_type = Option<i64>, minimum = 0)]
    pub offset: Option<String>,
}

/// Effective pagination: `limit` clamped to the endpoint's maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub limit: i64,
    pub offset: i64,
}

impl Page {
    /// `limit` defaults to `default` and is clamped to `max`; below 1, a
    /// negative offset, or a non-number is a 400.
    pub fn parse(
        limit: Option<&str>,
        offset: Option<&str>,
        default: i64,
        max: i64,
    ) -> Result<Page, ApiError> {
        Self::check(limit, offset, default, max).map_err(ApiError::validation)
    }

    /// `parse` as a field check, to list its problems beside others.
    pub fn check(
        limit: Option<&str>,
        offset: Option<&str>,
        default: i64,
        max: i64,
    ) -> Result<Page, Vec<FieldError>> {
        let limit = match limit.map(str::trim) {
            None | Some("") => Ok(default),
            Some(raw) => match raw.parse::<i64>() {
                Ok(n) if n >= 1 => Ok(n.min(max)),
                Ok(_) => Err(problem("limit", "must be at least 1")),
                Err(_) => Err(problem("limit", "must be a whole number")),
            },
        };
        let offset = match offset.map(str::trim) {
            None | Some("") => Ok(0),
            Some(raw) => match raw.parse::<i64>() {
                Ok(n) if n >= 0 => Ok(n),
                Ok(_) => Err(problem("offset", "must not be negative")),
                Err(_) => Err(problem("offset", "must be a whole number")),
            },
        };
        let (limit, offset) = (limit, offset).collect_errors()?;
        Ok(Page { limit, offset })
    }

    pub fn from_query(query: &PageQuery, default: i64, max: i64) -> Result<Page, ApiError> {
        Self::parse(
            query.limit.as_deref(),
            query.offset.as_deref(),
            default,
            max,
        )
    }
}

/// The list envelope of every paged endpoint: `{data, total, limit, offset}`.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Paged<T> {
    pub data: Vec<T>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

impl<T> Paged<T> {
    pub fn new(data: Vec<T>, total: i64, page: Page) -> Self {
        Paged {
            data,
            total,
            limit: page.limit,
            offset: page.offset,
        }
    }
}

/// A PATCH field: absent, explicitly null (clear it), or a value. Use with
/// `#[serde(default)]` on the field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    #[default]
    Missing,
    Null,
    Value(T),
}

impl<T> Patch<T> {
    pub fn is_missing(&self) -> bool {
        matches!(self, Patch::Missing)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(deserializer).map(|v| v.map_or(Patch::Null, Patch::Value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text_enum;

    text_enum! {
        enum Level {
            Low = "LOW",
            High = "HIGH",
        }
    }

    #[test]
    fn page_defaults_clamps_and_rejects() {
        assert_eq!(
            Page::parse(None, None, 20, 100).ok(),
            Some(Page {
                limit: 20,
                offset: 0
            })
        );
        assert_eq!(
            Page::parse(Some("500"), Some("40"), 20, 100).ok(),
            Some(Page {
                limit: 100,
                offset: 40
            })
        );
        assert!(Page::parse(Some("0"), None, 20, 100).is_err());
        assert!(Page::parse(Some("x"), None, 20, 100).is_err());
        assert!(Page::parse(None, Some("-1"), 20, 100).is_err());
    }

    #[test]
    fn valid_fields_come_back_parsed() {
        let checked = (
            required_text("subject", Some("  hi "), 255),
            optional_enum::<Level>("priority", Some("HIGH")),
            required_id("entityId", Some("018f0000-0000-7000-8000-000000000000")),
            optional_email("email", None),
        )
            .all_valid()
            .expect("all valid");
        assert_eq!(checked.0, "hi");
        assert_eq!(checked.1, Some(Level::High));
        assert_eq!(checked.3, None);
        assert_eq!(Level::ALL, &[Level::Low, Level::High]);
    }

    #[test]
    fn every_problem_is_listed_in_tuple_order() {
        let err = (
            required_text("subject", Some("ok"), 255),
            required_text("name", Some("   "), 255),
            optional_enum::<Level>("priority", Some("low")),
            optional_email("email", Some("not-an-email")),
            optional_text("body", Some("a\0b"), 255),
            required_id("entityId", None),
            Page::check(Some("0"), Some("x"), 20, 100),
        )
            .all_valid()
            .expect_err("six fields are wrong");
        let listed: Vec<(&str, &str)> = err
            .details
            .iter()
            .map(|d| (d.field.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                ("name", "must not be empty"),
                ("priority", "must be one of: LOW, HIGH"),
                ("email", "must be a valid email address"),
                ("body", "must not contain NUL characters"),
                ("entityId", "is required"),
                ("limit", "must be at least 1"),
                ("offset", "must be a whole number"),
            ]
        );
        assert_eq!(err.code, "validation_failed");
    }
}
