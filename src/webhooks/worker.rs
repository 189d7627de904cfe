//! The delivery job: sends one attempt of a delivery (signed over the
//! stored body bytes), logs it and ends the job (retry on the schedule, or
//! done, or failed) in one transaction, and keeps the webhook's health
//! (410 disables at once, 24 h of nothing but failures disables it).

use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use super::store::deliveries::{self, AttemptResult, Pending, RESPONSE_BODY_MAX};
use super::store::{self, Health, Target};
use super::{guard, signing};
use crate::config::Config;
use crate::db::Db;
use crate::error::StoreError;
use crate::outbox::{self, Job, JobHandler, RetrySchedule};
use crate::time::{Clock, Timestamp};

/// How long a webhook may fail without a single success before it is disabled.
pub const DISABLE_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Sends webhook deliveries: the outbox handler of [`super::JOB_KIND`].
pub struct DeliveryJob {
    /// SSRF-guarded (resolver filter), no redirects, no proxy, with the
    /// webhook timeout.
    http: reqwest::Client,
    /// Lifts the SSRF guard (development, tests).
    allow_private: bool,
    timeout: Duration,
    retry: RetrySchedule,
}

impl DeliveryJob {
    pub fn new(config: &Config, retry: RetrySchedule) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .dns_resolver(guard::GuardedResolver {
                allow_private: config.webhook_allow_private,
            })
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(config.webhook_timeout)
            .user_agent(concat!("Supportdesk-Webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(DeliveryJob {
            http,
            allow_private: config.webhook_allow_private,
            timeout: config.webhook_timeout,
            retry,
        })
    }
}

impl JobHandler for DeliveryJob {
    /// The timeout twice plus a margin for the store writes.
    fn lease(&self) -> Duration {
        self.timeout * 2 + Duration::from_secs(5)
    }

    fn run<'a>(
        &'a self,
        db: &'a Db,
        clock: &'a Clock,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.deliver(db, clock, job))
    }
}

impl DeliveryJob {
    async fn deliver(&self, db: &Db, clock: &Clock, job: &Job) -> Result<bool, StoreError> {
        // The job has the delivery's id.
        let Some(delivery) = deliveries::pending(db, job.id).await? else {
            return end_without_attempt(db, clock, job, None, "the delivery no longer exists")
                .await;
        };
        let target = match store::target(db, delivery.webhook_id).await {
            Ok(target) => target,
            // Deleted: its deliveries went with it.
            Err(StoreError::NotFound) => {
                return end_without_attempt(db, clock, job, None, "the webhook was deleted").await;
            }
            Err(err) => return Err(err),
        };
        if !target.is_active {
            let reason = "webhook is disabled";
            return end_without_attempt(db, clock, job, Some(&delivery), reason).await;
        }
        let attempt = job.attempt();
        let attempted_at = clock.now();
        let started = Instant::now();
        let sent = self.send(&target, &delivery, attempt, attempted_at).await;
        let took = started.elapsed();
        let duration_ms = i64::try_from(took.as_millis()).unwrap_or(i64::MAX);

        let success = sent.status.is_some_and(|s| (200..300).contains(&s));
        let gone = sent.status == Some(410);
        let now = clock.now();
        let retry_delay = if success || gone || attempt >= self.retry.max_attempts() {
            None
        } else {
            self.retry.delay_after(attempt)
        };
        crate::metrics::webhook_attempt(success, retry_delay.is_some(), took);
        let error = match (&sent.error, sent.status) {
            (Some(error), _) => Some(error.clone()),
            (None, Some(status)) if !success => Some(describe_status(status)),
            _ => None,
        };
        let mut result = AttemptResult {
            attempt,
            attempted_at,
            duration_ms,
            success,
            response_status: sent.status.map(i32::from),
            response_body: sent.body,
            error,
            // Set from the job's own `run_at` below.
            next_attempt_at: None,
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
        let mut tx = db.begin().await?;
        let job_error = result.error.as_deref().unwrap_or("failed");
        let held = match (success, retry_delay) {
            (true, _) => outbox::store::finish(&mut tx, job).await?,
            (false, Some(delay)) => {
                result.next_attempt_at =
                    outbox::store::retry(&mut tx, job, delay, job_error).await?;
                result.next_attempt_at.is_some()
            }
            (false, None) => outbox::store::abandon(&mut tx, job, job_error).await?,
        };
        if !held {
            return Ok(false); // another worker owns the job now: change nothing
        }
        deliveries::record_attempt(&mut tx, delivery.id, &result, now).await?;
        store::record_health(&mut tx, target.id, health, now).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn send(&self, target: &Target, delivery: &Pending, attempt: i32, at: Timestamp) -> Sent {
        let url = match reqwest::Url::parse(&target.url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => url,
            _ => return Sent::error("invalid webhook URL"),
        };
        // The resolver filters names; a literal IP never reaches it.
        if !self.allow_private && guard::literal_ip(&url).is_some_and(guard::is_forbidden) {
            return Sent::error(format!("blocked: the URL {}", guard::BLOCKED));
        }
        let request = self
            .http
            .post(url)
            .headers(headers(target, delivery, attempt, at))
            .body(delivery.body.clone())
            .send();
        // The client's timeout covers the request; this bounds the body read too.
        let limit = self.timeout + Duration::from_secs(1);
        let response = match tokio::time::timeout(limit, request).await {
            Err(_) => return Sent::error(timeout_message(self.timeout)),
            Ok(Err(err)) if err.is_timeout() => return Sent::error(timeout_message(self.timeout)),
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
}

/// Ends the job with no attempt made; `delivery` (when it still exists) is
/// logged as failed with `reason`.
async fn end_without_attempt(
    db: &Db,
    clock: &Clock,
    job: &Job,
    delivery: Option<&Pending>,
    reason: &str,
) -> Result<bool, StoreError> {
    let mut tx = db.begin().await?;
    if !outbox::store::abandon(&mut tx, job, reason).await? {
        return Ok(false);
    }
    if let Some(delivery) = delivery {
        deliveries::give_up(&mut tx, delivery.id, reason, clock.now()).await?;
    }
    tx.commit().await?;
    Ok(true)
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
fn headers(target: &Target, delivery: &Pending, attempt: i32, at: Timestamp) -> HeaderMap {
    let id = delivery.id.to_string();
    let timestamp = at.0.timestamp();
    let signatures = signing::sign(
        &target.secret,
        target.previous_secret_at(at),
        &id,
        timestamp,
        delivery.body.as_bytes(),
    );
    let mut headers = HeaderMap::new();
    let mut put = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    };
    put("x-service-signature", signatures.service);
    put("x-service-event", delivery.event.clone());
    put("x-service-delivery", id.clone());
    put("x-service-attempt", attempt.to_string());
    put("webhook-id", id);
    put("webhook-timestamp", timestamp.to_string());
    put("webhook-signature", signatures.standard);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers
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
