//! The delivery worker's step: claim due deliveries, send each (signed over
//! the stored body bytes), record the attempt, schedule the retry or end it,
//! and keep the webhook's health (410 disables at once, 24 h of nothing but
//! failures disables it).

use std::time::{Duration, Instant};

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use super::store::deliveries::{self, AttemptResult, Claimed, RESPONSE_BODY_MAX};
use super::store::{self, Health, Target};
use super::{guard, signing};
use crate::error::StoreError;
use crate::outbox::Outbound;
use crate::state::AppState;
use crate::time::Timestamp;

/// How long a webhook may fail without a single success before it is disabled.
pub const DISABLE_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Claims up to `limit` due deliveries for this worker, leased for
/// `outbound.lease`.
pub async fn claim(state: &AppState, limit: i64) -> Result<Vec<Claimed>, StoreError> {
    let now = Timestamp::now();
    let lease = now.plus(state.outbound.lease);
    deliveries::claim_due(&state.db, now, lease, limit).await
}

/// Sends one claimed delivery and records the attempt. A store error is
/// logged: the lease then lapses and the delivery is tried again.
pub async fn run(state: &AppState, claim: Claimed) {
    if let Err(err) = deliver(state, &claim).await {
        tracing::warn!(delivery = %claim.id, error = %err, "webhook delivery not recorded");
    }
}

async fn deliver(state: &AppState, claim: &Claimed) -> Result<(), StoreError> {
    let target = match store::target(&state.db, claim.webhook_id).await {
        Ok(target) => target,
        Err(StoreError::NotFound) => return Ok(()), // deleted: its deliveries went with it
        Err(err) => return Err(err),
    };
    if !target.is_active {
        return deliveries::abandon(&state.db, claim, "webhook is disabled").await;
    }
    let attempt = claim.attempts + 1;
    let attempted_at = Timestamp::now();
    let started = Instant::now();
    let sent = send(&state.outbound, &target, claim, attempt, attempted_at).await;
    let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);

    let success = sent.status.is_some_and(|s| (200..300).contains(&s));
    let gone = sent.status == Some(410);
    let now = Timestamp::now();
    let next_attempt_at = if success || gone || attempt >= state.outbound.max_attempts() {
        None
    } else {
        state.outbound.retry_at(attempt, now)
    };
    let error = match (&sent.error, sent.status) {
        (Some(error), _) => Some(error.clone()),
        (None, Some(status)) if !success => Some(describe_status(status)),
        _ => None,
    };
    let result = AttemptResult {
        attempt,
        attempted_at,
        duration_ms,
        success,
        response_status: sent.status.map(i32::from),
        response_body: sent.body,
        error,
        next_attempt_at,
    };
    let health = if success {
        Health::Ok
    } else if gone {
        Health::Gone
    } else {
        Health::Failed {
            disable_after: DISABLE_AFTER,
        }
    };
    let mut tx = state.db.begin().await?;
    if !deliveries::finish(&mut tx, claim, &result).await? {
        tracing::warn!(delivery = %claim.id, attempt, "lease lost; the attempt is not recorded");
        return Ok(());
    }
    store::record_health(&mut tx, target.id, health, now).await?;
    tx.commit().await
}

fn describe_status(status: u16) -> String {
    match status {
        300..=399 => format!("HTTP {status}: redirects are not followed"),
        410 => "HTTP 410 Gone: the webhook is disabled".to_string(),
        _ => format!("HTTP {status}"),
    }
}

/// What one HTTP attempt produced.
struct Sent {
    status: Option<u16>,
    body: Option<String>,
    error: Option<String>,
}

impl Sent {
    fn error(message: impl Into<String>) -> Self {
        Sent {
            status: None,
            body: None,
            error: Some(message.into()),
        }
    }
}

/// The headers of one attempt: ours (`X-Service-*`) and the Standard Webhooks ones.
fn headers(target: &Target, claim: &Claimed, attempt: i32, at: Timestamp) -> HeaderMap {
    let id = claim.id.to_string();
    let timestamp = at.0.timestamp();
    let signatures = signing::sign(
        &target.secret,
        target.previous_secret_at(at),
        &id,
        timestamp,
        claim.body.as_bytes(),
    );
    let mut headers = HeaderMap::new();
    let mut put = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    };
    put("x-service-signature", signatures.service);
    put("x-service-event", claim.event.clone());
    put("x-service-delivery", id.clone());
    put("x-service-attempt", attempt.to_string());
    put("webhook-id", id);
    put("webhook-timestamp", timestamp.to_string());
    put("webhook-signature", signatures.standard);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers
}

async fn send(
    outbound: &Outbound,
    target: &Target,
    claim: &Claimed,
    attempt: i32,
    at: Timestamp,
) -> Sent {
    let url = match reqwest::Url::parse(&target.url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        _ => return Sent::error("invalid webhook URL"),
    };
    // The resolver filters names; a literal IP never reaches it.
    if !outbound.allow_private && guard::literal_ip(&url).is_some_and(guard::is_forbidden) {
        return Sent::error(format!("blocked: the URL {}", guard::BLOCKED));
    }
    let request = outbound
        .http
        .post(url)
        .headers(headers(target, claim, attempt, at))
        .body(claim.body.clone())
        .send();
    // The client's timeout covers the request; this bounds the body read too.
    let limit = outbound.timeout + Duration::from_secs(1);
    let response = match tokio::time::timeout(limit, request).await {
        Err(_) => return Sent::error(timeout_message(outbound.timeout)),
        Ok(Err(err)) if err.is_timeout() => return Sent::error(timeout_message(outbound.timeout)),
        Ok(Err(err)) => return Sent::error(error_chain(&err.without_url())),
        Ok(Ok(response)) => response,
    };
    let status = response.status().as_u16();
    let body = tokio::time::timeout(Duration::from_secs(1), read_prefix(response))
        .await
        .ok()
        .flatten();
    Sent {
        status: Some(status),
        body,
        error: None,
    }
}

fn timeout_message(timeout: Duration) -> String {
    format!("no response within {:.1} s", timeout.as_secs_f64())
}

/// The first `RESPONSE_BODY_MAX` bytes of the body, as text.
async fn read_prefix(mut response: reqwest::Response) -> Option<String> {
    let mut bytes = Vec::new();
    while bytes.len() < RESPONSE_BODY_MAX {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            _ => break,
        }
    }
    bytes.truncate(RESPONSE_BODY_MAX);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (!text.is_empty()).then_some(text)
}

/// An error with its causes (`error sending request: connection refused`).
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}
