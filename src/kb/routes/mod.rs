//! `/kb/*`: articles, categories, search, suggestions, synonyms and votes
//! (kb:read / kb:write / kb:delete; votes are readers' feedback, so
//! kb:read).

mod answers;
mod articles;
mod categories;

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::routes;

use super::model::{SearchHit, Status};
use super::{store, text};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, FieldError, StoreError};
use crate::extract::{Json, Query};
use crate::openapi::schema;
use crate::router::ApiRouter;
use crate::search;
use crate::validate::{Fields, Page, optional_id, optional_text, problem, required_text};
// The handlers with the OpenAPI path types their attributes generate,
// which `routes!` names beside them.
use answers::*;
use articles::*;
use categories::*;

/// Article content: at most 200 000 characters (docs/api.md, "Knowledge base").
const CONTENT_MAX: usize = 200_000;
const EXCERPT_MAX: usize = 500;
const SLUG_RULE: &str = "must be lower-case letters and digits separated by single hyphens, \
                         at most 100 characters";

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::KbRead, routes!(search))
        .route(Scope::KbRead, routes!(suggest))
        .route(Scope::KbRead, routes!(get_synonyms))
        .route(Scope::KbWrite, routes!(put_synonyms))
        .route(Scope::KbRead, routes!(list_suggestions))
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
    State(db): State<Db>,
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
    let hits = store::search(&db, &tenant, entity, &q, page.limit).await?;
    Ok(Json(hits))
}

// ---------------------------------------------------------------- articles

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
