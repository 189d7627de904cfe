//! The paging parameters and the list envelope of cursor-paged lists.

use serde::{Deserialize, Serialize};

use super::count::Total;
use super::cursor::{After, Cursors, ListId, SortKey};
use crate::error::{ApiError, FieldError};
use crate::validate::{Page, problem};

/// Raw paging parameters: strings, so that a non-numeric value is our 400
/// rather than a deserializer's message.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListRequest {
    /// Page size (clamped to the endpoint's maximum).
    #[param(value_type = Option<i64>, minimum = 1)]
    pub limit: Option<String>,
    /// Records to skip (offset paging). Not with `after`.
    #[param(value_type = Option<i64>, minimum = 0)]
    pub offset: Option<String>,
    /// The `nextCursor` of the previous page (cursor paging): the page
    /// starts right after that page's last record. Only valid on the list
    /// and filters that produced it; not with `offset`.
    pub after: Option<String>,
}

impl ListRequest {
    /// The page size and offset, and the raw cursor: `after` with an
    /// `offset` is a 400 on `after` (the two ways of paging do not mix).
    pub fn check(&self, default: i64, max: i64) -> Result<(Page, Option<String>), Vec<FieldError>> {
        let page = Page::check(self.limit.as_deref(), self.offset.as_deref(), default, max)?;
        let after = self.after.clone().filter(|a| !a.is_empty());
        let has_offset = self.offset.as_deref().is_some_and(|o| !o.trim().is_empty());
        if after.is_some() && has_offset {
            return Err(vec![problem("after", "cannot be combined with offset")]);
        }
        Ok((page, after))
    }
}

/// Search results are ordered by rank, which is no position a cursor can
/// hold: they page by offset only, so `after` on a search is a 400.
pub fn refuse_after_in_rank_order(
    ranked: bool,
    after: Option<String>,
) -> Result<Option<String>, ApiError> {
    if ranked && after.is_some() {
        let why = "search results page by offset (a cursor holds no rank)";
        return Err(ApiError::validation(vec![problem("after", why)]));
    }
    Ok(after)
}

/// `{data, total, limit, offset, nextCursor}` and, when the total was
/// capped, `totalIsLowerBound: true`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CursorPage<T> {
    pub data: Vec<T>,
    /// Records matching the filters (see `totalIsLowerBound`).
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
    /// Pass as `after` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// Present (true) when counting stopped at the cap: at least `total`
    /// records match.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schema(value_type = Option<bool>)]
    pub total_is_lower_bound: bool,
}

impl<T> CursorPage<T> {
    /// The page from `rows` read with `limit + 1` (the extra row only says
    /// that a next page exists); `key` gives a record's sort key.
    pub fn new(
        mut rows: Vec<T>,
        total: Total,
        page: Page,
        cursors: &Cursors,
        list: &ListId,
        key: impl Fn(&T) -> SortKey,
    ) -> Self {
        let more = rows.len() as i64 > page.limit;
        rows.truncate(page.limit.max(0) as usize);
        let next_cursor = match (more, rows.last()) {
            (true, Some(last)) => Some(cursors.seal(list, &key(last))),
            _ => None,
        };
        CursorPage {
            data: rows,
            total: total.value,
            limit: page.limit,
            offset: page.offset,
            next_cursor,
            total_is_lower_bound: total.is_lower_bound,
        }
    }

    /// The page without `nextCursor` when it is in rank order (see
    /// [`refuse_after_in_rank_order`]).
    pub fn ranked(mut self, ranked: bool) -> Self {
        if ranked {
            self.next_cursor = None;
        }
        self
    }

    /// `new` for lists ordered by `(created_at, id)`.
    pub fn by_time(
        rows: Vec<T>,
        total: Total,
        page: Page,
        cursors: &Cursors,
        list: &ListId,
        position: impl Fn(&T) -> After,
    ) -> Self {
        Self::new(rows, total, page, cursors, list, |row| {
            let at = position(row);
            After::key(at.created_at, at.id)
        })
    }
}
