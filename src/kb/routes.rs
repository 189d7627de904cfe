//! `/kb/*`: articles, categories, search and votes (kb:read / kb:write /
//! kb:delete; votes are readers' feedback, so kb:read).

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::routes;

use super::model::{
    Article, ArticleChanges, ArticleFilter, ArticleSummary, Category, NewArticle, SearchHit, Status,
};
use super::{store, text};
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult, FieldError, StoreError};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, DataList, Deleted, ErrorBody, VoteRecorded};
use crate::paging::{After, CursorPage, ListId, ListRequest, Total};
use crate::router::ApiRouter;
use crate::search;
use crate::state::AppState;
use crate::validate::{
    Fields, NAME_MAX, Page, Patch, ensure, optional_enum, optional_id, optional_text, problem,
    required_id, required_text,
};

/// Article content: at most 200 000 characters (docs/api.md, "Knowledge base").
const CONTENT_MAX: usize = 200_000;
const EXCERPT_MAX: usize = 500;
const SLUG_RULE: &str = "must be lower-case letters and digits separated by single hyphens, \
                         at most 100 characters";

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::KbRead, routes!(search))
        .route(Scope::KbRead, routes!(list_articles))
        .route(Scope::KbWrite, routes!(create_article))
        .route(Scope::KbRead, routes!(get_article))
        .route(Scope::KbWrite, routes!(update_article))
        .route(Scope::KbDelete, routes!(delete_article))
        .route(Scope::KbRead, routes!(vote))
        .route(Scope::KbRead, routes!(list_categories))
        .route(Scope::KbWrite, routes!(create_category))
        .route(Scope::KbRead, routes!(get_category))
        .route(Scope::KbWrite, routes!(update_category))
        .route(Scope::KbDelete, routes!(delete_category))
}

/// A taken slug is a 409 that says which.
fn slug_conflict(kind: &'static str) -> impl Fn(StoreError) -> ApiError {
    move |err| match err {
        StoreError::Conflict(_) => ApiError::conflict(format!(
            "slug is already used by another {kind} of this entity"
        )),
        other => other.into(),
    }
}

/// An optional explicit slug, checked against the slug rule.
fn slug_field(value: Option<&str>) -> Result<Option<String>, FieldError> {
    match optional_text("slug", value, text::SLUG_MAX + 1)? {
        Some(slug) if !text::is_valid_slug(&slug) => Err(problem("slug", SLUG_RULE)),
        slug => Ok(slug),
    }
}

/// A slug in a PATCH: given empty is not "absent" but a bad slug.
fn patched_slug(value: Option<&str>) -> Result<Option<String>, FieldError> {
    match value {
        Some(raw) if raw.trim().is_empty() => Err(problem("slug", SLUG_RULE)),
        raw => slug_field(raw),
    }
}

/// Markdown content: kept as written (not trimmed), at most CONTENT_MAX.
fn content_field(value: Option<&str>) -> Result<Option<String>, FieldError> {
    match value {
        Some(content) if content.chars().count() > CONTENT_MAX => Err(problem(
            "content",
            format!("must be at most {CONTENT_MAX} characters"),
        )),
        content => Ok(content.map(str::to_string)),
    }
}

/// Postgres text cannot hold NUL: refuse it as input (a 400, not a 500).
/// Listed first, before each field's own checks.
fn reject_nul(fields: &[(&str, Option<&str>)]) -> Result<(), Vec<FieldError>> {
    let errors: Vec<FieldError> = fields
        .iter()
        .filter(|(_, value)| value.is_some_and(|text| text.contains('\0')))
        .map(|(field, _)| problem(field, "must not contain NUL characters"))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Drafts are for editors: only a key with kb:write sees them.
fn sees_drafts(principal: &Principal) -> bool {
    principal.scopes.contains(Scope::KbWrite)
}

// ------------------------------------------------------------------ search

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct SearchParams {
    /// The words to find (1–500 characters).
    #[param(value_type = String, required, min_length = 1, max_length = 500)]
    q: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
    /// At most 50 (default 10).
    #[param(value_type = Option<i64>, minimum = 1)]
    limit: Option<String>,
}

/// Search published articles
///
/// Ranked by relevance (title matches first); each hit carries the matching
/// passage.
#[utoipa::path(get, path = "/kb/search", tag = "Knowledge base",
    params(SearchParams),
    responses((status = 200, description = "Hits, best first", body = Vec<SearchHit>)))]
async fn search(
    State(state): State<AppState>,
    principal: Principal,
    Query(params): Query<SearchParams>,
) -> ApiResult<Json<Vec<SearchHit>>> {
    let (q, entity) = (
        required_text("q", params.q.as_deref(), search::QUERY_MAX),
        optional_id("entityId", params.entity_id.as_deref()),
    )
        .all_valid()?;
    let page = Page::parse(params.limit.as_deref(), None, 10, 50)?;
    let tenant = principal.tenant;
    let hits = store::search(&state.db, &tenant, entity, &q, page.limit).await?;
    Ok(Json(hits))
}

// ---------------------------------------------------------------- articles

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

fn article_status() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(Status::NAMES)
}

fn title_schema() -> utoipa::openapi::ObjectBuilder {
    schema::name()
}

fn slug_schema() -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .pattern(Some("^[a-z0-9]+(-[a-z0-9]+)*$"))
        .max_length(Some(text::SLUG_MAX))
}

fn content_schema() -> utoipa::openapi::ObjectBuilder {
    schema::text(CONTENT_MAX)
}

fn excerpt_schema() -> utoipa::openapi::ObjectBuilder {
    schema::text(EXCERPT_MAX)
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
async fn list_articles(
    State(state): State<AppState>,
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
    let after = state.cursors.open_after(&list, after.as_deref())?;
    let (data, total) =
        store::list_articles(&state.db, &tenant, filter, page, after.as_ref()).await?;
    let position = |article: &ArticleSummary| After {
        created_at: article.created_at,
        id: article.id,
    };
    Ok(Json(CursorPage::by_time(
        data,
        Total::exact(total),
        page,
        &state.cursors,
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
async fn create_article(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateArticle>,
) -> ApiResult<(StatusCode, Json<Article>)> {
    let (_, title, entity_id, category, slug, content, excerpt) = (
        reject_nul(&[
            ("title", body.title.as_deref()),
            ("content", body.content.as_deref()),
            ("excerpt", body.excerpt.as_deref()),
        ]),
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
    let article = store::create_article(&state.db, &principal.tenant, new, state.clock.now())
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
async fn get_article(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Article>> {
    let article =
        store::find_article(&state.db, &principal.tenant, id, sees_drafts(&principal)).await?;
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
async fn update_article(
    State(state): State<AppState>,
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
    let excerpt_text = match &body.excerpt {
        Patch::Value(raw) => Some(raw.as_str()),
        _ => None,
    };
    let (_, _, title, slug, content, excerpt, category_id) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: title, slug, content, excerpt, categoryId, isPublished",
        ),
        reject_nul(&[
            ("title", body.title.as_deref()),
            ("content", body.content.as_deref()),
            ("excerpt", excerpt_text),
        ]),
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
    let article =
        store::update_article(&state.db, &principal.tenant, id, changes, state.clock.now())
            .await
            .map_err(slug_conflict("article"))?;
    Ok(Json(article))
}

/// Delete an article
#[utoipa::path(delete, path = "/kb/articles/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete_article(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Value>> {
    store::delete_article(&state.db, &principal.tenant, id, state.clock.now()).await?;
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
async fn vote(
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

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct CategoryParams {
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
}

/// List categories
#[utoipa::path(get, path = "/kb/categories", tag = "Knowledge base",
    params(CategoryParams),
    responses((status = 200, description = "Categories", body = DataList<Category>)))]
async fn list_categories(
    State(state): State<AppState>,
    principal: Principal,
    Query(params): Query<CategoryParams>,
) -> ApiResult<Json<Value>> {
    let (entity,) = (optional_id("entityId", params.entity_id.as_deref()),).all_valid()?;
    let tenant = principal.tenant;
    let categories = store::list_categories(&state.db, &tenant, entity).await?;
    Ok(Json(json!({ "data": categories })))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateCategory {
    #[schema(schema_with = schema::uuid, required)]
    entity_id: Option<String>,
    #[schema(schema_with = title_schema, required)]
    name: Option<String>,
    #[schema(schema_with = slug_schema)]
    slug: Option<String>,
}

/// Create a category
#[utoipa::path(post, path = "/kb/categories", tag = "Knowledge base",
    request_body = CreateCategory,
    responses(
        (status = 201, description = "Created", body = Category),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
async fn create_category(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateCategory>,
) -> ApiResult<(StatusCode, Json<Category>)> {
    let (_, name, entity_id, slug) = (
        reject_nul(&[("name", body.name.as_deref())]),
        required_text("name", body.name.as_deref(), NAME_MAX),
        required_id("entityId", body.entity_id.as_deref()),
        slug_field(body.slug.as_deref()),
    )
        .all_valid()?;
    let (tenant, now) = (&principal.tenant, state.clock.now());
    let category =
        store::create_category(&state.db, tenant, entity_id, &name, slug.as_deref(), now)
            .await
            .map_err(slug_conflict("category"))?;
    Ok((StatusCode::CREATED, Json(category)))
}

/// Get a category
#[utoipa::path(get, path = "/kb/categories/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses((status = 200, description = "The category", body = Category)))]
async fn get_category(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Category>> {
    Ok(Json(
        store::find_category(&state.db, &principal.tenant, id).await?,
    ))
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct UpdateCategory {
    #[schema(schema_with = title_schema)]
    name: Option<String>,
    #[schema(schema_with = slug_schema)]
    slug: Option<String>,
}

/// Update a category
#[utoipa::path(patch, path = "/kb/categories/{id}", tag = "Knowledge base",
    request_body = UpdateCategory,
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses(
        (status = 200, description = "The updated category", body = Category),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
async fn update_category(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateCategory>,
) -> ApiResult<Json<Category>> {
    let (_, _, name, slug) = (
        ensure(
            body.name.is_some() || body.slug.is_some(),
            "body",
            "give at least one of: name, slug",
        ),
        reject_nul(&[("name", body.name.as_deref())]),
        body.name
            .as_deref()
            .map(|raw| required_text("name", Some(raw), NAME_MAX))
            .transpose(),
        patched_slug(body.slug.as_deref()),
    )
        .all_valid()?;
    let category = store::update_category(
        &state.db,
        &principal.tenant,
        id,
        name.as_deref(),
        slug.as_deref(),
        state.clock.now(),
    )
    .await
    .map_err(slug_conflict("category"))?;
    Ok(Json(category))
}

/// Delete a category
///
/// Its articles become uncategorised.
#[utoipa::path(delete, path = "/kb/categories/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete_category(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Value>> {
    store::delete_category(&state.db, &principal.tenant, id, state.clock.now()).await?;
    Ok(Json(json!({ "id": id, "deleted": true })))
}
