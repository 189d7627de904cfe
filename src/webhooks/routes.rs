//! `/company/webhooks`: subscriptions, secret rotation, the delivery log,
//! manual redelivery and test pings.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa_axum::routes;

use super::dispatch;
use super::guard::{self, AllowPrivate};
use super::store::deliveries::{self, Delivery, DeliveryStatus};
use super::store::{self, NewWebhook, Webhook, WebhookChanges};
use crate::auth::{Principal, Scope, Tenant};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::event_catalogue::EVENT_NAMES;
use crate::extract::{Id, Ids, Json, Query, Requested};
use crate::idempotency::RequestState;
use crate::openapi::schema::{Deleted, ErrorBody};
use crate::paging::Cursors;
use crate::paging::{After, CursorPage, ListId, ListRequest, Total};
use crate::router::ApiRouter;
use crate::time::Clock;
use crate::time::Timestamp;
use crate::validate::{Fields, NAME_MAX, Page, PageQuery, Paged, ensure, problem, required_text};

pub const URL_MAX: usize = 2048;
/// Default grace period of the old secret after a rotation.
pub const DEFAULT_GRACE_SECS: u64 = 24 * 3600;
/// Longest grace period a rotation may ask for (7 days).
pub const MAX_GRACE_SECS: u64 = 7 * 24 * 3600;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::SettingsRead, routes!(list))
        .route(Scope::SettingsWrite, routes!(create))
        .route(Scope::SettingsRead, routes!(get_one))
        .route(Scope::SettingsWrite, routes!(update))
        .route(Scope::SettingsWrite, routes!(delete))
        .route(Scope::SettingsWrite, routes!(rotate_secret))
        .route(Scope::SettingsWrite, routes!(test))
        .route(Scope::SettingsRead, routes!(list_deliveries))
        .route(Scope::SettingsRead, routes!(get_delivery))
        .route(Scope::SettingsWrite, routes!(redeliver))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateWebhook {
    #[schema(value_type = String, required, min_length = 1, max_length = 255)]
    name: Option<String>,
    /// An https (or, when allowed, http) URL; private addresses are refused.
    #[schema(value_type = String, required, min_length = 1, max_length = 2048)]
    url: Option<String>,
    /// Event names (`ticket.created`, …) or `*`.
    #[schema(value_type = Vec<String>, required)]
    events: Option<Value>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateWebhook {
    #[schema(value_type = String, min_length = 1, max_length = 255)]
    name: Option<String>,
    #[schema(value_type = String, min_length = 1, max_length = 2048)]
    url: Option<String>,
    #[schema(value_type = Vec<String>)]
    events: Option<Value>,
    is_active: Option<bool>,
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(as = RotateWebhookSecret)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RotateSecret {
    /// How long the previous secret keeps signing (default 24 h, at most 7 days).
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 604800)]
    grace_period_seconds: Option<Value>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeliveryQuery {
    /// `limit`, `offset`, `after`: documented by `ListRequest`.
    #[serde(flatten)]
    #[param(ignore)]
    page: ListRequest,
    #[param(schema_with = delivery_status)]
    status: Option<String>,
}

fn delivery_status() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(DeliveryStatus::NAMES)
}

/// The creation response: the webhook and its secret, shown only here.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CreatedWebhook)]
pub(crate) struct WithSecret {
    #[serde(flatten)]
    webhook: Webhook,
    secret: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RotatedWebhookSecret)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Rotated {
    id: uuid::Uuid,
    secret: String,
    /// Until when the previous secret still signs (`webhook-signature`).
    previous_secret_expires_at: Option<Timestamp>,
}

/// A delivery with the exact request body it sends.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct DeliveryWithBody {
    #[serde(flatten)]
    delivery: Delivery,
    /// The exact JSON body every attempt sends.
    #[schema(value_type = Object)]
    payload: Value,
}

/// List webhooks
#[utoipa::path(get, path = "/company/webhooks", operation_id = "list_webhooks", tag = "Webhooks",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of webhooks (no secrets)", body = Paged<Webhook>),
    ))]
async fn list(
    State(db): State<Db>,
    principal: Principal,
    Query(query): Query<crate::validate::PageQuery>,
) -> ApiResult<Json<Paged<Webhook>>> {
    let page = Page::from_query(&query, 20, 100)?;
    let (rows, total) = store::list(&db, &principal.tenant, page).await?;
    Ok(Json(Paged::new(rows, total, page)))
}

/// Create a webhook
///
/// The signing `secret` is in this response only.
#[utoipa::path(post, path = "/company/webhooks", operation_id = "create_webhook", tag = "Webhooks",
    request_body = CreateWebhook,
    responses((status = 201, description = "Created, with its secret", body = WithSecret)))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<CreateWebhook>,
) -> ApiResult<(StatusCode, Json<WithSecret>)> {
    let url = check_url(AllowPrivate::from_ref(&state), body.url.as_deref()).await;
    let (name, url, events) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        url,
        check_events(body.events.as_ref()),
    )
        .all_valid()?;
    let new = NewWebhook { name, url, events };
    let db = principal.acting(&state.db, requested);
    let (webhook, secret) = store::create(&db, &principal.tenant, new, state.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(WithSecret { webhook, secret })))
}

/// Get a webhook
#[utoipa::path(get, path = "/company/webhooks/{id}", operation_id = "get_webhook", tag = "Webhooks",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "The webhook", body = Webhook)))]
async fn get_one(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(store::find(&db, &principal.tenant, id).await?))
}

/// Update a webhook
///
/// `isActive: true` re-enables a webhook the service disabled.
#[utoipa::path(patch, path = "/company/webhooks/{id}", operation_id = "update_webhook",
    tag = "Webhooks",
    request_body = UpdateWebhook,
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "The updated webhook", body = Webhook)))]
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(allow_private): State<AllowPrivate>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    Json(body): Json<UpdateWebhook>,
) -> ApiResult<Json<Webhook>> {
    let nothing_given = body.name.is_none()
        && body.url.is_none()
        && body.events.is_none()
        && body.is_active.is_none();
    let url = match body.url.as_deref() {
        Some(raw) => check_url(allow_private, Some(raw)).await.map(Some),
        None => Ok(None),
    };
    let (_, name, url, events) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: name, url, events, isActive",
        ),
        body.name
            .as_deref()
            .map(|raw| required_text("name", Some(raw), NAME_MAX))
            .transpose(),
        url,
        body.events
            .as_ref()
            .map(|raw| check_events(Some(raw)))
            .transpose(),
    )
        .all_valid()?;
    let changes = WebhookChanges {
        name,
        url,
        events,
        is_active: body.is_active,
    };
    let db = principal.acting(&db, requested);
    Ok(Json(
        store::update(&db, &principal.tenant, id, changes, clock.now()).await?,
    ))
}

/// Delete a webhook
#[utoipa::path(delete, path = "/company/webhooks/{id}", operation_id = "delete_webhook",
    tag = "Webhooks",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
) -> ApiResult<Json<Value>> {
    let db = principal.acting(&db, requested);
    store::delete(&db, &principal.tenant, id, clock.now()).await?;
    Ok(Json(serde_json::json!({ "id": id, "deleted": true })))
}

/// Rotate the signing secret
///
/// The previous secret keeps signing (second signature) for the grace
/// period. The body is optional.
#[utoipa::path(post, path = "/company/webhooks/{id}/rotate-secret", tag = "Webhooks",
    request_body(content = Option<RotateSecret>, description = "Optional"),
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "The new secret", body = Rotated)))]
async fn rotate_secret(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    body: Bytes,
) -> ApiResult<Json<Rotated>> {
    let body: RotateSecret = optional_body(&body)?;
    let grace = match &body.grace_period_seconds {
        None | Some(Value::Null) => DEFAULT_GRACE_SECS,
        Some(value) => match value.as_u64() {
            Some(secs) if secs <= MAX_GRACE_SECS => secs,
            _ => {
                return Err(ApiError::invalid_field(
                    "gracePeriodSeconds",
                    format!("must be a whole number of seconds from 0 to {MAX_GRACE_SECS}"),
                ));
            }
        },
    };
    let grace = std::time::Duration::from_secs(grace);
    let db = principal.acting(&state.db, requested);
    let (secret, until) =
        store::rotate_secret(&db, &principal.tenant, id, grace, state.clock.now()).await?;
    Ok(Json(Rotated {
        id,
        secret,
        previous_secret_expires_at: until,
    }))
}

/// Send a test event
///
/// Queues a `webhook.test` delivery to this webhook.
#[utoipa::path(post, path = "/company/webhooks/{id}/test", operation_id = "test_webhook",
    tag = "Webhooks",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses(
        (status = 202, description = "Queued", body = DeliveryWithBody),
        (status = 409, description = "The webhook is inactive", body = ErrorBody),
    ))]
async fn test(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<(StatusCode, Json<DeliveryWithBody>)> {
    ensure_active(&state.db, &principal.tenant, id).await?;
    let db = state.db.acting(principal.actor());
    let delivery_id = dispatch::queue_test(&db, &principal.tenant, id, state.clock.now()).await?;
    accepted(&state.db, &principal.tenant, id, delivery_id).await
}

/// List deliveries
#[utoipa::path(get, path = "/company/webhooks/{id}/deliveries", tag = "Webhooks",
    params(("id" = uuid::Uuid, Path, description = "Webhook id"), DeliveryQuery, ListRequest),
    responses(
        (
            status = 200,
            description = "A page of deliveries with their attempts",
            body = CursorPage<Delivery>,
        ),
    ))]
async fn list_deliveries(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    principal: Principal,
    Id(id): Id,
    Query(query): Query<DeliveryQuery>,
) -> ApiResult<Json<CursorPage<Delivery>>> {
    let ((page, after), status) = (
        query.page.check(20, 100),
        delivery_status_filter(query.status.as_deref()),
    )
        .all_valid()?;
    store::find(&db, &principal.tenant, id).await?;
    let list = ListId::new("webhook_deliveries", &principal.tenant, &(id, status));
    let after = cursors.open_after(&list, after.as_deref())?;
    let (rows, total) =
        deliveries::list(&db, &principal.tenant, id, status, page, after.as_ref()).await?;
    let position = |delivery: &Delivery| After {
        created_at: delivery.created_at,
        id: delivery.id,
    };
    Ok(Json(CursorPage::by_time(
        rows,
        Total::exact(total),
        page,
        &cursors,
        &list,
        position,
    )))
}

/// Get a delivery
#[utoipa::path(get, path = "/company/webhooks/{id}/deliveries/{deliveryId}", tag = "Webhooks",
    params(
        ("id" = uuid::Uuid, Path, description = "Webhook id"),
        ("deliveryId" = uuid::Uuid, Path, description = "Delivery id"),
    ),
    responses(
        (
            status = 200,
            description = "The delivery, its attempts and its body",
            body = DeliveryWithBody,
        ),
    ))]
async fn get_delivery(
    State(db): State<Db>,
    principal: Principal,
    Ids(id, delivery_id): Ids,
) -> ApiResult<Json<DeliveryWithBody>> {
    Ok(Json(
        with_body(&db, &principal.tenant, id, delivery_id).await?,
    ))
}

/// Redeliver
///
/// Queues a new delivery with the same body.
#[utoipa::path(post, path = "/company/webhooks/{id}/deliveries/{deliveryId}/redeliver",
    tag = "Webhooks",
    params(
        ("id" = uuid::Uuid, Path, description = "Webhook id"),
        ("deliveryId" = uuid::Uuid, Path, description = "Delivery id"),
    ),
    responses(
        (status = 202, description = "Queued", body = DeliveryWithBody),
        (status = 409, description = "The webhook is inactive", body = ErrorBody),
    ))]
async fn redeliver(
    RequestState(state): RequestState,
    principal: Principal,
    Ids(id, delivery_id): Ids,
) -> ApiResult<(StatusCode, Json<DeliveryWithBody>)> {
    ensure_active(&state.db, &principal.tenant, id).await?;
    let new_id = dispatch::redeliver(&state.db, &principal.tenant, id, delivery_id).await?;
    accepted(&state.db, &principal.tenant, id, new_id).await
}

/// A disabled webhook gets no deliveries: 409 rather than a silent failure.
async fn ensure_active(db: &Db, tenant: &Tenant, id: uuid::Uuid) -> ApiResult<()> {
    let webhook = store::find(db, tenant, id).await?;
    if !webhook.is_active {
        return Err(ApiError::conflict(
            "Webhook is disabled; set isActive to true first",
        ));
    }
    Ok(())
}

async fn accepted(
    db: &Db,
    tenant: &Tenant,
    id: uuid::Uuid,
    delivery_id: uuid::Uuid,
) -> ApiResult<(StatusCode, Json<DeliveryWithBody>)> {
    let delivery = with_body(db, tenant, id, delivery_id).await?;
    Ok((StatusCode::ACCEPTED, Json(delivery)))
}

async fn with_body(
    db: &Db,
    tenant: &Tenant,
    id: uuid::Uuid,
    delivery_id: uuid::Uuid,
) -> ApiResult<DeliveryWithBody> {
    let (delivery, body) = deliveries::find(db, tenant, id, delivery_id).await?;
    let payload = serde_json::from_str(&body).unwrap_or(Value::String(body));
    Ok(DeliveryWithBody { delivery, payload })
}

/// A required absolute http(s) URL of at most 2048 characters that passes
/// the SSRF guard.
async fn check_url(allow_private: AllowPrivate, raw: Option<&str>) -> Result<String, FieldError> {
    let text = required_text("url", raw, URL_MAX)?;
    let parsed = match reqwest::Url::parse(&text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => url,
        _ => return Err(problem("url", "must be an absolute http or https URL")),
    };
    guard::check_url(&parsed, allow_private.0)
        .await
        .map_err(|reason| problem("url", reason))?;
    Ok(text)
}

/// A delivery status filter: one of the delivery log's statuses.
fn delivery_status_filter(raw: Option<&str>) -> Result<Option<DeliveryStatus>, FieldError> {
    raw.map(|raw| {
        raw.parse().map_err(|_| {
            problem(
                "status",
                format!("must be one of: {}", DeliveryStatus::NAMES.join(", ")),
            )
        })
    })
    .transpose()
}

/// A non-empty array of known event names, without duplicates.
fn check_events(raw: Option<&Value>) -> Result<Vec<String>, FieldError> {
    let known = EVENT_NAMES.join(", ");
    let Some(raw) = raw.filter(|r| !r.is_null()) else {
        return Err(problem("events", "is required"));
    };
    let Some(items) = raw.as_array() else {
        return Err(problem(
            "events",
            format!("must be an array of event names: {known}"),
        ));
    };
    if items.is_empty() {
        return Err(problem(
            "events",
            format!("must name at least one event: {known}"),
        ));
    }
    let mut events: Vec<String> = Vec::new();
    for item in items {
        match item.as_str().map(str::trim) {
            Some(name) if EVENT_NAMES.contains(&name) => {
                if !events.iter().any(|e| e == name) {
                    events.push(name.to_string());
                }
            }
            _ => {
                return Err(problem(
                    "events",
                    format!("unknown event {item}; known events: {known}"),
                ));
            }
        }
    }
    Ok(events)
}

/// A JSON body that may be absent (then `T::default()`).
fn optional_body<T: DeserializeOwned + Default>(bytes: &[u8]) -> ApiResult<T> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(bytes).map_err(|err| match err.classify() {
        serde_json::error::Category::Data => ApiError::invalid_field("body", err.to_string()),
        _ => ApiError::invalid_json("Request body is not valid JSON"),
    })
}
