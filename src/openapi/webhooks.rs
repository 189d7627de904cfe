//! Operations of webhooks and their deliveries.
#![allow(dead_code)]

use utoipa::OpenApi;

use super::schema::Deleted;
use crate::validate::{PageQuery, Paged};
use crate::webhooks::routes::{
    CreateWebhook, DeliveryQuery, DeliveryWithBody, RotateSecret, Rotated, UpdateWebhook,
    WithSecret,
};
use crate::webhooks::store::Webhook;
use crate::webhooks::store::deliveries::Delivery;

#[derive(OpenApi)]
#[openapi(paths(
    list_webhooks,
    create_webhook,
    get_webhook,
    update_webhook,
    delete_webhook,
    rotate_secret,
    test_webhook,
    list_deliveries,
    get_delivery,
    redeliver,
))]
pub struct Doc;

/// List webhooks
#[utoipa::path(get, path = "/api/v1/company/webhooks", tag = "Webhooks", params(PageQuery),
    responses((status = 200, description = "A page of webhooks (no secrets)", body = Paged<Webhook>)))]
fn list_webhooks() {}

/// Create a webhook
///
/// The signing `secret` is in this response only.
#[utoipa::path(post, path = "/api/v1/company/webhooks", tag = "Webhooks",
    request_body = CreateWebhook,
    responses((status = 201, description = "Created, with its secret", body = WithSecret)))]
fn create_webhook() {}

/// Get a webhook
#[utoipa::path(get, path = "/api/v1/company/webhooks/{id}", tag = "Webhooks",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "The webhook", body = Webhook)))]
fn get_webhook() {}

/// Update a webhook
///
/// `isActive: true` re-enables a webhook the service disabled.
#[utoipa::path(patch, path = "/api/v1/company/webhooks/{id}", tag = "Webhooks",
    request_body = UpdateWebhook,
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "The updated webhook", body = Webhook)))]
fn update_webhook() {}

/// Delete a webhook
#[utoipa::path(delete, path = "/api/v1/company/webhooks/{id}", tag = "Webhooks",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
fn delete_webhook() {}

/// Rotate the signing secret
///
/// The previous secret keeps signing (second signature) for the grace
/// period. The body is optional.
#[utoipa::path(post, path = "/api/v1/company/webhooks/{id}/rotate-secret", tag = "Webhooks",
    request_body(content = Option<RotateSecret>, description = "Optional"),
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "The new secret", body = Rotated)))]
fn rotate_secret() {}

/// Send a test event
///
/// Queues a `webhook.test` delivery to this webhook.
#[utoipa::path(post, path = "/api/v1/company/webhooks/{id}/test", tag = "Webhooks",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses(
        (status = 202, description = "Queued", body = DeliveryWithBody),
        (status = 409, description = "The webhook is inactive", body = super::schema::ErrorBody),
    ))]
fn test_webhook() {}

/// List deliveries
#[utoipa::path(get, path = "/api/v1/company/webhooks/{id}/deliveries", tag = "Webhooks",
    params(("id" = uuid::Uuid, Path, description = "Webhook id"), DeliveryQuery),
    responses((status = 200, description = "A page of deliveries with their attempts", body = Paged<Delivery>)))]
fn list_deliveries() {}

/// Get a delivery
#[utoipa::path(get, path = "/api/v1/company/webhooks/{id}/deliveries/{deliveryId}",
    tag = "Webhooks",
    params(
        ("id" = uuid::Uuid, Path, description = "Webhook id"),
        ("deliveryId" = uuid::Uuid, Path, description = "Delivery id"),
    ),
    responses((status = 200, description = "The delivery, its attempts and its body", body = DeliveryWithBody)))]
fn get_delivery() {}

/// Redeliver
///
/// Queues a new delivery with the same body.
#[utoipa::path(post, path = "/api/v1/company/webhooks/{id}/deliveries/{deliveryId}/redeliver",
    tag = "Webhooks",
    params(
        ("id" = uuid::Uuid, Path, description = "Webhook id"),
        ("deliveryId" = uuid::Uuid, Path, description = "Delivery id"),
    ),
    responses(
        (status = 202, description = "Queued", body = DeliveryWithBody),
        (status = 409, description = "The webhook is inactive", body = super::schema::ErrorBody),
    ))]
fn redeliver() {}
