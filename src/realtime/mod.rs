//! Realtime: the hub of this node's sockets, the bus between nodes, and
//! agent presence.

use axum::Router;
use tokio::task::JoinHandle;

use crate::app::AppState;
use crate::config::Config;

pub struct Realtime {}

impl Realtime {
    pub async fn new(
        _config: &Config,
        _redis: Option<redis::aio::ConnectionManager>,
    ) -> anyhow::Result<Self> {
        Ok(Realtime {})
    }
}

/// Routes outside `/api/v1` (the public widget API).
pub fn public_routes() -> Router<AppState> {
    Router::new()
}

pub fn spawn_workers(_state: &AppState) -> Vec<JoinHandle<()>> {
    Vec::new()
}
