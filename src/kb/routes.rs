//! `/kb/*`: articles, categories, search and votes (kb:read / kb:write /
//! kb:delete; votes are readers' feedback, so kb:read).

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use super::model::{
    Article, ArticleChanges, ArticleFilter, ArticleSummary, Category, NewArticle, SearchHit, Status,
};
use super::{store, text};
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult, StoreError};
use crate::extract::{Id, Json, Query};
use crate::openapi::schema;
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::validate::{NAME_MAX, Page, Paged, Patch, Validator};

/// Article content: at most 200 000 characters (docs/api.md, "Knowledge base").
const CONTENT_MAX: usize = 200_000;
const EXCERPT_MAX: usize = 500;
const QUERY_MAX: usize = 500;
const SLUG_RULE: &str = "must be lower-case letters and digits separated by single hyphens, \
                         at most 100 characters";

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .get("/kb/search", Scope::KbRead, search)
        .get("/kb/articles", Scope::KbRead, list_articles)
        .post("/kb/articles", Scope::KbWrite, create_article)
        .get("/kb/articles/{id}", Scope::KbRead, get_article)
        .patch("/kb/articles/{id}", Scope::KbWrite, update_article)
        .delete("/kb/articles/{id}", Scope::KbDelete, delete_article)
        .post("/kb/articles/{id}/helpful", Scope::KbRead, vote)
        .get("/kb/categories", Scope::KbRead, list_categories)
        .post("/kb/categories", Scope::KbWrite, create_category)
        .get("/kb/categories/{id}", Scope::KbRead, get_category)
        .patch("/kb/categories/{id}", Scope::KbWrite, update_category)
        .delete("/kb/categories/{id}", Scope::KbDelete, delete_category)
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
fn slug_field(v: &mut Validator, value: Option<&str>) -> Option<String> {
    let slug = v.optional("slug", value, text::SLUG_MAX + 1)?;
    if text::is_valid_slug(&slug) {
        Some(slug)
    } else {
        v.add("slug", SLUG_RULE);
        None
    }
}

/// Markdown content: kept as written (not trimmed), at most CONTENT_MAX.
fn content_field(v: &mut Validator, value: Option<&str>) -> Option<String> {
    let content = value?;
    if content.chars().count() > CONTENT_MAX {
        v.add(
            "content",
            format!("must be at most {CONTENT_MAX} characters"),
        );
        return None;
    }
    Some(content.to_string())
}

/// Postgres text cannot hold NUL: refuse it as input (a 400, not a 500).
fn reject_nul(v: &mut Validator, fields: &[(&str, Option<&str>)]) {
    for (field, value) in fields {
        if value.is_some_and(|text| text.contains('\0')) {
            v.add(field, "must not contain NUL characters");
        }
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

async fn search(
    State(state): State<AppState>,
    principal: Principal,
    Query(params): Query<SearchParams>,
) -> ApiResult<Json<Vec<SearchHit>>> {
    let mut v = Validator::new();
    let q = v.required("q", params.q.as_deref(), QUERY_MAX);
    let entity = v.uuid("entityId", params.entity_id.as_deref());
    v.finish()?;
    let page = Page::parse(params.limit.as_deref(), None, 10, 50)?;
    let tenant = principal.tenant;
    let hits = store::search(
        &state.db,
        &tenant,
        entity,
        &q.unwrap_or_default(),
        page.limit,
    )
    .await?;
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
    /// At most 100 (default 20).
    #[param(value_type = Option<i64>, minimum = 1)]
    limit: Option<String>,
    #[param(value_type = Option<i64>, minimum = 0)]
    offset: Option<String>,
}

fn article_status() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(&Status::NAMES)
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

async fn list_articles(
    State(state): State<AppState>,
    principal: Principal,
    Query(params): Query<ListParams>,
) -> ApiResult<Json<Paged<ArticleSummary>>> {
    let mut v = Validator::new();
    let status = v.one_of("status", params.status.as_deref(), &Status::NAMES);
    let status = status.and_then(Status::parse).unwrap_or(Status::Published);
    // Drafts need kb:write; the scope is checked before the other input.
    if status != Status::Published && !sees_drafts(&principal) {
        return Err(ApiError::forbidden_scope(Scope::KbWrite.as_str()));
    }
    let entity = v.uuid("entityId", params.entity_id.as_deref());
    let category = v.uuid("categoryId", params.category_id.as_deref());
    v.finish()?;
    let page = Page::parse(params.limit.as_deref(), params.offset.as_deref(), 20, 100)?;
    let tenant = principal.tenant;
    let filter = ArticleFilter {
        entity_id: entity,
        category_id: category,
        status,
    };
    let (data, total) = store::list_articles(&state.db, &tenant, filter, page).await?;
    Ok(Json(Paged::new(data, total, page)))
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

async fn create_article(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateArticle>,
) -> ApiResult<(StatusCode, Json<Article>)> {
    let mut v = Validator::new();
    reject_nul(
        &mut v,
        &[
            ("title", body.title.as_deref()),
            ("content", body.content.as_deref()),
            ("excerpt", body.excerpt.as_deref()),
        ],
    );
    let title = v.required("title", body.title.as_deref(), NAME_MAX);
    let entity = v.required_uuid("entityId", body.entity_id.as_deref());
    let category = v.uuid("categoryId", body.category_id.as_deref());
    let slug = slug_field(&mut v, body.slug.as_deref());
    let content = content_field(&mut v, body.content.as_deref());
    let excerpt = v.optional("excerpt", body.excerpt.as_deref(), EXCERPT_MAX);
    v.finish()?;
    let (Some(title), Some(entity_id)) = (title, entity) else {
        return Err(ApiError::internal());
    };
    let new = NewArticle {
        entity_id,
        category_id: category,
        title,
        slug,
        content: content.unwrap_or_default(),
        excerpt,
        is_published: body.is_published.unwrap_or(false),
    };
    let article = store::create_article(&state.db, &principal.tenant, new)
        .await
        .map_err(slug_conflict("article"))?;
    Ok((StatusCode::CREATED, Json(article)))
}

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

async fn update_article(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateArticle>,
) -> ApiResult<Json<Article>> {
    let mut v = Validator::new();
    if body.title.is_none()
        && body.slug.is_none()
        && body.content.is_none()
        && body.excerpt.is_missing()
        && body.category_id.is_missing()
        && body.is_published.is_none()
    {
        v.add(
            "body",
            "give at least one of: title, slug, content, excerpt, categoryId, isPublished",
        );
    }
    let excerpt_text = match &body.excerpt {
        Patch::Value(raw) => Some(raw.as_str()),
        _ => None,
    };
    reject_nul(
        &mut v,
        &[
            ("title", body.title.as_deref()),
            ("content", body.content.as_deref()),
            ("excerpt", excerpt_text),
        ],
    );
    let title = match body.title.as_deref() {
        Some(raw) => v.required("title", Some(raw), NAME_MAX),
        None => None,
    };
    let slug = match body.slug.as_deref() {
        Some(raw) if raw.trim().is_empty() => {
            v.add("slug", SLUG_RULE);
            None
        }
        raw => slug_field(&mut v, raw),
    };
    let content = content_field(&mut v, body.content.as_deref());
    let excerpt = match &body.excerpt {
        Patch::Missing => None,
        Patch::Null => Some(None),
        Patch::Value(raw) => match v.optional("excerpt", Some(raw), EXCERPT_MAX) {
            Some(excerpt) => Some(Some(excerpt)),
            // An empty excerpt means "derive it from the content" again.
            None => Some(None),
        },
    };
    let category_id = match &body.category_id {
        Patch::Missing => None,
        Patch::Null => Some(None),
        Patch::Value(raw) => v.required_uuid("categoryId", Some(raw)).map(Some),
    };
    v.finish()?;
    let changes = ArticleChanges {
        title,
        slug,
        content,
        excerpt,
        category_id,
        is_published: body.is_published,
    };
    let article = store::update_article(&state.db, &principal.tenant, id, changes)
        .await
        .map_err(slug_conflict("article"))?;
    Ok(Json(article))
}

async fn delete_article(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Value>> {
    store::delete_article(&state.db, &principal.tenant, id).await?;
    Ok(Json(json!({ "id": id, "deleted": true })))
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct VoteBody {
    #[schema(required)]
    helpful: Option<bool>,
}

async fn vote(
    State(state): State<AppState>,
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

async fn list_categories(
    State(state): State<AppState>,
    principal: Principal,
    Query(params): Query<CategoryParams>,
) -> ApiResult<Json<Value>> {
    let mut v = Validator::new();
    let entity = v.uuid("entityId", params.entity_id.as_deref());
    v.finish()?;
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

async fn create_category(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateCategory>,
) -> ApiResult<(StatusCode, Json<Category>)> {
    let mut v = Validator::new();
    reject_nul(&mut v, &[("name", body.name.as_deref())]);
    let name = v.required("name", body.name.as_deref(), NAME_MAX);
    let entity = v.required_uuid("entityId", body.entity_id.as_deref());
    let slug = slug_field(&mut v, body.slug.as_deref());
    v.finish()?;
    let (Some(name), Some(entity_id)) = (name, entity) else {
        return Err(ApiError::internal());
    };
    let category = store::create_category(
        &state.db,
        &principal.tenant,
        entity_id,
        &name,
        slug.as_deref(),
    )
    .await
    .map_err(slug_conflict("category"))?;
    Ok((StatusCode::CREATED, Json(category)))
}

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

async fn update_category(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateCategory>,
) -> ApiResult<Json<Category>> {
    let mut v = Validator::new();
    if body.name.is_none() && body.slug.is_none() {
        v.add("body", "give at least one of: name, slug");
    }
    reject_nul(&mut v, &[("name", body.name.as_deref())]);
    let name = match body.name.as_deref() {
        Some(raw) => v.required("name", Some(raw), NAME_MAX),
        None => None,
    };
    let slug = match body.slug.as_deref() {
        Some(raw) if raw.trim().is_empty() => {
            v.add("slug", SLUG_RULE);
            None
        }
        raw => slug_field(&mut v, raw),
    };
    v.finish()?;
    let category = store::update_category(
        &state.db,
        &principal.tenant,
        id,
        name.as_deref(),
        slug.as_deref(),
    )
    .await
    .map_err(slug_conflict("category"))?;
    Ok(Json(category))
}

async fn delete_category(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Value>> {
    store::delete_category(&state.db, &principal.tenant, id).await?;
    Ok(Json(json!({ "id": id, "deleted": true })))
}
