//! Suggestions as a visitor types a question, before any chat: the best
//! published articles of the widget key's entity (the knowledge base's
//! retrieval for questions), "this answered my question" (recorded as
//! self-served), and the suggestions a chat opened after them keeps for
//! its agent (`handed_off`, see `routes::create_session`).

use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::store::WidgetTarget;
use super::target::{WIDGET_KEY_MAX, target_of};
use crate::db::Db;
use crate::error::{ApiResult, StoreError};
use crate::extract::{Json, Query};
use crate::kb;
use crate::kb::model::{NewSuggestion, Outcome, SearchHit, Subject, SuggestedArticle, Suggestion};
use crate::openapi::schema::ErrorBody;
use crate::search::QUERY_MAX;
use crate::time::Clock;
use crate::validate::{Fields, problem, required_id, required_text};
use axum::extract::State;

/// Suggestions a widget shows at most, and by default.
const LIMIT_MAX: i64 = 10;
const LIMIT_DEFAULT: i64 = 3;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(super) struct SuggestQuery {
    /// The entity's public widget key (`wk_test_…` or `wk_live_…`).
    #[param(value_type = String, required, min_length = 1, max_length = 100)]
    widget_key: Option<String>,
    /// The visitor's question as typed so far (1–500 characters).
    #[param(value_type = String, required, min_length = 1, max_length = 500)]
    q: Option<String>,
    /// At most this many articles (default 3; above 10 counts as 10).
    #[param(value_type = Option<i64>, minimum = 1)]
    limit: Option<String>,
}

/// Suggest articles for a question (visitor)
///
/// As the visitor types a question, before a chat: the published articles
/// of the key's entity that best answer it (stop words dropped, the
/// company's synonyms matched).
#[utoipa::path(get, path = "/widget/v1/kb/suggest", operation_id = "widget_kb_suggest",
    tag = "Widget",
    params(SuggestQuery),
    responses(
        (status = 200, description = "Articles, best first", body = Vec<SearchHit>),
        (status = 400, description = "`validation_failed`", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown widget key", body = ErrorBody)))]
pub(super) async fn suggest(
    State(db): State<Db>,
    State(clock): State<Clock>,
    Query(query): Query<SuggestQuery>,
) -> ApiResult<Json<Vec<SearchHit>>> {
    let limit = match query.limit.as_deref().map(str::trim) {
        None | Some("") => Ok(LIMIT_DEFAULT),
        Some(raw) => match raw.parse::<i64>() {
            Ok(n) if n >= 1 => Ok(n.min(LIMIT_MAX)),
            _ => Err(problem("limit", "must be a whole number of at least 1")),
        },
    };
    // Every parameter is checked before the key is looked up.
    let (key, q, limit) = (
        required_text("widgetKey", query.widget_key.as_deref(), WIDGET_KEY_MAX),
        required_text("q", query.q.as_deref(), QUERY_MAX),
        limit,
    )
        .all_valid()?;
    let target = target_of(&db, &clock, &key).await?;
    let hits = suggestions_for(&db, &target, &q, limit).await?;
    Ok(Json(hits))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct Answered {
    /// The entity's public widget key.
    #[schema(value_type = String, required, min_length = 1, max_length = 100)]
    widget_key: Option<String>,
    /// The question the visitor typed (1–500 characters).
    #[schema(value_type = String, required, min_length = 1, max_length = 500)]
    question: Option<String>,
    /// The suggested article that answered it: a published article of the
    /// key's entity.
    #[schema(value_type = Uuid, required)]
    article_id: Option<String>,
}

/// This answered my question (visitor)
///
/// Records that a suggested article answered the visitor's question, with
/// no chat: the attempt is self-served.
#[utoipa::path(post, path = "/widget/v1/kb/answered", operation_id = "widget_kb_answered",
    tag = "Widget",
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = Answered,
    responses(
        (status = 201, description = "Recorded", body = Suggestion),
        (status = 400, description = "`validation_failed`: a missing field, or an article \
            that is not a published article of the key's entity", body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown widget key", body = ErrorBody)))]
pub(super) async fn answered(
    State(db): State<Db>,
    State(clock): State<Clock>,
    Json(body): Json<Answered>,
) -> ApiResult<(StatusCode, Json<Suggestion>)> {
    let (key, question, article_id) = (
        required_text("widgetKey", body.widget_key.as_deref(), WIDGET_KEY_MAX),
        required_text("question", body.question.as_deref(), QUERY_MAX),
        required_id("articleId", body.article_id.as_deref()),
    )
        .all_valid()?;
    let target = target_of(&db, &clock, &key).await?;
    let published = match kb::store::find_article(&db, &target.tenant, article_id, false).await {
        Ok(article) => article.entity_id == target.entity_id && article.is_published,
        Err(StoreError::NotFound) => false,
        Err(other) => return Err(other.into()),
    };
    if !published {
        return Err(crate::error::ApiError::invalid_field(
            "articleId",
            "must be a published article of the widget key's entity",
        ));
    }
    let hits = suggestions_for(&db, &target, &question, LIMIT_DEFAULT).await?;
    let record = record(
        &db,
        &clock,
        &target,
        question,
        &hits,
        Outcome::SelfServed,
        Some(article_id),
        Subject::Visitor,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(record)))
}

/// The suggestions for `question` in the target's entity.
async fn suggestions_for(
    db: &Db,
    target: &WidgetTarget,
    question: &str,
    limit: i64,
) -> ApiResult<Vec<SearchHit>> {
    let hits =
        kb::store::suggest(db, &target.tenant, Some(target.entity_id), question, limit).await?;
    Ok(hits)
}

#[allow(clippy::too_many_arguments)] // the handles it writes with, and the suggestion's parts
async fn record(
    db: &Db,
    clock: &Clock,
    target: &WidgetTarget,
    question: String,
    hits: &[SearchHit],
    outcome: Outcome,
    answered_by: Option<Uuid>,
    subject: Subject,
) -> ApiResult<Suggestion> {
    let new = NewSuggestion {
        entity_id: target.entity_id,
        question,
        articles: hits.iter().map(SuggestedArticle::from).collect(),
        outcome,
        answered_by,
        subject,
    };
    let stored = kb::store::record_suggestion(db, &target.tenant, new, clock.now()).await?;
    Ok(stored)
}

/// The question a visitor asked before going on to a human, checked.
pub(super) fn question_field(
    question: Option<&str>,
) -> Result<Option<String>, crate::error::FieldError> {
    crate::validate::optional_text("question", question, QUERY_MAX)
}

/// Keeps, for the agent of the chat `session_id`, what was suggested for
/// the question the visitor asked before going on to a human.
pub(super) async fn hand_off(
    db: &Db,
    clock: &Clock,
    target: &WidgetTarget,
    question: String,
    session_id: Uuid,
) -> ApiResult<Suggestion> {
    let hits = suggestions_for(db, target, &question, LIMIT_DEFAULT).await?;
    record(
        db,
        clock,
        target,
        question,
        &hits,
        Outcome::HandedOff,
        None,
        Subject::ChatSession(session_id),
    )
    .await
}
