//! `/channels/email`: the desk's addresses, each with its inbound source
//! and its SMTP identity. Secrets (IMAP and SMTP passwords, webhook
//! secrets, the Mailgun signing key, the DKIM key) are written, sealed,
//! and never read back: a channel shows only whether each is set.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::routes;
use uuid::Uuid;

use super::model::{self, Channel, ImapSettings, InboundKind, SmtpSettings};
use super::store::channels::{self, ChannelFields, SEAL};
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::{Id, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema::Deleted;
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::validate::{NAME_MAX, Patch, problem};
use infra::sealed::SealingKey;

/// Longest secret accepted (a PEM DKIM key fits).
const SECRET_MAX: usize = 8192;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ChannelsRead, routes!(list))
        .route(Scope::ChannelsWrite, routes!(create))
        .route(Scope::ChannelsRead, routes!(get_one))
        .route(Scope::ChannelsWrite, routes!(update))
        .route(Scope::ChannelsWrite, routes!(delete))
}

/// Where mail comes in, by kind: `{kind: "imap", host, port, tls,
/// username, password, folder}`, `{kind: "mailgun", signingKey}`,
/// `{kind: "postmark"|"sendgrid", secret}` (basic auth password or URL
/// secret) or `{kind: "ses"}` (the SNS signature).
#[derive(Deserialize, ToSchema)]
#[schema(as = EmailInboundSource)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct InboundBody {
    #[schema(value_type = String, example = "postmark")]
    kind: InboundKind,
    host: Option<String>,
    port: Option<u16>,
    tls: Option<bool>,
    username: Option<String>,
    /// Write only.
    password: Option<String>,
    folder: Option<String>,
    /// Write only.
    secret: Option<String>,
    /// Write only.
    signing_key: Option<String>,
    /// `ses`: the SNS topic SES publishes to; messages of another topic
    /// are refused.
    topic_arn: Option<String>,
}

/// The SMTP identity replies leave by.
#[derive(Deserialize, ToSchema)]
#[schema(as = EmailSmtpIdentity)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SmtpBody {
    host: String,
    port: u16,
    #[serde(default = "yes")]
    tls: bool,
    username: Option<String>,
    /// Write only.
    password: Option<String>,
}

fn yes() -> bool {
    true
}

/// A DKIM signing key: the selector and the private key (PKCS#1 PEM for
/// RSA, or the base64 of an Ed25519 seed). Write only.
#[derive(Deserialize, ToSchema)]
#[schema(as = EmailDkimKey)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct DkimBody {
    selector: String,
    private_key: String,
}

#[derive(Deserialize, ToSchema)]
#[schema(as = CreateEmailChannel)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateBody {
    /// The desk's address; replies come back to `local+<token>@domain`.
    #[schema(value_type = String, required)]
    address: Option<String>,
    name: Option<String>,
    /// The entity tickets opened by mail belong to.
    #[schema(value_type = uuid::Uuid, required)]
    entity_id: Option<Uuid>,
    #[schema(required)]
    inbound: Option<InboundBody>,
    smtp: Option<SmtpBody>,
    dkim: Option<DkimBody>,
}

/// Only the fields given change; `smtp: null` or `dkim: null` removes it.
/// An `inbound` given replaces the source; of the same kind without its
/// secret, the secret stays.
#[derive(Deserialize, ToSchema)]
#[schema(as = UpdateEmailChannel)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateBody {
    address: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    name: Patch<String>,
    entity_id: Option<Uuid>,
    inbound: Option<InboundBody>,
    #[serde(default)]
    #[schema(value_type = Option<SmtpBody>)]
    smtp: Patch<SmtpBody>,
    #[serde(default)]
    #[schema(value_type = Option<DkimBody>)]
    dkim: Patch<DkimBody>,
}

fn refuse(errors: Vec<FieldError>) -> ApiError {
    ApiError::validation(errors)
}

fn secret(field: &str, value: Option<&str>, errors: &mut Vec<FieldError>) -> Option<String> {
    match value.map(str::trim) {
        Some("") => {
            errors.push(problem(field, "must not be empty"));
            None
        }
        Some(v) if v.len() > SECRET_MAX => {
            errors.push(problem(field, "is too long"));
            None
        }
        other => other.map(str::to_string),
    }
}

/// Applies `inbound` to `fields`; `keep` keeps the stored secret when the
/// kind is the same and none is given.
fn apply_inbound(
    fields: &mut ChannelFields,
    inbound: InboundBody,
    keep: bool,
    errors: &mut Vec<FieldError>,
) {
    let same_kind = fields.inbound_kind == Some(inbound.kind);
    let given = match inbound.kind {
        InboundKind::Imap => {
            let host = inbound
                .host
                .map(|h| h.trim().to_string())
                .unwrap_or_default();
            let username = inbound.username.unwrap_or_default();
            if host.is_empty() {
                errors.push(problem("inbound.host", "is required for imap"));
            }
            if username.is_empty() {
                errors.push(problem("inbound.username", "is required for imap"));
            }
            let tls = inbound.tls.unwrap_or(true);
            fields.imap = Some(ImapSettings {
                host,
                port: inbound.port.unwrap_or(if tls { 993 } else { 143 }),
                tls,
                username,
                folder: inbound.folder.unwrap_or_else(|| "INBOX".into()),
            });
            secret("inbound.password", inbound.password.as_deref(), errors)
        }
        InboundKind::Mailgun => {
            secret("inbound.signingKey", inbound.signing_key.as_deref(), errors)
        }
        InboundKind::Postmark | InboundKind::Sendgrid => {
            secret("inbound.secret", inbound.secret.as_deref(), errors)
        }
        InboundKind::Ses => None,
    };
    fields.ses_topic_arn = inbound
        .topic_arn
        .map(|t| t.trim().to_string())
        .filter(|t| inbound.kind == InboundKind::Ses && !t.is_empty());
    if inbound.kind != InboundKind::Imap {
        fields.imap = None;
    }
    fields.inbound_kind = Some(inbound.kind);
    match given {
        Some(secret) => fields.inbound_secret = Some(secret),
        None if keep && same_kind => {}
        None => {
            fields.inbound_secret = None;
            let needed = match inbound.kind {
                InboundKind::Imap => Some("inbound.password"),
                InboundKind::Mailgun => Some("inbound.signingKey"),
                InboundKind::Postmark | InboundKind::Sendgrid => Some("inbound.secret"),
                InboundKind::Ses => None,
            };
            if let Some(field) = needed {
                errors.push(problem(field, "is required for this kind"));
            }
        }
    }
}

fn apply_smtp(fields: &mut ChannelFields, smtp: SmtpBody, errors: &mut Vec<FieldError>) {
    if smtp.host.trim().is_empty() {
        errors.push(problem("smtp.host", "must not be empty"));
    }
    let password = secret("smtp.password", smtp.password.as_deref(), errors);
    if password.is_some() {
        fields.smtp_password = password;
    }
    fields.smtp = Some(SmtpSettings {
        host: smtp.host.trim().to_string(),
        port: smtp.port,
        tls: smtp.tls,
        username: smtp.username,
    });
}

fn apply_dkim(fields: &mut ChannelFields, dkim: DkimBody, errors: &mut Vec<FieldError>) {
    if dkim.selector.trim().is_empty() {
        errors.push(problem("dkim.selector", "must not be empty"));
    }
    fields.dkim_key = secret("dkim.privateKey", Some(&dkim.private_key), errors);
    fields.dkim_selector = Some(dkim.selector.trim().to_string());
}

fn checked_address(raw: &str, errors: &mut Vec<FieldError>) -> String {
    model::address(raw).unwrap_or_else(|| {
        errors.push(problem("address", "must be an email address"));
        String::new()
    })
}

fn checked_name(name: Option<String>, errors: &mut Vec<FieldError>) -> Option<String> {
    let name = name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
    if name.as_ref().is_some_and(|n| n.chars().count() > NAME_MAX) {
        errors.push(problem("name", "is too long"));
    }
    name
}

/// List email channels
#[utoipa::path(get, path = "/channels/email", operation_id = "list_email_channels",
    tag = "Email channels",
    responses((status = 200, description = "The channels, oldest first", body = Vec<Channel>)))]
async fn list(
    State(state): State<AppState>,
    principal: Principal,
) -> ApiResult<Json<Vec<Channel>>> {
    Ok(Json(channels::list(&state.db, &principal.tenant).await?))
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
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Channel>> {
    Ok(Json(
        channels::find(&state.db, &principal.tenant, id).await?,
    ))
}

/// Update an email channel
#[utoipa::path(patch, path = "/channels/email/{id}", operation_id = "update_email_channel",
    tag = "Email channels",
    request_body = UpdateBody,
    params(("id" = uuid::Uuid, Path, description = "Channel id")),
    responses((status = 200, description = "The updated channel", body = Channel)))]
async fn update(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Json<Channel>> {
    let key = SealingKey::load(&state.db, SEAL).await?;
    let mut errors = Vec::new();
    let db = state.db.acting(principal.actor());
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
    let updated =
        channels::update(&db, &principal.tenant, id, change, &key, state.clock.now()).await?;
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
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Deleted>> {
    channels::delete(&state.db, &principal.tenant, id).await?;
    Ok(Json(Deleted { id, deleted: true }))
}
