//! Per-client-IP rate limits of the public widget API: GCRA (governor) in
//! process, one budget for every request (`SUPPORTDESK_WIDGET_REQUEST_RATE`)
//! and a tighter one for starting chats (`SUPPORTDESK_WIDGET_SESSION_RATE`).
//! Over either: 429 `rate_limited` with `Retry-After`.

use std::net::{IpAddr, Ipv4Addr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::MessageRate;
use crate::error::{ApiError, ErrorCode};

/// Forget idle IPs every this many requests (the keyed store only grows).
const SWEEP_EVERY: u64 = 4096;

pub struct WidgetLimits {
    requests: DefaultKeyedRateLimiter<IpAddr>,
    sessions: DefaultKeyedRateLimiter<IpAddr>,
    seen: AtomicU64,
}

fn nonzero(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN)
}

/// `rate.limit` at once if need be, then one every `window / limit`.
fn quota(rate: MessageRate) -> Quota {
    let burst = nonzero(u32::try_from(rate.limit).unwrap_or(u32::MAX));
    let period = rate.window / burst.get();
    Quota::with_period(period)
        .unwrap_or_else(|| Quota::per_second(burst))
        .allow_burst(burst)
}

impl WidgetLimits {
    /// `requests`: the requests of any kind one IP may make; `sessions`:
    /// the chats it may start.
    pub fn new(requests: MessageRate, sessions: MessageRate) -> Arc<Self> {
        Arc::new(WidgetLimits {
            requests: RateLimiter::keyed(quota(requests)),
            sessions: RateLimiter::keyed(quota(sessions)),
            seen: AtomicU64::new(0),
        })
    }

    /// None when allowed, else the whole seconds to wait.
    fn check(&self, ip: IpAddr, starts_session: bool) -> Option<u64> {
        if self.seen.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.requests.retain_recent();
            self.sessions.retain_recent();
        }
        let now = DefaultClock::default().now();
        let wait = |limiter: &DefaultKeyedRateLimiter<IpAddr>| {
            limiter
                .check_key(&ip)
                .err()
                .map(|not_until| not_until.wait_time_from(now).as_secs_f64().ceil().max(1.0) as u64)
        };
        wait(&self.requests).or_else(|| {
            if starts_session {
                wait(&self.sessions)
            } else {
                None
            }
        })
    }
}

/// The middleware on `/widget/v1`. The client is the request's
/// `ClientAddress` (the TCP peer, or behind trusted proxies the address they
/// forwarded; an IPv6 one by its /64).
pub async fn limit(
    State(limits): State<Arc<WidgetLimits>>,
    request: Request,
    next: Next,
) -> Response {
    let ip = crate::ratelimit::client::client_of(request.extensions())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let starts_session =
        request.method() == Method::POST && request.uri().path().ends_with("/sessions");
    match limits.check(ip, starts_session) {
        None => next.run(request).await,
        Some(seconds) => {
            crate::metrics::rate_limited(crate::metrics::Limiter::Widget);
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::RateLimited,
                format!("Rate limit exceeded. Try again in {seconds} seconds."),
            )
            .with_header(header::RETRY_AFTER, HeaderValue::from(seconds))
            .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_sessions() -> MessageRate {
        MessageRate::parse(crate::config::defaults::WIDGET_SESSION_RATE).unwrap()
    }

    fn default_requests() -> MessageRate {
        MessageRate::parse(crate::config::defaults::WIDGET_REQUEST_RATE).unwrap()
    }

    #[test]
    fn a_configured_session_budget_replaces_the_default() {
        let rate = MessageRate::parse("25/60s").unwrap();
        let limits = WidgetLimits::new(default_requests(), rate);
        let ip: IpAddr = "192.0.2.9".parse().unwrap();
        for _ in 0..25 {
            assert_eq!(limits.check(ip, true), None);
        }
        assert!(limits.check(ip, true).is_some());
    }

    #[test]
    fn sessions_have_their_own_smaller_budget() {
        let limits = WidgetLimits::new(default_requests(), default_sessions());
        let ip: IpAddr = "203.0.113.7".parse().unwrap();
        for _ in 0..10 {
            assert_eq!(limits.check(ip, true), None);
        }
        let wait = limits.check(ip, true).expect("the 11th chat is refused");
        assert!(wait >= 1);
        // Other requests of that IP still pass, and other IPs are unaffected.
        assert_eq!(limits.check(ip, false), None);
        assert_eq!(limits.check("203.0.113.8".parse().unwrap(), true), None);
    }

    #[test]
    fn every_request_counts_against_the_general_budget() {
        let limits = WidgetLimits::new(default_requests(), default_sessions());
        let ip: IpAddr = "198.51.100.1".parse().unwrap();
        for _ in 0..default_requests().limit {
            assert_eq!(limits.check(ip, false), None);
        }
        assert!(limits.check(ip, false).is_some());
    }

    #[test]
    fn a_configured_request_budget_replaces_the_default() {
        let rate = MessageRate::parse("300/60s").unwrap();
        let limits = WidgetLimits::new(rate, default_sessions());
        let ip: IpAddr = "198.51.100.2".parse().unwrap();
        for _ in 0..300 {
            assert_eq!(limits.check(ip, false), None);
        }
        assert!(limits.check(ip, false).is_some());
    }
}
