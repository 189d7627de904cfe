//! `GET /tags`: the company's tags (in the key's mode) with how many open
//! and how many records in all carry each, for autocompletion; and the
//! body of `POST …/tags` that tickets and chat sessions share.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::routes;

use super::model::{TAG_MAX, TagEdit, normalize, optional_tag_set};
use super::store::{self, TagCount};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Query};
use crate::router::ApiRouter;
use crate::validate::{Fields, Page, ensure, problem};

const LIST_DEFAULT: i64 = 20;
const LIST_MAX: i64 = 100;

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::TicketsRead, routes!(list))
}

/// Tags to add and to remove, in one atomic change.
#[derive(Deserialize, ToSchema)]
#[schema(as = EditTags)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TagEditBody {
    /// Tags to add (normalised as on create); those present are kept.
    #[schema(value_type = Option<Vec<String>>)]
    add: Option<serde_json::Value>,
    /// Tags to remove; those absent are ignored.
    #[schema(value_type = Option<Vec<String>>)]
    remove: Option<serde_json::Value>,
}

/// The checked `add` / `remove` of a tag edit: at least one given, no tag
/// in both.
pub(crate) fn tag_edit(body: &TagEditBody) -> Result<TagEdit, ApiError> {
    let (_, add, remove) = (
        ensure(
            body.add.is_some() || body.remove.is_some(),
            "body",
            "give at least one of: add, remove",
        ),
        optional_tag_set("add", body.add.as_ref()),
        optional_tag_set("remove", body.remove.as_ref()),
    )
        .all_valid()?;
    let both: Vec<&String> = add.iter().filter(|tag| remove.contains(tag)).collect();
    if let Some(tag) = both.first() {
        return Err(ApiError::invalid_field(
            "remove",
            format!("{tag:?} is also in add"),
        ));
    }
    Ok(TagEdit { add, remove })
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct TagsQuery {
    /// Only tags starting with this (normalised like a tag).
    prefix: Option<String>,
    /// At most this many tags, up to 100 (default 20).
    #[param(value_type = Option<i64>, minimum = 1)]
    limit: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct TagList {
    data: Vec<TagCount>,
}

/// List the company's tags
///
/// Tags on tickets and chat sessions of the key's mode, most used first
/// (then by name), with the number of open records (tickets OPEN or
/// IN_PROGRESS, ACTIVE chat sessions) and of all records carrying each.
#[utoipa::path(get, path = "/tags", operation_id = "list_tags", tag = "Tags",
    params(TagsQuery),
    responses((status = 200, description = "The tags with their counts", body = TagList)))]
async fn list(
    State(db): State<Db>,
    principal: Principal,
    Query(query): Query<TagsQuery>,
) -> ApiResult<Json<TagList>> {
    let prefix = query.prefix.as_deref().map(str::trim).unwrap_or_default();
    let (page, prefix) = (
        Page::check(query.limit.as_deref(), None, LIST_DEFAULT, LIST_MAX),
        if prefix.is_empty() {
            Ok(String::new())
        } else {
            normalize(prefix).map_err(|_| {
                problem(
                    "prefix",
                    format!("must be up to {TAG_MAX} characters a tag may contain"),
                )
            })
        },
    )
        .all_valid()?;
    let data = store::counts(&db, &principal.tenant, &prefix, page.limit).await?;
    Ok(Json(TagList { data }))
}
