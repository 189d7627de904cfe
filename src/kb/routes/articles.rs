//! Articles: list, create, read, change, delete, and readers' votes.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use super::{
    EXCERPT_MAX, article_status, content_field, content_schema, excerpt_schema, patched_slug,
    sees_drafts, slug_conflict, slug_field, slug_schema, title_schema,
};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::kb::model::{
    Article, ArticleChanges, ArticleFilter, ArticleSummary, NewArticle, Status,
};
use crate::kb::store;
use crate::openapi::schema::{self, Deleted, ErrorBody, VoteRecorded};
use crate::paging::Cursors;
use crate::paging::{After, CursorPage, ListId, ListRequest, Total};
use crate::time::Clock;
use crate::validate::{
    Fields, NAME_MAX, Patch, ensure, optional_enum, optional_id, optional_text, required_id,
    required_text,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ListParams {
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    category_id: Option<String>,
    /// `published` (default); `draft` and `all` need kb:write.
    #[param(schema_with = article_status)]
    status: Option<String>,
    /// `limit`, `offset`, `after`: documented by `ListRequest`.
    #[serde(flatten)]
    #[param(ignore)]
    page: ListRequest,
}

/// List articles
#[utoipa::path(get, path = "/kb/articles", tag = "Knowledge base",
    params(ListParams, ListRequest),
    responses(
        (
            status = 200,
            description = "A page of articles (no content)",
            body = CursorPage<ArticleSummary>,
        ),
    ))]
pub(super) async fn list_articles(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    principal: Principal,
    Query(params): Query<ListParams>,
) -> ApiResult<Json<CursorPage<ArticleSummary>>> {
    let status = optional_enum("status", params.status.as_deref());
    // Drafts need kb:write; the scope is checked before the other input.
    let wants_drafts = matches!(status, Ok(Some(Status::Draft | Status::All)));
    if wants_drafts && !sees_drafts(&principal) {
        return Err(ApiError::forbidden_scope(Scope::KbWrite.as_str()));
    }
    let (status, entity, category, (page, after)) = (
        status,
        optional_id("entityId", params.entity_id.as_deref()),
        optional_id("categoryId", params.category_id.as_deref()),
        params.page.check(20, 100),
    )
        .all_valid()?;
    let status = status.unwrap_or(Status::Published);
    let tenant = principal.tenant;
    let filter = ArticleFilter {
        entity_id: entity,
        category_id: category,
        status,
    };
    let list = ListId::new("kb_articles", &tenant, &filter);
    let after = cursors.open_after(&list, after.as_deref())?;
    let (data, total) = store::list_articles(&db, &tenant, filter, page, after.as_ref()).await?;
    let position = |article: &ArticleSummary| After {
        created_at: article.created_at,
        id: article.id,
    };
    Ok(Json(CursorPage::by_time(
        data,
        Total::exact(total),
        page,
        &cursors,
        &list,
        position,
    )))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateArticle {
    #[schema(schema_with = title_schema, required)]
    title: Option<String>,
    /// Generated from the title when absent; unique per entity.
    #[schema(schema_with = slug_schema)]
    slug: Option<String>,
    /// Markdown.
    #[schema(schema_with = content_schema)]
    content: Option<String>,
    /// Derived from the content when absent.
    #[schema(schema_with = excerpt_schema)]
    excerpt: Option<String>,
    /// A category of the same entity.
    #[schema(schema_with = schema::uuid)]
    category_id: Option<String>,
    #[schema(schema_with = schema::uuid, required)]
    entity_id: Option<String>,
    /// Default false (a draft).
    is_published: Option<bool>,
}

/// Create an article
#[utoipa::path(post, path = "/kb/articles", tag = "Knowledge base",
    request_body = CreateArticle,
    responses(
        (status = 201, description = "Created", body = Article),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
pub(super) async fn create_article(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateArticle>,
) -> ApiResult<(StatusCode, Json<Article>)> {
    let (title, entity_id, category, slug, content, excerpt) = (
        required_text("title", body.title.as_deref(), NAME_MAX),
        required_id("entityId", body.entity_id.as_deref()),
        optional_id("categoryId", body.category_id.as_deref()),
        slug_field(body.slug.as_deref()),
        content_field(body.content.as_deref()),
        optional_text("excerpt", body.excerpt.as_deref(), EXCERPT_MAX),
    )
        .all_valid()?;
    let new = NewArticle {
        entity_id,
        category_id: category,
        title,
        slug,
        // An article may start without content: an empty draft.
        content: content.unwrap_or_default(),
        excerpt,
        is_published: body.is_published.unwrap_or(false),
    };
    let article = store::create_article(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        new,
        state.clock.now(),
    )
    .await
    .map_err(slug_conflict("article"))?;
    Ok((StatusCode::CREATED, Json(article)))
}

/// Get an article
///
/// Drafts only for a key with kb:write.
#[utoipa::path(get, path = "/kb/articles/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses((status = 200, description = "The article", body = Article)))]
pub(super) async fn get_article(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Article>> {
    let article = store::find_article(&db, &principal.tenant, id, sees_drafts(&principal)).await?;
    Ok(Json(article))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateArticle {
    #[schema(schema_with = title_schema)]
    title: Option<String>,
    #[schema(schema_with = slug_schema)]
    slug: Option<String>,
    #[schema(schema_with = content_schema)]
    content: Option<String>,
    /// Null or empty: derive it from the content again.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 500)]
    excerpt: Patch<String>,
    /// Null makes the article uncategorised.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    category_id: Patch<String>,
    is_published: Option<bool>,
}

/// Update an article
#[utoipa::path(patch, path = "/kb/articles/{id}", tag = "Knowledge base",
    request_body = UpdateArticle,
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses(
        (status = 200, description = "The updated article", body = Article),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
pub(super) async fn update_article(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateArticle>,
) -> ApiResult<Json<Article>> {
    let nothing_given = body.title.is_none()
        && body.slug.is_none()
        && body.content.is_none()
        && body.excerpt.is_missing()
        && body.category_id.is_missing()
        && body.is_published.is_none();
    let (_, title, slug, content, excerpt, category_id) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: title, slug, content, excerpt, categoryId, isPublished",
        ),
        body.title
            .as_deref()
            .map(|raw| required_text("title", Some(raw), NAME_MAX))
            .transpose(),
        patched_slug(body.slug.as_deref()),
        content_field(body.content.as_deref()),
        match &body.excerpt {
            Patch::Missing => Ok(None),
            Patch::Null => Ok(Some(None)),
            // An empty excerpt means "derive it from the content" again.
            Patch::Value(raw) => optional_text("excerpt", Some(raw), EXCERPT_MAX).map(Some),
        },
        match &body.category_id {
            Patch::Missing => Ok(None),
            Patch::Null => Ok(Some(None)),
            Patch::Value(raw) => required_id("categoryId", Some(raw)).map(|id| Some(Some(id))),
        },
    )
        .all_valid()?;
    let changes = ArticleChanges {
        title,
        slug,
        content,
        excerpt,
        category_id,
        is_published: body.is_published,
    };
    let article = store::update_article(
        &db.acting(principal.actor()),
        &principal.tenant,
        id,
        changes,
        clock.now(),
    )
    .await
    .map_err(slug_conflict("article"))?;
    Ok(Json(article))
}

/// Delete an article
#[utoipa::path(delete, path = "/kb/articles/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
pub(super) async fn delete_article(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Value>> {
    store::delete_article(
        &db.acting(principal.actor()),
        &principal.tenant,
        id,
        clock.now(),
    )
    .await?;
    Ok(Json(json!({ "id": id, "deleted": true })))
}

#[derive(Deserialize, ToSchema)]
#[schema(as = ArticleVote)]
pub(crate) struct VoteBody {
    #[schema(required)]
    helpful: Option<bool>,
}

/// Vote on an article
///
/// Readers' feedback: counts into `helpfulCount` / `notHelpfulCount`.
#[utoipa::path(post, path = "/kb/articles/{id}/helpful", tag = "Knowledge base",
    request_body = VoteBody,
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses((status = 200, description = "Recorded", body = VoteRecorded)))]
pub(super) async fn vote(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<VoteBody>,
) -> ApiResult<Json<Value>> {
    let Some(helpful) = body.helpful else {
        return Err(ApiError::invalid_field("helpful", "is required"));
    };
    store::vote(
        &state.db,
        &principal.tenant,
        id,
        helpful,
        sees_drafts(&principal),
        state.clock.now(),
    )
    .await?;
    Ok(Json(json!({ "recorded": true })))
}

// -------------------------------------------------------------- categories
