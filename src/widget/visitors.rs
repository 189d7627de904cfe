//! Who a widget visitor is: a verified identity from the customer's
//! backend, or an anonymous visitor whose typed email must be confirmed
//! before agent replies are mailed to it (otherwise anyone holding the
//! public widget key could have replies mailed to someone else).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Html;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::access::{self, IssuedToken, VisitorTokens};
use super::identity::{self, Identity};
use super::store::{self, WidgetTarget};
use crate::auth::key::{hash, random_base62};
use crate::chat::model::SessionIdentity;
use crate::chat::model::VisitorSession;
use crate::chat::{ChatDeps, service, store as chat_store};
use crate::entities::store::WidgetIdentity;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Json, Query};
use crate::mail::Email;
use crate::openapi::schema::{DataList, ErrorBody};
use crate::realtime::token::{SecretFingerprint, fingerprint};
use crate::time::Timestamp;

/// Earlier sessions a verified visitor is shown at most.
const HISTORY_MAX: i64 = 50;
/// How recently the identity token that lists a visitor's history must
/// have been issued (its `iat`): the host page signs one when the widget
/// opens, and an old one (from a log, a cache) opens nothing.
pub const HISTORY_IDENTITY_MAX_AGE_SECS: i64 = 10 * 60;

/// Who a new session's visitor is: name, email, identity, and the
/// fingerprint of the identity secret that vouched for them.
pub(super) type NewVisitor = (
    String,
    Option<String>,
    SessionIdentity,
    Option<SecretFingerprint>,
);

/// The visitor of a new session: from `token` when given (which must be
/// valid), else anonymous with the typed name and email, unless the
/// entity requires an identity.
pub(super) fn visitor(
    public_url: &str,
    now: Timestamp,
    target: &WidgetTarget,
    token: Option<&str>,
    typed_name: Option<String>,
    typed_email: Option<String>,
) -> ApiResult<NewVisitor> {
    let token = token.map(str::trim).filter(|t| !t.is_empty());
    let Some(token) = token else {
        if target.identity == WidgetIdentity::Required {
            return Err(ApiError::unauthorized(
                ErrorCode::IdentityRequired,
                "This widget needs a verified identity token (identityToken)",
            ));
        }
        let name = typed_name.unwrap_or_else(|| "Visitor".into());
        let confirmation = typed_email
            .as_deref()
            .map(|email| confirmation(public_url, &name, email));
        let identity = SessionIdentity {
            email_verified: confirmation.is_none(),
            confirmation,
            ..SessionIdentity::default()
        };
        return Ok((name, typed_email, identity, None));
    };
    let secrets: Vec<&str> = target.secrets.iter().map(String::as_str).collect();
    let (
        Identity {
            external_id,
            email,
            name,
            ..
        },
        secret,
    ) = identity::verify_which(token, &secrets, now)
        .map_err(|refused| ApiError::unauthorized(ErrorCode::InvalidToken, refused.message()))?;
    let identity = SessionIdentity {
        external_id: Some(external_id),
        verified: true,
        email_verified: true,
        confirmation: None,
    };
    let name = name.or(typed_name).unwrap_or_else(|| "Visitor".into());
    Ok((name, email, identity, Some(fingerprint(secret))))
}

/// A one-time confirmation link for `email`: the hash to store, and the
/// email that carries the link (under `public_url`).
fn confirmation(public_url: &str, name: &str, email: &str) -> (String, Email) {
    let token = format!("ect_{}", random_base62(32));
    let link = format!("{public_url}/widget/v1/confirm-email?token={token}");
    let text = format!(
        "Hello {name},\n\nYou gave this address in a support chat. Confirm it to receive \
         the agents' replies by email:\n\n{link}\n\nIf this was not you, ignore this email: \
         nothing will be sent to you.\n"
    );
    let email = Email {
        to: email.to_string(),
        subject: "Confirm your email for support replies".into(),
        text,
        html: None,
    };
    (hash(&token), email)
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ConfirmQuery {
    /// The `ect_…` token of the confirmation email's link.
    #[param(value_type = String, required)]
    token: Option<String>,
}

/// Confirm a visitor's email (the link in the confirmation email)
///
/// Works once; afterwards (or for an unknown token) 404. Answers a small
/// page, since a person opens it in a browser.
#[utoipa::path(get, path = "/widget/v1/confirm-email", operation_id = "widget_confirm_email",
    tag = "Widget",
    params(ConfirmQuery),
    responses(
        (status = 200, description = "Confirmed", body = String, content_type = "text/html"),
        (status = 400, description = "`validation_failed`: no token", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown or already used", body = ErrorBody)))]
pub(crate) async fn confirm_email(
    State(chat): State<ChatDeps>,
    Query(query): Query<ConfirmQuery>,
) -> ApiResult<Html<&'static str>> {
    let token = query.token.as_deref().map(str::trim).unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::invalid_field("token", "is required"));
    }
    match service::confirm_visitor_email(&chat, &hash(token)).await? {
        Some(_) => Ok(Html(
            "<!doctype html><meta charset=utf-8><title>Email confirmed</title>\
             <p>Thank you: your email is confirmed. Replies to your chat will reach you there.</p>",
        )),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            "This confirmation link is unknown or was already used",
        )),
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PastSession {
    #[serde(flatten)]
    #[schema(value_type = VisitorSession)]
    session: serde_json::Value,
    /// Reads that session (`GET /widget/v1/sessions/{id}`).
    #[serde(flatten)]
    token: IssuedToken,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HistoryQuery {
    /// The entity's public widget key: required with an identity token.
    #[param(value_type = Option<String>, max_length = 100)]
    widget_key: Option<String>,
}

/// A visitor's chats (visitor)
///
/// With `Authorization: Bearer <identityToken>` (and `widgetKey`): the
/// verified visitor's sessions in the key's entity, newest first (at most
/// 50), each with a fresh visitor token, so that their history follows
/// them to another device. The identity token must have been issued (its
/// `iat`) within the last 10 minutes. With `Authorization: Bearer
/// <visitorToken>`: only the token's own session.
#[utoipa::path(get, path = "/widget/v1/sessions", operation_id = "widget_list_sessions",
    tag = "Widget",
    params(HistoryQuery),
    security(("VisitorToken" = [])),
    responses(
        (status = 200, description = "The visitor's sessions", body = DataList<PastSession>),
        (status = 400, description = "`validation_failed`: an identity token without `widgetKey`",
            body = ErrorBody),
        (status = 401, description = "`invalid_token`: invalid, expired or not recent enough",
            body = ErrorBody),
        (status = 403, description = "`account_suspended`", body = ErrorBody),
        (status = 404, description = "`not_found`: unknown widget key", body = ErrorBody)))]
pub(crate) async fn history(
    State(tokens): State<VisitorTokens>,
    Query(query): Query<HistoryQuery>,
    headers: HeaderMap,
) -> ApiResult<Json<DataList<PastSession>>> {
    let token = access::bearer(&headers)?;
    if token.starts_with("vt_") {
        let visitor = access::check(&tokens, token, access::Use::Read).await?;
        let tenant = visitor.tenant();
        let session = chat_store::find_session(&tokens.db, &tenant, visitor.session_id()).await?;
        let claims = visitor.claims;
        let token = access::issue(
            &tokens,
            &tenant,
            claims.session_id,
            claims.nonce,
            claims.secret,
        )
        .await?;
        return Ok(Json(DataList {
            data: vec![PastSession {
                session: session.visitor_view(),
                token,
            }],
        }));
    }
    let target =
        super::target::target(&tokens.db, &tokens.clock, query.widget_key.as_deref()).await?;
    let secrets: Vec<&str> = target.secrets.iter().map(String::as_str).collect();
    let now = tokens.clock.now();
    let (identity, secret) = identity::verify_which(token, &secrets, now)
        .map_err(|refused| ApiError::unauthorized(ErrorCode::InvalidToken, refused.message()))?;
    if identity.issued_at < now.0.timestamp() - HISTORY_IDENTITY_MAX_AGE_SECS {
        return Err(ApiError::unauthorized(
            ErrorCode::InvalidToken,
            "The history needs an identity token issued within the last 10 minutes",
        ));
    }
    let tenant = target.tenant;
    let external_id = identity.external_id.as_str();
    let sessions = chat_store::visitor_sessions(
        &tokens.db,
        &tenant,
        target.entity_id,
        external_id,
        HISTORY_MAX,
    )
    .await?;
    let nonces = store::visitor_nonces(&tokens.db, &tenant, target.entity_id, external_id).await?;
    let print = Some(fingerprint(secret));
    let mut data = Vec::with_capacity(sessions.len());
    for past in sessions {
        let nonce = nonces.get(&past.id).copied().unwrap_or_default();
        let token = access::issue(&tokens, &tenant, past.id, nonce, print).await?;
        data.push(PastSession {
            session: past.visitor_view(),
            token,
        });
    }
    Ok(Json(DataList { data }))
}
