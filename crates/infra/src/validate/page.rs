//! Pagination parameters and the list envelope of paged endpoints.

use serde::Deserialize;

use super::{Fields, problem};
use crate::error::{ApiError, FieldError};

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
}
