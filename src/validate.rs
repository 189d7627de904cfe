//! Input rules shared by every area (docs/api.md, "Errors"): trimmed strings
//! with length limits, exact enum values, emails, pagination. A `Validator`
//! collects every problem so one 400 lists them all in `details`.

use serde::Deserialize;

use crate::error::{ApiError, FieldError};

pub const NAME_MAX: usize = 255;

#[derive(Default)]
pub struct Validator {
    errors: Vec<FieldError>,
}

impl Validator {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(FieldError {
            field: field.to_string(),
            message: message.into(),
        });
    }

    /// A required string, trimmed, of 1..=max characters.
    pub fn required(&mut self, field: &str, value: Option<&str>, max: usize) -> Option<String> {
        match value.map(str::trim) {
            None => {
                self.add(field, "is required");
                None
            }
            Some("") => {
                self.add(field, "must not be empty");
                None
            }
            Some(v) => self.check_len(field, v, max),
        }
    }

    /// An optional string, trimmed; empty counts as absent.
    pub fn optional(&mut self, field: &str, value: Option<&str>, max: usize) -> Option<String> {
        match value.map(str::trim) {
            None | Some("") => None,
            Some(v) => self.check_len(field, v, max),
        }
    }

    /// An optional email address, trimmed and checked for a plausible shape.
    pub fn email(&mut self, field: &str, value: Option<&str>) -> Option<String> {
        let value = self.optional(field, value, NAME_MAX)?;
        if is_plausible_email(&value) {
            Some(value)
        } else {
            self.add(field, "must be a valid email address");
            None
        }
    }

    /// An enum value that must match one of `allowed` exactly.
    pub fn one_of<'a>(
        &mut self,
        field: &str,
        value: Option<&str>,
        allowed: &[&'a str],
    ) -> Option<&'a str> {
        let value = value?;
        match allowed.iter().find(|a| **a == value) {
            Some(found) => Some(found),
            None => {
                self.add(field, format!("must be one of: {}", allowed.join(", ")));
                None
            }
        }
    }

    fn check_len(&mut self, field: &str, value: &str, max: usize) -> Option<String> {
        // Postgres refuses NUL in text; refusing it here keeps both backends
        // answering 400 instead of one of them failing with a 500.
        if value.contains('\0') {
            self.add(field, "must not contain NUL characters");
            None
        } else if value.chars().count() > max {
            self.add(field, format!("must be at most {max} characters"));
            None
        } else {
            Some(value.to_string())
        }
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Ok when nothing was wrong, else the 400 listing every problem.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::validation(self.errors))
        }
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
        let mut v = Validator::new();
        let limit = match limit.map(str::trim) {
            None | Some("") => default,
            Some(raw) => match raw.parse::<i64>() {
                Ok(n) if n >= 1 => n.min(max),
                Ok(_) => {
                    v.add("limit", "must be at least 1");
                    default
                }
                Err(_) => {
                    v.add("limit", "must be a whole number");
                    default
                }
            },
        };
        let offset = match offset.map(str::trim) {
            None | Some("") => 0,
            Some(raw) => match raw.parse::<i64>() {
                Ok(n) if n >= 0 => n,
                Ok(_) => {
                    v.add("offset", "must not be negative");
                    0
                }
                Err(_) => {
                    v.add("offset", "must be a whole number");
                    0
                }
            },
        };
        v.finish()?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn validator_collects_every_problem() {
        let mut v = Validator::new();
        assert_eq!(v.required("subject", Some("  hi "), 255), Some("hi".into()));
        assert_eq!(v.required("name", Some("   "), 255), None);
        assert_eq!(v.one_of("priority", Some("low"), &["LOW", "HIGH"]), None);
        assert_eq!(v.email("email", Some("not-an-email")), None);
        assert_eq!(v.optional("body", Some("a\0b"), 255), None);
        let err = v.finish().expect_err("four problems");
        assert_eq!(err.details.len(), 4);
        assert_eq!(err.code, "validation_failed");
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

impl Validator {
    /// An optional id given as a string in a body; malformed is a 400.
    pub fn uuid(&mut self, field: &str, value: Option<&str>) -> Option<uuid::Uuid> {
        let raw = value.map(str::trim).filter(|v| !v.is_empty())?;
        match uuid::Uuid::parse_str(raw) {
            Ok(id) => Some(id),
            Err(_) => {
                self.add(field, "must be a valid id");
                None
            }
        }
    }

    /// A required id given as a string in a body.
    pub fn required_uuid(&mut self, field: &str, value: Option<&str>) -> Option<uuid::Uuid> {
        if value.map(str::trim).is_none_or(str::is_empty) {
            self.add(field, "is required");
            return None;
        }
        self.uuid(field, value)
    }
}
