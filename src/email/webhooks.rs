//! `POST /api/v1/inbound/email/{channelId}/{provider}`: where Postmark,
//! Mailgun and SendGrid post the mail a channel receives. No API key: the
//! provider proves itself (Mailgun's signature, else the channel's secret
//! as basic auth or `?secret=`); a post that does not is 401 and changes
//! nothing. The message then enters as the IMAP reader's do
//! (`sequences::email_inbound`).

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef, Path, State};
use axum::http::{HeaderMap, StatusCode};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tower_http::limit::RequestBodyLimitLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use super::model::InboundKind;
use super::providers::{self, Refused};
use super::sns::{self, Certificates, SnsMessage};
use super::store::channels::{self, SEAL};
use crate::attachments::Attachments;
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Json, Query};
use crate::sequences::email_inbound::{self, Handles, Limits, Outcome};
use crate::sla::cache::SlaCache;
use crate::state::AppState;
use crate::time::Clock;
use ::tickets::store::subscribers::Subscribers;
use infra::sealed::SealingKey;

/// Room in a post for everything but its largest file: the text and HTML
/// bodies, the headers, the provider's fields and its smaller files.
const BODY_HEADROOM: u64 = 4 * 1024 * 1024;

/// Largest post taken, from the attachments' limit (`max_attachment`): a
/// file that size may come twice (Postmark's `Attachments` beside its
/// `RawEmail`, Mailgun's file beside `body-mime`), base64-encoded once or,
/// inside SNS's base64 content, twice, with line breaks and JSON escapes:
/// under 3 times its size in every provider's shape, plus the headroom. So a
/// file the limit allows is never refused, and a post past it is refused
/// (413) from its `Content-Length`, before its bytes are read.
pub fn body_max(max_attachment: u64) -> usize {
    let max = max_attachment
        .saturating_mul(3)
        .saturating_add(BODY_HEADROOM);
    usize::try_from(max).unwrap_or(usize::MAX)
}

/// The public route (mounted beside the API's, outside its key check); a
/// post is at most `body_max(max_attachment)` bytes.
pub fn router(max_attachment: u64) -> Router<AppState> {
    let max = body_max(max_attachment);
    documented()
        .split_for_parts()
        .0
        .layer(DefaultBodyLimit::max(max))
        // 413 at once for a post whose `Content-Length` is past `max`,
        // before a byte of it is read (the stack's JSON-error net gives it
        // our error shape); one without a length is cut at `max` as read.
        .layer(RequestBodyLimitLayer::new(max))
}

/// Its OpenAPI operation, from the same declaration.
pub fn operations() -> utoipa::openapi::OpenApi {
    documented().split_for_parts().1
}

fn documented() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(inbound))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct SecretQuery {
    /// The channel's secret, for a provider that cannot send basic auth.
    secret: Option<String>,
}

/// What became of the posted message.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = InboundEmailReceived)]
#[serde(rename_all = "camelCase")]
struct Received {
    /// `opened`, `commented`, `duplicate`, `dropped`, or `confirmed` (an SNS
    /// subscription).
    outcome: &'static str,
    ticket_id: Option<Uuid>,
    comment_id: Option<Uuid>,
}

fn unauthenticated() -> ApiError {
    ApiError::unauthorized(
        ErrorCode::InvalidToken,
        "The provider's signature or secret does not match the channel's",
    )
}

/// What an inbound post uses: the store and the clock, what storing a
/// message takes (`Handles`), and the certificates SES posts are verified
/// with.
#[derive(Clone)]
struct Inbound {
    db: Db,
    clock: Clock,
    sla: Arc<SlaCache>,
    subscribers: Arc<Subscribers>,
    attachments: Arc<Attachments>,
    sns_certificates: Arc<Certificates>,
}

impl FromRef<AppState> for Inbound {
    fn from_ref(state: &AppState) -> Inbound {
        Inbound {
            db: state.db.clone(),
            clock: state.clock.clone(),
            sla: state.sla.clone(),
            subscribers: state.ticket_subscribers.clone(),
            attachments: state.attachments.clone(),
            sns_certificates: state.sns_certificates.clone(),
        }
    }
}

impl Inbound {
    fn handles(&self) -> Handles<'_> {
        Handles {
            db: &self.db,
            clock: &self.clock,
            sla: &self.sla,
            subscribers: &self.subscribers,
            attachments: &self.attachments,
            limits: Limits::default(),
        }
    }
}

/// Receive an email from a provider
///
/// Postmark (JSON), Mailgun (form, signed), SendGrid (Inbound Parse
/// form) or Amazon SES through SNS (signed; a subscription's confirmation
/// is confirmed) posts one incoming message of the channel. Answers 200 once it
/// is stored (a duplicate or a machine's message too, so the provider
/// does not retry it); 401 when the signature or secret is wrong.
#[utoipa::path(post, path = "/api/v1/inbound/email/{channelId}/{provider}",
    operation_id = "receive_inbound_email", tag = "Email channels",
    params(("channelId" = uuid::Uuid, Path, description = "Channel id"),
        ("provider" = String, Path, description = "`postmark`, `mailgun`, `sendgrid` or `ses`"),
        SecretQuery),
    request_body(content = String, description = "The provider's post as it sends it: JSON \
        (Postmark, SNS) or a form (Mailgun, SendGrid)"),
    responses((status = 200, description = "Stored", body = Received),
        (status = 400, description = "A NUL character in the query (`secret`)", body = crate::openapi::schema::ErrorBody),
        (status = 401, description = "Wrong signature or secret", body = crate::openapi::schema::ErrorBody),
        (status = 404, description = "No such channel of that provider", body = crate::openapi::schema::ErrorBody),
        (status = 413, description = "Larger than a message whose largest file is at the \
            attachments' limit can be", body = crate::openapi::schema::ErrorBody)))]
async fn inbound(
    State(state): State<Inbound>,
    Path((channel_id, provider)): Path<(String, String)>,
    Query(query): Query<SecretQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Received>)> {
    let (Ok(channel_id), Ok(kind)) = (channel_id.parse::<Uuid>(), provider.parse::<InboundKind>())
    else {
        return Err(ApiError::not_found());
    };
    let key = SealingKey::load(&state.db, SEAL).await?;
    let Some((tenant, channel)) = channels::find_any(&state.db, channel_id, &key).await? else {
        return Err(ApiError::not_found());
    };
    if channel.channel.inbound.kind != kind || !kind.is_webhook() {
        return Err(ApiError::not_found());
    }
    if !secret_set(kind, channel.inbound_secret.as_deref()) {
        return Err(unauthenticated());
    }
    let secret = channel.inbound_secret.as_deref().unwrap_or_default();
    let boundary = crate::time::new_id().simple().to_string();
    let raw = match kind {
        InboundKind::Postmark => providers::check_secret(&headers, query.secret.as_deref(), secret)
            .and_then(|()| providers::postmark(&body, &boundary)),
        InboundKind::Mailgun => match providers::form(&headers, body).await {
            Ok(form) => providers::check_mailgun(&form, secret, state.clock.now())
                .map(|()| providers::mailgun(form, &boundary)),
            Err(refused) => Err(refused),
        },
        InboundKind::Sendgrid => {
            match providers::check_secret(&headers, query.secret.as_deref(), secret) {
                Ok(()) => providers::form(&headers, body)
                    .await
                    .map(|form| providers::sendgrid(form, &boundary)),
                Err(refused) => Err(refused),
            }
        }
        InboundKind::Ses => {
            let topic = channel.channel.inbound.topic_arn.as_deref();
            match ses(&state.sns_certificates, &body, topic).await {
                Ok(Some(raw)) => Ok(raw),
                // A subscription confirmed: nothing to store.
                Ok(None) => {
                    return Ok((
                        StatusCode::OK,
                        Json(Received {
                            outcome: "confirmed",
                            ticket_id: None,
                            comment_id: None,
                        }),
                    ));
                }
                Err(refused) => Err(refused),
            }
        }
        InboundKind::Imap => return Err(ApiError::not_found()),
    };
    let raw = match raw {
        Ok(raw) => raw,
        Err(Refused::Unauthenticated) => return Err(unauthenticated()),
        Err(Refused::Unreadable(why)) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                ErrorCode::BadRequest,
                format!("The provider's post could not be read: {why}"),
            ));
        }
    };
    let outcome = email_inbound::receive(&state.handles(), &tenant, &channel.channel, &raw).await?;
    let (outcome, ticket_id, comment_id) = match outcome {
        Outcome::Opened { ticket_id } => ("opened", Some(ticket_id), None),
        Outcome::Commented {
            ticket_id,
            comment_id,
        } => ("commented", Some(ticket_id), Some(comment_id)),
        Outcome::Duplicate => ("duplicate", None, None),
        Outcome::Dropped { .. } => ("dropped", None, None),
    };
    Ok((
        StatusCode::OK,
        Json(Received {
            outcome,
            ticket_id,
            comment_id,
        }),
    ))
}

/// SES mail through SNS: the message verified against its signing
/// certificate (and its topic against the channel's, when set); a
/// subscription's confirmation is confirmed (None), a notification's mail
/// is its raw content.
async fn ses(
    certificates: &Certificates,
    body: &[u8],
    topic: Option<&str>,
) -> Result<Option<Vec<u8>>, Refused> {
    let message: SnsMessage =
        serde_json::from_slice(body).map_err(|e| Refused::Unreadable(e.to_string()))?;
    let Some(pem) = certificates.get(&message.signing_cert_url).await else {
        return Err(Refused::Unauthenticated);
    };
    if !sns::verify(&message, &pem) || topic.is_some_and(|t| t != message.topic_arn) {
        return Err(Refused::Unauthenticated);
    }
    match message.kind.as_str() {
        "SubscriptionConfirmation" => {
            let url = message.subscribe_url.as_deref().unwrap_or_default();
            sns::confirm(url).await.map_err(|why| {
                Refused::Unreadable(format!("confirming the subscription: {why}"))
            })?;
            Ok(None)
        }
        "Notification" => {
            let notification: serde_json::Value = serde_json::from_str(&message.message)
                .map_err(|e| Refused::Unreadable(e.to_string()))?;
            let Some(content) = notification["content"].as_str() else {
                return Err(Refused::Unreadable(
                    "the notification carries no content (use the SNS action, not S3)".into(),
                ));
            };
            // The SNS action sends the message as UTF-8 or as base64: raw
            // mail is never valid base64 (it has colons and spaces).
            use base64::Engine;
            let raw = base64::engine::general_purpose::STANDARD
                .decode(content.trim())
                .unwrap_or_else(|_| content.as_bytes().to_vec());
            Ok(Some(raw))
        }
        other => Err(Refused::Unreadable(format!(
            "an SNS message of type {other}"
        ))),
    }
}

/// A channel whose secret was never set (or no longer opens) accepts no
/// post: an empty secret would let anyone in.
fn secret_set(kind: InboundKind, secret: Option<&str>) -> bool {
    kind == InboundKind::Ses || secret.is_some_and(|s| !s.is_empty())
}
