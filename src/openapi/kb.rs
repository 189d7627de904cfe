//! Operations of the knowledge base.
#![allow(dead_code)]

use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use super::schema::{DataList, Deleted, ErrorBody};
use crate::kb::model::{Article, ArticleSummary, Category, SearchHit};
use crate::kb::routes::{
    CategoryParams, CreateArticle, CreateCategory, ListParams, SearchParams, UpdateArticle,
    UpdateCategory, VoteBody,
};
use crate::validate::Paged;

#[derive(OpenApi)]
#[openapi(paths(
    search,
    list_articles,
    create_article,
    get_article,
    update_article,
    delete_article,
    vote,
    list_categories,
    create_category,
    get_category,
    update_category,
    delete_category,
))]
pub struct Doc;

/// The answer to a vote.
#[derive(Serialize, ToSchema)]
pub struct VoteRecorded {
    /// Always true.
    pub recorded: bool,
}

/// Search published articles
///
/// Ranked by relevance (title matches first); each hit carries the matching
/// passage.
#[utoipa::path(get, path = "/api/v1/kb/search", tag = "Knowledge base", params(SearchParams),
    responses((status = 200, description = "Hits, best first", body = Vec<SearchHit>)))]
fn search() {}

/// List articles
#[utoipa::path(get, path = "/api/v1/kb/articles", tag = "Knowledge base", params(ListParams),
    responses((status = 200, description = "A page of articles (no content)", body = Paged<ArticleSummary>)))]
fn list_articles() {}

/// Create an article
#[utoipa::path(post, path = "/api/v1/kb/articles", tag = "Knowledge base",
    request_body = CreateArticle,
    responses(
        (status = 201, description = "Created", body = Article),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
fn create_article() {}

/// Get an article
///
/// Drafts only for a key with kb:write.
#[utoipa::path(get, path = "/api/v1/kb/articles/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses((status = 200, description = "The article", body = Article)))]
fn get_article() {}

/// Update an article
#[utoipa::path(patch, path = "/api/v1/kb/articles/{id}", tag = "Knowledge base",
    request_body = UpdateArticle,
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses(
        (status = 200, description = "The updated article", body = Article),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
fn update_article() {}

/// Delete an article
#[utoipa::path(delete, path = "/api/v1/kb/articles/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
fn delete_article() {}

/// Vote on an article
///
/// Readers' feedback: counts into `helpfulCount` / `notHelpfulCount`.
#[utoipa::path(post, path = "/api/v1/kb/articles/{id}/helpful", tag = "Knowledge base",
    request_body = VoteBody,
    params(("id" = uuid::Uuid, Path, description = "Article id")),
    responses((status = 200, description = "Recorded", body = VoteRecorded)))]
fn vote() {}

/// List categories
#[utoipa::path(get, path = "/api/v1/kb/categories", tag = "Knowledge base",
    params(CategoryParams),
    responses((status = 200, description = "Categories", body = DataList<Category>)))]
fn list_categories() {}

/// Create a category
#[utoipa::path(post, path = "/api/v1/kb/categories", tag = "Knowledge base",
    request_body = CreateCategory,
    responses(
        (status = 201, description = "Created", body = Category),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
fn create_category() {}

/// Get a category
#[utoipa::path(get, path = "/api/v1/kb/categories/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses((status = 200, description = "The category", body = Category)))]
fn get_category() {}

/// Update a category
#[utoipa::path(patch, path = "/api/v1/kb/categories/{id}", tag = "Knowledge base",
    request_body = UpdateCategory,
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses(
        (status = 200, description = "The updated category", body = Category),
        (status = 409, description = "The slug is taken in this entity", body = ErrorBody),
    ))]
fn update_category() {}

/// Delete a category
///
/// Its articles become uncategorised.
#[utoipa::path(delete, path = "/api/v1/kb/categories/{id}", tag = "Knowledge base",
    params(("id" = uuid::Uuid, Path, description = "Category id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
fn delete_category() {}
