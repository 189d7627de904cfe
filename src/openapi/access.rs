//! Operations of entities, users and API keys.
#![allow(dead_code)]

use utoipa::OpenApi;

use super::schema::{DataList, ErrorBody};
use crate::entities::Entity;
use crate::entities::routes::{CreateEntity, UpdateEntity};
use crate::keys::routes::{CreateKey, CreatedKey, UpdateKey};
use crate::keys::store::ApiKey;
use crate::users::routes::{CreateUser, UpdateUser};
use crate::users::store::User;
use crate::validate::{PageQuery, Paged};

#[derive(OpenApi)]
#[openapi(paths(
    list_entities,
    create_entity,
    get_entity,
    update_entity,
    list_users,
    create_user,
    get_user,
    update_user,
    list_api_keys,
    create_api_key,
    get_api_key,
    update_api_key,
    revoke_api_key,
))]
pub struct Doc;

/// List entities
///
/// Every entity of the company (entities are shared by both modes).
#[utoipa::path(get, path = "/api/v1/entities", tag = "Entities",
    responses((status = 200, description = "The company's entities", body = DataList<Entity>)))]
fn list_entities() {}

/// Create an entity
#[utoipa::path(post, path = "/api/v1/entities", tag = "Entities", request_body = CreateEntity,
    responses((status = 201, description = "Created", body = Entity)))]
fn create_entity() {}

/// Get an entity
#[utoipa::path(get, path = "/api/v1/entities/{id}", tag = "Entities",
    params(("id" = uuid::Uuid, Path, description = "Entity id")),
    responses((status = 200, description = "The entity", body = Entity)))]
fn get_entity() {}

/// Update an entity
///
/// Give at least one field; a `parentId` must be another entity of the
/// company and must not make a cycle.
#[utoipa::path(patch, path = "/api/v1/entities/{id}", tag = "Entities", request_body = UpdateEntity,
    params(("id" = uuid::Uuid, Path, description = "Entity id")),
    responses((status = 200, description = "The updated entity", body = Entity)))]
fn update_entity() {}

/// List users
#[utoipa::path(get, path = "/api/v1/users", tag = "Users", params(PageQuery),
    responses((status = 200, description = "A page of users (max 100)", body = Paged<User>)))]
fn list_users() {}

/// Create a user
///
/// Emits `user.created`.
#[utoipa::path(post, path = "/api/v1/users", tag = "Users", request_body = CreateUser,
    responses(
        (status = 201, description = "Created", body = User),
        (status = 409, description = "The email is taken", body = ErrorBody),
    ))]
fn create_user() {}

/// Get a user
#[utoipa::path(get, path = "/api/v1/users/{id}", tag = "Users",
    params(("id" = uuid::Uuid, Path, description = "User id")),
    responses((status = 200, description = "The user", body = User)))]
fn get_user() {}

/// Update a user
#[utoipa::path(patch, path = "/api/v1/users/{id}", tag = "Users", request_body = UpdateUser,
    params(("id" = uuid::Uuid, Path, description = "User id")),
    responses(
        (status = 200, description = "The updated user", body = User),
        (status = 409, description = "The email is taken", body = ErrorBody),
    ))]
fn update_user() {}

/// List API keys
///
/// Keys of the company in the requesting key's mode; never the secrets.
#[utoipa::path(get, path = "/api/v1/api-keys", tag = "API keys", params(PageQuery),
    responses((status = 200, description = "A page of keys (max 100)", body = Paged<ApiKey>)))]
fn list_api_keys() {}

/// Create an API key
///
/// The secret `key` is in this response only. A key can only grant scopes
/// it holds itself (403 otherwise).
#[utoipa::path(post, path = "/api/v1/api-keys", tag = "API keys", request_body = CreateKey,
    responses((status = 201, description = "Created; `key` is shown this once", body = CreatedKey)))]
fn create_api_key() {}

/// Get an API key
#[utoipa::path(get, path = "/api/v1/api-keys/{id}", tag = "API keys",
    params(("id" = uuid::Uuid, Path, description = "Key id")),
    responses((status = 200, description = "The key (no secret)", body = ApiKey)))]
fn get_api_key() {}

/// Update an API key
///
/// Rename, change scopes or rate limit, deactivate or reactivate. Takes
/// effect on every node at once.
#[utoipa::path(patch, path = "/api/v1/api-keys/{id}", tag = "API keys", request_body = UpdateKey,
    params(("id" = uuid::Uuid, Path, description = "Key id")),
    responses((status = 200, description = "The updated key", body = ApiKey)))]
fn update_api_key() {}

/// Revoke an API key
#[utoipa::path(delete, path = "/api/v1/api-keys/{id}", tag = "API keys",
    params(("id" = uuid::Uuid, Path, description = "Key id")),
    responses((status = 204, description = "Revoked")))]
fn revoke_api_key() {}
