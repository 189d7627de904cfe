//! The webhook receiver of the soak: a local HTTP server that answers 500
//! to every 20th delivery (5%) and 200 to the others. Failures are spread
//! evenly, never two in a row, so the service retries them and never turns
//! the webhook off for a run of failures.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;

/// Every this many deliveries, one fails.
const FAIL_EVERY: u64 = 20;

#[derive(Default)]
struct Tally {
    received: AtomicU64,
    failed: AtomicU64,
}

pub struct Receiver {
    addr: SocketAddr,
    tally: Arc<Tally>,
}

/// Deliveries received and those answered 500.
#[derive(Clone, Copy, Debug)]
pub struct Counts {
    pub received: u64,
    pub failed: u64,
}

pub async fn start() -> anyhow::Result<Receiver> {
    let tally = Arc::new(Tally::default());
    let app = Router::new()
        .route("/hook", post(deliver))
        .with_state(tally.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(Receiver { addr, tally })
}

async fn deliver(State(tally): State<Arc<Tally>>) -> StatusCode {
    let n = tally.received.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_multiple_of(FAIL_EVERY) {
        tally.failed.fetch_add(1, Ordering::Relaxed);
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    }
}

impl Receiver {
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub fn counts(&self) -> Counts {
        Counts {
            received: self.tally.received.load(Ordering::Relaxed),
            failed: self.tally.failed.load(Ordering::Relaxed),
        }
    }
}
