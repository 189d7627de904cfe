//! The knowledge base as a widget reads it: the key's entity's published
//! articles, searched and read one at a time.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::routes::KeyQuery;
use super::target::{WIDGET_KEY_MAX, target, target_of};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Query};
use crate::kb;
use crate::openapi::schema::ErrorBody;
use crate::time::{Clock, Timestamp};
use crate::validate::{Fields, problem, required_text};

/// Search results a widget shows at most.
const SEARCH_LIMIT_MAX: i64 = 20;
const SEARCH_LIMIT_DEFAULT: i64 = 5;
/// Longer search text is cut (a query is a question, not a document).
const SEARCH_TEXT_MAX: usize = 500;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(super) struct SearchQuery {
    /// The entity's public widget key (`wk_test_…` or `wk_live_…`).
    #[param(value_type = String, required, min_length = 1, max_length = 100)]
    widget_key: Option<String>,
    /// The visitor's question (only its first 500 characters count).
    #[param(value_type = String, required, min_length = 1)]
    q: Option<String>,
    /// At most this many articles (default 5; above 20 counts as 20).
    #[param(value_type = Option<i64>, minimum = 1)]
    limit: Option<String>,
}

/// Search the knowledge base (visitor)
///
/// Published articles of the key's entity, ranked (the knowledge base's
/// own search).
#[utoipa::path(get, path = "/widget/v1/kb/search", operation_id = "widget_kb_search",
    tag = "Widget",
    params(SearchQuery),
    responses(
        (status = 200, description = "Matching articles, best first",
            body = Vec<kb::model::SearchHit>),
        (status = 400, description = "`validation_failed`", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown widget key", body = ErrorBody)))]
pub(super) async fn search(
    State(db): State<Db>,
    State(clock): State<Clock>,
    Query(query): Query<SearchQuery>,
) -> ApiResult<Json<Vec<kb::model::SearchHit>>> {
    let limit = match query.limit.as_deref().map(str::trim) {
        None | Some("") => Ok(SEARCH_LIMIT_DEFAULT),
        Some(raw) => match raw.parse::<i64>() {
            Ok(n) if n >= 1 => Ok(n.min(SEARCH_LIMIT_MAX)),
            _ => Err(problem("limit", "must be a whole number of at least 1")),
        },
    };
    // Every parameter is checked before the key is looked up, so a bad
    // value is a 400 naming it whatever the key.
    let (key, text, limit) = (
        required_text("widgetKey", query.widget_key.as_deref(), WIDGET_KEY_MAX),
        required_text("q", query.q.as_deref(), usize::MAX),
        limit,
    )
        .all_valid()?;
    let target = target_of(&db, &clock, &key).await?;
    let text: String = text.chars().take(SEARCH_TEXT_MAX).collect();
    let hits = kb::store::search(&db, &target.tenant, Some(target.entity_id), &text, limit).await?;
    Ok(Json(hits))
}

/// A published article as a visitor reads it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct PublicArticle {
    id: Uuid,
    title: String,
    slug: String,
    content: String,
    excerpt: String,
    category_id: Option<Uuid>,
    updated_at: Timestamp,
}

/// Read an article (visitor)
///
/// One published article of the key's entity (a draft, or another
/// entity's article, is 404).
#[utoipa::path(get, path = "/widget/v1/kb/articles/{id}", operation_id = "widget_kb_article",
    tag = "Widget",
    params(("id" = Uuid, Path, description = "The article's id"), KeyQuery),
    responses(
        (status = 200, description = "The article", body = PublicArticle),
        (status = 400, description = "`validation_failed`: no widget key", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown widget key, or no such published \
            article of its entity", body = ErrorBody)))]
pub(super) async fn article(
    State(db): State<Db>,
    State(clock): State<Clock>,
    Id(id): Id,
    Query(query): Query<KeyQuery>,
) -> ApiResult<Json<PublicArticle>> {
    let target = target(&db, &clock, query.widget_key.as_deref()).await?;
    let article = kb::store::find_article(&db, &target.tenant, id, false).await?;
    if article.entity_id != target.entity_id || !article.is_published {
        return Err(ApiError::not_found());
    }
    Ok(Json(PublicArticle {
        id: article.id,
        title: article.title,
        slug: article.slug,
        content: article.content,
        excerpt: article.excerpt,
        category_id: article.category_id,
        updated_at: article.updated_at,
    }))
}
