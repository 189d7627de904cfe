//! `/channels/email`: the desk's addresses, each with its inbound source
//! and its SMTP identity. Secrets (IMAP and SMTP passwords, webhook
//! secrets, the Mailgun signing key, the DKIM key) are written, sealed,
//! and never read back: a channel shows only whether each is set.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::routes;

use super::bodies::{
    CreateBody, UpdateBody, apply_case_grouping, apply_dkim, apply_inbound, apply_smtp,
    checked_address, checked_name, refuse,
};
use super::model::Channel;
use super::store::channels::{self, ChannelFields, SEAL};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::ApiResult;
use crate::extract::{Id, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema::Deleted;
use crate::router::ApiRouter;
use crate::time::Clock;
use crate::validate::{Patch, problem};
use infra::sealed::SealingKey;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ChannelsRead, routes!(list))
        .route(Scope::ChannelsWrite, routes!(create))
        .route(Scope::ChannelsRead, routes!(get_one))
        .route(Scope::ChannelsWrite, routes!(update))
        .route(Scope::ChannelsWrite, routes!(delete))
}

/// List email channels
#[utoipa::path(get, path = "/channels/email", operation_id = "list_email_channels",
    tag = "Email channels",
    responses((status = 200, description = "The channels, oldest first", body = Vec<Channel>)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<Vec<Channel>>> {
    Ok(Json(channels::list(&db, &principal.tenant).await?))
}

/// Create an email channel
#[utoipa::path(post, path = "/channels/email", operation_id = "create_email_channel",
    tag = "Email channels",
    request_body = CreateBody,
    responses((status = 201, description = "Created", body = Channel),
        (status = 409, description = "The address is another channel's",
            body = crate::openapi::schema::ErrorBody)))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateBody>,
) -> ApiResult<(StatusCode, Json<Channel>)> {
    let mut errors = Vec::new();
    let address = match body.address.as_deref() {
        Some(raw) => checked_address(raw, &mut errors),
        None => {
            errors.push(problem("address", "is required"));
            String::new()
        }
    };
    if body.entity_id.is_none() {
        errors.push(problem("entityId", "is required"));
    }
    let mut fields = ChannelFields {
        address,
        name: checked_name(body.name, &mut errors),
        entity_id: body.entity_id.unwrap_or_default(),
        reopen_on_customer_reply: body.reopen_on_customer_reply.unwrap_or(true),
        ..ChannelFields::default()
    };
    match body.inbound {
        Some(inbound) => apply_inbound(&mut fields, inbound, false, &mut errors),
        None => errors.push(problem("inbound", "is required")),
    }
    if let Some(smtp) = body.smtp {
        apply_smtp(&mut fields, smtp, &mut errors);
    }
    if let Some(dkim) = body.dkim {
        apply_dkim(&mut fields, dkim, &mut errors);
    }
    apply_case_grouping(&mut fields, body.case_grouping_hours, &mut errors);
    if !errors.is_empty() {
        return Err(refuse(errors));
    }
    let key = SealingKey::load(&state.db, SEAL).await?;
    let db = state.db.acting(principal.actor());
    let channel =
        channels::create(&db, &principal.tenant, &fields, &key, state.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(channel)))
}

/// Get an email channel
#[utoipa::path(get, path = "/channels/email/{id}", operation_id = "get_email_channel",
    tag = "Email channels",
    params(("id" = uuid::Uuid, Path, description = "Channel id")),
    responses((status = 200, description = "The channel", body = Channel)))]
async fn get_one(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Channel>> {
    Ok(Json(channels::find(&db, &principal.tenant, id).await?))
}

/// Update an email channel
#[utoipa::path(patch, path = "/channels/email/{id}", operation_id = "update_email_channel",
    tag = "Email channels",
    request_body = UpdateBody,
    params(("id" = uuid::Uuid, Path, description = "Channel id")),
    responses((status = 200, description = "The updated channel", body = Channel),
        (status = 409, description = "The address is another channel's",
            body = crate::openapi::schema::ErrorBody)))]
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Json<Channel>> {
    let key = SealingKey::load(&db, SEAL).await?;
    let mut errors = Vec::new();
    let db = db.acting(principal.actor());
    let mut refused = None;
    let change = |fields: &mut ChannelFields| {
        if let Some(raw) = body.address.as_deref() {
            fields.address = checked_address(raw, &mut errors);
        }
        match body.name {
            Patch::Missing => {}
            Patch::Null => fields.name = None,
            Patch::Value(name) => fields.name = checked_name(Some(name), &mut errors),
        }
        if let Some(entity) = body.entity_id {
            fields.entity_id = entity;
        }
        if let Some(reopen) = body.reopen_on_customer_reply {
            fields.reopen_on_customer_reply = reopen;
        }
        apply_case_grouping(fields, body.case_grouping_hours, &mut errors);
        if let Some(inbound) = body.inbound {
            apply_inbound(fields, inbound, true, &mut errors);
        }
        match body.smtp {
            Patch::Missing => {}
            Patch::Null => {
                fields.smtp = None;
                fields.smtp_password = None;
            }
            Patch::Value(smtp) => apply_smtp(fields, smtp, &mut errors),
        }
        match body.dkim {
            Patch::Missing => {}
            Patch::Null => {
                fields.dkim_selector = None;
                fields.dkim_key = None;
            }
            Patch::Value(dkim) => apply_dkim(fields, dkim, &mut errors),
        }
        if !errors.is_empty() {
            refused = Some(std::mem::take(&mut errors));
        }
        refused.is_none()
    };
    let updated = channels::update(&db, &principal.tenant, id, change, &key, clock.now()).await?;
    match (updated, refused) {
        (Some(channel), _) => Ok(Json(channel)),
        (None, errors) => Err(refuse(errors.unwrap_or_default())),
    }
}

/// Delete an email channel
///
/// Its tickets stay; mail to its address is no longer read.
#[utoipa::path(delete, path = "/channels/email/{id}", operation_id = "delete_email_channel",
    tag = "Email channels",
    params(("id" = uuid::Uuid, Path, description = "Channel id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Deleted>> {
    let db = db.acting(principal.actor());
    channels::delete(&db, &principal.tenant, id, clock.now()).await?;
    Ok(Json(Deleted { id, deleted: true }))
}
