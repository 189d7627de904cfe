//! This node's realtime tasks (the bus → hub dispatcher, the presence
//! sweeper, the credentials re-check, the close at shutdown) and the socket
//! route: the parts of realtime that are wired with the whole state.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{Realtime, credentials, shutdown, ws};
use crate::error::StoreError;
use crate::state::AppState;
use crate::teams::routing::{self as teams_routing, Routing};

/// How often each node claims expired presence (announced within 2 s).
pub const SWEEP_INTERVAL: Duration = Duration::from_millis(500);

/// Routes outside the authenticated `/api/v1` router: the socket endpoint
/// `/api/v1/ws`, which authenticates its own `?token=` or `X-API-Key` (see
/// `ws::handler` for why it is mounted here).
pub fn public_routes() -> Router<AppState> {
    Router::new().route("/api/v1/ws", axum::routing::get(ws::handler))
}

/// This node's realtime workers: the bus → hub dispatcher, the presence
/// sweeper and the credentials re-check. All stop on shutdown (sockets
/// are closed by `close_sockets_at_shutdown`).
pub fn spawn_workers(state: &AppState) -> Vec<JoinHandle<()>> {
    let (realtime, shutdown) = (state.realtime.clone(), state.shutdown.clone());
    vec![
        tokio::spawn(run_dispatcher(realtime.clone(), shutdown.clone())),
        tokio::spawn(run_sweeper(state.into(), shutdown.clone())),
        tokio::spawn(credentials::run_recheck(
            state.db.clone(),
            realtime,
            state.clock.clone(),
            shutdown,
        )),
    ]
}

/// Closes this node's sockets (1001) once shutdown begins, and any socket
/// that registers after. Runs on every node, with or without the workers.
pub async fn close_sockets_at_shutdown(
    realtime: Arc<Realtime>,
    mut shutdown: watch::Receiver<bool>,
) {
    shutdown::stopping(&mut shutdown).await;
    realtime.hub.shut_down();
}

async fn run_dispatcher(realtime: Arc<Realtime>, mut shutdown: watch::Receiver<bool>) {
    let mut messages = realtime.bus.subscribe();
    loop {
        tokio::select! {
            received = messages.recv() => match received {
                // Applied here, in bus order: an event published after a
                // notice never reaches the sockets it closed.
                Ok(message) if message.topic == credentials::TOPIC => {
                    match credentials::Notice::decode(&message.payload) {
                        Some(notice) => notice.apply(&realtime.hub),
                        None => tracing::warn!(payload = %message.payload, "unknown credentials notice"),
                    }
                }
                Ok(message) => {
                    realtime.dispatch(&message);
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "realtime dispatcher lagged; events were dropped");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
            _ = shutdown::stopping(&mut shutdown) => return,
        }
    }
}

async fn run_sweeper(routing: Routing, mut shutdown: watch::Receiver<bool>) {
    let mut ticker = tokio::time::interval(SWEEP_INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tokio::select! {
            _ = ticker.tick() => match sweep_once(&routing).await {
                Ok(()) if failing => {
                    tracing::info!("presence sweep works again");
                    failing = false;
                }
                Ok(()) => {}
                // Logged once per outage, not twice a second.
                Err(err) if !failing => {
                    tracing::warn!(error = %err, "presence sweep failed; retrying");
                    failing = true;
                }
                Err(_) => {}
            },
            _ = shutdown::stopping(&mut shutdown) => return,
        }
    }
}

/// One sweep: announces every agent whose presence has expired, and the
/// ticket viewers and typists whose holds ran out, and
/// starts the agents' grace period in routing (public so a test can drive it).
pub async fn sweep_once(routing: &Routing) -> Result<(), StoreError> {
    // Ticket viewers first: they never fail, and a presence outage must not
    // hold their expiry up.
    ws::sweep_viewers(&routing.realtime).await;
    for (tenant, agent) in routing.realtime.presence.sweep().await? {
        routing
            .realtime
            .presence_changed(&tenant, Some(&agent), None)
            .await;
        teams_routing::agent_away(routing, &tenant, agent.user_id).await;
    }
    Ok(())
}
