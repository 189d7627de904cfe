//! The lists nested under one ticket (its comments, its timeline): oldest
//! first, 50 a page by default and at most 100, paged by offset or cursor.

use std::future::Future;

use uuid::Uuid;

use crate::auth::Principal;
use crate::error::{ApiError, ApiResult, StoreError};
use crate::extract::Json;
use crate::paging::{After, CursorPage, Cursors, ListId, ListRequest, Total};
use crate::validate::Page;

const LIST_DEFAULT: i64 = 50;
const LIST_MAX: i64 = 100;

/// One page of the list `name` of ticket `ticket_id`: `read` fetches the
/// rows of a page (with one row more than the page, see `CursorPage`) and
/// the exact total; `position` gives a row's place for the next cursor.
pub(crate) async fn ticket_page<T, Fut>(
    cursors: &Cursors,
    principal: &Principal,
    name: &str,
    ticket_id: Uuid,
    query: &ListRequest,
    read: impl FnOnce(Page, Option<After>) -> Fut,
    position: impl Fn(&T) -> After,
) -> ApiResult<Json<CursorPage<T>>>
where
    Fut: Future<Output = Result<(Vec<T>, i64), StoreError>>,
{
    let (page, after) = query
        .check(LIST_DEFAULT, LIST_MAX)
        .map_err(ApiError::validation)?;
    let list = ListId::new(name, &principal.tenant, &ticket_id);
    let after = cursors.open_after(&list, after.as_deref())?;
    let (rows, total) = read(page, after).await?;
    Ok(Json(CursorPage::by_time(
        rows,
        Total::exact(total),
        page,
        cursors,
        &list,
        position,
    )))
}
