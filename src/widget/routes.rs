//! Handlers of `/widget/v1`.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::store::{self, WidgetTarget};
use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Query};
use crate::kb;
use crate::time::Timestamp;
use crate::validate::Validator;

/// Search results a widget shows at most.
const SEARCH_LIMIT_MAX: i64 = 20;
const SEARCH_LIMIT_DEFAULT: i64 = 5;
/// Longer search text is cut (a query is a question, not a document).
const SEARCH_TEXT_MAX: usize = 500;

/// Each route also takes OPTIONS: the CORS layer wraps only the methods a
/// route has, and answers preflights there (the app-wide 405 fallback would
/// otherwise answer them, without CORS headers).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/widget/v1/kb/search", get(search).options(preflight))
        .route(
            "/widget/v1/kb/articles/{id}",
            get(article).options(preflight),
        )
}

/// Reached only by an OPTIONS request that is not a CORS preflight.
async fn preflight() -> StatusCode {
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeyQuery {
    widget_key: Option<String>,
}

/// The target of a widget key: 400 when missing, 404 when unknown, 403
/// when its company is suspended.
async fn target(state: &AppState, widget_key: Option<&str>) -> ApiResult<WidgetTarget> {
    let mut v = Validator::new();
    let key = v.required("widgetKey", widget_key, 100);
    v.finish()?;
    let key = key.unwrap_or_default();
    let target = store::resolve(&state.db, &key)
        .await?
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "not_found", "Unknown widget key"))?;
    if target.company_status != "active" {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "account_suspended",
            "Account is suspended",
        ));
    }
    Ok(target)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearchQuery {
    widget_key: Option<String>,
    q: Option<String>,
    limit: Option<String>,
}

/// `GET /widget/v1/kb/search?widgetKey=&q=[&limit=]`: published articles of
/// the key's entity, ranked (the knowledge base's own search).
async fn search(
    State(state): State<AppState>,
    Query(query): Query<SearchQuery>,
) -> ApiResult<Json<Vec<kb::model::SearchHit>>> {
    let target = target(&state, query.widget_key.as_deref()).await?;
    let mut v = Validator::new();
    let text = v.required("q", query.q.as_deref(), usize::MAX);
    let limit = match query.limit.as_deref().map(str::trim) {
        None | Some("") => SEARCH_LIMIT_DEFAULT,
        Some(raw) => match raw.parse::<i64>() {
            Ok(n) if n >= 1 => n.min(SEARCH_LIMIT_MAX),
            _ => {
                v.add("limit", "must be a whole number of at least 1");
                SEARCH_LIMIT_DEFAULT
            }
        },
    };
    v.finish()?;
    let text: String = text
        .unwrap_or_default()
        .chars()
        .take(SEARCH_TEXT_MAX)
        .collect();
    let hits = kb::store::search(
        &state.db,
        &target.tenant,
        Some(target.entity_id),
        &text,
        limit,
    )
    .await?;
    Ok(Json(hits))
}

/// A published article as a visitor reads it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PublicArticle {
    id: Uuid,
    title: String,
    slug: String,
    content: String,
    excerpt: String,
    category_id: Option<Uuid>,
    updated_at: Timestamp,
}

/// `GET /widget/v1/kb/articles/{id}?widgetKey=`: one published article of
/// the key's entity (a draft, or another entity's article, is 404).
async fn article(
    State(state): State<AppState>,
    Id(id): Id,
    Query(query): Query<KeyQuery>,
) -> ApiResult<Json<PublicArticle>> {
    let target = target(&state, query.widget_key.as_deref()).await?;
    let article = kb::store::find_article(&state.db, &target.tenant, id, false).await?;
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
