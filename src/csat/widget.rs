//! The visitor's side of ratings: `POST /widget/v1/ratings` (with the
//! visitor token, or with the token of a signed rating link) and the small
//! page a rating link opens (`GET /widget/v1/rate?token=`).

use std::sync::LazyLock;

use axum::extract::FromRef;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::links::{BadLink, RatingLinks};
use super::model::{COMMENT_MAX, CommentChange, NewRating, Rating, RatingTarget, submitted_score};
use super::routes::refused;
use super::store::{self, Submitted};
use crate::actor::Actor;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::Json;
use crate::idempotency::RequestState;
use crate::openapi::schema::ErrorBody;
use crate::state::AppState;
use crate::validate::{Fields, optional_id, optional_text};
use crate::widget::access::{bearer, invalid_token};

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = SubmitRating)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RateBody {
    /// 1 (very unhappy) to 5 (very happy).
    #[schema(value_type = i64, minimum = 1, maximum = 5, required)]
    score: Option<serde_json::Value>,
    /// Left out when changing a rating, the comment given before stays;
    /// blank removes it.
    #[schema(value_type = Option<String>, max_length = 2000)]
    comment: Option<String>,
    /// The `token` of a signed rating link (from a resolution email):
    /// rates its chat or ticket without a visitor token.
    #[schema(value_type = Option<String>)]
    token: Option<String>,
    /// With a visitor token: the session to rate (default: the token's own
    /// session, the only one it may rate).
    #[schema(value_type = Option<uuid::Uuid>)]
    session_id: Option<String>,
    /// With a visitor token: a ticket made from the token's session.
    #[schema(value_type = Option<uuid::Uuid>)]
    ticket_id: Option<String>,
}

/// Rate a closed chat or a resolved ticket (visitor)
///
/// With `Authorization: Bearer <visitorToken>` (the token's own session, or
/// a ticket made from it) or with a signed link's `token` in the body.
/// 201 for the first rating, 200 when it changes one (possible for 7 days
/// after the first submission, then 409).
#[utoipa::path(post, path = "/widget/v1/ratings", operation_id = "widget_rate",
    tag = "Widget",
    security((), ("VisitorToken" = [])),
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = RateBody,
    responses(
        (status = 201, description = "Rated", body = Rating),
        (status = 200, description = "The rating changed", body = Rating),
        (status = 400, description = "`validation_failed`", body = ErrorBody),
        (status = 401, description = "`invalid_token`: no valid visitor token or link",
            body = ErrorBody),
        (status = 403, description = "`invalid_link`: an altered or expired link; `csat_off`",
            body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`conflict`: not closed or resolved, not requested \
            (manual), or the 7 days to change it are over", body = ErrorBody)))]
pub(crate) async fn rate(
    RequestState(state): RequestState,
    headers: HeaderMap,
    Json(body): Json<RateBody>,
) -> ApiResult<(StatusCode, Json<Rating>)> {
    let now = state.clock.now();
    let (tenant, target) = match (bearer(&headers).ok(), body.token.as_deref()) {
        (Some(token), _) => visitor_target(&state, token, &body).await?,
        (None, Some(link)) => link_target(&state, link, now).await?,
        (None, None) => {
            return Err(invalid_token(
                "Authorization: Bearer <visitorToken> or a rating link token is required",
            ));
        }
    };
    crate::companies::ensure_active(&state.db, &tenant).await?;
    let (score, comment) = (
        submitted_score(body.score.as_ref()),
        body.comment
            .as_deref()
            .map(|raw| optional_text("comment", Some(raw), COMMENT_MAX))
            .transpose()
            .map(|given| given.map_or(CommentChange::Keep, CommentChange::Set)),
    )
        .all_valid()?;
    let new = NewRating {
        target,
        score,
        comment,
    };
    let db = state
        .db
        .acting(visitor_actor(&state, &tenant, target).await?);
    let signer = state.link_signer();
    let rated = crate::sequences::ratings::Rated { signer: &signer };
    let (rating, submitted) = store::rate(&db, &tenant, &new, now, &rated)
        .await
        .map_err(refused)?;
    let status = match submitted {
        Submitted::Created => StatusCode::CREATED,
        Submitted::Updated => StatusCode::OK,
    };
    Ok((status, Json(rating)))
}

/// The visitor who rates `target`: the one of its chat session (a ticket's
/// chat, when it came from one), else, for a ticket known only by its
/// email, a visitor named by the ticket.
async fn visitor_actor(
    state: &AppState,
    tenant: &Tenant,
    target: RatingTarget,
) -> ApiResult<Actor> {
    let session = match target {
        RatingTarget::Chat(session) => session,
        RatingTarget::Ticket(ticket) => {
            match store::ticket_chat(&state.db, tenant, ticket).await? {
                Some(session) => session,
                None => return Ok(Actor::visitor(ticket, "")),
            }
        }
    };
    let session = crate::chat::store::find_session(&state.db, tenant, session).await?;
    Ok(Actor::visitor(session.id, &session.visitor_name))
}

/// What a visitor token may rate: its own session, or a ticket made from it.
async fn visitor_target(
    state: &AppState,
    token: &str,
    body: &RateBody,
) -> ApiResult<(Tenant, RatingTarget)> {
    let visitor = crate::widget::access::check(
        &crate::widget::access::VisitorTokens::from_ref(state),
        token,
        crate::widget::access::Use::Write,
    )
    .await?;
    let (tenant, session_id) = (visitor.tenant(), visitor.session_id());
    let (session, ticket) = (
        optional_id("sessionId", body.session_id.as_deref()),
        optional_id("ticketId", body.ticket_id.as_deref()),
    )
        .all_valid()?;
    if session.is_some_and(|id| id != session_id) {
        return Err(ApiError::not_found());
    }
    let target = match ticket {
        Some(ticket) => {
            if store::ticket_chat(&state.db, &tenant, ticket).await? != Some(session_id) {
                return Err(ApiError::not_found());
            }
            RatingTarget::Ticket(ticket)
        }
        None => RatingTarget::Chat(session_id),
    };
    Ok((tenant, target))
}

/// What a signed link's token rates: 403 when it was altered or expired.
async fn link_target(
    state: &AppState,
    token: &str,
    now: crate::time::Timestamp,
) -> ApiResult<(Tenant, RatingTarget)> {
    let links = RatingLinks::load(&state.db).await?;
    let target = links.open(token, now).map_err(|bad| {
        let message = match bad {
            BadLink::Invalid => "This rating link is not valid",
            BadLink::Expired => "This rating link has expired",
        };
        ApiError::new(StatusCode::FORBIDDEN, ErrorCode::InvalidLink, message)
    })?;
    let tenant = store::tenant_of(&state.db, target)
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok((tenant, target))
}

/// The page a rating link opens
///
/// It reads the token from its own address and posts the rating with it
/// (`POST /widget/v1/ratings`), so the page itself holds nothing secret
/// and needs no server state. The server never parses the query: any
/// address answers the page, whose script reports a bad token.
#[utoipa::path(get, path = "/widget/v1/rate", operation_id = "widget_rating_page",
    tag = "Widget",
    params(("token" = Option<String>, Query,
        description = "The signed link's token (read by the page's script)")),
    responses(
        (status = 200, description = "The rating page", body = String, content_type = "text/html")))]
pub(crate) async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_SECURITY_POLICY, RATE_PAGE_CSP.clone()),
            // The page's address holds the link's token: it goes nowhere.
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            ),
        ],
        Html(RATE_PAGE),
    )
}

/// The rating page's policy: nothing but its own inline style and script
/// (allowed by their hashes, so no other inline code runs) and the one
/// call back to this origin; no framing, no base or form targets.
static RATE_PAGE_CSP: LazyLock<HeaderValue> = LazyLock::new(|| {
    let policy = format!(
        "default-src 'none'; style-src '{}'; script-src '{}'; connect-src 'self'; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        inline_hash(RATE_PAGE, "style"),
        inline_hash(RATE_PAGE, "script"),
    );
    HeaderValue::from_str(&policy)
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'"))
});

/// The CSP source (`sha256-…`) of the first `<tag>` element's text in
/// `page`. Computed from the page itself, so an edit of the page cannot
/// leave a stale hash that blocks its own script.
fn inline_hash(page: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let text = page
        .split_once(open.as_str())
        .and_then(|(_, rest)| rest.split_once(close.as_str()))
        .map_or("", |(text, _)| text);
    format!(
        "sha256-{}",
        STANDARD.encode(Sha256::digest(text.as_bytes()))
    )
}

const RATE_PAGE: &str = r#"<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Rate the help you got</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}
.stars button{font-size:2rem;background:none;border:0;cursor:pointer;color:#bbb}
.stars button.on{color:#f5a623}textarea{width:100%;min-height:5rem}</style>
<h1>How satisfied are you?</h1>
<form id="f"><div class="stars" role="radiogroup" aria-label="Score">
<button type="button" data-score="1" aria-label="1 of 5">★</button><button type="button" data-score="2" aria-label="2 of 5">★</button><button type="button" data-score="3" aria-label="3 of 5">★</button><button type="button" data-score="4" aria-label="4 of 5">★</button><button type="button" data-score="5" aria-label="5 of 5">★</button>
</div><p><label>Comment (optional)<br><textarea name="comment" maxlength="2000"></textarea></label></p>
<p><button type="submit">Send</button></p><p id="out" role="status"></p></form>
<script>
(function(){var token=new URLSearchParams(location.search).get("token")||"",score=0;
var stars=document.querySelectorAll(".stars button"),out=document.getElementById("out");
stars.forEach(function(b){b.onclick=function(){score=+b.dataset.score;
stars.forEach(function(s){s.classList.toggle("on",+s.dataset.score<=score)})}});
document.getElementById("f").onsubmit=function(e){e.preventDefault();
if(!score){out.textContent="Choose 1 to 5 stars.";return}
fetch("/widget/v1/ratings",{method:"POST",headers:{"Content-Type":"application/json"},
body:JSON.stringify({token:token,score:score,comment:e.target.comment.value.trim()||undefined})})
.then(function(r){return r.json().then(function(b){out.textContent=r.ok?"Thank you for your rating.":b.error})})
.catch(function(){out.textContent="The rating could not be sent. Try again."})}})();
</script></html>"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_allows_the_page_own_inline_code_only() {
        let policy = RATE_PAGE_CSP.to_str().expect("ascii");
        for tag in ["style", "script"] {
            let hash = inline_hash(RATE_PAGE, tag);
            assert_ne!(hash, inline_hash("", tag), "the page has a <{tag}>");
            assert!(policy.contains(&format!("'{hash}'")), "{policy}");
        }
        assert!(!policy.contains("unsafe-inline"), "{policy}");
    }
}
