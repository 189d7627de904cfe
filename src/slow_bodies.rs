//! The slow-body guard: a request body that stalls (no byte for the idle
//! timeout) or takes longer in all than the deadline is cut off, as the
//! connection's timer cuts off headers sent too slowly. The timers are
//! tower-http's body wrappers; a request whose body timed out is answered
//! 408 `request_timeout` whatever its handler made of the failed read (a
//! 400 for unreadable JSON, say), and the connection, its body unread, is
//! closed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use hyper::body::{Body as _, Incoming};
use tower_http::timeout::{DeadlineBody, TimeoutBody, TimeoutError};

use crate::error::{ApiError, ErrorCode};

/// How long a body may stall, and take in all.
#[derive(Debug, Clone, Copy)]
pub struct BodyTimeouts {
    pub idle: Duration,
    pub whole: Duration,
}

/// Raised when a request's body timed out.
#[derive(Debug, Clone, Default)]
pub struct TimedOut(Arc<AtomicBool>);

impl TimedOut {
    pub fn fired(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// `request` with its body under `timeouts`, and the flag its timing out
/// raises. A request without a body (most GETs, socket handshakes) is
/// passed on as it is: no timer, no flag.
pub fn watch(
    request: Request<Incoming>,
    timeouts: BodyTimeouts,
) -> (Request<Body>, Option<TimedOut>) {
    if request.body().is_end_stream() {
        return (request.map(Body::new), None);
    }
    let timed_out = TimedOut::default();
    let flag = timed_out.clone();
    let request = request.map(|incoming| {
        let timed = TimeoutBody::new(timeouts.idle, DeadlineBody::new(timeouts.whole, incoming));
        Body::new(timed.map_err(move |error| {
            if error.is::<TimeoutError>() {
                flag.0.store(true, Ordering::Release);
            }
            error
        }))
    });
    (request, Some(timed_out))
}

/// The handler's `response`, or the 408 when the body timed out.
pub fn answer(response: Response, timed_out: Option<&TimedOut>) -> Response {
    if !timed_out.is_some_and(TimedOut::fired) {
        return response;
    }
    ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        ErrorCode::RequestTimeout,
        "The request body was not received in time",
    )
    .into_response()
}
