//! `Idempotency-Key` on the widget's POSTs. There is no API key to scope a
//! key to, so each layer finds the company and mode the request acts in
//! from what it carries (a widget key, a visitor token, a rating link) and
//! runs it under `idempotency::run` there, as the caller that credential
//! names (a chat start, which carries none, as the client's address). A
//! request that carries none that is valid runs as is: its handler
//! refuses it, and nothing is recorded.

use std::net::{IpAddr, Ipv4Addr};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Extension, RequestExt};
use serde::Deserialize;

use super::store;
use crate::auth::Tenant;
use crate::companies::CompanyStatus;
use crate::error::{ApiError, ApiResult};
use crate::idempotency::{self, Caller};
use crate::realtime::token::TokenGrant;
use crate::state::AppState;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WidgetKeyOnly {
    widget_key: Option<String>,
}

/// `POST /widget/v1/sessions`: scoped to the widget key's company and mode,
/// when the key is known and its company active, and to the client's
/// address: a visitor has no credential before the chat starts, and a key
/// someone else learnt must not hand them the visitor token of its chat.
pub(super) async fn session(
    Extension(state): Extension<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let (request, next) = match keyed_post(request, next).await {
        Ok(keyed) => keyed,
        Err(answered) => return answered,
    };
    let (request, body) = match buffered(request).await {
        Ok(buffered) => buffered,
        Err(refused) => return refused.into_response(),
    };
    let widget_key = serde_json::from_slice::<WidgetKeyOnly>(&body)
        .ok()
        .and_then(|body| body.widget_key);
    let target = match widget_key {
        Some(key) => store::resolve(&state.db, key.trim(), state.clock.now())
            .await
            .ok()
            .flatten(),
        None => None,
    };
    match target {
        Some(target) if target.company_status == CompanyStatus::Active => {
            let client = crate::ratelimit::client::client_of(request.extensions())
                .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
            let caller = Caller::Client(client);
            idempotency::run(state.clone(), target.tenant, caller, request, next).await
        }
        _ => next.run(request).await,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LinkTokenOnly {
    /// A rating's signed link.
    token: Option<String>,
    /// An email continue link's token (`/widget/v1/tokens/exchange`).
    link_token: Option<String>,
}

/// `POST /widget/v1/attachments`, `/ratings` and `/tokens/…`: scoped to
/// the company and mode of the visitor token (`Authorization: Bearer
/// vt_…`), or without one, of the signed rating link (`token`) or email
/// link token (`linkToken`) in the body. A replayed link trade answers the
/// visitor token of the first trade, to the holder of that link and key
/// only, so a retry after a lost answer does not find the link spent.
pub(super) async fn visitor(
    Extension(state): Extension<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let (request, next) = match keyed_post(request, next).await {
        Ok(keyed) => keyed,
        Err(answered) => return answered,
    };
    if let Ok(token) = super::access::bearer(request.headers()) {
        let sender = visitor_of(&state, token).await;
        return run_in(state, sender, request, next).await;
    }
    // Only a rating names its link in a JSON body; an upload without a
    // visitor token is refused by its handler, unread.
    if !is_json(request.headers()) {
        return next.run(request).await;
    }
    let (request, body) = match buffered(request).await {
        Ok(buffered) => buffered,
        Err(refused) => return refused.into_response(),
    };
    let links = serde_json::from_slice::<LinkTokenOnly>(&body).ok();
    let sender = match links {
        Some(LinkTokenOnly {
            token: Some(link), ..
        }) => link_sender(&state, &link).await,
        Some(LinkTokenOnly {
            link_token: Some(link),
            ..
        }) => email_link_sender(&state, &link).await,
        _ => None,
    };
    run_in(state, sender, request, next).await
}

/// The request and the rest of the stack back when `request` is a POST
/// with an `Idempotency-Key`; otherwise the answer: the request run as is
/// (no key), or 400 for a malformed key, as on every keyed POST.
async fn keyed_post(request: Request, next: Next) -> Result<(Request, Next), Response> {
    if request.method() != Method::POST {
        return Err(next.run(request).await);
    }
    match idempotency::key_of(request.headers()) {
        Ok(Some(_)) => Ok((request, next)),
        Ok(None) => Err(next.run(request).await),
        Err(refused) => Err(refused.into_response()),
    }
}

/// The body read whole (within the request body limit, as the handler's
/// extractor would), and the request rebuilt around it.
async fn buffered(request: Request) -> ApiResult<(Request, axum::body::Bytes)> {
    let (parts, body) = request.with_limited_body().into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return Err(ApiError::from_status(StatusCode::PAYLOAD_TOO_LARGE));
    };
    Ok((Request::from_parts(parts, Body::from(body.clone())), body))
}

async fn run_in(
    state: AppState,
    sender: Option<(Tenant, Caller)>,
    request: Request,
    next: Next,
) -> Response {
    match sender {
        Some((tenant, caller)) => {
            idempotency::run(state.clone(), tenant, caller, request, next).await
        }
        None => next.run(request).await,
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// The tenant and session of a genuine, unexpired visitor token (the
/// handler checks the rest).
async fn visitor_of(state: &AppState, token: &str) -> Option<(Tenant, Caller)> {
    let key = state.realtime.token_key(&state.db).await.ok()?;
    match key.verify(token)? {
        TokenGrant::Visitor(claims) if claims.expires_at > state.clock.now().0.timestamp() => {
            Some((claims.tenant, Caller::Visitor(claims.session_id)))
        }
        _ => None,
    }
}

/// The tenant and session of a genuine, unexpired email link token.
async fn email_link_sender(state: &AppState, link: &str) -> Option<(Tenant, Caller)> {
    let key = state.realtime.token_key(&state.db).await.ok()?;
    let claims = key.verify_link(link)?.visitor;
    (claims.expires_at > state.clock.now().0.timestamp())
        .then_some((claims.tenant, Caller::Visitor(claims.session_id)))
}

/// The tenant of the record a valid, unexpired rating link names, and
/// the record.
async fn link_sender(state: &AppState, link: &str) -> Option<(Tenant, Caller)> {
    let links = crate::csat::links::RatingLinks::load(&state.db)
        .await
        .ok()?;
    let target = links.open(link, state.clock.now()).ok()?;
    let tenant = crate::csat::store::tenant_of(&state.db, target)
        .await
        .ok()
        .flatten()?;
    Some((tenant, Caller::RatingLink(target.id())))
}
